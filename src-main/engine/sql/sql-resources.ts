/**
 * How much of the machine DuckDB may take while it builds or queries the SQL tables (issue 16: the
 * process stays under 1 GiB of RSS whatever the log size), and the temporary folders it leaves.
 *
 * - `memory_limit`: an eighth of the machine's memory, between 128 MiB and {@link DUCKDB_MEMORY_CAP_BYTES}
 *   (512 MiB), unless the caller gives one (`klx query --memory-limit`, `parseMemorySize`; these
 *   live in `sql-defaults.ts`, DuckDB-free, for the command line's help).
 *   DuckDB keeps its buffer pool, hash tables and sorts within it and spills the rest to
 *   `temp_directory` (DuckDB's default would be 80 % of the machine's memory); what cannot spill
 *   (a `string_agg` or `list` group's state...) fails with DuckDB's "Out of Memory Error", which the
 *   session reports as KlxError `out-of-memory` naming the limit ({@link outOfMemoryError}).
 * - `temp_directory`: `<tmpdir>/klx-duckdb-<pid>`, created by DuckDB when it first spills and
 *   removed by DuckDB when the database closes; a killed process leaves it, and the next klx
 *   process to use DuckDB removes it ({@link removeLeftoverTempDirs}).
 * - `threads`: the cores Node reports (`os.availableParallelism()`).
 */
import { readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { isProcessAlive } from '../log/log-lock.ts';
import { duckdbMemoryLimitBytes, formatMemorySize } from './sql-defaults.ts';

export { DUCKDB_MEMORY_CAP_BYTES, DUCKDB_MEMORY_FLOOR_BYTES, DUCKDB_MEMORY_MIN_BYTES, duckdbMemoryLimitBytes, formatMemorySize, parseMemorySize } from './sql-defaults.ts';

/**
 * The DuckDB configuration options of the memory limit, the temp directory and threads. The first
 * call of a process also removes what killed klx processes left in the temp folder
 * ({@link removeLeftoverTempDirs}), so any DuckDB user (query, export, the app) cleans up.
 * @param memoryLimitBytes the limit; default {@link duckdbMemoryLimitBytes}.
 */
export function duckdbResourceOptions(memoryLimitBytes: number = duckdbMemoryLimitBytes()): Record<string, string> {
  removeLeftoverTempDirsOnce();
  return {
    // In KiB: DuckDB's setting takes whole units, and KiB keeps any limit given within 1 KiB.
    memory_limit: `${Math.floor(memoryLimitBytes / 1024)}KiB`,
    temp_directory: join(tmpdir(), `klx-duckdb-${process.pid}`),
    threads: String(Math.max(1, availableParallelism())),
  };
}

/**
 * The KlxError `out-of-memory` for DuckDB's "Out of Memory Error" (`message`, its first line kept), naming the
 * limit that was hit and how to raise it; null when `message` is not one.
 */
export function outOfMemoryError(message: string, memoryLimitBytes: number, cause?: unknown): KlxError | null {
  if (!/^Out of Memory Error/i.test(message)) return null;
  // DuckDB's own advice after the first line (SET memory_limit...) is what klx refuses: the first line only.
  const first = message.split('\n', 1)[0]!.trim();
  return new KlxError(
    'out-of-memory',
    `the query needs more memory than DuckDB's memory limit of ${formatMemorySize(memoryLimitBytes)} (what it could not spill to disk; DuckDB: ${first}); raise the limit with --memory-limit SIZE (klx query, e.g. --memory-limit 2GiB), or aggregate less per group`,
    { details: { memoryLimitBytes }, cause },
  );
}

let swept = false;

/** {@link removeLeftoverTempDirs} of the OS temp folder, once per process. */
export function removeLeftoverTempDirsOnce(): void {
  if (swept) return;
  swept = true;
  removeLeftoverTempDirs();
}

/** Prefix of the temporary folder of a table set built without cache: `klx-sql-<pid>-` + random. */
export function tempTablesPrefix(): string {
  return `klx-sql-${process.pid}-`;
}

/**
 * Removes what killed klx processes left in `dir` (default the OS temp folder): table sets built
 * without cache (`klx-sql-<pid>-*`) and DuckDB spill folders (`klx-duckdb-<pid>`) whose process is
 * gone (`isProcessAlive`; a process of another user counts as alive). Best effort: a folder that
 * cannot be removed stays.
 * @returns the names removed.
 */
export function removeLeftoverTempDirs(dir: string = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const n of names) {
    const m = /^klx-(?:sql-(\d+)-[A-Za-z0-9]+|duckdb-(\d+))$/.exec(n);
    if (!m) continue;
    const pid = Number(m[1] ?? m[2]);
    if (pid === process.pid || isProcessAlive(pid)) continue;
    try {
      rmSync(join(dir, n), { recursive: true, force: true });
      removed.push(n);
    } catch {
      // left for a later run
    }
  }
  return removed;
}
