/**
 * Starting a worker thread on a main-process worker entry (the cleaner worker, the groups worker),
 * from the built app or from TypeScript source:
 * - built app: `<entry>.js` next to the main bundle (an entry of the electron-vite main build, see
 *   `electron.vite.config.ts`), or one folder up when the calling code sits in a chunk folder;
 * - from TypeScript source (tsx, vitest, Playwright): `<entry>.ts` beside the module whose URL is
 *   `near`, run through a small bootstrap that registers tsx's ESM loader in the worker first
 *   (Node 20 does not apply `--import` loaders given in a Worker's `execArgv` to its entry module).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { KlxError } from '../../engine/errors.ts';
import { gateNewWorker } from '../../engine/sql/duckdb-gate.ts';

const here = fileURLToPath(import.meta.url);

/** The file URL of tsx's ESM API (`tsx/esm/api`, import condition), resolved from this file. */
function tsxEsmApiUrl(): string {
  const req = createRequire(import.meta.url);
  const pkgPath = req.resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import?: { default?: string } } | string> };
  const entry = pkg.exports['./esm/api'];
  const rel = typeof entry === 'object' && entry.import?.default ? entry.import.default : './dist/esm/api/index.mjs';
  return pathToFileURL(join(dirname(pkgPath), rel)).href;
}

/**
 * Starts a worker thread on the entry `entry` (the built file's name without `.js`, its source's
 * without `.ts`); `near` is the `import.meta.url` of a module in the source's folder.
 * The thread has a DuckDB gate (`engine/sql/duckdb-gate.ts`): end it with `stopWorker`, never
 * with `worker.terminate()` (which aborts the process when DuckDB works in the thread).
 * @throws KlxError `internal` when the built entry is missing (an incomplete build).
 */
export function startEntryWorker(entry: string, near: string, options: { workerData?: unknown; resourceLimits?: ResourceLimits } = {}): Worker {
  if (here.endsWith('.ts')) {
    // Joined at run time (not `new URL('./x.ts', import.meta.url)`, which a bundler would turn into an asset).
    const source = pathToFileURL(join(dirname(fileURLToPath(near)), `${entry}.ts`)).href;
    const code = `import(${JSON.stringify(tsxEsmApiUrl())}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`;
    return gateNewWorker(() => new Worker(code, { eval: true, workerData: options.workerData, execArgv: [], resourceLimits: options.resourceLimits }));
  }
  for (const dir of [dirname(here), dirname(dirname(here))]) {
    const f = join(dir, `${entry}.js`);
    if (existsSync(f)) return gateNewWorker(() => new Worker(pathToFileURL(f), { workerData: options.workerData, resourceLimits: options.resourceLimits }));
  }
  throw new KlxError('internal', `the worker ${entry}.js is missing next to ${here}: the build is incomplete`);
}
