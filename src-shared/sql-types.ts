/**
 * JSON-safe types of the SQL methods (`sql.*`): the table set of an opened folder (tables, their
 * columns and row counts, for completion and the schema sidebar), result columns and cells, and
 * the CSV / NDJSON export.
 *
 * Result cells ({@link sqlCell}) are JSON values the grid can show without guessing:
 * - `null` for SQL NULL; booleans as booleans;
 * - numbers: integers within ±(2^53 − 1) and finite doubles; a BIGINT/HUGEINT beyond that is its
 *   decimal string (the column type says it is a number), non-finite doubles `"NaN"`/`"Infinity"`;
 * - strings: VARCHAR, and TIMESTAMP/DATE as ISO-8601;
 * - `{t: 'blob', b64, size}`: a BLOB — base64 of its first bytes (at most {@link CELL_BLOB_BYTES})
 *   and its full size in bytes, so the grid shows a hex or UTF-8 preview;
 * - `{t: 'text', text, length}`: a VARCHAR longer than {@link CELL_TEXT_CHARS} characters — its
 *   beginning and its full length;
 * - `{t: 'nested', text, length}`: a LIST, STRUCT, MAP or UNION as one line of text
 *   (`[{key: 'h', value: v}]`), cut like long text.
 * The export (`sql.export`) always carries every byte (the same CSV/NDJSON as `klx query`).
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */
import { z } from 'zod';
import { count } from './wire.ts';

/** Default row limit of `sql.query`. */
export const DEFAULT_SQL_LIMIT = 1000;
/** Largest row limit of `sql.query` (the export has none). */
export const MAX_SQL_LIMIT = 100_000;
/** Bytes of a BLOB sent in a result cell. */
export const CELL_BLOB_BYTES = 512;
/** Characters of a VARCHAR or nested value sent in a result cell. */
export const CELL_TEXT_CHARS = 2048;

/** The tables and views of a table set, in the order the schema sidebar lists them. */
export const SQL_TABLE_NAMES = ['records', 'latest', 'state', 'segments', 'batches', 'holes', 'partitions', 'damage', 'aborted_transactions', 'transactions', 'cluster_metadata', 'group_offsets', 'group_metadata', 'group_members', 'consumer_offsets', 'schemas'] as const;

/** One sentence per table, for the sidebar and completion (what the rows are, in Kafka's terms). */
export const SQL_TABLE_DOCS: Readonly<Record<string, string>> = {
  records: 'One row per record on disk, in log order: offset, timestamp (ms) and timestamp_utc, key/value bytes and UTF-8 text, headers, tombstone/control/transaction flags, batch and segment, and the decoded key/value (key_format, value_format, key_decoded, value_decoded JSON, schema_id, decode_error). past_damage: the record lies after damage in the log, or in a batch failing its CRC (past_damage_segment, past_damage_position: the damage at or just before it); a consumer reading in order stops at the damage (CompletedFetch: CorruptRecordException).',
  latest: 'The record with the highest offset of each key, tombstones included: what compaction keeps. No keyless, control, aborted or below-logStartOffset records. past_damage: this latest value lies after damage: a consumer reading in order stops at most damage before it (CompletedFetch), and skips the rest of the segment at a size field running past the end of the file (FileLogInputStream.nextBatch, LocalLog.read): the notice says which.',
  state: 'latest without tombstones: the current value of each key, as a read_committed consumer reading from the start rebuilds it once the high watermark and last stable offset reach the log end (CompletedFetch).',
  segments: 'One row per segment: baseOffset, next offset, file, sizes of .log and indexes, batch and record counts, active or closed.',
  batches: 'One row per batch (or legacy message set entry): position, offsets, codec, producer, flags, CRC check.',
  holes: 'Offset ranges that hold no deliverable record, with their cause (compaction, control records, aborted transactions, below logStartOffset...).',
  partitions: 'One row per partition: logStartOffset, logEndOffset, high watermark, checkpoints, cleanup.policy, counts.',
  damage: 'Bytes that are not batches, undecodable batches and CRC mismatches: file, byte position, reason.',
  group_offsets: 'Latest committed offset of each consumer group, topic and partition: log start/end offsets and high watermark, lag (high watermark − committed, as kafka-consumer-groups.sh prints LAG: ConsumerGroupCommand), record_lag (records actually left), diagnosis, next_offset, expired.',
  group_metadata: 'One row per consumer group loaded from __consumer_offsets: type (classic, consumer, share, simple), protocol, state, generation or epoch, members, topics, total lag.',
  group_members: 'Members of classic, KIP-848 consumer and share groups: member id, client id, host, timeouts, member epoch, subscription, assignment.',
  consumer_offsets: 'Every record of __consumer_offsets decoded: record type, group, member, committed topic/partition/offset, key and value as JSON, or the decode error.',
  aborted_transactions: 'Transactions closed by an ABORT marker: producer, first and last offset.',
  transactions: 'One row per __transaction_state record (tombstones included): transactional id, producer id/epoch, state, timeout, partitions, timestamps, as the transaction coordinator wrote it.',
  cluster_metadata: 'One row per KRaft __cluster_metadata record: record_offset, type, version and data as kafka-dump-log --cluster-metadata-decoder prints them.',
  schemas: 'Schema Registry schemas rebuilt from the _schemas topics of this folder (latest state, deletes honoured) and schema files given: id, subject, version, type, text, references.',
};

/** A column of a table or of a result: name and DuckDB type (`BIGINT`, `BLOB`, `STRUCT("key" VARCHAR, "value" BLOB)[]`...). */
export const sqlColumn = z.object({ name: z.string(), type: z.string() });

