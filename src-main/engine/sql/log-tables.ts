/**
 * The SQL tables of an opened folder (issue 7): one table set for every partition folder in it,
 * built by streaming the engine's log walk (`walkLog` → batches → records) into DuckDB, batch by
 * batch. The whole log is never held in JS memory: rows go to DuckDB in chunks of 2048
 * ({@link ColumnarAppender}).
 *
 * User-visible objects (schema `main`):
 * - `records`: one row per record on disk, in log order of each partition — topic, partition,
 *   offset, timestamp (ms, −1 = none), key (BLOB) and key_text, value (BLOB) and value_text (UTF-8
 *   text when the bytes are valid UTF-8, else NULL), value_size (bytes of the whole value; NULL for
 *   a null value), value_truncated, headers (`[{key, value}]`), is_tombstone (null value in a data
 *   batch), is_control and control_type (COMMIT/ABORT/LEADER_CHANGE...), is_transactional, aborted
 *   (data of an aborted transaction), producer_id, batch_base_offset, segment_base_offset,
 *   position (byte position of the batch in the segment's `.log`), crc_valid, partition_id,
 *   and past_damage with past_damage_segment / past_damage_position: the record lies after damage in
 *   the partition's log (bytes that are not a batch, a batch failing its CRC, a batch whose records
 *   cannot be decoded), in its segment or an earlier one, or in a batch failing its CRC (the consumer
 *   stops at that batch, before its records); the two columns name the nearest such damage at or
 *   before it (segment base offset, byte position in that `.log`). What a consumer reading in order
 *   does there depends on the damage (the notice says which, as `klx fetch` does): it stops at a batch
 *   failing its CRC (CompletedFetch.maybeEnsureValid) or at a size field below 14 (FileLogInputStream.nextBatch
 *   and ByteBufferLogInputStream.nextBatchSize throw CorruptRecordException) and reaches such a record only
 *   by seeking past it; at a size field running past the end of the file a broker's read ends the segment's
 *   batches without an error (FileLogInputStream.nextBatch returns nothing), so the consumer silently skips
 *   the rest of that segment and reads on at the next one (LocalLog.read), or waits there in the last one;
 *   a broker that recovers the damaged segment at startup cuts it there (LogSegment.recover) and deletes the
 *   later segments (LogLoader.recoverLog). The rows stay listed, flagged; {@link pastDamageNotices}
 *   says how many there are per partition and what a consumer does at the first damage.
 *   Values longer than the value cap (default {@link DEFAULT_VALUE_CAP_BYTES}) read as a prefix cut
 *   at a UTF-8 character boundary, with `value_size` giving the real size; the full value comes from
 *   the engine (`fetch`). Keys are never cut.
 *   The cache keeps the metadata of each record (offsets, timestamp, key, sizes, flags, segment and
 *   byte position of its batch: issue 16, at most a quarter of the log's bytes): `value`,
 *   `value_text`, `headers` and the decoded columns are read back from the segment when a query
 *   names them (`record-functions.ts`), so other queries never touch the log.
 * - `latest`: the record holding the highest offset of every key of a partition, tombstones
 *   included (its past_damage says whether a consumer reading in order reaches it): what compaction keeps of a key (Kafka's `LogCleaner` offset map: "latest offset per
 *   key", by offset, never by timestamp). Left out, as a consumer or the cleaner leaves them out:
 *   records without a key (the cleaner drops them), control records (never data), data of aborted
 *   transactions (never delivered to read_committed consumers, removed by the cleaner) and records
 *   below the partition's logStartOffset (not readable after DeleteRecords).
 * - `state`: the rows of `latest` that are not tombstones: the current state a read_committed consumer
 *   rebuilds by reading the topic from the start (CompletedFetch skips aborted data and control
 *   batches), once the high watermark and the last stable offset reach the log end: the table reads
 *   every record on disk, a consumer stops at the last stable offset (UnifiedLog.read, FetchIsolation).
 * - `segments`, `batches` (one row per v2 batch or legacy entry), `holes` (offset ranges that hold
 *   no deliverable record, with their cause, from the engine's `scanHoles`), `partitions` (offsets,
 *   checkpoints, counts), `damage` (bytes that are not batches, batches whose records cannot be
 *   decoded, CRC mismatches: file, byte position, reason; and, kind `not-checked`, batches whose
 *   records inflate past this tool's decompression bound: not damage, their records are not in
 *   `records`, and the session's notices say so), `aborted_transactions`.
 * - `transactions` and `cluster_metadata`: Kafka's `__transaction_state` and `__cluster_metadata` records
 *   decoded (see `internal-topic-tables.ts`).
 * Offsets and timestamps are BIGINT (Kafka's int64); sizes and positions are bytes.
 *
 * Internal objects live in schema `klx_internal` (`record_rows`, `batch_rows`, `latest_offsets`,
 * `meta`); `records` and `batches` are views over them that add the topic and partition of each
 * `partition_id` and the text columns (so they cost nothing at build time).
 *
 * Aborted transactions are found during the same walk with the engine's `TransactionTracker`
 * (transactions.ts: a producer's transactional data batches since its previous marker, closed by its
 * next COMMIT/ABORT marker); rows of aborted transactions are flagged after the walk, when their
 * marker has been seen.
 */
import { buildGroupTables, GROUP_TABLES } from './group-tables.ts';
import { crcMismatchText } from '../format/crc.ts';
import { relative } from 'node:path';
import type { DuckDBConnection } from './duckdb.ts';
import { KlxError } from '../errors.ts';
import { availableParallelism } from 'node:os';
import { COMPRESSIONS, type BatchHeader } from '../format/types.ts';
import { Pacer, type LongReadOptions } from '../log/log-walk.ts';
import { allPartitions, type OpenedLogs } from '../log/log-dir.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { scanHoles, type OffsetHole } from '../log/holes.ts';
import { TransactionTracker, type CompletedTransaction } from '../log/transactions.ts';
import { segmentRowChunks, type ChunkBatch, type RowsChunk } from './segment-rows.ts';
import { SqlBuildPool, type StartSqlBuildWorker } from './sql-build-pool.ts';
import { ColumnarAppender, SQL_TYPE_OF, type ColumnKind } from './columnar-appender.ts';
import { DECODE_VIEW_COLUMNS_SQL, RecordRowDecoder, type DecodeTableOptions } from './decode-columns.ts';
import { RECORD_FUNCTIONS, RECORD_PLACE_SQL, RecordFunctions } from './record-functions.ts';

