/**
 * Read-only SQL over the tables of an opened folder (issue 7), with DuckDB's own SQL dialect.
 *
 * A session prepares the folder's table set ({@link prepareLogTables}: cached or built now) and
 * opens that DuckDB file in a second, read-only DuckDB instance used only for the user's queries:
 * - the database is attached READ_ONLY, so nothing a statement does can change the tables;
 * - file access outside the tables is disabled (`enable_external_access=false`: no `read_csv` of
 *   other files, no `COPY ... TO`, no `ATTACH`, no extension download) and the configuration is
 *   locked;
 * - before running, the statement is parsed and prepared by DuckDB (`extractStatements`, then the
 *   prepared statement's type): exactly one statement, of type SELECT (which covers WITH, FROM-first
 *   queries, DESCRIBE, SHOW, SUMMARIZE, PIVOT and `PRAGMA table_info`, which DuckDB rewrites to
 *   SELECT) or EXPLAIN. Anything else is refused with a KlxError `read-only` naming the statement
 *   type. A statement DuckDB cannot even bind (a DELETE on a view...) is classified by its first
 *   keyword, only to word the refusal.
 * - every query runs on its own connection, so no transaction or variable state leaks between
 *   queries, and a query can be interrupted (`AbortSignal` → `connection.interrupt()`) without
 *   touching the others; while every running query of the session is cancelled, the record
 *   functions fail their next call at once (`record-functions.ts`), so a query decoding every
 *   value stops within one chunk instead of finishing the chunks DuckDB's threads queued.
 *
 * Errors: DuckDB's message is kept verbatim (it carries `LINE n:` and a caret under the error
 * position), except DuckDB's "Out of Memory Error", a KlxError `out-of-memory` naming the memory
 * limit and how to raise it (`sql-resources.ts`); the KlxError (`invalid-argument`) adds `details.errorType` (Parser, Binder, Catalog,
 * Conversion...), `details.line` and `details.position` (0-based character index in the SQL text,
 * when it can be placed exactly).
 *
 * Values come back as JS values (`@duckdb/node-api` `JS`): BIGINT as bigint, BLOB as Uint8Array,
 * TIMESTAMP as Date, LIST as arrays, STRUCT as objects; {@link toJsonValue} makes them JSON-safe.
 */
import { basename } from 'node:path';
import { DuckDBInstance, JSDuckDBValueConverter, StatementType, type DuckDBConnection, type DuckDBResult, type JS } from './duckdb.ts';
import { int64Json } from '../format/batch-json.ts';
import { KlxError } from '../errors.ts';
import { prepareLogTables, type PreparedTables, type TableCacheOptions } from './table-cache.ts';
import type { BuildSummary } from './log-tables.ts';
import { allPartitions } from '../log/log-dir.ts';
import { CANCELLED_MESSAGE, RecordFunctions, type LogReads } from './record-functions.ts';
import { RecordRowDecoder } from './decode-columns.ts';
import { duckdbMemoryLimitBytes, duckdbResourceOptions, outOfMemoryError } from './sql-resources.ts';
import { DEFAULT_VALUE_CAP_BYTES } from './sql-defaults.ts';
import { notCheckedNotices, pastDamageNotices, type SqlNotice } from './past-damage.ts';

/** A value of a result cell. */
export type SqlValue = JS;

/** Default row limit of {@link SqlSession.query}. */
export const DEFAULT_ROW_LIMIT = 10_000;

/** Statement types a user may run. */
const ALLOWED_STATEMENTS: ReadonlySet<StatementType> = new Set([StatementType.SELECT, StatementType.EXPLAIN]);

/** First keywords of statements that are refused (used only when DuckDB cannot prepare the statement). */
const REFUSED_KEYWORDS: ReadonlySet<string> = new Set([
  'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'MERGE', 'CREATE', 'DROP', 'ALTER', 'COPY', 'ATTACH', 'DETACH', 'USE',
  'SET', 'RESET', 'PRAGMA', 'LOAD', 'INSTALL', 'FORCE', 'VACUUM', 'CHECKPOINT', 'EXPORT', 'IMPORT', 'BEGIN',
  'START', 'COMMIT', 'END', 'ROLLBACK', 'ABORT', 'PREPARE', 'EXECUTE', 'DEALLOCATE', 'CALL', 'ANALYZE', 'COMMENT',
]);

