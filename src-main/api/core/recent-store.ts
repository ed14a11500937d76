/**
 * The recent folders ("Open recent"), kept in the app's data folder beside the format choices
 * (`recent-folders.json` in {@link appDataDir}), shared by the Electron app and `klx serve`. Never in
 * an opened folder: opening is read-only.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { RecentStore } from './session-state.ts';

/** How many recent folders are kept (most recent first). */
export const RECENT_FOLDERS_LIMIT = 10;

const fileSchema = z.object({ version: z.literal(1), folders: z.array(z.string()).max(1000) });

/** The file of a data folder that holds the recent folders. */
export function recentFoldersFile(dataDir: string): string {
  return join(dataDir, 'recent-folders.json');
}

/**
 * A {@link RecentStore} backed by `file` (JSON `{version: 1, folders: [...]}`), read once, written
 * atomically (temporary file + rename) on every change. A missing or invalid file reads as `seed`
 * (an earlier version's list, e.g. Electron's `klx-settings.json`), else as no folders, and is
 * replaced on the next change. A write that fails (read-only data folder) keeps the list in memory:
 * opening a folder never fails because the recent list cannot be saved.
 */
export function fileRecentStore(file: string, seed: readonly string[] = [], limit = RECENT_FOLDERS_LIMIT): RecentStore {
  let folders = [...seed].slice(0, limit);
  try {
    if (existsSync(file)) {
      const parsed = fileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) folders = parsed.data.folders.slice(0, limit);
    }
  } catch {
    // not JSON: as if missing
  }
  return {
    list: () => [...folders],
    add: (path) => {
      folders = [path, ...folders.filter((p) => p !== path)].slice(0, limit);
      try {
        mkdirSync(dirname(file), { recursive: true });
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ version: 1, folders }, null, 2) + '\n');
        renameSync(tmp, file);
      } catch {
        // kept in memory for this session
      }
    },
  };
}
