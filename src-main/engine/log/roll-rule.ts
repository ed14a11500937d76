/**
 * When the active segment rolls before an append (spec §10.2; Kafka `LogSegment.shouldRoll`,
 * `LogConfig.maxSegmentMs`, `LogConfig.randomSegmentJitter`).
 */
import { MAX_RELATIVE_OFFSET, OFFSET_INDEX_ENTRY_SIZE } from '../files/offset-index.ts';
import { TIME_INDEX_ENTRY_SIZE } from '../files/time-index.ts';
import type { TopicConfig } from './topic-config.ts';

// ---------------------------------------------------------------------------------------------
// Roll decision

/** Why the active segment is (or would be) rolled before an append (spec §10.2). */
export type RollReason = 'segment.bytes' | 'segment.ms' | 'max.compaction.lag.ms' | 'index-full' | 'time-index-full' | 'offset-overflow' | 'explicit';

/** What the roll rule needs to know about the active segment. */
export interface RollSegmentState {
  baseOffset: bigint;
  /** `.log` size in bytes. */
  size: number;
  /** maxTimestamp of the segment's first batch (ms), or null for an empty segment. */
  firstBatchMaxTimestamp: bigint | null;
  /** When the segment was created or opened by this writer (ms): the wall-clock fallback of the time rule. */
  createdMs: bigint;
  /** This segment's roll jitter (ms), in [0, min(segment.jitter.ms, segment.ms)). */
  jitterMs: bigint;
  /** Offset-index entries (a broker's count, for LogSegment.shouldRoll's offsetIndex().isFull()). */
  offsetIndexEntries: number;
  /** Time-index entries a running broker would hold (without the trailing final entry). */
  timeIndexEntries: number;
}

/** The append that is about to happen. */
export interface RollAppend {
  /** Bytes to append. */
  size: number;
  /** Largest timestamp of the append (ms; the append time for LogAppendTime). */
  maxTimestamp: bigint;
  /** Last offset of the append. */
  lastOffset: bigint;
}

/**
 * `segment.ms` as the roll rule uses it (Kafka `LogConfig.maxSegmentMs`): for a compacted topic
 * `min(segment.ms, max.compaction.lag.ms)`, else `segment.ms`.
 */
export function maxSegmentMs(config: TopicConfig): bigint {
  const lag = config['max.compaction.lag.ms'];
  return config['cleanup.policy'].includes('compact') && lag > 0n && lag < config['segment.ms'] ? lag : config['segment.ms'];
}

/**
 * Kafka's roll rule (`LogSegment.shouldRoll`, spec §10.2), checked before each append, in Kafka's order:
 * 1. `segment.bytes`: `size > segment.bytes − appendSize`;
 * 2. `segment.ms`: the segment is non-empty and `appendMaxTimestamp − firstBatchMaxTimestamp >
 *    maxSegmentMs − jitter` (record time, not wall time; `now − createdMs` only when the first batch
 *    has no timestamp); reported as `max.compaction.lag.ms` when that capped the interval;
 * 3. the offset index is full (`floor(segment.index.bytes / 8)` entries) or the time index is
 *    (`floor(segment.index.bytes / 12) − 1` entries, one slot kept for the final entry);
 * 4. offset overflow: `lastOffset − baseOffset` does not fit an int32.
 * @param nowMs wall clock (ms), used only by the fallback of rule 2.
 * @returns the first rule that holds, or null.
 */
export function decideRoll(seg: RollSegmentState, append: RollAppend, config: TopicConfig, nowMs: bigint): RollReason | null {
  if (seg.size > config['segment.bytes'] - append.size) return 'segment.bytes';
  if (seg.size > 0) {
    const first = seg.firstBatchMaxTimestamp ?? -1n;
    const waited = first >= 0n ? append.maxTimestamp - first : nowMs - seg.createdMs;
    const limit = maxSegmentMs(config);
    // LogConfig.maxSegmentMs: on a compacted topic max.compaction.lag.ms caps segment.ms; name the one that set the limit.
    if (waited > limit - seg.jitterMs) return limit < config['segment.ms'] ? 'max.compaction.lag.ms' : 'segment.ms';
  }
  const indexBytes = config['segment.index.bytes'];
  if (seg.offsetIndexEntries >= Math.floor(indexBytes / OFFSET_INDEX_ENTRY_SIZE)) return 'index-full';
  if (seg.timeIndexEntries >= Math.floor(indexBytes / TIME_INDEX_ENTRY_SIZE) - 1) return 'time-index-full';
  const rel = append.lastOffset - seg.baseOffset;
  if (rel < 0n || rel > BigInt(MAX_RELATIVE_OFFSET)) return 'offset-overflow';
  return null;
}

/** Kafka `LogConfig.randomSegmentJitter`: 0, or `random % min(segment.jitter.ms, segment.ms)`. */
export function segmentJitter(config: TopicConfig, random: () => number): bigint {
  const j = config['segment.jitter.ms'];
  if (j === 0n) return 0n;
  const bound = j < config['segment.ms'] ? j : config['segment.ms'];
  return BigInt(Math.floor(random() * Number(bound)));
}
