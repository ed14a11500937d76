/**
 * The cleanable range of a compacted log and whether a broker would clean it now (spec §13.1,
 * §13.2, §13.10; Kafka's `LogCleanerManager.cleanableOffsets`, `calculateCleanableBytes`,
 * `maxCompactionDelay`, `grabFilthiestCompactedLog`, `LogToClean`).
 *
 *     logStartOffset .. firstDirtyOffset          clean (already compacted)
 *     firstDirtyOffset .. firstUncleanableOffset  cleanable dirty section
 *     firstUncleanableOffset .. logEndOffset      uncleanable (always the whole active segment)
 *
 * - firstDirtyOffset: the cleaner-offset-checkpoint entry, reset to logStartOffset when absent,
 *   below logStartOffset or above the log end offset;
 * - firstUncleanableOffset: min(last stable offset, active segment base, base of the first dirty
 *   non-active segment whose largest timestamp > now − min.compaction.lag.ms when the lag > 0),
 *   raised to firstDirtyOffset, then rounded down to the base of the segment holding it (B05: the
 *   first "too young" segment fences off every later one);
 * - dirty ratio = cleanableBytes / (cleanBytes + cleanableBytes), where cleanBytes are the segments
 *   below firstDirtyOffset and cleanableBytes the segments from the one holding firstDirtyOffset up
 *   to firstUncleanableOffset;
 * - max.compaction.lag.ms: overdue by `now − lag − earliest first-batch timestamp` of the dirty
 *   non-active segments (timestamps ≤ 0 ignored); a broker cleans a log when it is overdue (and has
 *   cleanable bytes) or its ratio is above min.cleanable.dirty.ratio (LogCleanerManager.grabFilthiestCompactedLog,
 *   LogCleanerManager.maxCompactionDelay).
 */
import type { PartitionLog } from '../log/partition-log.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import type { CleanableInfo } from './cleaner-plan.ts';
import { firstBatchTimestamp, largestTimestamp } from './segment-times.ts';

/** The segments overlapping `[from, to)` (Kafka `LogSegments.values(from, to)`): from the one holding `from`, bases below `to`. */
export function segmentsInRange(log: PartitionLog, from: bigint, to: bigint): LogSegment[] {
  const segs = log.segments;
  const out: LogSegment[] = [];
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const next = segs[i + 1];
    if (next && next.baseOffset <= from) continue;
    if (s.baseOffset >= to) break;
    out.push(s);
  }
  return out;
}

/** Kafka `nonActiveLogSegmentsFrom(from)`: from the segment holding `from` up to, not including, the active segment. */
export function nonActiveSegmentsFrom(log: PartitionLog, from: bigint): LogSegment[] {
  const active = log.activeSegment;
  if (!active || from > active.baseOffset) return [];
  return segmentsInRange(log, from, active.baseOffset);
}

/**
 * Computes the cleanable range (see the module comment).
 * @param lastStableOffset first offset of the earliest open transaction, else the high watermark.
 */
