/**
 * Where the format choices of opened folders are kept (issue 11: per topic and per side, `auto` by
 * default, persisted per opened folder). Never in the opened folder itself: opening is read-only.
 * The Electron main process and the bridge keep them in a JSON file of the app's own data folder
 * (`decode-choices.json`, keyed by the folder's real path), which `klx fetch` and `klx query` read
 * ({@link savedChoicesFor}); tests and embedded uses keep them in memory.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { FormatChoices } from '../../engine/decode/format.ts';
import { formatChoices } from '../../../src-shared/decode-types.ts';
import { isInsideDir } from './paths.ts';

/** The format choices of every opened folder (real path → topic → side → format name). */
export interface DecodeChoicesStore {
  /** The choices of `root` (a copy; `{}` when none were made). */
  get(root: string): FormatChoices;
  /** Replaces the choices of `root`. @throws Node's I/O error when a file store cannot write. */
  set(root: string, choices: FormatChoices): void;
}

/** A {@link DecodeChoicesStore} in memory (lost when the process ends). */
export function memoryDecodeChoicesStore(): DecodeChoicesStore {
  const byRoot = new Map<string, FormatChoices>();
  return {
    get: (root) => structuredClone(byRoot.get(root) ?? {}),
    set: (root, choices) => void byRoot.set(root, structuredClone(choices)),
  };
}

const fileSchema = z.object({ version: z.literal(1), folders: z.record(z.string(), formatChoices) });

/** At most this many folders are remembered (the least recently set are dropped first). */
export const MAX_REMEMBERED_FOLDERS = 200;

/**
 * A {@link DecodeChoicesStore} backed by `file` (JSON `{version: 1, folders: {<root>: choices}}`),
 * read once, written atomically (temporary file + rename) on every change. A missing or invalid
 * file reads as no choices and is replaced on the next change. While `file` does not exist yet the
 * choices are read from `previousFile` (where an earlier version kept them), and the first change
 * writes them to `file`.
 */
export function fileDecodeChoicesStore(file: string, previousFile?: string): DecodeChoicesStore {
  let folders = readDecodeChoicesFile(previousFile !== undefined && !existsSync(file) ? previousFile : file);
  return {
    get: (root) => structuredClone(folders[root] ?? {}),
    set: (root, choices) => {
      const next: Record<string, FormatChoices> = {};
      for (const [k, v] of Object.entries(folders)) if (k !== root) next[k] = v;
      if (Object.keys(choices).length > 0) next[root] = structuredClone(choices);
      const keys = Object.keys(next);
      for (const k of keys.slice(0, Math.max(0, keys.length - MAX_REMEMBERED_FOLDERS))) delete next[k];
      mkdirSync(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ version: 1, folders: next }, null, 2) + '\n');
      renameSync(tmp, file);
      folders = next;
    },
  };
}

/**
 * The choices of every folder in a choices file (real path → topic → side → format name); `{}` when
 * the file is missing or not a valid choices file (never throws).
 */
export function readDecodeChoicesFile(file: string): Record<string, FormatChoices> {
  try {
    const parsed = fileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (parsed.success) return parsed.data.folders as Record<string, FormatChoices>;
  } catch {
    // missing or not JSON: no choices yet
  }
  return {};
}

/**
 * The saved choices that apply to `path` (a real path) when it is read outside the app (`klx fetch`,
 * `klx query`): those of every saved folder that holds `path` or lies inside it, merged per topic and
 * side with the more specific (longer) folder winning, as the app decodes a partition with the
 * choices of the innermost opened folder holding it.
 * @returns topic → side → format name (`{}` when nothing was saved for `path`)
 */
export function savedChoicesFor(folders: Record<string, FormatChoices>, path: string): FormatChoices {
  const roots = Object.keys(folders)
    .filter((r) => isInsideDir(path, r) || isInsideDir(r, path))
    .sort((a, b) => a.length - b.length);
  const out: FormatChoices = {};
  for (const r of roots) {
    for (const [topic, c] of Object.entries(folders[r]!)) out[topic] = { ...(out[topic] ?? {}), ...c };
  }
  return out;
}

/**
 * The app's own data folder, shared by the Electron app, the bridge (`klx serve`) and the `klx`
 * commands (the format choices are read there by `klx fetch` and `klx query`):
 * `$KLX_DATA_DIR`, else the platform's data folder for `kafka-log-explorer` (on Linux
 * `$XDG_DATA_HOME/kafka-log-explorer`, by default `~/.local/share/kafka-log-explorer`, where the
 * trash and the lessons live too).
 */
export function appDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KLX_DATA_DIR) return env.KLX_DATA_DIR;
  const p = platform();
  if (p === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'kafka-log-explorer');
  if (p === 'darwin') return join(homedir(), 'Library', 'Application Support', 'kafka-log-explorer');
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'kafka-log-explorer');
}

/** The file of a data folder that holds the choices. */
export function decodeChoicesFile(dataDir: string): string {
  return join(dataDir, 'decode-choices.json');
}