/** Options of {@link SqlSession.open}: where the cache lives, value cap, progress and cancel of the build, DuckDB's memory limit. */
export interface SqlSessionOptions extends TableCacheOptions {
  /**
   * Asked by the record functions before each chunk of rows (synchronously, on the JS thread):
   * true fails the call at once, so the running query stops (`klx query` answers whether a Ctrl-C
   * is pending, and aborts the query's signal then). Needed because while DuckDB's threads keep
   * the functions busy, Node runs their calls back to back (up to 1000 per turn of the event loop)
   * and neither a `process.on('SIGINT')` handler nor an abort listener runs for seconds.
   */
  interrupted?: () => boolean;
}

/** A result column. */
export interface QueryColumn {
  /** Column name; repeated names get `:1`, `:2`... suffixes (DuckDB's deduplication). */
  name: string;
  /** DuckDB type, e.g. `BIGINT`, `BLOB`, `VARCHAR`, `JSON` (an alias's name), `STRUCT("key" VARCHAR, "value" BLOB)[]`. */
  type: string;
}

/** Options of a query. */
export interface QueryOptions {
  /** Aborting it interrupts the query: KlxError `cancelled`. */
  signal?: AbortSignal;
}

/** Options of {@link SqlSession.query}. */
export interface QueryRowsOptions extends QueryOptions {
  /** Most rows returned (default {@link DEFAULT_ROW_LIMIT}; `Infinity` for all); ≥ 0. */
  limit?: number;
}

/** Result of {@link SqlSession.query}. */
export interface QueryResult {
  columns: QueryColumn[];
  rows: SqlValue[][];
  /** Rows returned. */
  rowCount: number;
  /** True when the query had more rows than the limit. */
  truncated: boolean;
  /** `SELECT` or `EXPLAIN`. */
  statementType: string;
  elapsedMs: number;
  /**
   * What the query read back from the segments (values, headers, decoded columns are not kept in
   * the tables: `record-functions.ts`): distinct batches and their bytes in the log; zero for
   * queries over the kept columns. Counted over the session from the query's start, so queries
   * running at the same time share their counts.
   */
  readFromLog: LogReads;
}

/** First keyword of a statement, skipping blanks, comments and opening parentheses. */
export function leadingKeyword(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s|\(/.test(c)) i++;
    else if (sql.startsWith('--', i)) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else break;
  }
  const m = /^[A-Za-z_]+/.exec(sql.slice(i));
  return m ? m[0].toUpperCase() : '';
}

function statementTypeName(t: StatementType): string {
  return StatementType[t] ?? `type ${t}`;
}

function refused(typeName: string): KlxError {
  return new KlxError(
    'read-only',
    `${typeName} statements are refused: the SQL tables of a log are read-only (run one SELECT, WITH, EXPLAIN, DESCRIBE, SHOW, SUMMARIZE or PRAGMA table_info statement)`,
    { details: { statementType: typeName } },
  );
}

/** Where DuckDB's `LINE n: ...` / caret context places the error: 1-based line and 0-based index in `sql`. */
export function errorPosition(message: string, sql: string): { line: number; position?: number } | null {
  const m = /LINE (\d+): (.*)\n( *)\^/.exec(message);
  if (!m) return null;
  const line = Number(m[1]);
  const prefix = `LINE ${m[1]}: `.length;
  const col = m[3]!.length - prefix;
  const lines = sql.split('\n');
  const text = lines[line - 1];
  if (text === undefined) return { line };
  let shown = m[2]!;
  let shift = 0;
  if (shown.startsWith('...')) {
    shown = shown.slice(3);
    shift = 3;
  }
  if (shown.endsWith('...')) shown = shown.slice(0, -3);
  const at = text.indexOf(shown);
  // Not found, or found twice (the place would be a guess): the line only.
  if (at < 0 || text.indexOf(shown, at + 1) >= 0 || col < shift) return { line };
  let start = 0;
  for (let i = 0; i < line - 1; i++) start += lines[i]!.length + 1;
  return { line, position: start + at + col - shift };
}

/** The hint added to a parser error when the SQL uses `offset` as a bare column name (it is an SQL keyword). */
export const OFFSET_HINT = 'hint: offset is an SQL keyword; write the column as "offset" (in double quotes)';

function usesBareOffset(sql: string): boolean {
  const bare = sql.replace(/'(?:[^']|'')*'/g, "''").replace(/"(?:[^"]|"")*"/g, '""');
  return /\boffset\b(?!\s*(?:\d|\?|\$|\())/i.test(bare);
}