/** The length a capped value keeps (`record-functions.ts`). */
export { cappedLength } from './record-functions.ts';
import { DEFAULT_VALUE_CAP_BYTES } from './sql-defaults.ts';
import { buildInternalTopicTables, INTERNAL_TOPIC_TABLES } from './internal-topic-tables.ts';

/** Bumped whenever the tables change shape or meaning; a cache built by another version is rebuilt. */
export const LOG_TABLES_SCHEMA_VERSION = 7;

/** Default cap on the bytes of a value kept in `records.value` (16 KiB; from `sql-defaults.ts`). */
export { DEFAULT_VALUE_CAP_BYTES };

/** Schema of the internal tables. */
export const INTERNAL_SCHEMA = 'klx_internal';

/** The tables and views a user queries. */
export const USER_TABLES = ['records', 'latest', 'state', 'segments', 'batches', 'holes', 'partitions', 'damage', 'aborted_transactions', ...INTERNAL_TOPIC_TABLES, ...GROUP_TABLES, 'schemas'] as const;

/** One column: name and how it is written. */
type ColumnSpec = readonly [name: string, kind: ColumnKind];

const RECORD_ROW_COLUMNS = [
  ['partition_id', 'int32'],
  ['offset', 'int64'],
  ['timestamp', 'int64'],
  ['key', 'blob'],
  ['value_size', 'int32'],
  ['header_count', 'int32'],
  ['is_control', 'bool'],
  ['control_type', 'varchar'],
  ['is_transactional', 'bool'],
  ['aborted', 'bool'],
  ['producer_id', 'int64'],
  ['batch_base_offset', 'int64'],
  ['segment_base_offset', 'int64'],
  ['position', 'int64'],
  ['crc_valid', 'bool'],
  ['past_damage', 'bool'],
  ['past_damage_segment', 'int64'],
  ['past_damage_position', 'int64'],
] as const satisfies readonly ColumnSpec[];

const BATCH_ROW_COLUMNS = [
  ['partition_id', 'int32'],
  ['segment_base_offset', 'int64'],
  ['position', 'int64'],
  ['size', 'int32'],
  ['magic', 'int32'],
  ['base_offset', 'int64'],
  ['last_offset', 'int64'],
  ['last_offset_delta', 'int32'],
  ['record_count', 'int32'],
  ['codec', 'int32'],
  ['log_append_time', 'bool'],
  ['base_timestamp', 'int64'],
  ['max_timestamp', 'int64'],
  ['is_transactional', 'bool'],
  ['is_control', 'bool'],
  ['has_delete_horizon', 'bool'],
  ['producer_id', 'int64'],
  ['producer_epoch', 'int32'],
  ['base_sequence', 'int32'],
  ['partition_leader_epoch', 'int32'],
  ['attributes', 'int32'],
  ['crc', 'int64'],
  ['crc_valid', 'bool'],
  ['aborted', 'bool'],
  ['records_decoded', 'bool'],
] as const satisfies readonly ColumnSpec[];

