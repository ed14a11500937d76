/**
 * Records taken away (issue 14 capability 3, issue 16 `klx export`): the records of partitions, of
 * offset ranges or of a list of offsets as rows of one fixed set of columns
 * ({@link EXPORT_COLUMNS}), written as CSV, NDJSON or Parquet, or as clipboard text (JSON, NDJSON,
 * CSV, kcat-style lines, `klx append --records` lines).
 *
 * Rows: one per record a reader is given (`readForward`: holes followed, control records included
 * and flagged, data of aborted transactions flagged, or left out with read_committed), with the
 * record's raw key and value (BLOB) beside what the decode layer makes of them (`key_decoded` /
 * `value_decoded` as JSON, `key_format` / `value_format`, `decode_error`: the topic's format
 * choices, `auto` by default, as the records table and the SQL tables decode). Text formats write
 * the cells as `sql.export` and `klx query` do (`sql-format.ts`): in CSV a text key or value is its
 * text and a binary one base64; in NDJSON bytes are base64 and the decoded columns JSON values.
 *
 * Parquet goes through DuckDB's appender: partitioned (`partitionBy`: a folder of Hive-style
 * `[log_dir=…/]topic=…/partition=…/data_<n>.parquet` files that Spark, Trino, BigQuery and DuckDB
 * read as one table) the rows pass through an in-memory table {@link CHUNK_BYTES} at a time, each
 * chunk written by `COPY … TO … (FORMAT parquet)` as the next file of its partition's folder, so
 * nothing is staged on disk and DuckDB's memory stays within the SQL layer's limit
 * (`sql-resources.ts`); one Parquet file (the app's export of a range) is staged whole in a
 * temporary DuckDB database beside the output (`export-staging.ts`, compressed, spilling beyond
 * the limit) and copied out. A `where` condition (DuckDB SQL over the columns, checked against an
 * empty table first: {@link checkWhere}) is applied in the SELECT of each write; CSV and NDJSON
 * with a condition pass through the in-memory table the same way. Every output is written under a
 * hidden name beside it and renamed when complete; a failure or cancel removes it.
 *
 * Memory: a page of records ({@link PAGE_RECORDS}) at a time; DuckDB spills beyond its limit.
 * Offsets are int64 (`bigint`), timestamps ms, sizes and positions bytes.
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, JSDuckDBValueConverter } from './duckdb.ts';
import { lastStableStop, type LastStableStop } from '../log/last-stable-stop.ts';
import { KlxError } from '../errors.ts';
import { readForward, recordAt, type FetchedRecord } from '../log/fetch.ts';
import type { IsolationLevel } from '../log/read-defaults.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { RecordDecoder } from '../decode/record-decoder.ts';
import { csvHeader, csvLine, ndjsonLine, printableText, writeCsv, writeNdjson } from './sql-format.ts';
import { FileLineSink } from './file-line-sink.ts';
import { duckdbResourceOptions } from './sql-resources.ts';
import { ColumnarAppender, type ColumnKind, type HeaderValue } from './columnar-appender.ts';
import { clearLeftoverStaging, removeStaging, stagingPathsOf } from './export-staging.ts';
import { sqlError, type QueryColumn, type SqlValue } from './sql-session.ts';

/** Output file formats. */
export const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Clipboard text formats (see {@link recordsAsText}). */
export const COPY_FORMATS = ['json', 'ndjson', 'csv', 'kcat', 'append'] as const;
export type CopyFormat = (typeof COPY_FORMATS)[number];

/** Records read per page. */
export const PAGE_RECORDS = 1000;

/** The columns of every export, in order (DuckDB types, as `klx query` names them). */
export const EXPORT_COLUMNS: readonly QueryColumn[] = [
  { name: 'topic', type: 'VARCHAR' },
  { name: 'partition', type: 'INTEGER' },
  { name: 'offset', type: 'BIGINT' },
  { name: 'timestamp', type: 'BIGINT' },
  { name: 'timestamp_type', type: 'VARCHAR' },
  { name: 'key', type: 'BLOB' },
  { name: 'value', type: 'BLOB' },
  { name: 'headers', type: 'STRUCT("key" VARCHAR, "value" BLOB)[]' },
  { name: 'key_format', type: 'VARCHAR' },
  { name: 'value_format', type: 'VARCHAR' },
  { name: 'key_decoded', type: 'JSON' },
  { name: 'value_decoded', type: 'JSON' },
  { name: 'schema_id', type: 'INTEGER' },
  { name: 'decode_error', type: 'VARCHAR' },
  { name: 'is_tombstone', type: 'BOOLEAN' },
  { name: 'is_control', type: 'BOOLEAN' },
  { name: 'control_type', type: 'VARCHAR' },
  { name: 'is_transactional', type: 'BOOLEAN' },
  { name: 'aborted', type: 'BOOLEAN' },
  { name: 'producer_id', type: 'BIGINT' },
  { name: 'batch_base_offset', type: 'BIGINT' },
  { name: 'segment_base_offset', type: 'BIGINT' },
  { name: 'position', type: 'BIGINT' },
  { name: 'crc_valid', type: 'BOOLEAN' },
  { name: 'past_damage', type: 'BOOLEAN' },
  { name: 'log_dir', type: 'VARCHAR' },
];

