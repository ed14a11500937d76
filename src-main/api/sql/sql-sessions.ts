/**
 * The SQL sessions of one API context (an app window or a bridge): at most one open
 * {@link SqlSession} per folder, shared by every query on it, kept up to date with the files.
 *
 * Freshness: a session remembers a cheap stamp of its folder taken before its tables were prepared
 * (name, size, mtime and inode of every file up to three folder levels down: log directories,
 * partition folders, segments, checkpoints). Before each use the stamp is taken again; when it
 * differs, or when a `log.changed` event named a partition inside the folder (a cleanup, an append,
 * a roll done through the app), the session is replaced: `SqlSession.open` then reuses the cached
 * table set when the engine's fingerprint says nothing relevant changed, or rebuilds it.
 *
 * Sharing: two jobs asking for the same folder while its tables are being built wait for the same
 * build (each sees its progress); the build is cancelled only when every waiting job was cancelled.
 * A replaced session is closed once the queries running on it (its leases) have finished. At most
 * {@link MAX_SQL_SESSIONS} sessions stay open (least recently used closed first), and a session
 * unused for {@link IDLE_CLOSE_MS} is closed (reopening it from the cache costs a cache check).
 *
 * Decoded columns (`key_decoded`, `value_decoded`, ...) are built with the folder's format choices
 * (`decode.setChoice`, persisted per folder); a change of choices (`decode.choices` event) makes the
 * folder's session stale; the next session decodes with the new choices over the same cached tables
 * (they keep no decoded value: `decodeFingerprint`).
 *
 * Table sets live in the cache folder (`configureSql`, default the `klx query` cache:
 * `$XDG_CACHE_HOME/kafka-log-explorer`), never next to the logs: the user's folders are only read.
 * Exports (`sql.export`) are written to `<cache folder>/exports` and expire after an hour.
 */
import { startEntryWorker } from '../core/entry-worker.ts';
import { SQL_BUILD_WORKER } from '../../engine/sql/sql-build-pool.ts';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import type { ReadProgress } from '../../engine/log/fetch.ts';
import { SqlSession } from '../../engine/sql/sql-session.ts';
import { defaultCacheDir } from '../../engine/sql/table-cache.ts';
import type { SqlOpenResult, SqlTable } from '../../../src-shared/sql-types.ts';
import { SQL_TABLE_DOCS, SQL_TABLE_NAMES } from '../../../src-shared/sql-types.ts';
import { isInsideDir } from '../core/paths.ts';
import { folderDecodersOf } from '../core/folder-decoders.ts';
import type { FormatChoices } from '../../engine/decode/format.ts';
import type { ApiContext } from '../core/types.ts';

/** Most sessions one context keeps open. */
export const MAX_SQL_SESSIONS = 4;
/** A session nobody used for this long (ms) is closed (its table set stays in the cache). */
export const IDLE_CLOSE_MS = 10 * 60 * 1000;
/** An export file is deleted this long after it was written (ms). */
export const EXPORT_TTL_MS = 60 * 60 * 1000;
/** Most files the freshness stamp looks at; beyond, only folder mtimes count. */
const STAMP_MAX_ENTRIES = 200_000;

/** Options of the SQL side of a context. */
export interface SqlConfig {
  /** Where table sets and exports are kept (default {@link defaultCacheDir}). */
  cacheDir: string;
  /** The format choices of a folder (per topic and side) the decoded columns are built with; default none (auto). */
  choicesOf?: (root: string) => FormatChoices;
}

/** What a session's tables are: the `sql.open` answer minus timing (computed once per session). */
export type SqlSchema = Omit<SqlOpenResult, 'elapsedMs'>;

interface Entry {
  root: string;
  stamp: string;
  session: SqlSession;
  stale: boolean;
  retired: boolean;
  leases: number;
  schema?: Promise<SqlSchema>;
  idleTimer?: ReturnType<typeof setTimeout>;
}

