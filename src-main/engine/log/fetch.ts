/**
 * Reading a partition's records by offset, the way a Kafka consumer sees them (Kafka's
 * `LocalLog.read` / `UnifiedLog.read` on the broker side, `CompletedFetch.nextFetchedRecord` on the
 * consumer side). The forward log walk it is built on (shared with transactions, holes and the
 * other readers) is `log-walk.ts`'s.
 *
 * Rules implemented (spec §3, §4, §7, §9.1, §10.1, §12.4; cases B01, B02, B10, B11, B14, B15, B17):
 * - A fetch at `offset` is valid for `logStartOffset ≤ offset ≤ logEndOffset`; below or above, an
 *   `offset-out-of-range` KlxError worded as Kafka's OffsetOutOfRangeException. `offset == LEO` (or
 *   the read limit) gives an empty result.
 * - The read limit is the LEO (default), the high watermark (`readUpTo: 'high-watermark'`), or for
 *   `read_committed` the last stable offset (first offset of the earliest open transaction, else the
 *   high watermark / LEO).
 * - Reading starts at the byte position the offset index gives for `offset`
 *   (`LogSegment.positionFor`), skips batches whose lastOffset is below it, and moves forward only as
 *   far as it needs; segments are streamed, never loaded whole.
 * - Offsets are not contiguous. After a batch is consumed the next offset is that batch's
 *   `lastOffset + 1` (its preserved lastOffsetDelta), never `offset + 1`; a compacted batch whose
 *   remaining records are all below the target still moves the position past it (B02). When the
 *   record budget is reached, `nextOffset` is the offset of the next deliverable record (B01: after
 *   record 0, with offset 1 compacted away, it is 2).
 * - Records below logStartOffset (DeleteRecords) are never returned (B10).
 * - `maxBytes` counts whole batches from the target on; the first batch is always returned whole,
 *   even when it is larger (B17, KIP-74 "at least one batch").
 * - Control records are never data: skipped (moving the position past them, B14) or, with
 *   `includeControl`, returned flagged `isControl`. Under `read_committed` the batches of aborted
 *   transactions are skipped with the consumer's algorithm (B15); under `read_uncommitted` they are
 *   returned flagged `aborted` when the `.txnindex` files say so.
 * - A batch whose CRC fails: by default (`onCorrupt: 'flag'`, what an explorer needs) its records
 *   are returned flagged `crcValid: false` with the stored and computed CRC. With `onCorrupt: 'stop'`
 *   reading stops there as Kafka's consumer with `check.crcs=true` does (`CompletedFetch.maybeEnsureValid`,
 *   `DefaultRecordBatch.ensureValid` / `LegacyRecord.ensureValid`): the records before it are
 *   returned with `nextOffset` at it, and a fetch starting at it throws `corrupt-record` naming the
 *   offsets, file, byte position and both CRCs. (For a compressed v0/v1 wrapper Kafka's consumer
 *   checks the inner messages' CRCs; this reader checks the wrapper's, which covers the same bytes.)
 * - Damage met on the way (bytes that are not batches, batches whose records cannot be decoded, such
 *   as an unknown codec or magic) is reported in `problems` with file, byte position, reason and,
 *   where it hides offsets a reader expected, the hole it makes (`fromOffset`..`toOffset`: from the
 *   offset after the last batch read to the offset before the next readable batch, or the batch's
 *   own offsets when its header is readable); reading goes on after it.
 * - With `framing: 'broker'` (the default with `onCorrupt: 'stop'`, and `klx fetch`'s), bytes whose size
 *   field a broker cannot frame (`FileLogInputStream.nextBatch`) end the read as on a broker instead:
 *   a size field below 14 makes the broker's read throw CorruptRecordException, so the records before
 *   it are returned and reading stops there with a `batch-length-out-of-range` error (thrown when no
 *   record comes first), as the consumer's "Encountered corrupt message" (FetchCollector); a size field
 *   running past the end of the file (or fewer than 17 bytes left) ends the segment's batches without
 *   an error, so reading goes on at the next segment (`LocalLog.read`), the offsets passed over named
 *   in a problem, or, in the last segment, stops there (`stalled`: a consumer waits). Bytes a broker
 *   frames as an entry (their size field fits) are reported and read past as above.
 *
 * Units: offsets and timestamps are `bigint` (int64; ms for timestamps); positions and sizes are
 * bytes (`number`).
 */
import { framingAt, framingPlace } from './broker-framing.ts';
import { consumerStopsAt, framingConsequence } from './corruption-consequences.ts';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import { KlxError } from '../errors.ts';
import { crcAlgorithm, crcMismatchText } from '../format/crc.ts';
import type { BatchHeader, Compression, ControlRecordInfo, KafkaRecord, RecordHeader, TimestampType } from '../format/types.ts';
import { lastEntryAtOrBelow } from '../files/index-file.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_RECORDS, type IsolationLevel } from './read-defaults.ts';
import { Pacer, isDenseBatch, recordsOf, streamRecordsOf, segmentIndexFor, walkLog, type LongReadOptions, type WalkedBatch, type WalkedDamage } from './log-walk.ts';
import type { PartitionLog } from './partition-log.ts';
import { AbortedTransactionFilter, abortedTxnsFromIndexes, isAbortMarker, loadTransactionState, type AbortedTxn, type TxnSource } from './transactions.ts';