/** Where the rows come from: a partition, optionally cut to offsets [from, to] or to a list of offsets. */
export interface ExportSource {
  log: PartitionLog;
  /** First offset (default the log start offset). */
  from?: bigint;
  /** Last offset, inclusive (default the last offset before the log end). */
  to?: bigint;
  /** Only these offsets (ascending or not; absent ones are passed over). Overrides from/to. */
  offsets?: readonly bigint[];
  /** The `log_dir` column: the partition's log directory relative to the exported folder (default `.`). */
  logDir?: string;
}

/**
 * A batch or damaged region whose records an export could not write (file, byte position, reason).
 * `kind` `damage`: bytes that are not a batch or a batch whose records cannot be decoded (a consumer
 * stops there too: CorruptRecordException); `not-checked`: a batch whose records inflate past this
 * tool's decompression bound (`--max-inflated-bytes` reads it; not damage: a consumer reads it).
 */
export interface NotExported {
  topic: string;
  partition: number;
  logDir: string;
  /** The `.log` file. */
  file: string;
  /** Byte position in it, and bytes concerned. */
  position: number;
  size: number;
  kind: 'damage' | 'not-checked';
  /** The reader's error code (`truncated-batch`, `decompression-limit`, ...). */
  code: string;
  reason: string;
  /** The offsets it hides (inclusive), when the reader knows them. */
  fromOffset?: bigint;
  toOffset?: bigint;
}

/**
 * Records of a partition not exported because they lie at or past its high watermark (read as a
 * consumer reads: `UnifiedLog.read` with FetchIsolation.HIGH_WATERMARK; read_committed stops there
 * too when no transaction holds the last stable offset lower).
 */
export interface HighWatermarkStop {
  topic: string;
  partition: number;
  logDir: string;
  highWatermark: bigint;
  logEndOffset: bigint;
  /** Records (control records included) at or past the high watermark, and their first and last offsets. */
  records: number;
  firstOffset: bigint;
  lastOffset: bigint;
}

/** What a read left out, filled by {@link exportRecords}. */
export interface ExportNotes {
  notExported: NotExported[];
  highWatermarkStops: HighWatermarkStop[];
}

/** The sentence naming a batch or region not exported (`klx export`'s stderr line, the app's export result). */
export function notExportedText(x: NotExported): string {
  const offsets = x.fromOffset !== undefined ? ` (offsets ${x.fromOffset}${x.toOffset !== undefined && x.toOffset !== x.fromOffset ? `..${x.toOffset}` : ''})` : '';
  const what = x.kind === 'not-checked' ? 'not checked (past the decompression bound; --max-inflated-bytes N reads it)' : 'damage';
  return `${x.topic}-${x.partition}${x.logDir !== '.' ? ` in ${x.logDir}` : ''}: not exported${offsets}: ${what} at ${x.file} position ${x.position} (${x.size} bytes): ${x.reason}`;
}

/** The `.log` file's base offset (its 20-digit name). */
function segmentBaseOf(file: string): bigint {
  const m = /(\d{20})\.log$/.exec(file);
  return m ? BigInt(m[1]!) : -1n;
}

/** Options of {@link exportRows} and the writers. */
export interface ExportReadOptions {
  isolation?: IsolationLevel;
  /** The decode layer (the folder's choices); null: the decoded columns are NULL. */
  decoder: RecordDecoder | null;
  signal?: AbortSignal;
  /** Called after every page: records so far, and the offsets of the sources passed so far. */
  onProgress?: (p: { records: number; offsets: bigint }) => void;
  /** Stop after this many records (the clipboard's cap). */
  maxRecords?: number;
  /**
   * read_uncommitted, sources without `to`: stop at the high watermark as a consumer does
   * (`high-watermark`, FetchIsolation.HIGH_WATERMARK in UnifiedLog.read; the log end when
   * replication-offset-checkpoint has no entry) or read every record the files hold (`log-end`,
   * default), past damage in the active segment too.
   */
  readUpTo?: 'log-end' | 'high-watermark';
  /** Filled with the batches not exported and the high watermark stops (sources without `offsets`). */
  notes?: ExportNotes;
}

