/**
 * The defaults of SQL over logs that callers show before loading DuckDB: where the built tables are
 * cached (`table-cache.ts`) and how many bytes of a value `records.value` keeps (`log-tables.ts`);
 * both modules re-export them.
 *
 * Only Node's `os` and `path`: the `klx query` help shows these without loading DuckDB.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

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
