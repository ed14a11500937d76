/**
 * The cache of built table sets (issue 7): one DuckDB database file per opened folder and folder
 * state, in a cache directory the caller chooses (the app's user-data folder; for `klx`,
 * `$XDG_CACHE_HOME/kafka-log-explorer` or `~/.cache/kafka-log-explorer`), so reopening a large log
 * costs a directory listing instead of a full read.
 *
 * Naming: `<key>-<state>.duckdb`, where `key` = the first 16 hex digits of SHA-256(resolved folder
 * path) and `state` = the first 16 hex digits of the folder's {@link folderFingerprint}: the name,
 * size, mtime, ctime and inode of every file of every opened partition folder and of the log
 * directories' own files (checkpoints...), plus the table schema version, the value cap, the
 * decompression bound and the schema files given (their contents, `decodeFingerprint`; not the
 * format choices: decoded columns are computed when a query reads them, with the session's choices). Any
 * append, cleanup, retention or checkpoint update changes the fingerprint, so the next open builds a
 * new file; an unchanged folder reuses its file.
 *
 * Crash safety: a table set is built into `<key>-<state>.building-<pid>-<random>.duckdb`, checkpointed
 * and closed, and only then renamed to its final name (an atomic rename), so a final name always
 * holds a complete table set; a crash leaves only a `.building-` file, removed by a later open once
 * its process is gone. A folder that changes while it is being read is not cached (the tables are
 * used once and deleted). Files of older states of the same folder are deleted after a successful
 * build (best effort: a file another process still has open is left for later).
 *
 * Beside its table sets, each folder has `<key>.root`, a text file holding its resolved path: a
 * later open removes the files of every key whose folder no longer exists (a deleted or moved log
 * leaves no cache behind). Folders that were never opened again are only removed this way or by
 * deleting the cache folder (safe at any time when no klx runs: it is rebuilt on use).
 *
 * The cache folder is made with its missing parents one by one, so a place that cannot hold a
 * folder (`/proc/nope`, a path under a file) is a KlxError `io-error` naming it at once.
 *
 * Without a cache folder, the tables go to `<tmpdir>/klx-sql-<pid>-<random>`, removed on release;
 * one left by a killed process is removed by the next open (`removeLeftoverTempDirs`).
 *
 * The source folder is only read, never written.
 */
import { decodeFingerprint } from './decode-columns.ts';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { DuckDBInstance } from './duckdb.ts';
import { KlxError } from '../errors.ts';
import { openPath, type OpenedLogs } from '../log/log-dir.ts';
import { isProcessAlive } from '../log/log-lock.ts';
import { buildLogTables, INTERNAL_SCHEMA, LOG_TABLES_SCHEMA_VERSION, quoteLiteral, type BuildLogTablesOptions, type BuildSummary } from './log-tables.ts';
import { CACHE_DIR_NAME, DEFAULT_VALUE_CAP_BYTES, defaultCacheDir } from './sql-defaults.ts';
import { duckdbMemoryLimitBytes, duckdbResourceOptions, outOfMemoryError, removeLeftoverTempDirsOnce, tempTablesPrefix } from './sql-resources.ts';
import { maxInflatedBytes } from '../format/compression.ts';

/** The cache folder's name and default place live in `sql-defaults.ts` (DuckDB-free, for the command line). */
export { CACHE_DIR_NAME, defaultCacheDir };

/** Cache key of a folder: 16 hex digits of SHA-256 of its resolved path. */
export function cacheKey(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 16);
}

function statLine(path: string, label: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile()) return null;
    return `${label}\t${st.size}\t${st.mtimeMs}\t${st.ctimeMs}\t${st.ino}`;
  } catch {
    return null; // removed while listing
  }
}

function filesOf(dir: string, root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    throw new KlxError('io-error', `cannot list folder: ${(err as Error).message}`, { file: dir, cause: err });
  }
  const lines: string[] = [];
  for (const n of names) {
    const l = statLine(join(dir, n), relative(root, join(dir, n)));
    if (l !== null) lines.push(l);
  }
  return lines;
}

/**
 * The fingerprint of an opened folder's state (see the module comment), as 64 hex digits.
 * @param valueCapBytes part of the fingerprint: a different cap gives different tables.
 * @param decode part of the fingerprint: what decoding depends on (`decodeFingerprint`).
 * The decompression bound of the process (`maxInflatedBytes`) is part of it too.
 * @throws KlxError `io-error` when a folder cannot be listed.
 */
export function folderFingerprint(opened: OpenedLogs, valueCapBytes: number = DEFAULT_VALUE_CAP_BYTES, decode: string = decodeFingerprint(undefined)): string {
  const h = createHash('sha256');
  // The decompression bound decides which batches are read (a batch past it is not checked).
  h.update(`klx-sql-tables\t${LOG_TABLES_SCHEMA_VERSION}\tcap\t${valueCapBytes}\tdecode\t${decode}\tinflate\t${maxInflatedBytes() ?? 'default'}\n`);
  for (const d of opened.logDirs) {
    h.update(`logdir\t${relative(opened.root, d.path)}\n`);
    for (const l of filesOf(d.path, opened.root)) h.update(l + '\n');
    for (const p of d.partitions) {
      h.update(`partition\t${relative(opened.root, p.dir)}\n`);
      for (const l of filesOf(p.dir, opened.root)) h.update(l + '\n');
    }
  }
  return h.digest('hex');
}