/** What a write did. */
export interface ExportSummary {
  format: ExportFormat;
  /** The file (or, partitioned Parquet, the folder) written. */
  out: string;
  records: number;
  /** Bytes written (every file of a partitioned folder). */
  bytes: number;
  partitions: number;
  elapsedMs: number;
  /**
   * read_committed only: each partition whose export stopped at its last stable offset because a
   * transaction is open (the LSO, that transaction, and how many records after it were left out);
   * empty otherwise. See `engine/log/last-stable-stop.ts`.
   */
  lastStableStops: LastStableStop[];
  /** Batches and damaged regions whose records are not in the output (see {@link NotExported}). */
  notExported: NotExported[];
  /** Partitions whose records past the high watermark are not in the output. */
  highWatermarkStops: HighWatermarkStop[];
}

/** Offsets an export of `sources` covers (for progress totals). */
export function exportSpan(sources: readonly ExportSource[]): bigint {
  let n = 0n;
  for (const s of sources) {
    if (s.offsets) n += BigInt(s.offsets.length);
    else {
      const from = s.from ?? s.log.logStartOffset;
      const to = s.to ?? s.log.logEndOffset - 1n;
      if (to >= from) n += to - from + 1n;
    }
  }
  return n;
}

/** The row of one record (see {@link EXPORT_COLUMNS}). */
export function exportRow(log: PartitionLog, r: FetchedRecord, decoder: RecordDecoder | null, where: { pastDamage?: boolean; logDir?: string } = {}): SqlValue[] {
  let keyFormat: string | null = null;
  let valueFormat: string | null = null;
  let keyDecoded: string | null = null;
  let valueDecoded: string | null = null;
  let schemaId: number | null = null;
  let error: string | null = null;
  if (decoder && (!r.isControl || log.topic === '__cluster_metadata')) {
    const controlType = r.control?.typeId;
    const k = decoder.decode(log.topic, 'key', r.key, null, controlType);
    const v = decoder.decode(log.topic, 'value', r.value, r.key, controlType);
    keyFormat = r.key === null ? null : k.format;
    valueFormat = r.value === null ? null : v.format;
    keyDecoded = r.key === null ? null : k.jsonText;
    valueDecoded = r.value === null ? null : v.jsonText;
    schemaId = v.schemaId ?? k.schemaId ?? null;
    error = k.error !== undefined ? (v.error !== undefined ? `key: ${k.error}; ${v.error}` : `key: ${k.error}`) : (v.error ?? null);
  }
  return [
    log.topic,
    log.partition,
    r.offset,
    r.timestamp,
    r.timestampType,
    r.key,
    r.value,
    r.headers.map((h) => ({ key: h.key, value: h.value })),
    keyFormat,
    valueFormat,
    keyDecoded,
    valueDecoded,
    schemaId,
    error,
    r.value === null && !r.isControl,
    r.isControl,
    r.control?.type ?? null,
    r.isTransactional,
    r.aborted === true,
    r.producerId,
    r.batchBaseOffset,
    r.segmentBaseOffset,
    BigInt(r.position),
    r.crcValid ?? null,
    where.pastDamage === true,
    where.logDir ?? '.',
  ];
}

/** One record of an export and where it lies. */
export interface ExportedRecord {
  log: PartitionLog;
  record: FetchedRecord;
  /** The record lies at or after damage in its partition's log (as the SQL tables' `past_damage`). */
  pastDamage: boolean;
  logDir: string;
}

/**
 * The records of `sources` in order (sources in the order given, offsets ascending within a
 * range), one page at a time. A source without `to` reads every record the files hold (past damage
 * in the active segment too), up to the high watermark with `readUpTo: 'high-watermark'`; the
 * damage met and the batches not checked go to `opts.notes`, never dropped silently.
 * @throws KlxError `cancelled`, `offset-out-of-range` (a range outside the log), what reading throws.
 */