const SEGMENT_COLUMNS = [
  ['partition_id', 'int32'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['base_offset', 'int64'],
  ['next_offset', 'int64'],
  ['file', 'varchar'],
  ['size_bytes', 'int64'],
  ['index_bytes', 'int64'],
  ['timeindex_bytes', 'int64'],
  ['txnindex_bytes', 'int64'],
  ['modified_ms', 'int64'],
  ['is_active', 'bool'],
  ['batch_count', 'int64'],
  ['record_count', 'int64'],
  ['first_offset', 'int64'],
  ['last_offset', 'int64'],
  ['max_timestamp', 'int64'],
  ['damaged_bytes', 'int64'],
] as const satisfies readonly ColumnSpec[];

const PARTITION_COLUMNS = [
  ['partition_id', 'int32'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['kind', 'varchar'],
  ['dir', 'varchar'],
  ['log_dir', 'varchar'],
  ['topic_id', 'varchar'],
  ['cleanup_policy', 'varchar'],
  ['log_start_offset', 'int64'],
  ['log_end_offset', 'int64'],
  ['high_watermark', 'int64'],
  ['recovery_point', 'int64'],
  ['cleaner_checkpoint', 'int64'],
  ['last_stable_offset', 'int64'],
  ['open_transactions', 'int32'],
  ['segment_count', 'int32'],
  ['log_size_bytes', 'int64'],
  ['batch_count', 'int64'],
  ['record_count', 'int64'],
  ['damaged_bytes', 'int64'],
] as const satisfies readonly ColumnSpec[];

const DAMAGE_COLUMNS = [
  ['partition_id', 'int32'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['segment_base_offset', 'int64'],
  ['file', 'varchar'],
  ['position', 'int64'],
  ['size', 'int64'],
  ['kind', 'varchar'],
  ['code', 'varchar'],
  ['reason', 'varchar'],
] as const satisfies readonly ColumnSpec[];

const HOLE_COLUMNS = [
  ['partition_id', 'int32'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['from_offset', 'int64'],
  ['to_offset', 'int64'],
  ['offset_count', 'int64'],
  ['cause', 'varchar'],
  ['segment_base_offset', 'int64'],
  ['position', 'int64'],
  ['detail', 'varchar'],
] as const satisfies readonly ColumnSpec[];

const ABORTED_COLUMNS = [
  ['partition_id', 'int32'],
  ['topic', 'varchar'],
  ['partition', 'int32'],
  ['producer_id', 'int64'],
  ['producer_epoch', 'int32'],
  ['first_offset', 'int64'],
  ['last_offset', 'int64'],
  ['last_stable_offset', 'int64'],
] as const satisfies readonly ColumnSpec[];

/**
 * `klx_internal.first_damage`: the first damage of each partition's log (in segment and byte order),
 * for {@link pastDamageNotices}; `segment_index` is the segment's place in the partition (0 = oldest).
 */
const FIRST_DAMAGE_COLUMNS = [
  ['partition_id', 'int32'],
  ['segment_base_offset', 'int64'],
  ['segment_index', 'int32'],
  ['position', 'int64'],
  ['kind', 'varchar'],
  ['code', 'varchar'],
  ['reason', 'varchar'],
] as const satisfies readonly ColumnSpec[];

/** Column indexes by name, checked at compile time. */
type ColumnIndex<T extends readonly ColumnSpec[]> = { [K in T[number][0]]: number };
function indexOf<T extends readonly ColumnSpec[]>(cols: T): ColumnIndex<T> {
  return Object.fromEntries(cols.map(([name], i) => [name, i])) as ColumnIndex<T>;
}
const R = indexOf(RECORD_ROW_COLUMNS);
const B = indexOf(BATCH_ROW_COLUMNS);
const S = indexOf(SEGMENT_COLUMNS);
const P = indexOf(PARTITION_COLUMNS);
const D = indexOf(DAMAGE_COLUMNS);
const A = indexOf(ABORTED_COLUMNS);
const H = indexOf(HOLE_COLUMNS);
const FD = indexOf(FIRST_DAMAGE_COLUMNS);

/** `"name"` with embedded quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `'text'` with embedded quotes doubled. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function createTableSql(name: string, cols: readonly ColumnSpec[]): string {
  return `CREATE TABLE ${name} (${cols.map(([n, k]) => `${quoteIdent(n)} ${SQL_TYPE_OF[k]}`).join(', ')})`;
}

function kindsOf(cols: readonly ColumnSpec[]): ColumnKind[] {
  return cols.map(([, k]) => k);
}

/**
 * Options of {@link buildLogTables}. Progress (`{phase, done, total, bytes}`, every ~50 ms) comes in
 * two phases: `build SQL tables` (done/total = bytes of `.log` walked, over all partitions) and, per
 * partition, `find holes of <topic>-<partition>` (the holes walk of `holes.ts`, bytes of that
 * partition). Aborting `signal` stops the build with KlxError `cancelled`.
 */
export interface BuildLogTablesOptions extends LongReadOptions {
  /** Bytes of a value kept in `records.value` (default {@link DEFAULT_VALUE_CAP_BYTES}; ≥ 0). */
  valueCapBytes?: number;
  /** How records are decoded into `key_decoded`/`value_decoded`/…; `false`: not at all (columns NULL). Default: auto. */
  decode?: DecodeTableOptions | false;
  /**
   * Starts a thread on `sql-build-worker` (`SQL_BUILD_WORKER`): segments are then decoded (and
   * holes walked) in parallel threads (`sql-build-pool.ts`); without it, in the calling thread.
   * The tables are the same either way.
   */
  startWorker?: StartSqlBuildWorker;
  /**
   * Bytes of `__consumer_offsets` below which the consumer-group tables are made in the calling
   * thread even with `startWorker` (default `GROUPS_IN_THREAD_FROM_BYTES` of group-tables.ts).
   */
  groupsInThreadFromBytes?: number;
  /**
   * Threads of the build, the calling one included (default: the machine's cores): the calling
   * thread appends to DuckDB (most of a build's work, in DuckDB's appender) and `threads − 1`
   * threads decode segments; 1 decodes in the calling thread.
   */
  threads?: number;
  /**
   * Bytes of `.log` below which the build decodes in the calling thread even with `startWorker`
   * (default {@link PARALLEL_BUILD_FROM_BYTES}: starting threads costs more than they save on a small log).
   */
  parallelFromBytes?: number;
  /**
   * Bytes at the start of the first segment a parallel build decodes in the calling thread (≥ 0);
   * default: as many chunks as it decodes before a decoding thread has started.
   */
  firstSegmentHeadBytes?: number;
}

/** Default of {@link BuildLogTablesOptions.parallelFromBytes}: 64 MiB. */
export const PARALLEL_BUILD_FROM_BYTES = 64 * 2 ** 20;

/** Counts of what {@link buildLogTables} wrote. */
export interface BuildSummary {
  partitions: number;
  segments: number;
  batches: number;
  records: number;
  /** Rows of `damage`. */
  damage: number;
  /** Rows of `holes`. */
  holes: number;
  abortedTransactions: number;
  /** Bytes of `.log` walked. */
  bytes: number;
  /** Wall time in ms. */
  elapsedMs: number;
}

/** Per-segment tallies kept during the walk. */
interface SegmentTally {
  batches: bigint;
  records: bigint;
  first: bigint | null;
  last: bigint | null;
  maxTimestamp: bigint | null;
  damaged: bigint;
}

/** A transaction closed by an ABORT marker, with its partition. */
interface AbortedRow {
  partitionId: number;
  log: PartitionLog;
  txn: CompletedTransaction;
}

/**
 * Creates the tables in the (empty, writable) database of `connection` and fills them from every
 * partition of `opened`, in partition order, each partition in offset order.
 * @returns counts and timing.
 * @throws KlxError `cancelled` when `opts.signal` is aborted (the database is then incomplete and
 *   must be discarded), `io-error` / `not-found` when a `.log` cannot be read, `invalid-argument` for
 *   a negative value cap, `internal` when DuckDB refuses the data. Damage inside the files is never
 *   thrown: it becomes rows of `damage`.
 */
export async function buildLogTables(connection: DuckDBConnection, opened: OpenedLogs, opts: BuildLogTablesOptions = {}): Promise<BuildSummary> {
  const started = performance.now();
  const cap = opts.valueCapBytes ?? DEFAULT_VALUE_CAP_BYTES;
  if (!Number.isSafeInteger(cap) || cap < 0) throw new KlxError('invalid-argument', `value cap must be a non-negative number of bytes, got ${cap}`);
  const parts = allPartitions(opened);

  const totalBytes = parts.reduce((s, p) => s + p.log.logSize, 0);
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'build SQL tables', total: totalBytes });

  // Where segments are decoded and holes walked: worker threads, or this thread. The threads are
  // started (and given their tasks) first, so that they start while DuckDB creates the tables.
  const threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
  const parallel = opts.startWorker && threads > 1 && parts.some((p) => p.log.segments.length > 0) && totalBytes >= (opts.parallelFromBytes ?? PARALLEL_BUILD_FROM_BYTES);
  // One core stays with this thread: DuckDB's appender works in it (see `threads`).
  const pool = parallel ? new SqlBuildPool(opts.startWorker!, threads - 1) : null;
  let segmentSource: (pid: number, si: number) => AsyncIterable<RowsChunk> | Iterable<RowsChunk>;
  let holesOf: (pid: number) => AsyncIterable<OffsetHole>;
  if (pool) {
    // The threads are started now; the first segment's head is decoded here until one of them has
    // loaded (they would only be waited for), or up to `firstSegmentHeadBytes` when given. Then
    // the tasks are submitted: the rest of that segment first (`from`), then every other segment
    // and each partition's holes walk, in the order they are read.
    pool.startThreads();
    const first = parts.findIndex((p) => p.log.segments.length > 0);
    const fixedHead = opts.firstSegmentHeadBytes;
    type Task = ReturnType<SqlBuildPool['submit']>;
    let tasks: { segments: (Task | null)[]; holes: Task }[] | null = null;
    const submitAll = (restFrom: number | null) => {
      tasks = parts.map(({ log }, pid) => ({
        segments: log.segments.map((seg, si) => {
          const end = seg.files.logSize;
          if (pid !== first || si !== 0) return pool.submit({ kind: 'segment', dir: log.dir, baseOffset: seg.baseOffset, end });
          return restFrom !== null ? pool.submit({ kind: 'segment', dir: log.dir, baseOffset: seg.baseOffset, end, from: restFrom }) : null;
        }),
        holes: pool.submit({ kind: 'holes', dir: log.dir }),
      }));
    };
    segmentSource = (pid, si) => {
      if (pid !== first || si !== 0) return pool.chunks(tasks![pid]!.segments[si]!);
      const seg = parts[pid]!.log.segments[si]!;
      return (async function* () {
        let restFrom: number | null = null;
        if (fixedHead !== undefined) {
          const head = Math.max(0, fixedHead);
          yield* segmentRowChunks(seg, seg.files.logSize, { before: head });
          if (seg.files.logSize > head) restFrom = head;
        } else {
          for (const c of segmentRowChunks(seg, seg.files.logSize)) {
            yield c;
            // Let the threads' messages in, then hand them the rest once one is ready.
            await new Promise<void>((resolve) => setImmediate(resolve));
            if (pool.anyReady) {
              const last = c.entries[c.entries.length - 1];
              // Entries follow one another: the next starts where the last one ends.
              const next = last === undefined ? 0 : last.t === 'batch' ? last.header.position + last.header.size : last.position + last.size;
              if (next < seg.files.logSize) restFrom = next;
              break;
            }
          }
        }
        submitAll(restFrom);
        const rest = tasks![pid]!.segments[si];
        if (rest) yield* pool.chunks(rest);
      })();
    };
    holesOf = (pid) => (pid < first ? scanHoles(parts[pid]!.log, { signal: opts.signal }) : pool.holes(tasks![pid]!.holes));
  } else {
    segmentSource = (pid, si) => {
      const seg = parts[pid]!.log.segments[si]!;
      return segmentRowChunks(seg, seg.files.logSize);
    };
    holesOf = (pid) => scanHoles(parts[pid]!.log, { signal: opts.signal, onProgress: opts.onProgress });
  }
  let tables: BuildTables;
  try {
    tables = await createBuildTables(connection, opened, opts.decode);
  } catch (err) {
    await pool?.close();
    throw err;
  }
  const { recordOut, batchOut, segmentOut, partitionOut, damageOut, holeOut, firstDamageOut, rowDecoder } = tables;
  const aborted: AbortedRow[] = [];
  const summary: BuildSummary = { partitions: parts.length, segments: 0, batches: 0, records: 0, damage: 0, holes: 0, abortedTransactions: 0, bytes: 0, elapsedMs: 0 };
  const rel = (file: string) => relative(opened.root, file) || '.';

  try {
  for (let pid = 0; pid < parts.length; pid++) {
    const { rel: dirRel, log } = parts[pid]!;
    const tracker = new TransactionTracker();
    const tallies = log.segments.map((): SegmentTally => ({ batches: 0n, records: 0n, first: null, last: null, maxTimestamp: null, damaged: 0n }));
    let partBatches = 0n;
    let partRecords = 0n;
    let partDamaged = 0n;
    /** The nearest damage before the next record (segment base offset, byte position), or null before the first damage. */
    let damageBefore: { segment: bigint; position: bigint } | null = null;
    const damageAt = (segBase: bigint, position: number, code: string, kind: string, reason: string) => {
      if (damageBefore === null) {
        firstDamageOut.int32(FD.partition_id, pid);
        firstDamageOut.int64(FD.segment_base_offset, segBase);
        firstDamageOut.int32(FD.segment_index, segIndexOf(segBase));
        firstDamageOut.int64(FD.position, BigInt(position));
        firstDamageOut.varchar(FD.kind, kind);
        firstDamageOut.varchar(FD.code, code);
        firstDamageOut.varchar(FD.reason, reason);
        firstDamageOut.endRow();
      }
      damageBefore = { segment: segBase, position: BigInt(position) };
    };
    const segIndexOf = (segBase: bigint) => log.segments.findIndex((x) => x.baseOffset === segBase);

    const damageRow = (segBase: bigint, file: string, position: number, size: number, kind: string, code: string, reason: string) => {
      damageOut.int32(D.partition_id, pid);
      damageOut.varchar(D.topic, log.topic);
      damageOut.int32(D.partition, log.partition);
      damageOut.int64(D.segment_base_offset, segBase);
      damageOut.varchar(D.file, rel(file));
      damageOut.int64(D.position, BigInt(position));
      damageOut.int64(D.size, BigInt(size));
      damageOut.varchar(D.kind, kind);
      damageOut.varchar(D.code, code);
      damageOut.varchar(D.reason, reason);
      damageOut.endRow();
      summary.damage++;
    };

    for (let si = 0; si < log.segments.length; si++) {
      const segment = log.segments[si]!;
      const tally = tallies[si]!;
      const segBase = segment.baseOffset;
      const chunks = segmentSource(pid, si);
      for await (const c of chunks) {
        for (const e of c.entries) {
          if (e.t === 'damage') {
            await pacer.step(e.size);
            tally.damaged += BigInt(e.size);
            partDamaged += BigInt(e.size);
            damageRow(segBase, segment.files.log, e.position, e.size, e.type, e.code, e.reason);
            damageAt(segBase, e.position, e.code, e.type, e.reason);
            continue;
          }
          const h = e.header;
          await pacer.step(h.size);
          summary.bytes += h.size;
          if (e.error?.code === 'decompression-limit') {
            // Not damage: a batch past this tool's decompression bound; its records are missing from
            // records, which the session's notices say (past-damage.ts).
            damageRow(segBase, segment.files.log, h.position, h.size, 'not-checked', e.error.code, e.error.reason);
          } else if (e.error) {
            damageRow(segBase, segment.files.log, h.position, h.size, 'undecodable-batch', e.error.code, e.error.reason);
            tally.damaged += BigInt(h.size);
            partDamaged += BigInt(h.size);
          }
          if (h.crcValid === false) {
            damageRow(segBase, segment.files.log, h.position, h.size, 'crc-mismatch', 'crc-mismatch', `${crcMismatchText(h)}: the batch at baseOffset ${h.baseOffset} fails its CRC; its records are still listed (crc_valid = false)`);
          }

          // Transactions: markers close, data batches open.
          if (h.magic === 2 && h.producerId >= 0n && h.isTransactional) {
            if (h.isControl) {
              if (e.marker) {
                const done = tracker.onMarker(h.producerId, h.producerEpoch, e.marker.type === 'ABORT', e.marker.offset);
                if (done?.aborted) aborted.push({ partitionId: pid, log, txn: done });
              }
            } else tracker.onBatch(h);
          }

          writeBatchRow(batchOut, pid, segBase, h, e.error === null);
          tally.batches++;
          partBatches++;
          if (tally.first === null) tally.first = h.baseOffset;
          tally.last = h.lastOffset;
          if (tally.maxTimestamp === null || h.maxTimestamp > tally.maxTimestamp) tally.maxTimestamp = h.maxTimestamp;
          // A batch failing its CRC is damage before its own records: a consumer with check.crcs=true stops at the batch
          // (CompletedFetch.maybeEnsureValid), before reading any of them, whether or not they decode (review of stop 26).
          if (h.crcValid === false) damageAt(segBase, h.position, 'crc-mismatch', 'crc-mismatch', crcMismatchText(h));
          if (e.error === null) {
            writeRecordRows(recordOut, pid, segBase, e, c, damageBefore);
            tally.records += BigInt(e.count);
            partRecords += BigInt(e.count);
          }
          // Records after this batch are past damage when a consumer cannot read it (its records cannot be decoded).
          // (A batch past klx's decompression bound is a limit of this tool, not damage: a consumer reads it.)
          if (e.error !== null && e.error.code !== 'decompression-limit' && h.crcValid !== false) damageAt(segBase, h.position, e.error.code, 'undecodable-batch', e.error.reason);
        }
      }
    }

    log.segments.forEach((seg, i) => {
      const t = tallies[i]!;
      segmentOut.int32(S.partition_id, pid);
      segmentOut.varchar(S.topic, log.topic);
      segmentOut.int32(S.partition, log.partition);
      segmentOut.int64(S.base_offset, seg.baseOffset);
      segmentOut.int64(S.next_offset, t.last !== null ? t.last + 1n : seg.baseOffset);
      segmentOut.varchar(S.file, rel(seg.files.log));
      segmentOut.int64(S.size_bytes, BigInt(seg.files.logSize));
      optionalSize(segmentOut, S.index_bytes, seg.files.indexSize);
      optionalSize(segmentOut, S.timeindex_bytes, seg.files.timeindexSize);
      optionalSize(segmentOut, S.txnindex_bytes, seg.files.txnindexSize);
      segmentOut.int64(S.modified_ms, BigInt(Math.floor(seg.files.logModifiedMs)));
      segmentOut.bool(S.is_active, i === log.segments.length - 1);
      segmentOut.int64(S.batch_count, t.batches);
      segmentOut.int64(S.record_count, t.records);
      optionalInt64(segmentOut, S.first_offset, t.first);
      optionalInt64(segmentOut, S.last_offset, t.last);
      optionalInt64(segmentOut, S.max_timestamp, t.maxTimestamp);
      segmentOut.int64(S.damaged_bytes, t.damaged);
      segmentOut.endRow();
      summary.segments++;
    });

    const logEnd = log.logEndOffset;
    const hw = log.highWatermark;
    const upper = hw !== null && hw < logEnd ? hw : logEnd;
    const unstable = tracker.firstUnstableOffset();
    const logDir = opened.logDirs.find((d) => d.partitions.includes(log));
    partitionOut.int32(P.partition_id, pid);
    partitionOut.varchar(P.topic, log.topic);
    partitionOut.int32(P.partition, log.partition);
    partitionOut.varchar(P.kind, log.kind);
    partitionOut.varchar(P.dir, dirRel);
    partitionOut.varchar(P.log_dir, logDir ? rel(logDir.path) : null);
    partitionOut.varchar(P.topic_id, log.topicId);
    partitionOut.varchar(P.cleanup_policy, log.config.config['cleanup.policy'].join(','));
    partitionOut.int64(P.log_start_offset, log.logStartOffset);
    partitionOut.int64(P.log_end_offset, logEnd);
    optionalInt64(partitionOut, P.high_watermark, hw);
    optionalInt64(partitionOut, P.recovery_point, log.recoveryPoint);
    optionalInt64(partitionOut, P.cleaner_checkpoint, log.cleanerCheckpoint);
    partitionOut.int64(P.last_stable_offset, unstable !== null && unstable < upper ? unstable : upper);
    partitionOut.int32(P.open_transactions, tracker.openTransactions().length);
    partitionOut.int32(P.segment_count, log.segments.length);
    partitionOut.int64(P.log_size_bytes, BigInt(log.logSize));
    partitionOut.int64(P.batch_count, partBatches);
    partitionOut.int64(P.record_count, partRecords);
    partitionOut.int64(P.damaged_bytes, partDamaged);
    partitionOut.endRow();
    summary.batches += Number(partBatches);
    summary.records += Number(partRecords);

    // Offset holes with their causes: the engine's own account (holes.ts), a second, header-only walk.
    for await (const h of holesOf(pid)) {
      holeOut.int32(H.partition_id, pid);
      holeOut.varchar(H.topic, log.topic);
      holeOut.int32(H.partition, log.partition);
      holeOut.int64(H.from_offset, h.from);
      holeOut.int64(H.to_offset, h.to);
      holeOut.int64(H.offset_count, h.count);
      holeOut.varchar(H.cause, h.cause);
      optionalInt64(holeOut, H.segment_base_offset, h.segmentBaseOffset);
      optionalInt64(holeOut, H.position, h.position === undefined ? null : BigInt(h.position));
      holeOut.varchar(H.detail, h.detail);
      holeOut.endRow();
      summary.holes++;
    }
  }
  } finally {
    await pool?.close();
  }
  pacer.finish();

  recordOut.close();
  batchOut.close();
  segmentOut.close();
  partitionOut.close();
  damageOut.close();
  holeOut.close();
  firstDamageOut.close();

  if (aborted.length > 0) {
    const abortedOut = await ColumnarAppender.create(connection, null, 'aborted_transactions', kindsOf(ABORTED_COLUMNS));
    for (const { partitionId, log, txn } of aborted) {
      abortedOut.int32(A.partition_id, partitionId);
      abortedOut.varchar(A.topic, log.topic);
      abortedOut.int32(A.partition, log.partition);
      abortedOut.int64(A.producer_id, txn.producerId);
      abortedOut.int32(A.producer_epoch, txn.producerEpoch);
      abortedOut.int64(A.first_offset, txn.firstOffset);
      abortedOut.int64(A.last_offset, txn.lastOffset);
      abortedOut.int64(A.last_stable_offset, txn.lastStableOffset);
      abortedOut.endRow();
    }
    abortedOut.close();
    // A data batch of producer P between the first offset of P's aborted transaction and its ABORT
    // marker belongs to that transaction (P's batches in between have no other marker).
    for (const table of ['record_rows', 'batch_rows']) {
      const offset = table === 'record_rows' ? 't.batch_base_offset' : 't.base_offset';
      await connection.run(
        `UPDATE ${INTERNAL_SCHEMA}.${table} AS t SET aborted = true FROM aborted_transactions a ` +
          `WHERE t.partition_id = a.partition_id AND t.producer_id = a.producer_id AND t.is_transactional AND NOT t.is_control ` +
          `AND ${offset} >= a.first_offset AND ${offset} < a.last_offset`,
      );
    }
    summary.abortedTransactions = aborted.length;
  }
  pacer.throwIfCancelled();

  await connection.run(
    `CREATE TABLE ${INTERNAL_SCHEMA}.latest_offsets AS ` +
      `SELECT r.partition_id, max(r."offset") AS "offset" FROM ${INTERNAL_SCHEMA}.record_rows r JOIN partitions p USING (partition_id) ` +
      `WHERE r.key IS NOT NULL AND NOT r.is_control AND NOT r.aborted AND r."offset" >= p.log_start_offset ` +
      `GROUP BY r.partition_id, r.key`,
  );
  const topics = listLiteral(parts.map((p) => quoteLiteral(p.log.topic)), 'VARCHAR');
  const partitions = listLiteral(parts.map((p) => String(p.log.partition)), 'INTEGER');
  // Values, headers and decoded columns are read back from the segments (record-functions.ts); the
  // functions must exist to bind the views. Computed in a subquery so that each runs once per row,
  // and above the join of `latest` so that only latest records are read. The topic and partition
  // are computed below them, right over the table: DuckDB then pushes a filter on them (`WHERE
  // topic = 'orders'`) into the table scan, under the functions; computed beside the functions'
  // results, such a filter stayed above them and every record of every topic was read back.
  const functions = RecordFunctions.register(connection, { partitions: parts.map((p) => p.log), valueCapBytes: cap, decoder: () => rowDecoder.decoder });
  try {
    const lazy = `${RECORD_FUNCTIONS.value}(${RECORD_PLACE_SQL}) AS v, ${RECORD_FUNCTIONS.decoded}(${RECORD_PLACE_SQL}) AS d`;
    const placed = (from: string) => `(SELECT ${topics}[r.partition_id + 1] AS topic, ${partitions}[r.partition_id + 1] AS "partition", r.* FROM ${from})`;
    await connection.run(`CREATE VIEW records AS SELECT ${recordColumnsSql(cap)} FROM (SELECT r.*, ${lazy} FROM ${placed(`${INTERNAL_SCHEMA}.record_rows r`)} r) r`);
    await connection.run(
      `CREATE VIEW latest AS SELECT ${recordColumnsSql(cap)} FROM (SELECT r.*, ${lazy} FROM ` +
        `${placed(`${INTERNAL_SCHEMA}.record_rows r SEMI JOIN ${INTERNAL_SCHEMA}.latest_offsets l ON r.partition_id = l.partition_id AND r."offset" = l."offset"`)} r) r`,
    );
  } finally {
    functions.close();
  }
  await connection.run(`CREATE VIEW state AS SELECT * FROM latest WHERE NOT is_tombstone`);
  await connection.run(`CREATE VIEW batches AS SELECT ${batchColumnsSql(topics, partitions)} FROM ${INTERNAL_SCHEMA}.batch_rows b`);

  await buildInternalTopicTables(connection, opened, opts);
  // consumer groups (group-tables.ts): consumer_offsets, group_metadata, group_offsets, group_members
  await buildGroupTables(connection, opened, INTERNAL_SCHEMA, { signal: opts.signal, onProgress: opts.onProgress, startWorker: opts.startWorker, inThreadFromBytes: opts.groupsInThreadFromBytes });

  summary.elapsedMs = performance.now() - started;
  return summary;
}

/** The appenders of a build's tables (see {@link createBuildTables}). */
interface BuildTables {
  recordOut: ColumnarAppender;
  batchOut: ColumnarAppender;
  segmentOut: ColumnarAppender;
  partitionOut: ColumnarAppender;
  damageOut: ColumnarAppender;
  holeOut: ColumnarAppender;
  firstDamageOut: ColumnarAppender;
  rowDecoder: RecordRowDecoder;
}

/**
 * Creates the schema, the tables the walk fills and the `schemas` table, and opens their appenders.
 * @throws DuckDB's error (a database that is not empty); KlxError for a schema path that cannot be read.
 */
async function createBuildTables(connection: DuckDBConnection, opened: OpenedLogs, decode: DecodeTableOptions | false | undefined): Promise<BuildTables> {
  await connection.run(`CREATE SCHEMA ${INTERNAL_SCHEMA}`);
  await connection.run(createTableSql(`${INTERNAL_SCHEMA}.meta`, [['key', 'varchar'], ['value', 'varchar']]));
  await connection.run(createTableSql(`${INTERNAL_SCHEMA}.record_rows`, RECORD_ROW_COLUMNS));
  await connection.run(createTableSql(`${INTERNAL_SCHEMA}.batch_rows`, BATCH_ROW_COLUMNS));
  await connection.run(createTableSql('segments', SEGMENT_COLUMNS));
  await connection.run(createTableSql('partitions', PARTITION_COLUMNS));
  await connection.run(createTableSql('damage', DAMAGE_COLUMNS));
  await connection.run(createTableSql('aborted_transactions', ABORTED_COLUMNS));
  await connection.run(createTableSql('holes', HOLE_COLUMNS));
  await connection.run(createTableSql(`${INTERNAL_SCHEMA}.first_damage`, FIRST_DAMAGE_COLUMNS));

  const recordOut = await ColumnarAppender.create(connection, INTERNAL_SCHEMA, 'record_rows', kindsOf(RECORD_ROW_COLUMNS));
  const batchOut = await ColumnarAppender.create(connection, INTERNAL_SCHEMA, 'batch_rows', kindsOf(BATCH_ROW_COLUMNS));
  const segmentOut = await ColumnarAppender.create(connection, null, 'segments', kindsOf(SEGMENT_COLUMNS));
  const partitionOut = await ColumnarAppender.create(connection, null, 'partitions', kindsOf(PARTITION_COLUMNS));
  const damageOut = await ColumnarAppender.create(connection, null, 'damage', kindsOf(DAMAGE_COLUMNS));
  const holeOut = await ColumnarAppender.create(connection, null, 'holes', kindsOf(HOLE_COLUMNS));
  const firstDamageOut = await ColumnarAppender.create(connection, INTERNAL_SCHEMA, 'first_damage', kindsOf(FIRST_DAMAGE_COLUMNS));

  const rowDecoder = RecordRowDecoder.create(opened, decode);
  await rowDecoder.writeSchemasTable(connection);
  return { recordOut, batchOut, segmentOut, partitionOut, damageOut, holeOut, firstDamageOut, rowDecoder };
}

function listLiteral(items: string[], type: string): string {
  return items.length === 0 ? `([]::${type}[])` : `([${items.join(', ')}])`;
}

/**
 * Columns of `records` / `latest` / `state` over `klx_internal.record_rows r` extended with `topic`,
 * `partition`, `v` (the value, `klx_value`) and `d` (the decoded struct, `klx_decoded`).
 */
function recordColumnsSql(cap: number): string {
  return [
    `r.topic`,
    `r."partition"`,
    `r."offset"`,
    `r."timestamp"`,
    `r."key"`,
    `try(decode(r."key")) AS key_text`,
    `r.v AS "value"`,
    `try(decode(r.v)) AS value_text`,
    `r.value_size`,
    `coalesce(r.value_size > ${cap}, false) AS value_truncated`,
    `CASE WHEN r.header_count = 0 THEN []::${SQL_TYPE_OF.headers} ELSE ${RECORD_FUNCTIONS.headers}(${RECORD_PLACE_SQL}) END AS headers`,
    `(r.value_size IS NULL AND NOT r.is_control) AS is_tombstone`,
    `r.is_control`,
    `r.control_type`,
    `r.is_transactional`,
    `r.aborted`,
    `r.producer_id`,
    `r.batch_base_offset`,
    `r.segment_base_offset`,
    `r."position"`,
    `r.crc_valid`,
    `r.past_damage`,
    `r.past_damage_segment`,
    `r.past_damage_position`,
    `r.partition_id`,
    DECODE_VIEW_COLUMNS_SQL,
  ].join(', ');
}

/** Columns of `batches` over `klx_internal.batch_rows b`. */
function batchColumnsSql(topics: string, partitions: string): string {
  const codecs = listLiteral(COMPRESSIONS.map(quoteLiteral), 'VARCHAR');
  return [
    `${topics}[b.partition_id + 1] AS topic`,
    `${partitions}[b.partition_id + 1] AS "partition"`,
    `b.segment_base_offset`,
    `b."position"`,
    `b."size"`,
    `b.magic`,
    `b.base_offset`,
    `b.last_offset`,
    `b.last_offset_delta`,
    `b.record_count`,
    `${codecs}[b.codec + 1] AS compression`,
    `CASE WHEN b.magic = 0 THEN 'NoTimestampType' WHEN b.log_append_time THEN 'LogAppendTime' ELSE 'CreateTime' END AS timestamp_type`,
    `b.base_timestamp`,
    `b.max_timestamp`,
    `b.is_transactional`,
    `b.is_control`,
    `b.has_delete_horizon`,
    `b.producer_id`,
    `b.producer_epoch`,
    `b.base_sequence`,
    `b.partition_leader_epoch`,
    `b.attributes`,
    `b.crc`,
    `b.crc_valid`,
    `b.aborted`,
    `b.records_decoded`,
    `b.partition_id`,
  ].join(', ');
}

function optionalSize(out: ColumnarAppender, col: number, size: number): void {
  if (size < 0) out.null(col);
  else out.int64(col, BigInt(size));
}

function optionalInt64(out: ColumnarAppender, col: number, v: bigint | null): void {
  if (v === null) out.null(col);
  else out.int64(col, v);
}

function writeBatchRow(out: ColumnarAppender, pid: number, segBase: bigint, h: BatchHeader, decoded: boolean): void {
  out.int32(B.partition_id, pid);
  out.int64(B.segment_base_offset, segBase);
  out.int64(B.position, BigInt(h.position));
  out.int32(B.size, h.size);
  out.int32(B.magic, h.magic);
  out.int64(B.base_offset, h.baseOffset);
  out.int64(B.last_offset, h.lastOffset);
  out.int32(B.last_offset_delta, h.lastOffsetDelta);
  out.int32(B.record_count, h.recordCount);
  out.int32(B.codec, COMPRESSIONS.indexOf(h.compression));
  out.bool(B.log_append_time, h.timestampType === 'LogAppendTime');
  out.int64(B.base_timestamp, h.baseTimestamp);
  out.int64(B.max_timestamp, h.maxTimestamp);
  out.bool(B.is_transactional, h.isTransactional);
  out.bool(B.is_control, h.isControl);
  out.bool(B.has_delete_horizon, h.hasDeleteHorizon);
  out.int64(B.producer_id, h.producerId);
  out.int32(B.producer_epoch, h.producerEpoch);
  out.int32(B.base_sequence, h.baseSequence);
  out.int32(B.partition_leader_epoch, h.partitionLeaderEpoch);
  out.int32(B.attributes, h.attributes);
  out.int64(B.crc, BigInt(h.crc));
  if (h.crcValid === undefined) out.null(B.crc_valid);
  else out.bool(B.crc_valid, h.crcValid);
  out.bool(B.aborted, false);
  out.bool(B.records_decoded, decoded);
  out.endRow();
}

/**
 * Writes the records of one batch, rows `[e.first, e.first + e.count)` of chunk `c`; `damageBefore`:
 * the nearest damage before the batch in the partition's log (null: none), for `past_damage`.
 */
function writeRecordRows(out: ColumnarAppender, pid: number, segBase: bigint, e: ChunkBatch, c: RowsChunk, damageBefore: { segment: bigint; position: bigint } | null): void {
  const h = e.header;
  const position = BigInt(h.position);
  const types = e.controlTypes;
  out.appendRows(e.count, (row, from, n) => {
    const at = e.first + from;
    out.fillInt32(R.partition_id, row, n, pid);
    out.int64Range(R.offset, row, c.offset, at, n);
    out.int64Range(R.timestamp, row, c.timestamp, at, n);
    out.blobStructRange(R.key, row, c.keyStructs, c.keyBytes, c.keyStart, c.keyLength, at, n);
    out.int32Range(R.value_size, row, c.valueSize, at, n, true);
    out.int32Range(R.header_count, row, c.headerCount, at, n);
    out.fillBool(R.is_control, row, n, h.isControl);
    if (types === null) out.fillNull(R.control_type, row, n);
    else for (let i = 0; i < n; i++) out.varcharAt(R.control_type, row + i, types[from + i] ?? null);
    out.fillBool(R.is_transactional, row, n, h.isTransactional);
    out.fillBool(R.aborted, row, n, false);
    out.fillInt64(R.producer_id, row, n, h.producerId);
    out.fillInt64(R.batch_base_offset, row, n, h.baseOffset);
    out.fillInt64(R.segment_base_offset, row, n, segBase);
    out.fillInt64(R.position, row, n, position);
    out.fillBool(R.crc_valid, row, n, h.crcValid === undefined ? null : h.crcValid);
    out.fillBool(R.past_damage, row, n, damageBefore !== null);
    if (damageBefore === null) {
      out.fillNull(R.past_damage_segment, row, n);
      out.fillNull(R.past_damage_position, row, n);
    } else {
      out.fillInt64(R.past_damage_segment, row, n, damageBefore.segment);
      out.fillInt64(R.past_damage_position, row, n, damageBefore.position);
    }
  });
}