// Defaults and isolation levels live in `read-defaults.ts` (import-free, for the command line).
export { DEFAULT_MAX_BYTES, DEFAULT_MAX_RECORDS, type IsolationLevel };

// The walk and its pacing live in `log-walk.ts`; re-exported for the readers that import them from here.
export { Pacer, isDenseBatch, recordsOf, streamRecordsOf, scanSegmentFrom, segmentIndexFor, walkLog, type LongReadOptions, type ReadProgress, type WalkEvent, type WalkedBatch, type WalkedDamage, type WalkedSegmentStart } from './log-walk.ts';

// ---------------------------------------------------------------------------------------------
// Fetch

/** A record as a reader sees it: the record plus the batch and segment that hold it. */
export interface FetchedRecord {
  offset: bigint;
  /** ms since the epoch (LogAppendTime batches: the batch maxTimestamp); −1 when none (v0). */
  timestamp: bigint;
  timestampType: TimestampType;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  /** Bytes the record takes in the (decompressed) records area. */
  sizeInBytes: number;
  batchBaseOffset: bigint;
  batchLastOffset: bigint;
  /** Byte position of the batch in its `.log`. */
  position: number;
  /** Bytes of the whole batch on disk. */
  batchSize: number;
  segmentBaseOffset: bigint;
  magic: 0 | 1 | 2;
  compression: Compression;
  isControl: boolean;
  isTransactional: boolean;
  producerId: bigint;
  producerEpoch: number;
  partitionLeaderEpoch: number;
  /** Result of the batch CRC check (undefined when not checked). */
  crcValid: boolean | undefined;
  /** The CRC stored in the batch (v2: CRC-32C; v0/v1: CRC-32 of the message), unsigned. */
  crc: number;
  /** The CRC computed over the batch's bytes (undefined when not checked), unsigned. */
  computedCrc: number | undefined;
  /** Control records: the decoded key/marker. */
  control?: ControlRecordInfo;
  /** read_uncommitted: true for data of an aborted transaction (per the `.txnindex` files). */
  aborted?: boolean;
  /**
   * The batch's delete horizon in ms, set when a v2 batch has attribute bit 6 (KIP-534): its
   * baseTimestamp then holds the time after which `LogCleaner`'s `Cleaner.shouldRetainRecord` drops
   * its tombstones (and a marker) at the next clean.
   */
  deleteHorizonMs?: bigint;
}

/** Damage met while reading. Never thrown: reading goes on after it. */
export interface ReadProblem {
  code: ErrorCode;
  /** The `.log` file. */
  file: string;
  /** Byte position in it. */
  position: number;
  /** Bytes concerned (a damaged region or the batch). */
  size: number;
  reason: string;
  /**
   * The offsets this damage hides from a reader (a hole, inclusive bounds), when known: for a batch
   * whose header is readable, its offsets from where reading stood; for bytes that are not a batch,
   * from the offset after the last batch read to the offset before the next readable batch (or the
   * read limit − 1). Absent when the damage hides no offset that was asked for.
   */
  fromOffset?: bigint;
  toOffset?: bigint;
}

/**
 * What a reader does at a batch whose CRC fails: `flag` returns its records marked
 * `crcValid: false` (the explorer: the records must be seen), `stop` stops before it as a consumer
 * with `check.crcs=true` does (Kafka's `CompletedFetch`).
 */
export type CorruptBatchMode = 'flag' | 'stop';

/** Options of {@link fetch}. */
export interface FetchOptions {
  /** The fetch offset: the first offset wanted. */
  offset: bigint;
  /** At most this many records (default {@link DEFAULT_MAX_RECORDS}; ≥ 1). */
  maxRecords?: number;
  /** Byte budget, counted in whole batches (default {@link DEFAULT_MAX_BYTES}); the first batch is returned whole anyway. */
  maxBytes?: number;
  isolation?: IsolationLevel;
  /** Return control records too (flagged `isControl`); default false. */
  includeControl?: boolean;
  /** read_uncommitted only: stop at the log end offset (default) or at the high watermark, as a consumer does (FetchIsolation.HIGH_WATERMARK in UnifiedLog.read). */
  readUpTo?: 'log-end' | 'high-watermark';
  /** Where aborted transactions come from (see transactions.ts); default 'auto'. */
  txnSource?: TxnSource;
  /** At a batch whose CRC fails (default `flag`; see {@link CorruptBatchMode}). */
  onCorrupt?: CorruptBatchMode;
  /**
   * At bytes whose size field a broker cannot frame: `broker` ends the read there as a broker's does
   * (see the module comment), `resync` reads on at the next valid batch (the explorer). Default:
   * `broker` with `onCorrupt: 'stop'`, else `resync`.
   */
  framing?: 'broker' | 'resync';
  signal?: AbortSignal;
}