/** Options of {@link prepareLogTables}. */
export interface TableCacheOptions extends BuildLogTablesOptions {
  /** Where cache files live. Absent: the tables are built into a temporary folder deleted by `release()`. */
  cacheDir?: string;
  /** Build even when a cache file for the current state exists. */
  rebuild?: boolean;
  /** DuckDB's memory limit while building and querying (bytes; default `duckdbMemoryLimitBytes()`, see `sql-resources.ts`). */
  memoryLimitBytes?: number;
}

/**
 * Makes `dir` and its missing parents, one `mkdir` each (Node's recursive mkdir loops forever under
 * `/proc`).
 * @throws KlxError `io-error` naming the folder that could not be made and why.
 */
export function makeCacheDir(dir: string): void {
  const missing: string[] = [];
  let d = resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw new KlxError('io-error', `cannot create the SQL cache folder: ${(err as Error).message}`, { file: dir, cause: err });
      missing.push(d);
      const up = dirname(d);
      if (up === d) break;
      d = up;
      continue;
    }
    if (!st.isDirectory()) throw new KlxError('io-error', `cannot create the SQL cache folder: ${d} is not a folder`, { file: dir });
    break;
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(m, { throwIfNoEntry: false })?.isDirectory()) continue;
      throw new KlxError('io-error', `cannot create the SQL cache folder: ${(err as Error).message}`, { file: dir, cause: err });
    }
  }
}

/** Writes `<key>.root` (the folder's path) beside a cached table set, when missing. Best effort: without it the set is only pruned by hand. */
function noteRoot(cacheDir: string, key: string, root: string): void {
  try {
    const sidecar = join(cacheDir, `${key}.root`);
    if (!existsSync(sidecar)) writeFileSync(sidecar, root);
  } catch {
    // read-only cache folder...
  }
}

/**
 * Removes the table sets of folders that no longer exist: every `<key>.root` naming a path that is
 * gone takes its `<key>-*.duckdb` files with it. Best effort (a file still open elsewhere stays).
 * @returns the keys removed.
 */
export function removeCachesOfGoneFolders(cacheDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return [];
  }
  const gone: string[] = [];
  for (const n of names) {
    const m = /^([0-9a-f]{16})\.root$/.exec(n);
    if (!m) continue;
    let root: string;
    try {
      root = readFileSync(join(cacheDir, n), 'utf8');
    } catch {
      continue;
    }
    if (root === '' || existsSync(root)) continue;
    const key = m[1]!;
    try {
      for (const f of names) if (f.startsWith(`${key}-`) && !/\.building-/.test(f)) rmSync(join(cacheDir, f), { force: true, recursive: true });
      rmSync(join(cacheDir, n), { force: true });
      gone.push(key);
    } catch {
      // left for a later open
    }
  }
  return gone;
}

/** A table set ready to be opened read-only. */
export interface PreparedTables {
  /** The opened folder (resolved). */
  root: string;
  opened: OpenedLogs;
  /** The DuckDB file holding the tables. */
  dbPath: string;
  /** Fingerprint of the folder the tables were built from (64 hex digits). */
  fingerprint: string;
  /** True when an existing cache file was used (nothing was read from the logs). */
  reused: boolean;
  /** True when the file stays in the cache after `release()`. */
  persistent: boolean;
  /** What the build wrote; null when reused. */
  summary: BuildSummary | null;
  /** Deletes the file when it is not persistent (temporary folder, or a folder that changed while read). */
  release(): void;
}

function removeDbFile(path: string): void {
  for (const p of [path, `${path}.wal`, `${path}.tmp`]) rmSync(p, { force: true, recursive: true });
}

/** True when `path` opens read-only and its meta table says it is a complete table set of this schema version. */
async function isCompleteTableSet(path: string): Promise<boolean> {
  let instance: DuckDBInstance | undefined;
  try {
    instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const r = await conn.runAndReadAll(`SELECT key, value FROM ${INTERNAL_SCHEMA}.meta`);
      const meta = new Map(r.getRowsJS().map(([k, v]) => [String(k), String(v)]));
      return meta.get('complete') === 'true' && meta.get('schema_version') === String(LOG_TABLES_SCHEMA_VERSION);
    } finally {
      conn.closeSync();
    }
  } catch {
    return false;
  } finally {
    instance?.closeSync();
  }
}

