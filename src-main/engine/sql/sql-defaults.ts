/**
 * The defaults of SQL over logs that callers show before loading DuckDB: where the built tables are
 * cached (`table-cache.ts`), how many bytes of a value `records.value` keeps (`log-tables.ts`) and
 * DuckDB's memory limit (`sql-resources.ts`); those modules re-export them.
 *
 * Only Node's `os` and `path` and the error type: the `klx query` help shows these without loading DuckDB.
 */
import { homedir, totalmem } from 'node:os';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';

/** Default cap on the bytes of a value kept in `records.value` (16 KiB). */
export const DEFAULT_VALUE_CAP_BYTES = 16 * 1024;

/** Name of the cache folder under the platform cache directory. */
export const CACHE_DIR_NAME = 'kafka-log-explorer';

/**
 * The default cache directory of the command line: `$XDG_CACHE_HOME/kafka-log-explorer`, else
 * `~/.cache/kafka-log-explorer`.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && xdg.trim() !== '' ? xdg : join(homedir(), '.cache'), CACHE_DIR_NAME);
}

/** Upper bound of DuckDB's default `memory_limit` (bytes). */
export const DUCKDB_MEMORY_CAP_BYTES = 512 * 1024 * 1024;
/** Lower bound of DuckDB's default `memory_limit` (bytes). */
export const DUCKDB_MEMORY_FLOOR_BYTES = 128 * 1024 * 1024;
/** Smallest `memory_limit` a caller may give (bytes): below it DuckDB cannot even open the tables. */
export const DUCKDB_MEMORY_MIN_BYTES = 16 * 1024 * 1024;

/** DuckDB's default `memory_limit` in bytes for a machine with `machineBytes` of memory (see the module comment). */
export function duckdbMemoryLimitBytes(machineBytes: number = totalmem()): number {
  return Math.max(DUCKDB_MEMORY_FLOOR_BYTES, Math.min(DUCKDB_MEMORY_CAP_BYTES, Math.floor(machineBytes / 8)));
}

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
};

/**
 * Parses a memory size as `klx query --memory-limit` takes it: a number and a unit, `512MiB`,
 * `2GiB`, `1.5GB`, `800M` (K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB of 1000, B
 * or no unit bytes; case and a space before the unit do not matter).
 * @returns bytes (an integer).
 * @throws KlxError `invalid-argument` for text that is not a size, a size below
 *   {@link DUCKDB_MEMORY_MIN_BYTES} (16 MiB) or above the machine's memory (`os.totalmem()`).
 */
export function parseMemorySize(text: string, machineBytes: number = totalmem()): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[(m[2] || 'b').toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new KlxError('invalid-argument', `--memory-limit must be a size such as 512MiB or 2GiB, got '${text}'`);
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < DUCKDB_MEMORY_MIN_BYTES) throw new KlxError('invalid-argument', `--memory-limit ${text} is below the ${formatMemorySize(DUCKDB_MEMORY_MIN_BYTES)} DuckDB needs to open the tables`);
  if (bytes > machineBytes) throw new KlxError('invalid-argument', `--memory-limit ${text} is more than this machine's memory (${formatMemorySize(machineBytes)})`);
  return bytes;
}

/** A size in bytes as MiB or GiB text (`512 MiB`, `2.0 GiB`). */
export function formatMemorySize(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
}