/**
 * Turns a DuckDB failure into a KlxError (see the module comment).
 * `cancelled` for an interrupted query (DuckDB's interrupt or the record functions' cancel), `read-only` for a write DuckDB refused, `out-of-memory` for
 * DuckDB's "Out of Memory Error" (naming `memoryLimitBytes`, the instance's limit), else `invalid-argument`.
 */
export function sqlError(err: unknown, sql: string, memoryLimitBytes: number = duckdbMemoryLimitBytes()): KlxError {
  if (err instanceof KlxError) return err;
  let message = err instanceof Error ? err.message : String(err);
  message = message.replace(/^Failed to extract statements: /, '');
  // DuckDB's interrupt, or the record functions refusing a call of a cancelled query (`CANCELLED_MESSAGE`).
  if (/^INTERRUPT Error/i.test(message) || message.includes(CANCELLED_MESSAGE)) return new KlxError('cancelled', 'query cancelled', { cause: err });
  const oom = outOfMemoryError(message, memoryLimitBytes, err);
  if (oom) return oom;
  const ro = /Cannot execute statement of type "([A-Z_ ]+)" on database .* read-only mode/.exec(message);
  if (ro) return refused(ro[1]!);
  const errorType = /^([A-Za-z][A-Za-z ]*?) Error:/.exec(message)?.[1];
  const details: Record<string, unknown> = {};
  if (errorType) details.errorType = errorType;
  const where = errorPosition(message, sql);
  if (where) {
    details.line = where.line;
    if (where.position !== undefined) details.position = where.position;
  }
  if (errorType === 'Permission' && /disabled by configuration/.test(message)) {
    message += '\nhint: queries read only the log tables; reading or writing other files is disabled';
  }
  if (errorType === 'Parser' && usesBareOffset(sql)) message += `\n${OFFSET_HINT}`;
  return new KlxError('invalid-argument', message, { details, cause: err });
}

/**
 * An open query: its columns, then its rows chunk by chunk (up to 2048 rows each).
 * Close it when done (or when stopping early); a cancelled or failed query closes itself.
 */
export class QueryCursor {
  private done = false;
  private readonly onAbort: () => void;

  constructor(
    private readonly connection: DuckDBConnection,
    private readonly result: DuckDBResult,
    readonly columns: QueryColumn[],
    readonly statementType: string,
    private readonly sql: string,
    private readonly signal: AbortSignal | undefined,
    private readonly onClose: () => void,
    private readonly memoryLimitBytes: number,
  ) {
    this.onAbort = () => connection.interrupt();
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * The next rows, or null at the end.
   * @throws KlxError `cancelled` when the signal was aborted; `invalid-argument` for errors DuckDB
   *   raises while running (a failed cast...).
   */
  async next(): Promise<SqlValue[][] | null> {
    if (this.done) return null;
    if (this.signal?.aborted) {
      this.close();
      throw new KlxError('cancelled', 'query cancelled', { cause: this.signal.reason });
    }
    try {
      const chunk = await this.result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) {
        this.close();
        return null;
      }
      return chunk.convertRows(JSDuckDBValueConverter) as SqlValue[][];
    } catch (err) {
      this.close();
      if (this.signal?.aborted) throw new KlxError('cancelled', 'query cancelled', { cause: err });
      throw sqlError(err, this.sql, this.memoryLimitBytes);
    }
  }

  /** Stops the query and frees its connection. Safe to call more than once. */
  close(): void {
    if (this.done) return;
    this.done = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    try {
      this.connection.interrupt();
      this.connection.closeSync();
    } finally {
      this.onClose();
    }
  }
}

/** See the module comment. */
export class SqlSession {
  private closed = false;
  private readonly cursors = new Set<QueryCursor>();
  /** Signals of the queries started and not closed (a query without one: an unaborted signal's place). */
  private readonly running = new Set<{ signal: AbortSignal | undefined }>();
  private functions!: RecordFunctions;

  private constructor(
    private readonly prepared: PreparedTables,
    private readonly instance: DuckDBInstance,
    /** DuckDB's memory limit of the query instance (bytes). */
    readonly memoryLimitBytes: number,
  ) {}

  /**
   * True once the session is closed (DuckDB's threads may still be finishing the tasks of the last
   * query: they must not decode on while the process exits), and while queries run and every one of
   * them is cancelled: the record functions then fail at once.
   */
  private allCancelled(): boolean {
    if (this.closed) return true;
    if (this.running.size === 0) return false;
    for (const r of this.running) if (!r.signal?.aborted) return false;
    return true;
  }