/** Result of {@link fetch}. */
export interface FetchResult {
  records: FetchedRecord[];
  /** Where to continue reading: every offset in [fetchOffset, nextOffset) not returned holds no deliverable record. */
  nextOffset: bigint;
  fetchOffset: bigint;
  /** The offset reading stops at: LEO, high watermark or last stable offset. */
  readLimit: bigint;
  /** True when nextOffset reached readLimit (nothing more to read for now). */
  reachedLimit: boolean;
  isolation: IsolationLevel;
  logStartOffset: bigint;
  logEndOffset: bigint;
  highWatermark: bigint | null;
  /** read_committed: the last stable offset used; otherwise null. */
  lastStableOffset: bigint | null;
  /** Bytes of the batches read from the target on. */
  bytesRead: number;
  batchesRead: number;
  /** Control records passed over (not returned). */
  skippedControlRecords: number;
  /** read_committed: records of aborted transactions passed over. */
  skippedAbortedRecords: number;
  problems: ReadProblem[];
  /**
   * `onCorrupt: 'stop'`: reading stopped before a batch whose CRC fails (nextOffset is at it); this
   * is the `corrupt-record` error a fetch from nextOffset throws. With `framing: 'broker'` also the
   * `batch-length-out-of-range` error of a size field below 14 (see the module comment). Null otherwise.
   */
  stoppedAtCorrupt: KlxError | null;
  /**
   * `framing: 'broker'`: reading stopped at bytes of the last segment whose size field runs past the end
   * of the file: a broker returns no records from nextOffset on, without an error, and a consumer waits
   * there (LocalLog.read). The problem naming them is in `problems`.
   */
  stalled: boolean;
}

/** What every reader needs to know about the partition for one read. */
interface ReadContext {
  log: PartitionLog;
  isolation: IsolationLevel;
  includeControl: boolean;
  logStart: bigint;
  logEnd: bigint;
  highWatermark: bigint | null;
  lastStableOffset: bigint | null;
  /** Records at or after this offset are not read. */
  limit: bigint;
  /** Aborted transactions to skip (read_committed) or flag (read_uncommitted); null when none known. */
  aborted: readonly AbortedTxn[] | null;
  /** Stop at a batch whose CRC fails (a consumer with check.crcs=true: CompletedFetch.maybeEnsureValid) instead of flagging its records. */
  stopAtCorrupt: boolean;
  /** End the read at bytes a broker cannot frame, as a broker does (FileLogInputStream.nextBatch, LocalLog.read). */
  brokerFraming: boolean;
}

function tp(log: PartitionLog): string {
  return `${log.topic}-${log.partition}`;
}

/** The read limit of {@link PageOptions.pastLogEnd}: past every offset a file can hold. */
const FILES_END = (1n << 63n) - 1n;

async function readContext(log: PartitionLog, opts: { isolation?: IsolationLevel; includeControl?: boolean; readUpTo?: 'log-end' | 'high-watermark'; txnSource?: TxnSource; onCorrupt?: CorruptBatchMode; framing?: 'broker' | 'resync'; signal?: AbortSignal; pastLogEnd?: boolean }): Promise<ReadContext> {
  const isolation = opts.isolation ?? 'read_uncommitted';
  if (isolation !== 'read_uncommitted' && isolation !== 'read_committed') throw new KlxError('invalid-argument', `isolation must be read_uncommitted or read_committed, got "${String(isolation)}"`);
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const hw = log.highWatermark;
  const highWatermark = hw === null ? null : hw > logEnd ? logEnd : hw;
  const ctx: ReadContext = { log, isolation, includeControl: opts.includeControl ?? false, logStart, logEnd, highWatermark, lastStableOffset: null, limit: logEnd, aborted: null, stopAtCorrupt: opts.onCorrupt === 'stop', brokerFraming: (opts.framing ?? (opts.onCorrupt === 'stop' ? 'broker' : 'resync')) === 'broker' };
  if (opts.framing !== undefined && opts.framing !== 'broker' && opts.framing !== 'resync') throw new KlxError('invalid-argument', `framing must be broker or resync, got "${String(opts.framing)}"`);
  if (opts.onCorrupt !== undefined && opts.onCorrupt !== 'flag' && opts.onCorrupt !== 'stop') throw new KlxError('invalid-argument', `onCorrupt must be flag or stop, got "${String(opts.onCorrupt)}"`);
  if (isolation === 'read_committed') {
    const state = await loadTransactionState(log, { source: opts.txnSource, signal: opts.signal });
    ctx.lastStableOffset = state.lastStableOffset;
    ctx.limit = state.lastStableOffset;
    ctx.aborted = state.abortedTxns;
  } else {
    if (opts.readUpTo === 'high-watermark' && highWatermark !== null) ctx.limit = highWatermark;
    else if (opts.pastLogEnd === true) ctx.limit = FILES_END;
    const fromIndexes = abortedTxnsFromIndexes(log).abortedTransactions;
    ctx.aborted = fromIndexes.length > 0 ? fromIndexes : null;
  }
  return ctx;
}

/**
 * @throws KlxError `offset-out-of-range` worded as Kafka's (`UnifiedLog.checkLogStartOffset`,
 *   `LocalLog.read`) when `offset` is below logStartOffset or above logEndOffset.
 */
export function checkFetchOffset(log: PartitionLog, offset: bigint): void {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const details = { offset: offset.toString(), logStartOffset: logStart.toString(), logEndOffset: logEnd.toString() };
  if (offset < logStart) {
    throw new KlxError('offset-out-of-range', `Received request for offset ${offset} for partition ${tp(log)}, but we only have log segments starting from offset: ${logStart}.`, { file: log.dir, details });
  }
  if (offset > logEnd) {
    throw new KlxError('offset-out-of-range', `Received request for offset ${offset} for partition ${tp(log)}, but we only have log segments upto ${logEnd}.`, { file: log.dir, details });
  }
}

function toOffset(v: unknown, name: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw new KlxError('invalid-argument', `${name} must be an integer offset, got ${String(v)}`);
}