interface Opening {
  promise: Promise<Entry>;
  controller: AbortController;
  listeners: Set<(p: ReadProgress) => void>;
  waiters: number;
}

/** A session lent to one job; `release()` when the job is done with it. */
export interface SqlLease {
  readonly session: SqlSession;
  /** True when this call opened (built or reloaded) the tables. */
  readonly opened: boolean;
  /** The session's tables, columns and row counts (computed on first use). */
  schema(): Promise<SqlSchema>;
  release(): void;
}

/** Options of {@link SqlRegistry.lease}. */
export interface LeaseOptions {
  signal?: AbortSignal;
  onProgress?: (p: ReadProgress) => void;
}

/** An export file waiting to be fetched. */
export interface ExportFile {
  id: string;
  file: string;
  fileName: string;
  createdAt: number;
}

async function stampLines(dir: string, depth: number, out: string[]): Promise<void> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    out.push(`unreadable\t${dir}`);
    return;
  }
  for (const n of names) {
    if (out.length >= STAMP_MAX_ENTRIES) return;
    const p = join(dir, n);
    let st;
    try {
      st = await stat(p);
    } catch {
      continue; // removed while listing
    }
    if (st.isDirectory()) {
      out.push(`d\t${p}\t${st.mtimeMs}`);
      if (depth > 0) await stampLines(p, depth - 1, out);
    } else if (st.isFile()) out.push(`f\t${p}\t${st.size}\t${st.mtimeMs}\t${st.ino}`);
  }
}

/**
 * A cheap stamp of a folder's state (see the module comment): changes whenever a file of a
 * partition, a log directory or the folder itself is added, removed, rewritten or appended to.
 */
export async function folderStamp(root: string): Promise<string> {
  const out: string[] = [];
  await stampLines(root, 2, out);
  return out.join('\n');
}

