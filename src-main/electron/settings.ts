/**
 * The app's settings file in Electron's user-data folder (`klx-settings.json`): recent folders and
 * the window's bounds. Written atomically (temporary file + rename); a missing or unreadable file
 * gives the defaults (and is replaced on the next write). No Electron import.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { RecentStore } from '../api/core/session-state.ts';

/** How many recent folders are kept. */
export const RECENT_LIMIT = 10;

const windowState = z.object({
  x: z.number().int().optional(),
  y: z.number().int().optional(),
  width: z.number().int().min(400).max(20_000),
  height: z.number().int().min(300).max(20_000),
  maximized: z.boolean().default(false),
});

const settingsSchema = z.object({
  version: z.literal(1),
  recentFolders: z.array(z.string()).max(100).default([]),
  window: windowState.optional(),
});

/** The settings' content. */
export type Settings = z.infer<typeof settingsSchema>;
/** A window's saved bounds (pixels) and maximized flag. */
export type WindowState = z.infer<typeof windowState>;

const DEFAULTS: Settings = { version: 1, recentFolders: [] };

/** The settings file. */
export class SettingsStore {
  private data: Settings;

  private constructor(readonly file: string, data: Settings) {
    this.data = data;
  }

  /** Reads `file`; defaults when it is missing or not valid. */
  static load(file: string): SettingsStore {
    let data = DEFAULTS;
    try {
      const parsed = settingsSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) data = parsed.data;
    } catch {
      // missing or not JSON: defaults
    }
    return new SettingsStore(file, structuredClone(data));
  }

  /** A copy of the current settings. */
  get(): Settings {
    return structuredClone(this.data);
  }

  /** Merges `patch` and writes the file. I/O errors propagate (Node's, e.g. EACCES). */
  update(patch: Partial<Omit<Settings, 'version'>>): void {
    this.data = { ...this.data, ...patch };
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2) + '\n');
    renameSync(tmp, this.file);
  }

  /** Recent folders backed by this file (most recent first, at most {@link RECENT_LIMIT}). */
  recentStore(): RecentStore {
    return {
      list: () => [...this.data.recentFolders],
      add: (path) => {
        this.update({ recentFolders: [path, ...this.data.recentFolders.filter((p) => p !== path)].slice(0, RECENT_LIMIT) });
      },
    };
  }
}
