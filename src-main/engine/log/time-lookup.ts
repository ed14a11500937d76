/**
 * Offset lookup by timestamp, as Kafka's ListOffsets / `offsetsForTimes` answers it (Kafka
 * `UnifiedLog.fetchOffsetByTimestamp`, `LogSegment.findOffsetByTimestamp`,
 * `FileRecords.searchForTimestamp`, `LogSegment.largestTimestamp`; spec §9.2, §12.2; case B20).
 *
 * For a target timestamp T ≥ 0:
 * 1. take the FIRST segment (in offset order) whose largest timestamp is ≥ T — timestamps need not
 *    increase with offsets, so a later segment may hold smaller ones; if none, the answer is "none";
 * 2. in that segment, the time index gives the last entry with timestamp ≤ T (else the base offset),
 *    and the offset index the byte position of max(that entry's offset, logStartOffset);
 * 3. from there, the first batch whose maxTimestamp ≥ T is opened and its first record with
 *    timestamp ≥ T and offset ≥ logStartOffset is the answer (in offset order, so with out-of-order
 *    timestamps it may not be the record with the closest timestamp). Control records count, as in
 *    Kafka. If that segment yields nothing, the answer is "none" — Kafka does not look further
 *    (UnifiedLog.fetchOffsetByTimestamp asks LogSegment.findOffsetByTimestamp of that one segment only).
 *
 * A segment's largest timestamp: for a closed segment with a sound, non-empty time index, its last
 * entry (a broker appends the segment maximum when it rolls: LogSegment.onBecomeInactiveSegment); otherwise the maximum of the batches'
 * maxTimestamp read from the `.log` (from the last offset-index entry on when both indexes have
 * entries, else the whole segment), which is what a broker has after recovering the segment. Only when
 * no batch carries a timestamp (v0 data) is the `.log` file's mtime used, as Kafka does.
 *
 * Special targets: −2 (EARLIEST) → logStartOffset, −1 (LATEST) → the last offset the asker may fetch,
 * both with timestamp −1.
 *
 * Who asks matters (Kafka `Partition.fetchOffsetForTimestamp` and `ReplicaManager.fetchOffset`, 2.x–4.1):
 * a consumer's ListOffsets carries an isolation level, and its "last fetchable offset" is the high
 * watermark (read_uncommitted) or the last stable offset (read_committed); a replica's request has
 * none and gets the log end offset. LATEST answers that offset, and a timestamp whose first record is
 * at or past it gets no answer (offset −1). Offline, the high watermark is the partition's entry in
 * `replication-offset-checkpoint`, clamped to [logStartOffset, logEndOffset] as
 * `UnifiedLog.updateHighWatermark` does when the broker loads it; without an entry the log end offset
 * is used and said (a broker would start from 0, i.e. the log start offset, and advance it as the
 * in-sync replicas fetch: `Partition.createLog`). The LSO comes from `transactions.ts`.
 */
import { KlxError } from '../errors.ts';
import { lookupTimestamp } from '../files/time-index.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import type { ReadProblem } from './fetch.ts';
import { Pacer, recordsOf, scanSegmentFrom, type LongReadOptions } from './log-walk.ts';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, type IsolationLevel } from './read-defaults.ts';
import type { PartitionLog } from './partition-log.ts';
import { loadTransactionState } from './transactions.ts';

/** The special ListOffsets targets (−2 the log start offset, −1 the log end offset), from `read-defaults.ts`. */
export { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP };

/** An answer of {@link offsetForTimestamp}. */
export interface OffsetForTime {
  offset: bigint;
  /** The record's timestamp (ms); −1 for the EARLIEST / LATEST targets. */
  timestamp: bigint;
  /** partitionLeaderEpoch of the batch (or of the leader-epoch-checkpoint for EARLIEST/LATEST); null when unknown. */
  leaderEpoch: number | null;
  /** The segment holding the record; null for EARLIEST / LATEST. */
  segmentBaseOffset: bigint | null;
}

