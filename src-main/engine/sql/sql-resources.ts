/**
 * How much of the machine DuckDB may take while it builds or queries the SQL tables (issue 16: the
 * process stays under 1 GiB of RSS whatever the log size).
 *
 * - `memory_limit`: an eighth of the machine's memory, between 128 MiB and {@link DUCKDB_MEMORY_CAP_BYTES}
 *   (512 MiB). DuckDB keeps its buffer pool, hash tables and sorts within it and spills the rest
 *   to `temp_directory` (DuckDB's default would be 80 % of the machine's memory).
 * - `temp_directory`: `<tmpdir>/klx-duckdb-<pid>`, created by DuckDB when it first spills and
 *   removed by DuckDB when the database closes.
 * - `threads`: the cores Node reports (`os.availableParallelism()`).
 */
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

/** Upper bound of DuckDB's `memory_limit` (bytes). */
export const DUCKDB_MEMORY_CAP_BYTES = 512 * 1024 * 1024;
/** Lower bound of DuckDB's `memory_limit` (bytes). */
export const DUCKDB_MEMORY_FLOOR_BYTES = 128 * 1024 * 1024;

/** DuckDB's `memory_limit` in bytes for a machine with `machineBytes` of memory (see the module comment). */
export function duckdbMemoryLimitBytes(machineBytes: number = totalmem()): number {
  return Math.max(DUCKDB_MEMORY_FLOOR_BYTES, Math.min(DUCKDB_MEMORY_CAP_BYTES, Math.floor(machineBytes / 8)));
}

/** The DuckDB configuration options of {@link duckdbMemoryLimitBytes}, the temp directory and threads. */
export function duckdbResourceOptions(): Record<string, string> {
  return {
    memory_limit: `${Math.floor(duckdbMemoryLimitBytes() / (1024 * 1024))}MiB`,
    temp_directory: join(tmpdir(), `klx-duckdb-${process.pid}`),
    threads: String(Math.max(1, availableParallelism())),
  };
}