/** Deletes other states of this folder and `.building-` files of processes that are gone. Best effort. */
function removeStaleFiles(cacheDir: string, key: string, keep: string): void {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.startsWith(`${key}-`) || join(cacheDir, n) === keep) continue;
    const building = /\.building-(\d+)-[0-9a-f]+\.duckdb(\.wal)?$/.exec(n);
    if (building) {
      if (!isProcessAlive(Number(building[1]))) rmSync(join(cacheDir, n), { force: true, recursive: true });
      continue;
    }
    if (/\.duckdb(\.wal)?$/.test(n)) {
      try {
        rmSync(join(cacheDir, n), { force: true });
      } catch {
        // Still open elsewhere (Windows): left for a later open.
      }
    }
  }
}

/**
 * Opens `path` (a log directory, a partition folder or a folder of log directories, as `openPath`)
 * and returns a DuckDB file holding its tables: the cached one when the folder is unchanged, else a
 * freshly built one (see the module comment).
 * @throws KlxError `not-found` / `not-a-log-dir` for the path (from `openPath`), `cancelled`,
 *   `io-error` when the cache directory cannot be written, `invalid-argument` for a bad value cap,
 *   `internal` when DuckDB fails.
 */
export async function prepareLogTables(path: string, opts: TableCacheOptions = {}): Promise<PreparedTables> {
  const opened = openPath(path);
  const cap = opts.valueCapBytes ?? DEFAULT_VALUE_CAP_BYTES;
  const decodeKey = decodeFingerprint(opts.decode);
  const fingerprint = folderFingerprint(opened, cap, decodeKey);
  const key = cacheKey(opened.root);
  const state = fingerprint.slice(0, 16);

  let dir: string;
  let persistent: boolean;
  removeLeftoverTempDirsOnce();
  if (opts.cacheDir !== undefined) {
    dir = opts.cacheDir;
    makeCacheDir(dir);
    removeCachesOfGoneFolders(dir);
    persistent = true;
  } else {
    dir = mkdtempSync(join(tmpdir(), tempTablesPrefix()));
    persistent = false;
  }
  const finalPath = join(dir, `${key}-${state}.duckdb`);
  const tempFolder = persistent ? null : dir;
  const releaseTemp = (db: string) => () => {
    if (tempFolder) rmSync(tempFolder, { force: true, recursive: true });
    else removeDbFile(db);
  };

  if (persistent && !opts.rebuild && existsSync(finalPath) && (await isCompleteTableSet(finalPath))) {
    noteRoot(dir, key, opened.root);
    return { root: opened.root, opened, dbPath: finalPath, fingerprint, reused: true, persistent: true, summary: null, release: () => {} };
  }

  const buildPath = persistent ? join(dir, `${key}-${state}.building-${process.pid}-${randomBytes(4).toString('hex')}.duckdb`) : finalPath;
  let summary: BuildSummary;
  try {
    const instance = await DuckDBInstance.create(buildPath, duckdbResourceOptions(opts.memoryLimitBytes));
    try {
      const conn = await instance.connect();
      try {
        summary = await buildLogTables(conn, opened, { ...opts, valueCapBytes: cap });
        const meta: [string, string][] = [
          ['schema_version', String(LOG_TABLES_SCHEMA_VERSION)],
          ['root', opened.root],
          ['fingerprint', fingerprint],
          ['value_cap_bytes', String(cap)],
          ['built_at_ms', String(Date.now())],
          ['complete', 'true'],
        ];
        await conn.run(`INSERT INTO ${INTERNAL_SCHEMA}.meta VALUES ${meta.map(([k, v]) => `(${quoteLiteral(k)}, ${quoteLiteral(v)})`).join(', ')}`);
        await conn.run('CHECKPOINT');
      } finally {
        conn.closeSync();
      }
    } finally {
      instance.closeSync();
    }
  } catch (err) {
    if (persistent) removeDbFile(buildPath);
    else rmSync(dir, { force: true, recursive: true });
    if (err instanceof KlxError) throw err;
    const oom = outOfMemoryError((err as Error).message, opts.memoryLimitBytes ?? duckdbMemoryLimitBytes(), err);
    if (oom) throw oom;
    throw new KlxError('internal', `building the SQL tables failed: ${(err as Error).message}`, { file: buildPath, cause: err });
  }

  if (!persistent) return { root: opened.root, opened, dbPath: buildPath, fingerprint, reused: false, persistent: false, summary, release: releaseTemp(buildPath) };

  // A folder that changed while it was read gives tables of no single state: use them once, do not cache them.
  if (folderFingerprint(opened, cap, decodeKey) !== fingerprint) {
    return { root: opened.root, opened, dbPath: buildPath, fingerprint, reused: false, persistent: false, summary, release: releaseTemp(buildPath) };
  }
  try {
    renameSync(buildPath, finalPath);
  } catch (err) {
    removeDbFile(buildPath);
    throw new KlxError('io-error', `cannot move the built SQL tables into the cache: ${(err as Error).message}`, { file: finalPath, cause: err });
  }
  removeStaleFiles(dir, key, finalPath);
  noteRoot(dir, key, opened.root);
  return { root: opened.root, opened, dbPath: finalPath, fingerprint, reused: false, persistent: true, summary, release: () => {} };
}