export async function* exportRecords(sources: readonly ExportSource[], opts: ExportReadOptions): AsyncGenerator<ExportedRecord> {
  let records = 0;
  let passed = 0n;
  const max = opts.maxRecords ?? Infinity;
  const isolation = opts.isolation ?? 'read_uncommitted';
  const page = { isolation, includeControl: true, ...(opts.signal ? { signal: opts.signal } : {}) } as const;
  for (const s of sources) {
    const log = s.log;
    const logDir = s.logDir ?? '.';
    if (s.offsets) {
      for (const o of [...s.offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (opts.signal?.aborted) throw new KlxError('cancelled', 'export cancelled');
        const r = o >= log.logStartOffset && o < log.logEndOffset ? await recordAt(log, o, page) : null;
        passed++;
        if (r && r.offset === o) {
          yield { log, record: r, pastDamage: false, logDir };
          if (++records >= max) return;
        }
        opts.onProgress?.({ records, offsets: passed });
      }
      continue;
    }
    const whole = s.to === undefined;
    const start = s.from ?? log.logStartOffset;
    const shownLast = s.to ?? log.logEndOffset - 1n; // progress counts up to the log end
    const last = whole ? (1n << 63n) - 2n : shownLast;
    const base = passed;
    const hw = log.highWatermark;
    // read_uncommitted to the high watermark: read on past it (the files' end) to count what is left out.
    const hwLimit = whole && isolation === 'read_uncommitted' && opts.readUpTo === 'high-watermark' && hw !== null ? (hw < log.logEndOffset ? hw : log.logEndOffset) : null;
    const hwStop: HighWatermarkStop | null = hwLimit === null ? null : { topic: log.topic, partition: log.partition, logDir, highWatermark: hwLimit, logEndOffset: log.logEndOffset, records: 0, firstOffset: -1n, lastOffset: -1n };
    const seen = new Set<string>();
    let damage: { segment: bigint; position: number } | null = null;
    const damageAt = (segment: bigint, position: number) => {
      if (damage === null || segment < damage.segment || (segment === damage.segment && position < damage.position)) damage = { segment, position };
    };
    let readLimit: bigint | null = null;
    if (last >= start && (whole || log.logEndOffset > log.logStartOffset) && start <= log.logEndOffset) {
      let cursor = start < log.logStartOffset ? log.logStartOffset : start;
      for (;;) {
        if (cursor > last) break;
        const p = await readForward(log, cursor, PAGE_RECORDS, { ...page, ...(whole ? { pastLogEnd: true } : {}) });
        readLimit = p.readLimit;
        for (const x of p.problems) {
          const key = `${x.file}:${x.position}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const notChecked = x.code === 'decompression-limit';
          if (!notChecked) damageAt(segmentBaseOf(x.file), x.position);
          opts.notes?.notExported.push({
            topic: log.topic,
            partition: log.partition,
            logDir,
            file: x.file,
            position: x.position,
            size: x.size,
            kind: notChecked ? 'not-checked' : 'damage',
            code: x.code,
            reason: x.reason,
            ...(x.fromOffset !== undefined ? { fromOffset: x.fromOffset } : {}),
            ...(x.toOffset !== undefined ? { toOffset: x.toOffset } : {}),
          });
        }
        for (const r of p.records) {
          if (r.offset > last) break;
          if (hwStop !== null && r.offset >= hwStop.highWatermark) {
            if (hwStop.records++ === 0) hwStop.firstOffset = r.offset;
            hwStop.lastOffset = r.offset;
            continue;
          }
          // A batch failing its CRC is damage before its own records (a consumer with check.crcs=true stops at it).
          if (r.crcValid === false) damageAt(r.segmentBaseOffset, r.position);
          const d = damage as { segment: bigint; position: number } | null;
          const pastDamage = d !== null && (r.segmentBaseOffset > d.segment || (r.segmentBaseOffset === d.segment && r.position >= d.position));
          yield { log, record: r, pastDamage, logDir };
          if (++records >= max) return;
        }
        cursor = p.nextOffset;
        passed = base + ((cursor > shownLast ? shownLast + 1n : cursor) - start);
        opts.onProgress?.({ records, offsets: passed });
        if (p.atEnd || p.records.length === 0) break;
      }
    }
    if (hwStop !== null && hwStop.records > 0) opts.notes?.highWatermarkStops.push(hwStop);
    // read_committed stops at the last stable offset; when that is the high watermark (no open transaction holds it lower),
    // count what a read_uncommitted reader of the files would get past it (an open transaction's stop is lastStableStop's).
    if (whole && isolation === 'read_committed' && hw !== null && readLimit !== null && readLimit === (hw < log.logEndOffset ? hw : log.logEndOffset) && opts.notes) {
      const stop: HighWatermarkStop = { topic: log.topic, partition: log.partition, logDir, highWatermark: readLimit, logEndOffset: log.logEndOffset, records: 0, firstOffset: -1n, lastOffset: -1n };
      let cursor = readLimit;
      for (;;) {
        const p = await readForward(log, cursor, PAGE_RECORDS, { includeControl: true, pastLogEnd: true, ...(opts.signal ? { signal: opts.signal } : {}) });
        for (const r of p.records) {
          if (stop.records++ === 0) stop.firstOffset = r.offset;
          stop.lastOffset = r.offset;
        }
        cursor = p.nextOffset;
        if (p.atEnd || p.records.length === 0) break;
      }
      if (stop.records > 0) opts.notes.highWatermarkStops.push(stop);
    }
    passed = base + (shownLast >= start ? shownLast - start + 1n : 0n);
  }
}

/** The rows of {@link exportRecords}. */
export async function* exportRows(sources: readonly ExportSource[], opts: ExportReadOptions): AsyncGenerator<SqlValue[]> {
  for await (const { log, record, pastDamage, logDir } of exportRecords(sources, opts)) yield exportRow(log, record, opts.decoder, { pastDamage, logDir });
}

/** Options of {@link writeExport}. */
export interface WriteExportOptions extends ExportReadOptions {
  format: ExportFormat;
  /** A new file (CSV, NDJSON, Parquet), or with `partitionBy` a new or empty folder. */
  out: string;
  /** A DuckDB SQL condition over {@link EXPORT_COLUMNS} (`"offset" > 10 AND key_decoded->>'id' = 'x'`). */
  where?: string;
  /** Parquet only: one file per topic and partition under `out` (Hive-style folders). */
  partitionBy?: boolean;
  /** With `partitionBy`: a `log_dir=` folder level above `topic=` (an export of several log directories: replicas kept apart). */
  partitionByLogDir?: boolean;
  /** Called when the Parquet conversion starts (DuckDB gives no progress of its own). */
  onConvert?: () => void;
}

/**
 * Writes the records of `sources` to `opts.out` as CSV, NDJSON or Parquet (see the module
 * comment). An existing output file is never overwritten.
 * @throws KlxError `already-exists`-like `invalid-argument` (the output exists), `invalid-argument`
 *   (a `where` DuckDB cannot run: its message), `cancelled` (the partial output is removed),
 *   `io-error`.
 */
export async function writeExport(sources: readonly ExportSource[], opts: WriteExportOptions): Promise<ExportSummary> {
  const started = performance.now();
  // What an export to the same output that was killed (SIGKILL, a crash) left: removed when its process is gone.
  const leftover = await clearLeftoverStaging(opts.out);
  if (leftover.running.length > 0) throw new KlxError('invalid-argument', `another export to this output is running (process ${leftover.running.join(', ')}): wait for it or choose a new path`, { file: opts.out });
  if (await exists(opts.out)) throw new KlxError('invalid-argument', 'the output exists already: choose a new path (an export never overwrites)', { file: opts.out });
  if (opts.partitionBy && opts.format !== 'parquet') throw new KlxError('invalid-argument', 'partitioning by topic and partition is for Parquet only');
  const partitions = new Set(sources.map((s) => s.log.dir)).size;
  if (opts.where !== undefined) await checkWhere(opts.where);
  const notes: ExportNotes = opts.notes ?? { notExported: [], highWatermarkStops: [] };
  opts = { ...opts, notes };
  const paths = stagingPathsOf(opts.out);
  let records = 0;
  try {
    if (opts.format === 'parquet' && !opts.partitionBy) records = await stagedParquetFile(sources, opts, paths.partial);
    else if (opts.format === 'parquet' || opts.where !== undefined) records = await throughDuckDB(sources, opts, paths.partial);
    else {
      const sink = new FileLineSink(paths.partial);
      try {
        const rows = exportRows(sources, opts);
        records = opts.format === 'csv' ? await writeCsv(EXPORT_COLUMNS, rows, sink) : await writeNdjson(EXPORT_COLUMNS, rows, sink);
        await sink.close();
      } catch (err) {
        sink.destroy();
        throw err;
      }
    }
    // Complete: under the name asked for (a rename; the output did not exist).
    await rename(paths.partial, opts.out);
  } finally {
    await removeStaging(opts.out);
  }
  const stops = opts.isolation === 'read_committed' ? await lastStableStops(sources, opts.signal) : [];
  return { format: opts.format, out: opts.out, records, bytes: await sizeOf(opts.out), partitions, elapsedMs: performance.now() - started, lastStableStops: stops, notExported: notes.notExported, highWatermarkStops: notes.highWatermarkStops };
}

/**
 * Runs `where` over an empty table of the export's columns, so a condition DuckDB cannot run
 * (an unknown column, a type error, bad syntax) stops the export before any record is read.
 * @throws KlxError `invalid-argument` naming the condition and DuckDB's reason.
 */
export async function checkWhere(where: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:', duckdbResourceOptions());
  const connection = await instance.connect();
  const cols = EXPORT_COLUMNS.map((c) => `CAST(NULL AS ${c.type}) AS "${c.name}"`).join(', ');
  const select = `SELECT * FROM (SELECT ${cols} LIMIT 0) WHERE ${where}`;
  try {
    await connection.run(select);
  } catch (err) {
    throw whereError(err, select, where);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The `invalid-argument` error of a `where` DuckDB refuses: the condition and DuckDB's reason, not the SELECT around it. */
function whereError(err: unknown, select: string, where: string): KlxError {
  const e = sqlError(err, select);
  // DuckDB's "LINE 1: ..." excerpt and caret point into the internal SQL around the condition.
  const reason = e.reason.replace(/\n*LINE \d+:[^\n]*\n[ \t]*\^[^\n]*/g, '').trim();
  return new KlxError('invalid-argument', `the where condition ${where} cannot run: ${reason}`, { details: { ...(e.details ?? {}), where }, cause: err });
}

/**
 * The read_committed stops of `sources` (one per source whose range reaches past its partition's
 * last stable offset while a transaction is open), as {@link lastStableStop} counts them.
 * @throws KlxError `cancelled`, what reading throws.
 */
export async function lastStableStops(sources: readonly ExportSource[], signal?: AbortSignal): Promise<LastStableStop[]> {
  const out: LastStableStop[] = [];
  for (const src of sources) {
    const stop = await lastStableStop(src.log, {
      ...(src.offsets ? { offsets: src.offsets } : {}),
      ...(src.from !== undefined && !src.offsets ? { from: src.from } : {}),
      ...(src.to !== undefined && !src.offsets ? { upTo: src.to + 1n } : {}),
      ...(signal ? { signal } : {}),
    });
    if (stop) out.push(stop);
  }
  return out;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** Bytes of a file, or of every file under a folder. */
async function sizeOf(p: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  const s = await stat(p);
  if (!s.isDirectory()) return s.size;
  let n = 0;
  for (const e of await readdir(p, { withFileTypes: true, recursive: true })) if (e.isFile()) n += (await stat(join(e.parentPath, e.name))).size;
  return n;
}

const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** How each export column is appended to the staging table (JSON columns are staged as VARCHAR and cast back when written). */
const STAGED_KINDS: ColumnKind[] = EXPORT_COLUMNS.map((c) =>
  c.type === 'VARCHAR' || c.type === 'JSON' ? 'varchar' : c.type === 'INTEGER' ? 'int32' : c.type === 'BIGINT' ? 'int64' : c.type === 'BOOLEAN' ? 'bool' : c.type === 'BLOB' ? 'blob' : 'headers',
);

/** The SELECT over the staging table giving the export's columns with their types, and `where`. */
function stagedSelect(where: string | undefined): string {
  const cols = EXPORT_COLUMNS.map((c) => (c.type === 'JSON' ? `CAST("${c.name}" AS JSON) AS "${c.name}"` : `"${c.name}"`));
  const inner = `SELECT ${cols.join(', ')} FROM staged`;
  return where === undefined ? inner : `SELECT * FROM (${inner}) WHERE ${where}`;
}

/**
 * Bytes of rows appended to DuckDB before they are written out ({@link throughDuckDB}): DuckDB holds
 * at most about this much of the export at a time (within its memory limit), whatever the log size.
 */
// 8 MiB: peak RSS 454 MiB on the export bench (64 MiB gzip log, Parquet), 599 MiB with 32 MiB chunks in an earlier run.
export const CHUNK_BYTES = 8 * 1024 * 1024;

/** Appends one export row (see {@link EXPORT_COLUMNS}) to the staging table; returns its approximate bytes. */
function appendRow(appender: ColumnarAppender, row: SqlValue[]): number {
  let bytes = 64;
  for (let i = 0; i < STAGED_KINDS.length; i++) {
    const v = row[i];
    if (v === null || v === undefined) {
      appender.null(i);
      continue;
    }
    switch (STAGED_KINDS[i]) {
      case 'varchar':
        appender.varchar(i, v as string);
        bytes += (v as string).length;
        break;
      case 'int32':
        appender.int32(i, v as number);
        break;
      case 'int64':
        appender.int64(i, v as bigint);
        break;
      case 'bool':
        appender.bool(i, v as boolean);
        break;
      case 'blob':
        appender.blob(i, v as Uint8Array);
        bytes += (v as Uint8Array).length;
        break;
      default:
        for (const h of v as unknown as HeaderValue[]) bytes += h.key.length + (h.value?.length ?? 0) + 16;
        appender.headers(i, v as unknown as HeaderValue[]);
    }
  }
  appender.endRow();
  return bytes;
}

const STAGED_TABLE_SQL = `CREATE TABLE staged (${EXPORT_COLUMNS.map((c) => `"${c.name}" ${c.type === 'JSON' ? 'VARCHAR' : c.type}`).join(', ')})`;

/** DuckDB's errors of an export as KlxErrors: `cancelled` after an abort, the `where` condition's error named. */
function exportSqlError(err: unknown, select: string, opts: WriteExportOptions): KlxError {
  if (opts.signal?.aborted) return new KlxError('cancelled', 'export cancelled', { cause: err });
  if (err instanceof KlxError) return err;
  return opts.where === undefined ? sqlError(err, select) : whereError(err, select, opts.where);
}

/** A Hive-style folder value (`log_dir=kafka%2F1`): `/`, `%`, `=` and control characters escaped. */
function hiveValue(v: string): string {
  return v.replace(/[%/=\\\u0000-\u001f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * Partitioned Parquet, and CSV/NDJSON with a `where`: the rows go through an in-memory DuckDB
 * table {@link CHUNK_BYTES} at a time (DuckDB's appender), each chunk written out and the table
 * emptied: Parquet as one more file of its partition's folder (`[log_dir=…/]topic=…/partition=…/
 * data_<n>.parquet`, `COPY … TO`), CSV/NDJSON as the lines of the rows the condition keeps. Neither
 * disk nor memory grows with the log. Writes under `partial`; returns the rows written.
 * @throws KlxError `cancelled` (DuckDB interrupted), `invalid-argument` (the condition), `io-error`.
 */
async function throughDuckDB(sources: readonly ExportSource[], opts: WriteExportOptions, partial: string): Promise<number> {
  const parquet = opts.format === 'parquet';
  const instance = await DuckDBInstance.create(':memory:', duckdbResourceOptions());
  const connection = await instance.connect();
  const onAbort = () => connection.interrupt();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const select = stagedSelect(opts.where);
  const sink = parquet ? null : new FileLineSink(partial);
  const filesIn = new Map<string, number>();
  let written = 0;
  try {
    if (parquet) await mkdir(partial);
    else if (opts.format === 'csv') await sink!.line(csvHeader(EXPORT_COLUMNS));
    await connection.run(STAGED_TABLE_SQL);
    let appender = await ColumnarAppender.create(connection, null, 'staged', STAGED_KINDS);
    let pending = 0;
    let folder: string | null = null;
    const flush = async (): Promise<void> => {
      appender.close();
      if (appender.rowsAppended > 0) {
        if (parquet) {
          const dir = join(partial, folder!);
          await mkdir(dir, { recursive: true });
          const n = filesIn.get(folder!) ?? 0;
          const file = join(dir, `data_${n}.parquet`);
          const r = await connection.run(`COPY (${select}) TO ${sqlText(file)} (FORMAT parquet)`);
          if (Number(r.rowsChanged) === 0) await rm(file, { force: true });
          else {
            filesIn.set(folder!, n + 1);
            written += Number(r.rowsChanged);
          }
        } else {
          const result = await connection.stream(select);
          for (;;) {
            const chunk = await result.fetchChunk();
            if (!chunk || chunk.rowCount === 0) break;
            for (const row of chunk.convertRows(JSDuckDBValueConverter) as SqlValue[][]) {
              await sink!.line(opts.format === 'csv' ? csvLine(row) : ndjsonLine(EXPORT_COLUMNS, row));
              written++;
            }
          }
        }
        await connection.run('DELETE FROM staged');
      }
      appender = await ColumnarAppender.create(connection, null, 'staged', STAGED_KINDS);
      pending = 0;
    };
    for await (const row of exportRows(sources, opts)) {
      if (parquet) {
        const logDir = row[EXPORT_COLUMNS.length - 1] as string;
        const f = `${opts.partitionByLogDir ? `log_dir=${hiveValue(logDir)}/` : ''}topic=${hiveValue(row[0] as string)}/partition=${row[1] as number}`;
        if (folder !== f) {
          if (folder !== null) await flush();
          folder = f;
        }
      }
      pending += appendRow(appender, row);
      if (pending >= CHUNK_BYTES) await flush();
    }
    await flush();
    appender.close();
    if (sink) await sink.close();
    return written;
  } catch (err) {
    sink?.destroy();
    throw exportSqlError(err, select, opts);
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * One Parquet file (the app's export of a range): the rows are staged in a temporary DuckDB
 * database beside the output (`export-staging.ts`; stored compressed, within the memory limit,
 * spilling to a folder beside it), then `COPY … TO partial (FORMAT parquet)`. Returns the rows written.
 * @throws KlxError `cancelled` (DuckDB interrupted), `io-error`.
 */
async function stagedParquetFile(sources: readonly ExportSource[], opts: WriteExportOptions, partial: string): Promise<number> {
  const paths = stagingPathsOf(opts.out);
  const instance = await DuckDBInstance.create(paths.db, { ...duckdbResourceOptions(), temp_directory: paths.tmp });
  const connection = await instance.connect();
  const onAbort = () => connection.interrupt();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const select = stagedSelect(opts.where);
  try {
    await connection.run(STAGED_TABLE_SQL);
    const appender = await ColumnarAppender.create(connection, null, 'staged', STAGED_KINDS);
    try {
      for await (const row of exportRows(sources, opts)) appendRow(appender, row);
    } finally {
      appender.close();
    }
    opts.onConvert?.();
    const r = await connection.run(`COPY (${select}) TO ${sqlText(partial)} (FORMAT parquet)`);
    return Number(r.rowsChanged);
  } catch (err) {
    throw exportSqlError(err, select, opts);
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    connection.closeSync();
    instance.closeSync();
  }
}

// ---------------------------------------------------------------------------------------------
// Clipboard text

/** What {@link recordsAsText} made. */
export interface CopyText {
  text: string;
  /** Records in the text. */
  records: number;
  /** Control records left out (`append` lines cannot carry them). */
  skipped: number;
  /** More records were in the sources than `maxRecords` or `maxChars` allowed. */
  truncated: boolean;
}

/** The kcat format string the `kcat` text follows (kcat's README example). */
export const KCAT_FORMAT = 'Topic %t[%p], offset: %o, key: %k, payload: %S bytes: %s\\n';

/** A key or value as text: what the decode layer made of it when that is not plain text, else its UTF-8 text, else base64. */
function readable(bytes: Uint8Array | null, decoded: string | null, format: string | null): string {
  if (bytes === null) return '';
  if (decoded !== null && format !== 'string') return decoded;
  return printableText(bytes) ?? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** A `klx append --records` line of one record (see `cli/commands/append.ts`): text as `key`/`value`, other bytes as `keyBase64`/`valueBase64`. */
export function appendLine(r: FetchedRecord): string {
  const o: Record<string, unknown> = {};
  const bytesField = (name: string, b: Uint8Array | null): void => {
    if (b === null) {
      o[name] = null;
      return;
    }
    const t = printableText(b);
    if (t !== null) o[name] = t;
    else o[`${name}Base64`] = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  };
  bytesField('key', r.key);
  bytesField('value', r.value);
  if (r.headers.length > 0) {
    o.headers = r.headers.map((h) => {
      if (h.value === null) return { key: h.key, value: null };
      const t = printableText(h.value);
      return t !== null ? { key: h.key, value: t } : { key: h.key, valueBase64: Buffer.from(h.value).toString('base64') };
    });
  }
  if (r.timestamp >= 0n) o.timestamp = Number(r.timestamp);
  return JSON.stringify(o);
}

/**
 * The records of `sources` as clipboard text:
 * - `json`: a JSON array of the NDJSON objects (one per line);
 * - `ndjson`, `csv`: as the export writes them;
 * - `kcat`: one line per record as `kcat -C -f` with {@link KCAT_FORMAT} prints it (key and value
 *   as {@link readable} text; `%S` the value's size in bytes);
 * - `append`: `klx append --records` lines ({@link appendLine}); control records are left out.
 * Stops at `maxRecords` records or once the text passes `maxChars` characters (`truncated`).
 */
export async function recordsAsText(sources: readonly ExportSource[], format: CopyFormat, opts: ExportReadOptions & { maxChars: number }): Promise<CopyText> {
  const lines: string[] = [];
  let chars = 0;
  let records = 0;
  let skipped = 0;
  let truncated = false;
  const cap = opts.maxRecords ?? Infinity;
  const { maxRecords: _cap, ...read } = opts;
  if (format === 'csv') lines.push(csvHeader(EXPORT_COLUMNS));
  for await (const { log, record } of exportRecords(sources, read)) {
    if (records >= cap || chars > opts.maxChars) {
      truncated = true;
      break;
    }
    if (format === 'append' && record.isControl) {
      skipped++;
      continue;
    }
    let line: string;
    if (format === 'append') line = appendLine(record);
    else if (format === 'kcat') {
      const row = exportRow(log, record, opts.decoder);
      const key = readable(record.key, row[10] as string | null, row[8] as string | null);
      const value = readable(record.value, row[11] as string | null, row[9] as string | null);
      line = `Topic ${log.topic}[${log.partition}], offset: ${record.offset}, key: ${key}, payload: ${record.value === null ? -1 : record.value.byteLength} bytes: ${value}`;
    } else {
      const row = exportRow(log, record, opts.decoder);
      line = format === 'csv' ? csvLine(row) : ndjsonLine(EXPORT_COLUMNS, row);
    }
    lines.push(line);
    chars += line.length + 1;
    records++;
  }
  const text = format === 'json' ? (lines.length === 0 ? '[]\n' : `[\n${lines.join(',\n')}\n]\n`) : lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  return { text, records, skipped, truncated };
}