/** A column of a table as completion inserts it: `sqlName` is the name quoted when it is a reserved word (`"offset"`). */
export const sqlTableColumn = sqlColumn.extend({ sqlName: z.string() });

/** A table or view of the table set, with its row count. */
export const sqlTable = z.object({
  name: z.string(),
  kind: z.enum(['table', 'view']),
  rows: count,
  columns: z.array(sqlTableColumn),
  doc: z.string(),
});

/** What building the table set wrote (counts; `bytes` of `.log` read; `elapsedMs` of the build). */
export const sqlBuildSummary = z.object({
  partitions: count,
  segments: count,
  batches: count,
  records: count,
  damage: count,
  holes: count,
  abortedTransactions: count,
  bytes: count,
  elapsedMs: z.number().nonnegative(),
});

/** The answer of `sql.open`: the tables of a folder and where they came from. */
export const sqlOpenResult = z.object({
  /** The real path of the folder the tables are for. */
  root: z.string(),
  /** True when an up-to-date table set from the cache was used (nothing read from the logs). */
  fromCache: z.boolean(),
  /** What the build wrote; null when the tables came from the cache. */
  build: sqlBuildSummary.nullable(),
  /** Milliseconds from the request to the tables being ready (build or cache check). */
  elapsedMs: z.number().nonnegative(),
  tables: z.array(sqlTable),
  /** DuckDB's reserved keywords (lower case): identifiers that must be double-quoted. */
  reservedWords: z.array(z.string()),
  /**
   * What the user should know beside the rows, per partition folder (relative path): pending swaps
   * of an interrupted cleaner, records past damage (how many, where, what a consumer and a broker do).
   */
  notices: z.array(z.object({ partition: z.string(), notice: z.string() })),
});

/**
 * A BLOB cell: base64 of its first bytes and its full size. (`b64` is checked as a string only: a
 * page holds up to 100,000 rows and the main process makes it with Buffer's own base64.)
 */
export const blobCell = z.object({ t: z.literal('blob'), b64: z.string(), size: count });
/** A long VARCHAR cell, or a LIST/STRUCT/MAP shown as text: its beginning and its full length in characters. */
export const textCell = z.object({ t: z.enum(['text', 'nested']), text: z.string(), length: count });

/** A result cell (see the module comment). */
export const sqlCell = z.union([z.string(), z.number(), z.null(), z.boolean(), blobCell, textCell]);

/** Whether `v` is one {@link sqlCell} (a hand-written {@link sqlCell} check). */
export function isSqlCell(v: unknown): v is SqlCell {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const size = o.t === 'blob' ? o.size : o.length;
  const keys = Object.keys(o).length;
  const okSize = typeof size === 'number' && Number.isSafeInteger(size) && size >= 0;
  if (o.t === 'blob') return keys === 3 && typeof o.b64 === 'string' && okSize;
  return (o.t === 'text' || o.t === 'nested') && keys === 3 && typeof o.text === 'string' && okSize;
}

/** Whether `v` is an array of rows of cells. */
export function isSqlRows(v: unknown): v is SqlCell[][] {
  if (!Array.isArray(v)) return false;
  for (const row of v) {
    if (!Array.isArray(row)) return false;
    for (const c of row) if (!isSqlCell(c)) return false;
  }
  return true;
}

/**
 * Result rows: arrays of {@link sqlCell}. Checked by {@link isSqlRows} instead of zod's union,
 * which costs seconds on a page of 100,000 rows × 20 columns (the check here takes milliseconds);
 * typed as `SqlCell[][]`.
 */
export const sqlRows = z.array(z.any()).refine(isSqlRows, 'rows must be arrays of result cells (null, boolean, finite number, string, blob or text cell)') as unknown as z.ZodType<SqlCell[][]>;

/** The answer of `sql.query`. */
export const sqlQueryResult = z.object({
  columns: z.array(sqlColumn),
  rows: sqlRows,
  rowCount: count,
  /** The query had more rows than `limit`. */
  truncated: z.boolean(),
  limit: count,
  /** `SELECT` or `EXPLAIN`. */
  statementType: z.string(),
  /** Milliseconds of the query itself (without building tables). */
  elapsedMs: z.number().nonnegative(),
  /** The tables were (re)built or reloaded from the cache before the query (the folder changed or was never opened). */
  tablesOpened: z.boolean(),
});

/** Export formats: the CSV and NDJSON of `klx query --csv / --json`. */
export const sqlExportFormat = z.enum(['csv', 'ndjson']);

/** The answer of `sql.export`: the file to fetch with `sql.exportRead`. */
export const sqlExportResult = z.object({
  exportId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  /** A file name to save it as, e.g. `orders-0-query-20240501-101500.csv`. */
  fileName: z.string(),
  format: sqlExportFormat,
  rows: count,
  /** Bytes of the file. */
  bytes: count,
  elapsedMs: z.number().nonnegative(),
});

export type SqlColumn = z.infer<typeof sqlColumn>;
export type SqlTableColumn = z.infer<typeof sqlTableColumn>;
export type SqlTable = z.infer<typeof sqlTable>;
export type SqlBuildSummary = z.infer<typeof sqlBuildSummary>;
export type SqlOpenResult = z.infer<typeof sqlOpenResult>;
export type BlobCell = z.infer<typeof blobCell>;
export type TextCell = z.infer<typeof textCell>;
export type SqlCell = z.infer<typeof sqlCell>;
export type SqlQueryResult = z.infer<typeof sqlQueryResult>;
export type SqlExportFormat = z.infer<typeof sqlExportFormat>;
export type SqlExportResult = z.infer<typeof sqlExportResult>;