/** Sessions and exports of one context. */
export class SqlRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly opening = new Map<string, Opening>();
  private readonly exports = new Map<string, ExportFile>();
  config: SqlConfig;

  constructor(config: SqlConfig) {
    this.config = config;
  }

  /**
   * Lends the session of `root` (a real path already checked by the session state), opening or
   * replacing it when it is missing or stale.
   * @throws what `SqlSession.open` throws (`not-a-log-dir`, `not-found`, `io-error`...); KlxError
   *   `cancelled` when `signal` is aborted while waiting.
   */
  async lease(root: string, opts: LeaseOptions = {}): Promise<SqlLease> {
    const current = this.entries.get(root);
    if (current && !current.stale && !current.retired) {
      const stamp = await folderStamp(root);
      if (stamp === current.stamp && !current.stale && !current.retired) return this.lend(current, false);
    }
    let op = this.opening.get(root);
    if (!op) op = this.startOpening(root);
    const { listeners } = op;
    const onProgress = opts.onProgress;
    if (onProgress) listeners.add(onProgress);
    op.waiters++;
    const o = op;
    try {
      const entry = await abortable(o.promise, opts.signal);
      return this.lend(entry, true);
    } finally {
      o.waiters--;
      if (onProgress) listeners.delete(onProgress);
      if (opts.signal?.aborted && o.waiters === 0 && this.opening.get(root) === o) {
        // Nobody waits for this build any more: stop it (a later lease starts a fresh one).
        this.opening.delete(root);
        o.controller.abort(new KlxError('cancelled', 'building the SQL tables was cancelled'));
      }
    }
  }

  /** Marks the sessions of folders holding (or inside) any of `dirs` as stale: the next use reopens them. */
  markChanged(dirs: readonly string[]): void {
    for (const e of this.entries.values()) {
      if (dirs.some((d) => isInsideDir(d, e.root) || isInsideDir(e.root, d))) e.stale = true;
    }
  }

  /** Closes every session (the context is going away). */
  closeAll(): void {
    for (const e of this.entries.values()) this.retire(e);
    this.entries.clear();
  }

  /** A new export file path in `<cacheDir>/exports` (older exports are swept first). */
  newExport(fileName: string): ExportFile {
    this.sweepExports();
    const dir = join(this.config.cacheDir, 'exports');
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new KlxError('io-error', `cannot create the export folder: ${(err as Error).message}`, { file: dir, cause: err });
    }
    const id = randomBytes(12).toString('base64url');
    const ext = fileName.slice(fileName.lastIndexOf('.'));
    return { id, file: join(dir, `${id}${ext}`), fileName, createdAt: Date.now() };
  }

  /** Registers a completed export. */
  addExport(e: ExportFile): void {
    this.exports.set(e.id, e);
  }

  /** A completed export by id. @throws KlxError `not-found` when unknown or expired. */
  exportById(id: string): ExportFile {
    const e = this.exports.get(id);
    if (!e || Date.now() - e.createdAt > EXPORT_TTL_MS) {
      if (e) this.discardExport(id);
      throw new KlxError('not-found', `no export with id ${id} (exports are kept for an hour; export again)`);
    }
    return e;
  }

  /** Deletes an export's file; false when it was unknown. */
  discardExport(id: string): boolean {
    const e = this.exports.get(id);
    if (!e) return false;
    this.exports.delete(id);
    rmSync(e.file, { force: true });
    return true;
  }

  private sweepExports(): void {
    const now = Date.now();
    for (const [id, e] of this.exports) if (now - e.createdAt > EXPORT_TTL_MS) this.discardExport(id);
    // Files of earlier runs (the app was closed before they were fetched).
    const dir = join(this.config.cacheDir, 'exports');
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      try {
        if (now - statSync(p).mtimeMs > EXPORT_TTL_MS) rmSync(p, { force: true });
      } catch {
        // gone already
      }
    }
  }

  private startOpening(root: string): Opening {
    const controller = new AbortController();
    const listeners = new Set<(p: ReadProgress) => void>();
    const promise = (async (): Promise<Entry> => {
      const stamp = await folderStamp(root);
      const session = await SqlSession.open(root, {
        cacheDir: this.config.cacheDir,
        decode: { choices: this.config.choicesOf?.(root) ?? {} },
        signal: controller.signal,
        onProgress: (p) => listeners.forEach((l) => l(p)),
        // segments decoded in worker threads, off this event loop (issue 16)
        startWorker: () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near),
      });
      const entry: Entry = { root, stamp, session, stale: false, retired: false, leases: 0 };
      const old = this.entries.get(root);
      if (old) this.retire(old);
      this.entries.delete(root);
      this.entries.set(root, entry);
      this.closeWhenIdle(entry); // in case every job waiting for it was cancelled meanwhile
      this.evict();
      return entry;
    })();
    const op: Opening = { promise, controller, listeners, waiters: 0 };
    this.opening.set(root, op);
    const done = () => {
      if (this.opening.get(root) === op) this.opening.delete(root);
    };
    promise.then(done, done);
    return op;
  }

  private lend(entry: Entry, opened: boolean): SqlLease {
    entry.leases++;
    clearTimeout(entry.idleTimer);
    // Most recently used last.
    if (this.entries.get(entry.root) === entry) {
      this.entries.delete(entry.root);
      this.entries.set(entry.root, entry);
    }
    let released = false;
    return {
      session: entry.session,
      opened,
      schema: () => (entry.schema ??= schemaOf(entry.session)),
      release: () => {
        if (released) return;
        released = true;
        entry.leases--;
        if (entry.leases > 0) return;
        if (entry.retired) entry.session.close();
        else this.closeWhenIdle(entry);
      },
    };
  }

  /** Closes `entry` after {@link IDLE_CLOSE_MS} unless it is lent again before. */
  private closeWhenIdle(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.leases > 0 || this.entries.get(entry.root) !== entry) return;
      this.entries.delete(entry.root);
      this.retire(entry);
    }, IDLE_CLOSE_MS);
    entry.idleTimer.unref?.();
  }

  private retire(e: Entry): void {
    clearTimeout(e.idleTimer);
    e.retired = true;
    if (e.leases === 0) e.session.close();
  }

  private evict(): void {
    for (const e of [...this.entries.values()]) {
      if (this.entries.size <= MAX_SQL_SESSIONS) break;
      this.entries.delete(e.root);
      this.retire(e);
    }
  }
}