/** A segment's largest timestamp and where it came from. */
export interface SegmentTimestamp {
  /** ms since the epoch. */
  timestamp: bigint;
  source: 'time-index' | 'batches' | 'mtime';
}

/**
 * Who asks: a consumer's isolation level, or `none` for a replica's request (no isolation level:
 * answered up to the log end offset; Kafka `Partition.fetchOffsetForTimestamp`).
 */
export type ListOffsetsIsolation = IsolationLevel | 'none';

/** Options of {@link offsetForTimestamp}. */
export interface TimeLookupOptions extends LongReadOptions {
  /** Receives damage met while reading (bytes that are not batches are passed over). */
  onProblem?: (problem: ReadProblem) => void;
  /** Default `none`: up to the log end offset, every record the files hold (what the app's tables show). */
  isolation?: ListOffsetsIsolation;
}

/** The last offset a ListOffsets asker may be answered with (Kafka `Partition.fetchOffsetForTimestamp`'s `lastFetchableOffset`). */
export interface FetchableLimit {
  offset: bigint;
  /** `log-end` also when a consumer asks but the high watermark is not known (see `note`). */
  kind: 'log-end' | 'high-watermark' | 'last-stable-offset';
  /** Why the files did not give it as a broker has it (no or clamped checkpoint entry, UnifiedLog.updateHighWatermark); null otherwise. */
  note: string | null;
}

/** An answer of {@link listOffsets}. */
export interface ListOffsetsAnswer {
  /** What the asker gets; null = Kafka's offset −1, timestamp −1. */
  answer: OffsetForTime | null;
  limit: FetchableLimit;
  /** The record the timestamp search found when it lies at or past `limit` (so `answer` is null). */
  pastLimit: OffsetForTime | null;
}

/**
 * The high watermark a broker loads for the partition, or null with a note when there is none.
 * Kafka `Partition.createLog` reads `replication-offset-checkpoint` and `UnifiedLog.updateHighWatermark`
 * clamps it to [logStartOffset, logEndOffset].
 */
function loadedHighWatermark(log: PartitionLog): { offset: bigint | null; note: string | null } {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const hw = log.highWatermark;
  if (hw === null) {
    return { offset: null, note: `no high watermark for ${log.topic}-${log.partition} in replication-offset-checkpoint: the log end offset ${logEnd} is used (a broker would load 0, i.e. the log start offset ${logStart}, and advance it as the in-sync replicas fetch: Partition.createLog)` };
  }
  if (hw > logEnd) return { offset: logEnd, note: `replication-offset-checkpoint says ${hw}, above the log end offset ${logEnd}: a broker lowers it to the log end (UnifiedLog.updateHighWatermark)` };
  if (hw < logStart) return { offset: logStart, note: `replication-offset-checkpoint says ${hw}, below the log start offset ${logStart}: a broker raises it to the log start (UnifiedLog.updateHighWatermark)` };
  return { offset: hw, note: null };
}

/**
 * The last offset a ListOffsets asker of `isolation` may be answered with (see the module comment;
 * Kafka `Partition.fetchOffsetForTimestamp`): the log end offset for `none`, the high watermark for
 * read_uncommitted, the last stable offset for read_committed.
 * @throws KlxError `invalid-argument` for another isolation; `cancelled`, `io-error` (read_committed
 *   walks the transaction markers).
 */
export async function lastFetchableOffset(log: PartitionLog, isolation: ListOffsetsIsolation, opts: LongReadOptions = {}): Promise<FetchableLimit> {
  if (isolation === 'none') return { offset: log.logEndOffset, kind: 'log-end', note: null };
  if (isolation !== 'read_uncommitted' && isolation !== 'read_committed') throw new KlxError('invalid-argument', `isolation must be read_uncommitted, read_committed or none, got "${String(isolation)}"`);
  const hw = loadedHighWatermark(log);
  if (isolation === 'read_uncommitted') return hw.offset === null ? { offset: log.logEndOffset, kind: 'log-end', note: hw.note } : { offset: hw.offset, kind: 'high-watermark', note: hw.note };
  // transactions.ts: the first offset of the earliest open transaction if below the high watermark (LEO when unknown), else that.
  const state = await loadTransactionState(log, opts);
  const upper = hw.offset ?? log.logEndOffset;
  const lso = state.lastStableOffset < upper ? state.lastStableOffset : upper;
  if (state.firstUnstableOffset !== null && state.firstUnstableOffset < upper) return { offset: lso, kind: 'last-stable-offset', note: null };
  return { offset: lso, kind: hw.offset === null ? 'log-end' : 'high-watermark', note: hw.note === null ? 'no transaction is open: the last stable offset is the high watermark' : `${hw.note}; no transaction is open: the last stable offset is that` };
}