  /**
   * Prepares the tables of `path` (building them unless an up-to-date cache exists) and opens them
   * read-only.
   * @throws what {@link prepareLogTables} throws (`not-found`, `not-a-log-dir`, `cancelled`...);
   *   KlxError `internal` when DuckDB cannot open the built file.
   */
  static async open(path: string, opts: SqlSessionOptions = {}): Promise<SqlSession> {
    const prepared = await prepareLogTables(path, opts);
    const memoryLimitBytes = opts.memoryLimitBytes ?? duckdbMemoryLimitBytes();
    let instance: DuckDBInstance;
    let session: SqlSession;
    try {
      instance = await DuckDBInstance.create(prepared.dbPath, {
        access_mode: 'READ_ONLY',
        ...duckdbResourceOptions(memoryLimitBytes),
        enable_external_access: 'false',
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        lock_configuration: 'true',
      });
    } catch (err) {
      prepared.release();
      throw new KlxError('internal', `cannot open the SQL tables: ${(err as Error).message}`, { file: prepared.dbPath, cause: err });
    }
    session = new SqlSession(prepared, instance, memoryLimitBytes);
    try {
      const connection = await instance.connect();
      try {
        const decode = RecordRowDecoder.create(prepared.opened, opts.decode);
        session.functions = RecordFunctions.register(connection, {
          partitions: allPartitions(prepared.opened).map((p) => p.log),
          valueCapBytes: opts.valueCapBytes ?? DEFAULT_VALUE_CAP_BYTES,
          decoder: () => decode.decoder,
          cancelled: opts.interrupted ? () => opts.interrupted!() || session.allCancelled() : () => session.allCancelled(),
        });
      } finally {
        connection.closeSync();
      }
    } catch (err) {
      instance.closeSync();
      prepared.release();
      throw new KlxError('internal', `cannot open the SQL tables: ${(err as Error).message}`, { file: prepared.dbPath, cause: err });
    }
    return session;
  }

  /** The opened folder (resolved path). */
  get root(): string {
    return this.prepared.root;
  }

  /** The DuckDB file the queries read. */
  get dbPath(): string {
    return this.prepared.dbPath;
  }

  /** True when the tables came from the cache unchanged (no log was read). */
  get reused(): boolean {
    return this.prepared.reused;
  }

  /** What the build wrote, or null when the cache was reused. */
  get buildSummary(): BuildSummary | null {
    return this.prepared.summary;
  }

  /** What the session's queries read back from the segments since the last query started (distinct batches, their bytes in the log). */
  get readFromLog(): LogReads {
    return this.functions.reads;
  }

  /**
   * The partitions of the opened folder that hold leftovers of an interrupted cleaner, split or
   * retention, with what a broker does with them at startup (`LogLoader.load`, see
   * ../log/pending-swaps.ts): the tables show the segments on disk, the pre-swap ones.
   * `partition` is the folder's path relative to the opened one (its name when it is the one opened).
   */
  pendingSwaps(): SqlNotice[] {
    return allPartitions(this.prepared.opened).flatMap(({ rel, log }) => {
      const p = log.pendingSwaps;
      return p ? [{ partition: rel === '.' ? basename(log.dir) : rel, notice: p.notice }] : [];
    });
  }

  /**
   * Everything the tables' user should know beside the rows: the {@link pendingSwaps} notices, the
   * batches left out as past the decompression bound (`notCheckedNotices`), then the partitions
   * whose logs hold records past damage (`past-damage.ts`: how many, where the first
   * damage is, what a consumer and a broker restarting now do there).
   * @throws KlxError `invalid-argument` when the session is closed.
   */
  async notices(): Promise<SqlNotice[]> {
    if (this.closed) throw new KlxError('invalid-argument', 'the SQL session is closed');
    const connection = await this.instance.connect();
    try {
      return [...this.pendingSwaps(), ...(await notCheckedNotices(connection, this.prepared.opened)), ...(await pastDamageNotices(connection, this.prepared.opened))];
    } finally {
      connection.closeSync();
    }
  }

  /** Fingerprint of the folder state the tables show. */
  get fingerprint(): string {
    return this.prepared.fingerprint;
  }

