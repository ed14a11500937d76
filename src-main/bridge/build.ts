/**
 * Builds the renderer when the bridge needs it: `klx serve` and the end-to-end tests serve
 * `out/renderer`, which `npx electron-vite build` produces.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KlxError } from '../engine/errors.ts';

/** The repository root (two levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The built renderer folder: `out/renderer` of the repository, or `$KLX_OUT_DIR/renderer` (see `electron.vite.config.ts`). */
export const RENDERER_DIR = join(process.env.KLX_OUT_DIR ? resolve(process.env.KLX_OUT_DIR) : join(REPO_ROOT, 'out'), 'renderer');

/** The newest modification time (ms) of the files under `dir`, 0 when it does not exist. */
function newestMtime(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Options of {@link ensureRendererBuilt}. */
export interface EnsureBuiltOptions {
  /** Also rebuild when a file under `src-renderer/` or `src-shared/` is newer than the built page. */
  ifStale?: boolean;
  /** Where the build's output goes (default: stderr, so a command's stdout stays clean). */
  stdio?: 'inherit-stderr' | 'ignore';
}

/**
 * Runs `npx electron-vite build` in the repository when `out/renderer/index.html` is missing (or
 * stale, with `ifStale`). Returns true when it built. Errors: `internal` when the build fails.
 */
export function ensureRendererBuilt(options: EnsureBuiltOptions = {}): boolean {
  const index = join(RENDERER_DIR, 'index.html');
  const builtAt = existsSync(index) ? statSync(index).mtimeMs : 0;
  const stale =
    builtAt === 0 ||
    (options.ifStale === true && Math.max(newestMtime(join(REPO_ROOT, 'src-renderer')), newestMtime(join(REPO_ROOT, 'src-shared'))) > builtAt);
  if (!stale) return false;
  const out = options.stdio === 'ignore' ? 'ignore' : process.stderr;
  const result = spawnSync('npx', ['electron-vite', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', out, out], shell: process.platform === 'win32' });
  if (result.status !== 0 || !existsSync(index)) {
    throw new KlxError('internal', `building the renderer failed (npx electron-vite build exited with ${result.status ?? result.signal})`);
  }
  return true;
}
