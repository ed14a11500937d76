/**
 * Where a records export writes before its output is complete (`record-export.ts`), and how what a
 * killed export left is recognised. The output is written as `.<name>.klx-partial-<pid>` beside it
 * and renamed to `<name>` once complete, so a killed run never leaves a partial output under the
 * name asked for. A single Parquet file is first staged in a temporary DuckDB database
 * (`.<name>.klx-staging-<pid>.duckdb`, its write-ahead log `….duckdb.wal`) with a spill folder
 * (`….tmp/`). A run removes them when it ends, also on failure or Ctrl-C; a run killed outright
 * (SIGKILL, a crash) leaves them, and the next export to the same output finds them by name and
 * removes those of a process that is gone.
 *
 * No DuckDB import here: the app's main thread uses it to clean up after a worker it ended.
 */
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isProcessAlive } from '../log/log-lock.ts';

/** The staging paths of an export to `out` by process `pid` (bytes on disk: see the module comment). */
export interface StagingPaths {
  /** The temporary DuckDB database file. */
  db: string;
  /** Its write-ahead log. */
  wal: string;
  /** DuckDB's spill folder (`temp_directory`). */
  tmp: string;
  /** The output while it is written (renamed to the output when complete). */
  partial: string;
}

/** The staging paths of an export to `out` by process `pid` (default this process). */
export function stagingPathsOf(out: string, pid: number = process.pid): StagingPaths {
  const db = join(dirname(out), `.${basename(out)}.klx-staging-${pid}.duckdb`);
  return { db, wal: `${db}.wal`, tmp: join(dirname(out), `.${basename(out)}.klx-staging-${pid}.tmp`), partial: join(dirname(out), `.${basename(out)}.klx-partial-${pid}`) };
}

/** Removes the staging files and the partial output of an export to `out` by process `pid` (missing ones are fine). */
export async function removeStaging(out: string, pid: number = process.pid): Promise<void> {
  const p = stagingPathsOf(out, pid);
  await Promise.all([rm(p.db, { force: true }), rm(p.wal, { force: true }), rm(p.tmp, { force: true, recursive: true }), rm(p.partial, { force: true, recursive: true })]);
}

/** What {@link clearLeftoverStaging} found beside `out`. */
export interface LeftoverStaging {
  /** Processes gone whose staging files were removed. */
  removed: number[];
  /** Processes still running that stage an export to the same output. */
  running: number[];
}

/**
 * Finds staging files of earlier exports to `out` (any pid but this process's): removes those of
 * processes that are gone, lists those still running.
 * @throws what reading the folder throws other than ENOENT.
 */
export async function clearLeftoverStaging(out: string): Promise<LeftoverStaging> {
  const prefix = `.${basename(out)}.klx-`;
  const found: LeftoverStaging = { removed: [], running: [] };
  let names: string[];
  try {
    names = await readdir(dirname(out));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return found;
    throw err;
  }
  const pids = new Set<number>();
  for (const n of names) {
    if (!n.startsWith(prefix)) continue;
    const m = /^(?:staging-(\d+)\.(?:duckdb|duckdb\.wal|tmp)|partial-(\d+))$/.exec(n.slice(prefix.length));
    if (m) pids.add(Number(m[1] ?? m[2]));
  }
  for (const pid of [...pids].sort((a, b) => a - b)) {
    if (pid === process.pid) continue;
    if (isProcessAlive(pid)) found.running.push(pid);
    else {
      await removeStaging(out, pid);
      found.removed.push(pid);
    }
  }
  return found;
}