  /**
   * Parses, checks and starts one read-only statement.
   * @throws KlxError `read-only` (refused statement, naming its type), `invalid-argument` (empty
   *   text, several statements, DuckDB's parser/binder/catalog errors with their position),
   *   `cancelled`; `invalid-argument` when the session is closed.
   */
  async cursor(sql: string, opts: QueryOptions = {}): Promise<QueryCursor> {
    if (this.closed) throw new KlxError('invalid-argument', 'the SQL session is closed');
    if (typeof sql !== 'string' || sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|\s|;/g, '') === '') {
      throw new KlxError('invalid-argument', 'the query is empty: give one SELECT statement');
    }
    if (opts.signal?.aborted) throw new KlxError('cancelled', 'query cancelled', { cause: opts.signal.reason });
    const connection = await this.instance.connect();
    const run = { signal: opts.signal };
    let handedOver = false;
    try {
      let count: number;
      let extracted;
      try {
        extracted = await connection.extractStatements(sql);
        count = extracted.count;
      } catch (err) {
        throw sqlError(err, sql, this.memoryLimitBytes);
      }
      if (count === 0) throw new KlxError('invalid-argument', 'the query is empty: give one SELECT statement');
      if (count > 1) throw new KlxError('invalid-argument', `the query holds ${count} statements; run one statement at a time`, { details: { statements: count } });
      let prepared;
      try {
        prepared = await extracted.prepare(0);
      } catch (err) {
        const kw = leadingKeyword(sql);
        if (REFUSED_KEYWORDS.has(kw)) throw refused(kw);
        throw sqlError(err, sql, this.memoryLimitBytes);
      }
      const type = prepared.statementType;
      if (!ALLOWED_STATEMENTS.has(type)) throw refused(statementTypeName(type));
      const onAbort = () => connection.interrupt();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.functions.startCount();
      this.running.add(run);
      let result: DuckDBResult;
      try {
        result = await prepared.stream();
      } catch (err) {
        if (opts.signal?.aborted) throw new KlxError('cancelled', 'query cancelled', { cause: err });
        throw sqlError(err, sql, this.memoryLimitBytes);
      } finally {
        opts.signal?.removeEventListener('abort', onAbort);
      }
      const names = result.deduplicatedColumnNames();
      // A type alias (JSON is VARCHAR aliased) names the column's type: exports write JSON columns as JSON.
      const columns = names.map((name, i) => {
        const t = result.columnType(i);
        return { name, type: t.alias ?? t.toString() };
      });
      const cursor: QueryCursor = new QueryCursor(
        connection,
        result,
        columns,
        statementTypeName(type),
        sql,
        opts.signal,
        () => {
          this.cursors.delete(cursor);
          this.running.delete(run);
        },
        this.memoryLimitBytes,
      );
      this.cursors.add(cursor);
      handedOver = true;
      return cursor;
    } finally {
      if (!handedOver) {
        this.running.delete(run);
        connection.closeSync();
      }
    }
  }

  /**
   * Runs one read-only statement and returns up to `limit` rows.
   * @throws as {@link cursor}; KlxError `invalid-argument` for a bad limit.
   */
  async query(sql: string, opts: QueryRowsOptions = {}): Promise<QueryResult> {
    const limit = opts.limit ?? DEFAULT_ROW_LIMIT;
    if (!(limit === Infinity || (Number.isSafeInteger(limit) && limit >= 0))) throw new KlxError('invalid-argument', `limit must be a non-negative integer, got ${limit}`);
    const started = performance.now();
    const cursor = await this.cursor(sql, opts);
    const rows: SqlValue[][] = [];
    let truncated = false;
    try {
      for (;;) {
        const chunk = await cursor.next();
        if (chunk === null) break;
        const room = limit - rows.length;
        if (chunk.length > room) {
          for (let i = 0; i < room; i++) rows.push(chunk[i]!);
          truncated = true;
          break;
        }
        for (const r of chunk) rows.push(r);
      }
    } finally {
      cursor.close();
    }
    const readFromLog = this.functions.reads;
    return { columns: cursor.columns, rows, rowCount: rows.length, truncated, statementType: cursor.statementType, elapsedMs: performance.now() - started, readFromLog };
  }

  /** Stops running queries, closes the database and deletes temporary tables. Safe to call more than once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.cursors]) c.close();
    try {
      this.instance.closeSync();
    } finally {
      this.functions.close();
      this.prepared.release();
    }
  }
}

/**
 * A result value as JSON: BIGINT/HUGEINT as a number when exact (|v| ≤ 2^53 − 1) else a decimal
 * string, BLOB as base64, TIMESTAMP/DATE as ISO-8601 text, non-finite doubles as text, lists and
 * structs recursively.
 */
export function toJsonValue(v: SqlValue): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'bigint') return int64Json(v);
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (Array.isArray(v)) return v.map(toJsonValue);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJsonValue(x)]));
}