function checkBudget(v: number | undefined, name: string, min: number, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) && v !== Infinity) throw new KlxError('invalid-argument', `${name} must be an integer, got ${v}`);
  if (v < min) throw new KlxError('invalid-argument', `${name} must be at least ${min}, got ${v}`);
  return v;
}

/** What one batch gives a reader. */
interface BatchYield {
  /** Deliverable records with offset ≥ `from`, ascending. */
  records: FetchedRecord[];
  /** Records of the batch passed over as control records or aborted data. */
  skippedControl: number;
  skippedAborted: number;
  problem?: ReadProblem;
  /** Deliverable records left out by `keep` (see {@link batchYield}). */
  left: number;
}

/**
 * Which of a batch's deliverable records a reader keeps: the first `first` (a forward page needs
 * what is left of its budget plus one to know where the next page starts) or the last `last` below
 * `before` (a backward page). A records page over a batch of a million records then makes a few
 * hundred records, not a million (memory grows with what is asked, not with the batch).
 */
type Keep = { first: number } | { last: number; before: bigint };

/**
 * Applies the isolation rules to one batch (in offset order: `filter` keeps state between calls).
 * Aborted batches under read_committed are not decompressed.
 */
function batchYield(ctx: ReadContext, filter: AbortedTransactionFilter | null, e: WalkedBatch, from: bigint, keep?: Keep): BatchYield {
  const h = e.header;
  const out: BatchYield = { records: [], skippedControl: 0, skippedAborted: 0, left: 0 };
  let records: KafkaRecord[] | undefined;
  let abortMarker = false;
  if (h.isControl) {
    records = decodeOrReport(e, out);
    if (records === undefined) return out;
    abortMarker = isAbortMarker(h, records);
  }
  const aborted = filter !== null && filter.isAborted(h, abortMarker);
  if (aborted && ctx.isolation === 'read_committed') {
    out.skippedAborted = h.recordCount;
    return out;
  }
  const lo = from > ctx.logStart ? from : ctx.logStart;
  records ??= decodeOrReport(e, out, lo);
  if (records === undefined) return out;
  const hi = keep && 'before' in keep && keep.before < ctx.limit ? keep.before : ctx.limit;
  const picked: KafkaRecord[] = [];
  for (const r of records) {
    if (r.offset < lo || r.offset >= hi) continue;
    if (h.isControl && !ctx.includeControl) {
      out.skippedControl++;
      continue;
    }
    if (keep && 'first' in keep && picked.length >= keep.first) break;
    picked.push(r);
  }
  const from0 = keep && 'last' in keep && picked.length > keep.last ? picked.length - keep.last : 0;
  out.left = from0;
  for (let i = from0; i < picked.length; i++) out.records.push(toFetched(picked[i]!, e, aborted));
  return out;
}

/** The batch's records, or undefined with the reason (and the offsets it hides from `from` on) recorded in `out.problem`. */
function decodeOrReport(e: WalkedBatch, out: BatchYield, from?: bigint): KafkaRecord[] | undefined {
  try {
    return recordsOf(e);
  } catch (err) {
    const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
    const h = e.header;
    out.problem = { code: k.code, file: e.segment.files.log, position: h.position, size: h.size, reason: k.reason };
    if (from !== undefined && h.lastOffset >= from) {
      out.problem.fromOffset = h.baseOffset > from ? h.baseOffset : from;
      out.problem.toOffset = h.lastOffset;
    }
    return undefined;
  }
}

/** A batch a consumer with `check.crcs=true` refuses (CompletedFetch.maybeEnsureValid): its CRC was checked and fails. */
function failsCrc(h: BatchHeader): boolean {
  return h.crcValid === false;
}

/**
 * The error a consumer with `check.crcs=true` gets at a batch whose CRC fails, in Kafka's words
 * (`CompletedFetch.maybeEnsureValid`: "Record batch for partition P at offset O is invalid, cause:
 * Record is corrupt (stored crc = S, computed crc = C)"; "Record for partition ..." for a v0/v1
 * message), with the batch's offsets, file, byte position and the CRC algorithm.
 * `topic` `__cluster_metadata` says what a KRaft node does instead of a consumer (no consumer reads it).
 */
export function corruptRecordError(tpName: string, file: string, h: BatchHeader, at: bigint, topic?: string): KlxError {
  const what = h.magic === 2 ? 'Record batch' : 'Record';
  const offset = h.magic === 2 ? h.baseOffset : at > h.baseOffset ? at : h.baseOffset;
  return new KlxError(
    'corrupt-record',
    `${what} for partition ${tpName} at offset ${offset} is invalid, cause: ${crcMismatchText(h)}; offsets ${h.baseOffset}..${h.lastOffset}, ${h.size} bytes at position ${h.position}: ${consumerStopsAt(offset, h.lastOffset, true, topic)}`,
    { file, position: h.position, details: { baseOffset: h.baseOffset, lastOffset: h.lastOffset, position: h.position, size: h.size, crc: h.crc >>> 0, computedCrc: h.computedCrc ?? null, crcAlgorithm: crcAlgorithm(h.magic) } },
  );
}

