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
 * Parquet goes through DuckDB: the rows are first written as NDJSON to a staging file beside the
 * output (`<out>.klx-staging.ndjson`, removed at the end, also on failure or cancel), then DuckDB's
 * `COPY (SELECT … FROM read_json(staging)) TO out (FORMAT parquet)` converts them, streaming, within
 * the SQL layer's memory limit (`sql-resources.ts`): key, value and header values become BLOBs
 * again, the decoded columns JSON. With `partitionBy` the output is a folder of Hive-style
 * `topic=…/partition=…/data_0.parquet` files (Spark, Trino, BigQuery and DuckDB read them as one
 * table). A `where` condition (DuckDB SQL over the columns) is applied in that SELECT; for CSV and
 * NDJSON with a condition the rows are staged the same way and read back through DuckDB.
 *
 * Memory: a page of records ({@link PAGE_RECORDS}) at a time; DuckDB spills beyond its limit.
 * Offsets are int64 (`bigint`), timestamps ms, sizes and positions bytes.
 */
import { rm, stat } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
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
export function exportRow(log: PartitionLog, r: FetchedRecord, decoder: RecordDecoder | null): SqlValue[] {
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
  ];
}

/**
 * The records of `sources` in order (sources in the order given, offsets ascending within a
 * range), one page at a time.
 * @throws KlxError `cancelled`, `offset-out-of-range` (a range outside the log), what reading throws.
 */