export function cleanableRange(log: PartitionLog, now: number, lastStableOffset: bigint): CleanableInfo {
  const cfg = log.config.config;
  const logStart = log.logStartOffset;
  const leo = log.logEndOffset;
  const cp = log.cleanerCheckpoint;
  let firstDirty = cp ?? logStart;
  let checkpointReset = false;
  let checkpointWarning: string | null = null;
  if (firstDirty < logStart || firstDirty > leo) {
    firstDirty = logStart;
    checkpointReset = cp !== null;
    // LogCleanerManager.cleanableOffsets logs these (a reset below the log start is silent for compact,delete).
    const name = `${log.topic}-${log.partition}`;
    const policy = cfg['cleanup.policy'];
    if (cp !== null && cp > leo) {
      checkpointWarning = `WARN The last checkpoint dirty offset for partition ${name} is ${cp}, which is larger than the log end offset ${leo}. Resetting to the log start offset ${logStart}.`;
    } else if (cp !== null && !(policy.includes('compact') && policy.includes('delete'))) {
      checkpointWarning = `WARN Resetting first dirty offset of ${name} to log start offset ${logStart} since the checkpointed offset ${cp} is invalid.`;
    }
  }
  const active = log.activeSegment!;
  let raw = lastStableOffset;
  let reason: CleanableInfo['uncleanableReason'] = 'last-stable-offset';
  if (active.baseOffset <= raw) {
    raw = active.baseOffset;
    reason = 'active-segment';
  }
  const lag = cfg['min.compaction.lag.ms'];
  if (lag > 0n) {
    const limit = BigInt(now) - lag;
    for (const s of nonActiveSegmentsFrom(log, firstDirty)) {
      if (largestTimestamp(s, false).timestamp > limit) {
        if (s.baseOffset < raw) {
          raw = s.baseOffset;
          reason = 'min-compaction-lag';
        }
        break;
      }
    }
  }
  const uncleanable = raw > firstDirty ? raw : firstDirty;
  // Round down to the base of the segment holding it (calculateCleanableBytes).
  const firstUncleanableSeg = nonActiveSegmentsFrom(log, uncleanable)[0] ?? active;
  const firstUncleanable = firstUncleanableSeg.baseOffset;
  const cleanBytes = log.segments.filter((s) => s.baseOffset < firstDirty).reduce((a, s) => a + s.size, 0);
  const lo = firstDirty < firstUncleanable ? firstDirty : firstUncleanable;
  const cleanableBytes = segmentsInRange(log, lo, firstUncleanable).reduce((a, s) => a + s.size, 0);
  const total = cleanBytes + cleanableBytes;
  const dirtyRatio = total > 0 ? cleanableBytes / total : 0;

  // max.compaction.lag.ms
  const maxLag = cfg['max.compaction.lag.ms'] > 0n ? cfg['max.compaction.lag.ms'] : 0n;
  let earliest: bigint | null = null;
  for (const s of nonActiveSegmentsFrom(log, firstDirty)) {
    const t = firstBatchTimestamp(s);
    if (t !== null && t > 0n && (earliest === null || t < earliest)) earliest = t;
  }
  const cleanUntil = BigInt(now) - maxLag;
  const delay = earliest !== null && earliest < cleanUntil ? cleanUntil - earliest : 0n;
  const mustCleanNow = delay > 0n;
  const minRatio = cfg['min.cleanable.dirty.ratio'];
  const brokerNeverCompacts = brokerNeverCompactsReason(log);
  return {
    firstDirtyOffset: firstDirty,
    checkpointReset,
    checkpointWarning,
    firstUncleanableOffset: firstUncleanable,
    uncleanableReason: reason,
    lastStableOffset,
    cleanBytes,
    cleanableBytes,
    dirtyRatio,
    minCleanableDirtyRatio: minRatio,
    maxCompactionDelayMs: Number(delay),
    mustCleanNow,
    brokerWouldClean: brokerNeverCompacts === null && total > 0 && ((mustCleanNow && cleanableBytes > 0) || dirtyRatio > minRatio),
    brokerNeverCompacts,
  };
}

/**
 * Why a broker's cleaner never compacts `log`, or null when it may: `LogCleanerManager.grabFilthiestCompactedLog`
 * only looks at logs whose `LogConfig.compact` is true, i.e. whose cleanup.policy lists `compact`
 * (`compact` or `compact,delete`); a `delete`-only log is only ever trimmed by retention
 * (`UnifiedLog.deleteOldSegments`). The sentence names where the policy came from (topic config, override, default).
 */
export function brokerNeverCompactsReason(log: PartitionLog): string | null {
  const policy = log.config.config['cleanup.policy'];
  if (policy.includes('compact')) return null;
  const source = log.config.sources['cleanup.policy'];
  const from = source === 'default' ? ' (the default)' : source === 'sidecar' ? ' (klx-topic.properties)' : source === 'override' ? ' (--config / the request)' : '';
  return `cleanup.policy is ${policy.join(',')}${from}, and a broker's log cleaner only picks logs whose cleanup.policy includes compact (LogCleanerManager.grabFilthiestCompactedLog filters on LogConfig.compact); it only deletes whole segments by retention (UnifiedLog.deleteOldSegments)`;
}