/** Resolves like `p`, or rejects with `cancelled` as soon as `signal` aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new KlxError('cancelled', 'cancelled', { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new KlxError('cancelled', 'cancelled', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** Rows of a catalogue query as objects. */
async function catalogue(session: SqlSession, sql: string): Promise<Record<string, unknown>[]> {
  const r = await session.query(sql, { limit: Infinity });
  return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i]])));
}

/** The tables of a session with their columns (quoted when reserved), types and row counts. */
async function schemaOf(session: SqlSession): Promise<SqlSchema> {
  const reserved = (await catalogue(session, `SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved' ORDER BY 1`)).map((r) => String(r.keyword_name));
  const reservedSet = new Set(reserved);
  const cols = await catalogue(
    session,
    `SELECT c.table_name, c.column_name, c.data_type, t.table_type FROM information_schema.columns c ` +
      `JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name ` +
      `WHERE c.table_schema = 'main' ORDER BY c.table_name, c.ordinal_position`,
  );
  const byName = new Map<string, SqlTable>();
  for (const c of cols) {
    const name = String(c.table_name);
    let t = byName.get(name);
    if (!t) {
      t = { name, kind: c.table_type === 'VIEW' ? 'view' : 'table', rows: 0, columns: [], doc: SQL_TABLE_DOCS[name] ?? '' };
      byName.set(name, t);
    }
    const col = String(c.column_name);
    const plain = /^[a-z_][a-z0-9_]*$/.test(col) && !reservedSet.has(col);
    t.columns.push({ name: col, type: String(c.data_type), sqlName: plain ? col : `"${col.replaceAll('"', '""')}"` });
  }
  const order = (n: string) => {
    const i = (SQL_TABLE_NAMES as readonly string[]).indexOf(n);
    return i < 0 ? SQL_TABLE_NAMES.length : i;
  };
  const tables = [...byName.values()].sort((a, b) => order(a.name) - order(b.name) || a.name.localeCompare(b.name));
  if (tables.length > 0) {
    const counts = await catalogue(session, tables.map((t) => `SELECT '${t.name}' AS name, count(*) AS n FROM "${t.name}"`).join(' UNION ALL '));
    const n = new Map(counts.map((r) => [String(r.name), Number(r.n)]));
    for (const t of tables) t.rows = n.get(t.name) ?? 0;
  }
  const b = session.buildSummary;
  return {
    root: session.root,
    fromCache: session.reused,
    build: b
      ? { partitions: b.partitions, segments: b.segments, batches: b.batches, records: b.records, damage: b.damage, holes: b.holes, abortedTransactions: b.abortedTransactions, bytes: b.bytes, elapsedMs: b.elapsedMs }
      : null,
    tables,
    reservedWords: reserved,
    notices: await session.notices(),
  };
}

const registries = new WeakMap<ApiContext, SqlRegistry>();

/** The {@link SqlRegistry} of a context (made on first use, with the default cache folder). */
export function sqlRegistryOf(ctx: ApiContext): SqlRegistry {
  let r = registries.get(ctx);
  if (!r) {
    const decoders = folderDecodersOf(ctx);
    r = new SqlRegistry({ cacheDir: defaultCacheDir(), choicesOf: (root) => decoders.choices(root) });
    registries.set(ctx, r);
  }
  return r;
}

/**
 * Sets where a context keeps its SQL table sets and exports (the Electron main process may pass
 * its user-data folder; tests pass a temporary folder). Sessions already open stay open.
 */
export function configureSql(ctx: ApiContext, config: Partial<SqlConfig>): void {
  const r = sqlRegistryOf(ctx);
  r.config = { ...r.config, ...config };
}