function toFetched(r: KafkaRecord, e: WalkedBatch, aborted: boolean): FetchedRecord {
  const h = e.header;
  const f: FetchedRecord = {
    offset: r.offset,
    timestamp: r.timestamp,
    timestampType: h.timestampType,
    key: r.key,
    value: r.value,
    headers: r.headers,
    sizeInBytes: r.sizeInBytes,
    batchBaseOffset: h.baseOffset,
    batchLastOffset: h.lastOffset,
    position: h.position,
    batchSize: h.size,
    segmentBaseOffset: e.segment.baseOffset,
    magic: h.magic,
    compression: h.compression,
    isControl: h.isControl,
    isTransactional: h.isTransactional,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    crcValid: h.crcValid,
    crc: h.crc >>> 0,
    computedCrc: h.computedCrc,
  };
  if (r.control) f.control = r.control;
  if (aborted) f.aborted = true;
  if (h.magic === 2 && h.hasDeleteHorizon) f.deleteHorizonMs = h.baseTimestamp;
  return f;
}

function damageProblem(d: WalkedDamage): ReadProblem {
  return { code: d.code, file: d.file, position: d.position, size: d.size, reason: d.reason };
}

/**
 * Reads records from `opts.offset` on, as a consumer would receive them (see the module comment).
 * @returns the records (ascending offsets), `nextOffset` to continue from, the read limit and the
 *   partition's offsets, counters and any damage met.
 * @throws KlxError `offset-out-of-range` (below logStartOffset / above logEndOffset),
 *   `invalid-argument` (bad budget or isolation), `corrupt-record` (`onCorrupt: 'stop'` and the
 *   first batch to deliver fails its CRC; see {@link corruptRecordError}), `cancelled`, `io-error`.
 */
export async function fetch(log: PartitionLog, opts: FetchOptions): Promise<FetchResult> {
  const offset = toOffset(opts.offset, 'offset');
  const maxRecords = checkBudget(opts.maxRecords, 'maxRecords', 1, DEFAULT_MAX_RECORDS);
  const maxBytes = checkBudget(opts.maxBytes, 'maxBytes', 0, DEFAULT_MAX_BYTES);
  checkFetchOffset(log, offset);
  const ctx = await readContext(log, opts);
  return fetchWith(ctx, offset, maxRecords, maxBytes, opts.signal);
}

