/**
 * The timestamps of a segment that retention and compaction scheduling use (spec §9.2, §10.2,
 * §12.2, §13.1, §13.2; Kafka's `LogSegment.largestTimestamp`, `maxTimestampSoFar`,
 * `getFirstBatchTimestamp`).
 *
 * - largest timestamp: the largest batch `maxTimestamp` in the segment. A closed segment keeps it in
 *   the last entry of its time index (the final entry written at roll); the active segment's index
 *   lags behind, so the batches after its last index entry are read too. When the time index is
 *   missing or empty, the `.log` is read (case B08: the value is recomputed from the batches). Only
 *   when no batch carries a timestamp (≥ 0), e.g. v0 data, the `.log` file's mtime is used.
 * - first batch timestamp: the `maxTimestamp` of the segment's first batch (what a broker reloads as
 *   the segment's rolling-based timestamp: LogSegment.getFirstBatchTimestamp), used by `max.compaction.lag.ms`.
 *
 * Units: timestamps and mtimes are ms since the epoch, as `bigint`.
 */
import { scanLogFile } from '../format/log-reader.ts';
import type { LogSegment } from '../segment/log-segment.ts';

/** Where a largest timestamp came from. */
export type LargestTimestampSource = 'time-index' | 'log' | 'mtime';

/** The largest timestamp of a segment and where it was found. */
export interface LargestTimestamp {
  /** ms since the epoch. */
  timestamp: bigint;
  source: LargestTimestampSource;
}

/** The `.log` file's last-modified time in whole ms (Java's `File.lastModified`). */
export function segmentMtimeMs(seg: LogSegment): bigint {
  return BigInt(Math.floor(seg.files.logModifiedMs));
}

/** Largest batch maxTimestamp from byte position `start` to the end of the `.log` (−1 when none). */
function maxTimestampFrom(seg: LogSegment, start: number): bigint {
  let max = -1n;
  for (const e of scanLogFile(seg.files.log, { start, verifyCrc: false, resync: false })) {
    if (e.type === 'batch' && e.header.maxTimestamp > max) max = e.header.maxTimestamp;
  }
  return max;
}

/**
 * Kafka's `LogSegment.largestTimestamp` (see the module comment).
 * @param active true for the partition's last segment (its time index has no final entry).
 * @throws KlxError `not-found` / `io-error` when the `.log` cannot be read.
 */
export function largestTimestamp(seg: LogSegment, active: boolean): LargestTimestamp {
  let fromIndex = -1n;
  let haveIndex = false;
  if (seg.files.timeindexSize > 0) {
    const entries = seg.timeIndex().entries;
    if (entries.length > 0) {
      fromIndex = entries[entries.length - 1]!.timestamp;
      haveIndex = true;
    }
  }
  let ts: bigint;
  let source: LargestTimestampSource;
  if (haveIndex && !active) {
    ts = fromIndex;
    source = 'time-index';
  } else if (haveIndex && active) {
    // The index covers the batches up to its last entry; read the rest of the file.
    const oi = seg.offsetIndex().entries;
    const start = oi.length > 0 && oi[oi.length - 1]!.position < seg.size ? oi[oi.length - 1]!.position : 0;
    let tail = -1n;
    try {
      tail = maxTimestampFrom(seg, start);
    } catch {
      tail = maxTimestampFrom(seg, 0);
    }
    ts = tail > fromIndex ? tail : fromIndex;
    source = tail > fromIndex ? 'log' : 'time-index';
  } else {
    ts = maxTimestampFrom(seg, 0);
    source = 'log';
  }
  if (ts < 0n) return { timestamp: segmentMtimeMs(seg), source: 'mtime' };
  return { timestamp: ts, source };
}

/**
 * Kafka's `LogSegment.getFirstBatchTimestamp`: the first batch's maxTimestamp, or null when the
 * segment is empty or that value is negative (Kafka then uses Long.MAX_VALUE, i.e. "never").
 */
export function firstBatchTimestamp(seg: LogSegment): bigint | null {
  const first = seg.firstBatch();
  return first && first.maxTimestamp >= 0n ? first.maxTimestamp : null;
}