const largestCache = new WeakMap<LogSegment, SegmentTimestamp>();

/**
 * Largest timestamp of a segment (see the module comment). Cached per segment object.
 * @param active the segment is the log's active segment (its time index has no final entry).
 * @throws KlxError `io-error` when the `.log` cannot be read; `cancelled`.
 */
export async function segmentLargestTimestamp(seg: LogSegment, active: boolean, opts: LongReadOptions = {}): Promise<SegmentTimestamp> {
  const cached = largestCache.get(seg);
  if (cached) return cached;
  let entries: { timestamp: bigint }[] = [];
  let sound = false;
  try {
    const ti = seg.timeIndex();
    entries = ti.entries;
    sound = ti.problems.length === 0;
  } catch {
    entries = [];
  }
  let result: SegmentTimestamp;
  if (!active && sound && entries.length > 0) {
    result = { timestamp: entries[entries.length - 1]!.timestamp, source: 'time-index' };
  } else {
    let start = 0;
    let indexMax = -1n;
    if (entries.length > 0 && seg.files.indexSize > 0) {
      const oi = seg.offsetIndex().entries.filter((e) => e.position < seg.size);
      if (oi.length > 0) {
        start = oi[oi.length - 1]!.position;
        indexMax = entries[entries.length - 1]!.timestamp;
      }
    }
    const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `largest timestamp of ${seg.files.log}`, total: seg.size - start });
    let max = -1n;
    let restarted = false;
    let first = true;
    for (const e of scanSegmentFrom(seg, start)) {
      if (e.type !== 'batch') continue;
      if (first) {
        // A stale index entry makes the scan start over at position 0: then the batches alone count.
        restarted = e.header.position < start;
        first = false;
      }
      await pacer.step(e.header.size);
      if (e.header.maxTimestamp > max) max = e.header.maxTimestamp;
    }
    if (!restarted && indexMax > max) max = indexMax;
    result = max >= 0n ? { timestamp: max, source: 'batches' } : { timestamp: BigInt(Math.trunc(seg.files.logModifiedMs)), source: 'mtime' };
  }
  largestCache.set(seg, result);
  return result;
}

function leaderEpochAt(log: PartitionLog, offset: bigint): number | null {
  let epoch: number | null = null;
  for (const e of log.leaderEpochs) if (e.startOffset <= offset) epoch = e.epoch;
  return epoch;
}

/**
 * The first offset whose record has a timestamp ≥ `target` (see the module comment), or null
 * (Kafka answers offset −1, timestamp −1) when there is none or it lies at or past the last offset
 * `opts.isolation` may fetch (default `none`: the log end offset).
 * @param target ms since the epoch, or {@link EARLIEST_TIMESTAMP} / {@link LATEST_TIMESTAMP}.
 * @throws KlxError `invalid-argument` for another negative target; `corrupt-batch` (file, position)
 *   when the batch that must be searched cannot be decoded; `cancelled`; `io-error`.
 */
export async function offsetForTimestamp(log: PartitionLog, target: bigint, opts: TimeLookupOptions = {}): Promise<OffsetForTime | null> {
  return (await listOffsets(log, target, opts.isolation ?? 'none', opts)).answer;
}