export async function* exportRecords(sources: readonly ExportSource[], opts: ExportReadOptions): AsyncGenerator<{ log: PartitionLog; record: FetchedRecord }> {
  let records = 0;
  let passed = 0n;
  const max = opts.maxRecords ?? Infinity;
  const page = { isolation: opts.isolation ?? 'read_uncommitted', includeControl: true, ...(opts.signal ? { signal: opts.signal } : {}) } as const;
  for (const s of sources) {
    const log = s.log;
    if (s.offsets) {
      for (const o of [...s.offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (opts.signal?.aborted) throw new KlxError('cancelled', 'export cancelled');
        const r = o >= log.logStartOffset && o < log.logEndOffset ? await recordAt(log, o, page) : null;
        passed++;
        if (r && r.offset === o) {
          yield { log, record: r };
          if (++records >= max) return;
        }
        opts.onProgress?.({ records, offsets: passed });
      }
      continue;
    }
    const start = s.from ?? log.logStartOffset;
    const last = s.to ?? log.logEndOffset - 1n;
    if (last < start || log.logEndOffset <= log.logStartOffset) continue;
    let cursor = start < log.logStartOffset ? log.logStartOffset : start;
    const base = passed;
    for (;;) {
      if (cursor > last) break;
      const p = await readForward(log, cursor, PAGE_RECORDS, page);
      for (const r of p.records) {
        if (r.offset > last) break;
        yield { log, record: r };
        if (++records >= max) return;
      }
      cursor = p.nextOffset;
      passed = base + (cursor > last ? last - start + 1n : cursor - start);
      opts.onProgress?.({ records, offsets: passed });
      if (p.atEnd || p.records.length === 0) break;
    }
    passed = base + (last - start + 1n);
  }
}

/** The rows of {@link exportRecords}. */
export async function* exportRows(sources: readonly ExportSource[], opts: ExportReadOptions): AsyncGenerator<SqlValue[]> {
  for await (const { log, record } of exportRecords(sources, opts)) yield exportRow(log, record, opts.decoder);
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
  if (await exists(opts.out)) throw new KlxError('invalid-argument', 'the output exists already: choose a new path (an export never overwrites)', { file: opts.out });
  if (opts.partitionBy && opts.format !== 'parquet') throw new KlxError('invalid-argument', 'partitioning by topic and partition is for Parquet only');
  const partitions = new Set(sources.map((s) => s.log.dir)).size;
  const staged = opts.format === 'parquet' || opts.where !== undefined;
  const target = staged ? stagingPathOf(opts.out) : opts.out;
  let records = 0;
  let ok = false;
  const sink = new FileLineSink(target);
  try {
    try {
      const rows = exportRows(sources, opts);
      if (opts.format === 'csv' && !staged) records = await writeCsv(EXPORT_COLUMNS, rows, sink);
      else records = await writeNdjson(EXPORT_COLUMNS, rows, sink);
      await sink.close();
    } catch (err) {
      sink.destroy();
      throw err;
    }
    if (staged) {
      opts.onConvert?.();
      records = await convertStaged(target, opts);
    }
    ok = true;
  } finally {
    if (staged) await rm(target, { force: true });
    if (!ok) await rm(opts.out, { force: true, recursive: opts.partitionBy === true });
  }
  const stops = opts.isolation === 'read_committed' ? await lastStableStops(sources, opts.signal) : [];
  return { format: opts.format, out: opts.out, records, bytes: await sizeOf(opts.out), partitions, elapsedMs: performance.now() - started, lastStableStops: stops };
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

/** The staging file of an export to `out` (beside it, hidden: `.<name>.klx-staging.ndjson`). */
export function stagingPathOf(out: string): string {
  return join(dirname(out), `.${basename(out)}.klx-staging.ndjson`);
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

/**
 * Longest staged NDJSON line DuckDB reads (32 MiB: a record of up to ~24 MiB of key, value and
 * headers, base64; Kafka's default `max.message.bytes` is 1 MiB). DuckDB's JSON reader buffers
 * twice this per thread within its memory limit.
 */
export const STAGED_MAX_LINE = 32 * 1024 * 1024;

const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** read_json's column types of the staged NDJSON (bytes are base64 text there). */
const STAGED_TYPES: Record<string, string> = Object.fromEntries(
  EXPORT_COLUMNS.map((c) => [c.name, c.type === 'BLOB' ? 'VARCHAR' : c.type.startsWith('STRUCT') ? 'STRUCT("key" VARCHAR, "value" VARCHAR)[]' : c.type]),
);

/** The SELECT over the staged NDJSON giving the export's columns with their types back. */
function stagedSelect(staging: string, where: string | undefined): string {
  const cols = EXPORT_COLUMNS.map((c) => {
    const q = `"${c.name}"`;
    if (c.type === 'BLOB') return `from_base64(${q}) AS ${q}`;
    if (c.type.startsWith('STRUCT')) return `list_transform(${q}, h -> {'key': h."key", 'value': from_base64(h."value")}) AS ${q}`;
    return q;
  });
  const types = `{${Object.entries(STAGED_TYPES).map(([k, t]) => `${sqlText(k)}: ${sqlText(t)}`).join(', ')}}`;
  const inner = `SELECT ${cols.join(', ')} FROM read_json(${sqlText(staging)}, format = 'newline_delimited', columns = ${types}, maximum_object_size = ${STAGED_MAX_LINE})`;
  return where === undefined ? inner : `SELECT * FROM (${inner}) WHERE ${where}`;
}

/** Converts the staged NDJSON to the output through DuckDB; returns the rows written. */
async function convertStaged(staging: string, opts: WriteExportOptions): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:', duckdbResourceOptions());
  const connection = await instance.connect();
  const onAbort = () => connection.interrupt();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const select = stagedSelect(staging, opts.where);
  try {
    if (opts.format === 'parquet') {
      const options = opts.partitionBy ? `FORMAT parquet, PARTITION_BY (topic, "partition"), WRITE_PARTITION_COLUMNS true` : 'FORMAT parquet';
      const r = await connection.run(`COPY (${select}) TO ${sqlText(opts.out)} (${options})`);
      return Number(r.rowsChanged);
    }
    const result = await connection.stream(select);
    const sink = new FileLineSink(opts.out);
    try {
      const rows = (async function* () {
        for (;;) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) return;
          for (const row of chunk.convertRows(JSDuckDBValueConverter) as SqlValue[][]) yield row;
        }
      })();
      const n = opts.format === 'csv' ? await writeCsv(EXPORT_COLUMNS, rows, sink) : await writeNdjson(EXPORT_COLUMNS, rows, sink);
      await sink.close();
      return n;
    } catch (err) {
      sink.destroy();
      throw err;
    }
  } catch (err) {
    if (opts.signal?.aborted) throw new KlxError('cancelled', 'export cancelled', { cause: err });
    if (err instanceof KlxError) throw err;
    const e = sqlError(err, select);
    if (opts.where === undefined) throw e;
    // The user wrote only the condition: say it and DuckDB's reason, not the staging SELECT around it
    // (DuckDB's "LINE 1: ..." excerpt and caret point into that internal SQL).
    const reason = e.reason.replace(/\n*LINE \d+:[^\n]*\n[ \t]*\^[^\n]*/g, '').trim();
    throw new KlxError('invalid-argument', `the where condition ${opts.where} cannot run: ${reason}`, { details: { ...(e.details ?? {}), where: opts.where }, cause: err });
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