async function fetchWith(ctx: ReadContext, offset: bigint, maxRecords: number, maxBytes: number, signal: AbortSignal | undefined): Promise<FetchResult> {
  const log = ctx.log;
  const result: FetchResult = {
    records: [],
    nextOffset: offset,
    fetchOffset: offset,
    readLimit: ctx.limit,
    reachedLimit: false,
    isolation: ctx.isolation,
    logStartOffset: ctx.logStart,
    logEndOffset: ctx.logEnd,
    highWatermark: ctx.highWatermark,
    lastStableOffset: ctx.lastStableOffset,
    bytesRead: 0,
    batchesRead: 0,
    skippedControlRecords: 0,
    skippedAbortedRecords: 0,
    problems: [],
    stoppedAtCorrupt: null,
    stalled: false,
  };
  if (offset >= ctx.limit) {
    result.reachedLimit = true;
    return result;
  }
  const pacer = new Pacer({ signal, phase: `fetch ${tp(log)} from ${offset}`, total: null });
  let filter: AbortedTransactionFilter | null = null;
  let cursor = offset;
  let peeking = false; // the record budget is spent: only looking for the next deliverable offset
  let stopped = false;
  // Damage whose hole ends where the next readable batch starts (filled in when it is met).
  const open: ReadProblem[] = [];
  const closeHoles = (nextBase: bigint) => {
    for (const p of open.splice(0)) {
      const to = (nextBase < ctx.limit ? nextBase : ctx.limit) - 1n;
      if (p.fromOffset !== undefined && to >= p.fromOffset) p.toOffset = to;
      else delete p.fromOffset;
    }
  };
  let skipSegment = -1; // a segment whose batches end at bytes FileLogInputStream.nextBatch cannot frame
  for (const e of walkLog(log, { fromOffset: offset, verifyCrc: true })) {
    if (e.type === 'segment' || e.segmentIndex === skipSegment) continue;
    if (e.type !== 'batch') {
      const p = damageProblem(e);
      const f = ctx.brokerFraming ? framingAt(e.file, e.position, e.segment.size) : null;
      if (f !== null && f.kind !== 'framed') {
        // FileLogInputStream.nextBatch: a size field below 14 throws, one past the end of the file ends the segment's batches.
        const place = framingPlace(log, e.segmentIndex, e.position, cursor);
        const said = framingConsequence(f, place, log.topic);
        if (cursor < ctx.limit) {
          p.reason = `${p.reason}: ${said}`;
          closeHoles(cursor);
          // size < 14: offsets a seek cannot reach; past the end: what the next segment's first batch skips, else all (the consumer waits).
          const reach = f.kind === 'size-below-minimum' ? (place.indexResumeAt ?? place.nextSegmentAt) : place.nextSegmentAt;
          const until = reach !== null && reach < ctx.limit ? reach : ctx.limit;
          p.fromOffset = cursor;
          p.toOffset = until - 1n;
          if (f.kind === 'size-below-minimum') {
            // The error carries the text (not printed twice as a hole too).
            const err = new KlxError('batch-length-out-of-range', `Encountered corrupt message when fetching offset ${cursor} for topic-partition ${tp(log)} (Kafka FetchCollector): ${said}`, {
              file: e.file,
              position: e.position,
              details: { offset: cursor, size: f.size, seekTo: reach },
            });
            if (result.records.length === 0) throw err;
            result.stoppedAtCorrupt = err;
            stopped = true;
            break;
          }
          result.problems.push(p);
          if (place.nextSegmentAt !== null) {
            skipSegment = e.segmentIndex;
            cursor = until;
            continue;
          }
          result.stalled = true;
          stopped = true;
          break;
        }
        result.problems.push(p);
        continue;
      }
      p.fromOffset = cursor;
      open.push(p);
      result.problems.push(p);
      continue;
    }
    const h = e.header;
    await pacer.step(h.size);
    closeHoles(h.baseOffset > cursor ? h.baseOffset : cursor);
    if (h.lastOffset < cursor) continue;
    if (h.baseOffset >= ctx.limit) break;
    if (ctx.stopAtCorrupt && failsCrc(h)) {
      // A consumer with check.crcs=true: the records before it are delivered, then it fails here (CompletedFetch.fetchRecords
      // throws at once when it has no record yet, else keeps the error for the next poll).
      const err = corruptRecordError(tp(log), e.segment.files.log, h, cursor, log.topic);
      if (result.records.length === 0) throw err;
      if (h.baseOffset > cursor) cursor = h.baseOffset;
      result.stoppedAtCorrupt = err;
      stopped = true;
      break;
    }
    if (peeking && !h.isControl && isDenseBatch(h) && !(ctx.aborted !== null && ctx.isolation === 'read_committed')) {
      // The next batch holds a record at every offset: no need to read it to know the next one.
      if (h.baseOffset > cursor) cursor = h.baseOffset;
      stopped = true;
      break;
    }
    if (result.batchesRead > 0 && result.bytesRead + h.size > maxBytes) {
      if (h.baseOffset > cursor) cursor = h.baseOffset;
      stopped = true;
      break;
    }
    result.bytesRead += h.size;
    result.batchesRead++;
    if (ctx.aborted !== null && filter === null) filter = new AbortedTransactionFilter(ctx.aborted, h.baseOffset);
    const y = batchYield(ctx, filter, e, cursor, { first: peeking ? 1 : maxRecords - result.records.length + 1 });
    if (y.problem) result.problems.push(y.problem);
    if (!peeking) {
      result.skippedControlRecords += y.skippedControl;
      result.skippedAbortedRecords += y.skippedAborted;
    }
    for (const r of y.records) {
      if (peeking || result.records.length >= maxRecords) {
        cursor = r.offset;
        stopped = true;
        break;
      }
      result.records.push(r);
    }
    if (stopped) break;
    cursor = h.lastOffset + 1n < ctx.limit ? h.lastOffset + 1n : ctx.limit;
    if (result.records.length >= maxRecords) peeking = true;
  }
  closeHoles(stopped ? cursor : ctx.limit);
  result.nextOffset = stopped ? cursor : ctx.limit;
  result.reachedLimit = result.nextOffset >= ctx.limit;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Cursors for a table that scrolls both ways

/** Options of the cursor readers. */
export interface PageOptions {
  isolation?: IsolationLevel;
  includeControl?: boolean;
  readUpTo?: 'log-end' | 'high-watermark';
  txnSource?: TxnSource;
  /** Byte budget of each underlying fetch (default {@link DEFAULT_MAX_BYTES}). */
  maxBytes?: number;
  /**
   * read_uncommitted up to the log end ({@link readForward} only): read on past the log end offset to
   * the end of the files, where batches that follow damage in the active segment lie (the log end
   * offset is where that segment's readable batches stop: `LogSegment.recover` would cut it there).
   * `atEnd` then means the files hold no further record. Used by the export, which takes every
   * record the files hold as the SQL tables list them.
   */
  pastLogEnd?: boolean;
  signal?: AbortSignal;
}

/** One page of records and the cursors around it. */
export interface RecordPage {
  /** Ascending offsets. */
  records: FetchedRecord[];
  /** Cursor of the next page forward (pass to {@link readForward}). */
  nextOffset: bigint;
  /** Cursor of the next page backward (pass to {@link readBackward}): the first record's offset, or where the page started. */
  prevOffset: bigint;
  /** No deliverable record before `prevOffset`. */
  atStart: boolean;
  /** No deliverable record at or after `nextOffset` below the read limit. */
  atEnd: boolean;
  readLimit: bigint;
  problems: ReadProblem[];
}

/**
 * The `n` deliverable records at or after `fromOffset`, following holes and segment boundaries.
 * @throws KlxError `offset-out-of-range` outside [logStartOffset, logEndOffset] (`pastLogEnd`: below logStartOffset), `invalid-argument`, `cancelled`.
 */
export async function readForward(log: PartitionLog, fromOffset: bigint, n: number, opts: PageOptions = {}): Promise<RecordPage> {
  const from = toOffset(fromOffset, 'fromOffset');
  const want = checkBudget(n, 'n', 1, 1);
  if (opts.pastLogEnd !== true || from <= log.logEndOffset || from < log.logStartOffset) checkFetchOffset(log, from);
  const ctx = await readContext(log, opts);
  const maxBytes = checkBudget(opts.maxBytes, 'maxBytes', 0, DEFAULT_MAX_BYTES);
  const page: RecordPage = { records: [], nextOffset: from, prevOffset: from, atStart: from <= ctx.logStart, atEnd: false, readLimit: ctx.limit, problems: [] };
  let cursor = from;
  for (;;) {
    const r = await fetchWith(ctx, cursor, want - page.records.length, maxBytes, opts.signal);
    for (const x of r.records) page.records.push(x);
    for (const p of r.problems) page.problems.push(p);
    cursor = r.nextOffset;
    if (r.reachedLimit || page.records.length >= want) break;
  }
  page.nextOffset = cursor;
  page.atEnd = cursor >= ctx.limit;
  if (page.records.length > 0) page.prevOffset = page.records[0]!.offset;
  return page;
}

/** Byte positions to start reading a segment at, with the last offset of the batch found there. */
interface StartPoint {
  position: number;
  /** Last offset of the batch at `position` (baseOffset − 1 for the segment start: nothing known). */
  lastOffset: bigint;
}

/** Segments without a usable offset index get a sparse one built once (by a header-only walk) and kept here. */
const builtStartPoints = new WeakMap<LogSegment, StartPoint[]>();
/** Spacing of the start points built for a segment without an offset index, in bytes. */
const BUILT_INDEX_INTERVAL = 64 * 1024;

async function startPoints(seg: LogSegment, pacer: Pacer): Promise<StartPoint[]> {
  const points: StartPoint[] = [{ position: 0, lastOffset: seg.baseOffset - 1n }];
  const entries = seg.files.indexSize > 0 ? seg.offsetIndex().entries : [];
  for (const en of entries) {
    if (en.position > 0 && en.position < seg.size && en.position > points[points.length - 1]!.position) points.push({ position: en.position, lastOffset: en.offset });
  }
  if (points.length > 1 || seg.size <= BUILT_INDEX_INTERVAL * 4) return points;
  const cached = builtStartPoints.get(seg);
  if (cached) return cached;
  let lastIndexed = 0;
  for (const e of seg.scan({ verifyCrc: true })) {
    if (e.type !== 'batch') continue;
    await pacer.step(e.header.size);
    if (e.header.position - lastIndexed >= BUILT_INDEX_INTERVAL) {
      points.push({ position: e.header.position, lastOffset: e.header.lastOffset });
      lastIndexed = e.header.position;
    }
  }
  builtStartPoints.set(seg, points);
  return points;
}

/** Index of the last start point whose batch ends before `stop` (point 0, the segment start, always qualifies). */
function lastPointBefore(points: StartPoint[], stop: bigint): number {
  return Math.max(0, lastEntryAtOrBelow(points, stop - 1n, lastOffsetOf));
}

const lastOffsetOf = (p: StartPoint): bigint => p.lastOffset;

/**
 * The `n` deliverable records just before `beforeOffset` (ascending), for scrolling back. Uses the
 * offset index to jump back by index entries (doubling the jump while too few records are found),
 * then reads forward from there; it never reads the whole log. A segment without an offset index
 * gets a sparse one built once by a header-only walk of that segment.
 * @param beforeOffset exclusive upper bound (≤ logEndOffset; clipped to the read limit).
 * @throws KlxError `offset-out-of-range` outside [logStartOffset, logEndOffset], `invalid-argument`, `cancelled`.
 */
export async function readBackward(log: PartitionLog, beforeOffset: bigint, n: number, opts: PageOptions = {}): Promise<RecordPage> {
  let before = toOffset(beforeOffset, 'beforeOffset');
  const want = checkBudget(n, 'n', 1, 1);
  checkFetchOffset(log, before);
  const ctx = await readContext(log, opts);
  if (before > ctx.limit) before = ctx.limit;
  const page: RecordPage = { records: [], nextOffset: before, prevOffset: before, atStart: false, atEnd: before >= ctx.limit, readLimit: ctx.limit, problems: [] };
  const pacer = new Pacer({ signal: opts.signal, phase: `read back from ${before}`, total: null });
  let collected: FetchedRecord[] = [];
  let stop = before;
  let si = before > ctx.logStart && log.segments.length > 0 ? segmentIndexFor(log, before - 1n) : -1;
  let exhausted = si < 0; // everything down to the log start has been read
  let dropped = false; // more records than wanted were found: some are before this page
  while (collected.length < want && si >= 0) {
    const seg = log.segments[si]!;
    let points = await startPoints(seg, pacer);
    // The last start point whose batch ends before `stop`: reading from there reaches the records just before it.
    let hi = lastPointBefore(points, stop);
    let end = seg.size;
    let span = 1;
    for (;;) {
      const lo = Math.max(0, hi - span + 1);
      const need = want - collected.length;
      const win = await readWindow(ctx, seg, si, points[lo]!.position, end, stop, need, pacer);
      if (win.staleIndex) {
        // The index points inside a batch: fall back to reading this segment from its start.
        points = [points[0]!];
        hi = 0;
        end = seg.size;
        continue;
      }
      for (const p of win.problems) page.problems.push(p);
      collected = win.records.concat(collected);
      if (win.dropped) dropped = true;
      if (lo === 0 && (si === 0 || seg.baseOffset <= ctx.logStart)) exhausted = true;
      if (collected.length >= want || lo === 0) break;
      end = points[lo]!.position;
      hi = lo - 1;
      span *= 2;
    }
    if (seg.baseOffset < stop) stop = seg.baseOffset;
    si--;
    if (stop <= ctx.logStart) break;
  }
  page.records = collected.length > want ? collected.slice(collected.length - want) : collected;
  page.atStart = exhausted && !dropped && collected.length <= want;
  if (page.records.length > 0) page.prevOffset = page.records[0]!.offset;
  else page.prevOffset = ctx.logStart < before ? ctx.logStart : before;
  return page;
}

/** Reads the deliverable records with offset < stop from [start, end) of a segment, keeping the last `need`. */
async function readWindow(ctx: ReadContext, seg: LogSegment, segmentIndex: number, start: number, end: number, stop: bigint, need: number, pacer: Pacer): Promise<{ records: FetchedRecord[]; problems: ReadProblem[]; staleIndex: boolean; dropped: boolean }> {
  let kept: FetchedRecord[] = [];
  let dropped = false; // records older than the last `need` were found and left out
  const problems: ReadProblem[] = [];
  let filter: AbortedTransactionFilter | null = null;
  let first = true;
  for (const e of seg.scan({ start, end, verifyCrc: true })) {
    if (first && start > 0 && e.type !== 'batch') return { records: [], problems: [], staleIndex: true, dropped: false };
    first = false;
    if (e.type !== 'batch') {
      problems.push({ code: e.code, file: seg.files.log, position: e.position, size: e.size, reason: e.reason });
      continue;
    }
    const h = e.header;
    if (h.baseOffset >= stop) break;
    await pacer.step(h.size);
    if (h.lastOffset < ctx.logStart) continue;
    if (ctx.aborted !== null && filter === null) filter = new AbortedTransactionFilter(ctx.aborted, h.baseOffset);
    const y = batchYield(ctx, filter, Object.assign(e, { segment: seg, segmentIndex }), ctx.logStart, { last: need, before: stop });
    if (y.problem) problems.push(y.problem);
    if (y.left > 0) dropped = true;
    for (const r of y.records) if (r.offset < stop) kept.push(r);
    if (kept.length > need * 2 + 1024) {
      kept = kept.slice(kept.length - need);
      dropped = true;
    }
  }
  return { records: kept.length > need ? kept.slice(kept.length - need) : kept, problems, staleIndex: false, dropped: kept.length > need || dropped };
}

/**
 * The first deliverable offset at or after `offset` (the offset a reader positioned at `offset`
 * really continues from), or the read limit when there is none.
 * @throws KlxError `offset-out-of-range`, `cancelled`.
 */
export async function seek(log: PartitionLog, offset: bigint, opts: PageOptions = {}): Promise<bigint> {
  const page = await readForward(log, offset, 1, opts);
  return page.records.length > 0 ? page.records[0]!.offset : page.nextOffset;
}

/**
 * The deliverable record at exactly `offset`, or null when that offset holds none (a hole, a control
 * record without `includeControl`, aborted data under read_committed, or the read limit).
 * @throws KlxError `offset-out-of-range`, `cancelled`.
 */
export async function recordAt(log: PartitionLog, offset: bigint, opts: PageOptions = {}): Promise<FetchedRecord | null> {
  const page = await readForward(log, offset, 1, opts);
  const r = page.records[0];
  return r !== undefined && r.offset === offset ? r : null;
}

// ---------------------------------------------------------------------------------------------
// Counting

/** Result of {@link countRecords}. */
export interface RecordCounts {
  /** Data records present on disk at or after `fromOffset` (aborted transactional data included). */
  records: number;
  /** Control records (transaction markers, KRaft control records). */
  controlRecords: number;
  batches: number;
  /** Retained empty batches (recordsCount 0). */
  emptyBatches: number;
  /** Bytes of `.log` walked. */
  bytes: number;
  fromOffset: bigint;
  logStartOffset: bigint;
  logEndOffset: bigint;
  /** logEndOffset − fromOffset: the offset span, which is NOT the record count on a compacted log (B11). */
  offsetSpan: bigint;
}

/**
 * Counts records from `fromOffset` (default logStartOffset) to the log end by reading batch headers
 * only (recordsCount of each batch; an empty batch counts 0). Only a batch straddling `fromOffset`
 * that is not dense is decoded, to count its records at or after it.
 * @throws KlxError `offset-out-of-range` when `fromOffset` is outside [logStartOffset, logEndOffset], `cancelled`.
 */
export async function countRecords(log: PartitionLog, opts: LongReadOptions & { fromOffset?: bigint } = {}): Promise<RecordCounts> {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const from = opts.fromOffset === undefined ? logStart : toOffset(opts.fromOffset, 'fromOffset');
  checkFetchOffset(log, from);
  const counts: RecordCounts = { records: 0, controlRecords: 0, batches: 0, emptyBatches: 0, bytes: 0, fromOffset: from, logStartOffset: logStart, logEndOffset: logEnd, offsetSpan: logEnd - from };
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `count records of ${tp(log)}`, total: log.logSize });
  for (const e of walkLog(log, { fromOffset: from, reuseWindows: true })) {
    if (e.type !== 'batch') continue;
    const h = e.header;
    await pacer.step(h.size);
    if (h.lastOffset < from) continue;
    if (h.baseOffset >= logEnd) break;
    counts.batches++;
    counts.bytes += h.size;
    if (h.recordCount === 0) counts.emptyBatches++;
    let n = h.recordCount;
    if (h.baseOffset < from) {
      if (isDenseBatch(h)) n = Number(h.lastOffset - from + 1n);
      else {
        try {
          // One record at a time: the batch may hold millions.
          n = 0;
          for (const r of streamRecordsOf(e)) if (r.offset >= from) n++;
        } catch {
          n = 0;
        }
      }
    }
    if (h.isControl) counts.controlRecords += n;
    else counts.records += n;
  }
  pacer.finish();
  return counts;
}