/**
 * ListOffsets for one partition as Kafka answers the asker `isolation` (`Partition.fetchOffsetForTimestamp`,
 * `ReplicaManager.fetchOffset`, `UnifiedLog.fetchOffsetByTimestamp`; see the module comment), with the
 * limit it applied and the record it withheld.
 * @throws as {@link offsetForTimestamp}.
 */
export async function listOffsets(log: PartitionLog, target: bigint, isolation: ListOffsetsIsolation, opts: Omit<TimeLookupOptions, 'isolation'> = {}): Promise<ListOffsetsAnswer> {
  if (typeof target !== 'bigint') throw new KlxError('invalid-argument', `timestamp must be an integer (bigint), got ${String(target)}`);
  if (target < 0n && target !== EARLIEST_TIMESTAMP && target !== LATEST_TIMESTAMP) throw new KlxError('invalid-argument', `timestamp ${target} is not valid: give ms since the epoch, −2 (earliest) or −1 (latest)`);
  const limit = await lastFetchableOffset(log, isolation, opts);
  const logStart = log.logStartOffset;
  // EARLIEST is not held to the limit (Partition.fetchOffsetForTimestamp passes it straight to UnifiedLog).
  if (target === EARLIEST_TIMESTAMP) return { answer: { offset: logStart, timestamp: -1n, leaderEpoch: leaderEpochAt(log, logStart), segmentBaseOffset: null }, limit, pastLimit: null };
  // LATEST: the limit itself, with the partition's current leader epoch (offline: the newest epoch the checkpoint knows).
  if (target === LATEST_TIMESTAMP) return { answer: { offset: limit.offset, timestamp: -1n, leaderEpoch: leaderEpochAt(log, log.logEndOffset), segmentBaseOffset: null }, limit, pastLimit: null };
  const found = await searchLog(log, target, opts);
  // ReplicaManager.fetchOffset: an offset at or past lastFetchableOffset is answered as "none".
  if (found !== null && found.offset >= limit.offset) return { answer: null, limit, pastLimit: found };
  return { answer: found, limit, pastLimit: null };
}

/** UnifiedLog.fetchOffsetByTimestamp for a target ≥ 0: the first segment whose largest timestamp reaches it. */
async function searchLog(log: PartitionLog, target: bigint, opts: TimeLookupOptions): Promise<OffsetForTime | null> {
  const logStart = log.logStartOffset;
  const segs = log.segments;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const largest = await segmentLargestTimestamp(seg, i === segs.length - 1, opts);
    if (largest.timestamp >= target) return searchSegment(seg, target, logStart, opts);
  }
  return null;
}

/** Kafka `LogSegment.findOffsetByTimestamp` + `FileRecords.searchForTimestamp`. */
async function searchSegment(seg: LogSegment, target: bigint, logStart: bigint, opts: TimeLookupOptions): Promise<OffsetForTime | null> {
  let tsOffset = seg.baseOffset;
  try {
    tsOffset = lookupTimestamp(seg.timeIndex(), target).offset;
  } catch {
    tsOffset = seg.baseOffset;
  }
  const startOffset = tsOffset > logStart ? tsOffset : logStart;
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `search ${seg.files.log} for timestamp ${target}`, total: null });
  for (const e of scanSegmentFrom(seg, seg.positionFor(startOffset))) {
    if (e.type !== 'batch') {
      opts.onProblem?.({ code: e.code, file: seg.files.log, position: e.position, size: e.size, reason: e.reason });
      continue;
    }
    const h = e.header;
    await pacer.step(h.size);
    if (h.maxTimestamp < target) continue;
    let records;
    try {
      records = recordsOf(e);
    } catch (err) {
      const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
      throw new KlxError(k.code, `cannot search for timestamp ${target}: ${k.reason}`, { file: seg.files.log, position: h.position, cause: err });
    }
    for (const r of records) {
      if (r.timestamp >= target && r.offset >= logStart) {
        return { offset: r.offset, timestamp: r.timestamp, leaderEpoch: h.magic === 2 && h.partitionLeaderEpoch >= 0 ? h.partitionLeaderEpoch : null, segmentBaseOffset: seg.baseOffset };
      }
    }
  }
  return null;
}
