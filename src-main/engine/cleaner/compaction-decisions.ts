/**
 * The evidence sentences of compaction decisions (see `decisions.ts`): what the compactor
 * (`compactor.ts`) decided for a record or a batch, restated with the figures a trainer needs.
 * Kafka classes followed: `Cleaner.shouldRetainRecord` (superseded, keyless, tombstones and the
 * delete horizon of KIP-534), `LogCleaner`'s `checkBatchRetention` / `BatchRetention`
 * (RETAIN_EMPTY for a still-active producer's last batch or the batch before the first
 * uncleanable offset, DELETE for aborted data and discardable markers) and
 * `MemoryRecords.filterTo` (copied vs rebuilt batches).
 *
 * The compactor calls these only when a plan asks for decisions; the hot path stays as it is.
 */
import type { BatchHeader } from '../format/types.ts';
import type { CleanerRules } from './cleaner-rules.ts';
import type { CompactionReason } from './cleaner-plan.ts';
import { durationText, timeText, type CleanerDecision, type DecisionLog, type DecisionReason, type DecisionVerdict } from './decisions.ts';

/** What the record decision of the compactor was based on. */
export interface RecordFacts {
  offset: bigint;
  key: string | null;
  value: string | null;
  timestamp: bigint;
  isTombstone: boolean;
  isKeyless: boolean;
  /** The offset map's value for the key (−1 when not mapped or keyless). */
  mapped: number;
}

/** The state the evidence needs (a subset of the compactor's context). */
export interface ExplainContext {
  decisions: DecisionLog;
  segment: bigint;
  rules: CleanerRules;
  now: bigint;
  deleteRetentionMs: bigint;
  /** The offset map's latest offset (records past it are not cleaned this round). */
  latestOffset: number;
  /** Kafka's mtime rule for v0/v1 tombstones of this segment. */
  retainLegacyDeletes: boolean;
}

/** The verdict, reason and evidence of one data record. */
export function recordDecision(x: ExplainContext, h: BatchHeader, f: RecordFacts, removed: CompactionReason | null): { decision: DecisionVerdict; reason: DecisionReason; evidence: string } {
  const key = f.key ?? '(no key)';
  const drm = x.deleteRetentionMs;
  const horizon = h.magic >= 2 && h.hasDeleteHorizon ? h.baseTimestamp : null;
  switch (removed) {
    case 'aborted':
      return { decision: 'remove', reason: 'aborted', evidence: `aborted transaction of producer ${h.producerId}` };
    case 'keyless':
      return { decision: 'remove', reason: 'keyless', evidence: 'keyless: dropped (kafka rules; counted as an invalid message)' };
    case 'superseded':
      return { decision: 'remove', reason: 'superseded', evidence: `superseded by offset ${f.mapped} (key ${key})` };
    case 'tombstone': {
      if (x.rules.name === 'classic') {
        return { decision: 'remove', reason: 'tombstone-horizon-passed', evidence: `tombstone removed: now − its timestamp = ${durationText(x.now - f.timestamp)} > delete.retention.ms ${drm} (classic rules, one pass)` };
      }
      // Cleaner.doClean: legacyDeleteHorizonMs = last modified time of the last segment below the first
      // dirty offset − delete.retention.ms; cleanSegments retains v0/v1 deletes while a segment's mtime is above it.
      if (h.magic < 2) {
        return { decision: 'remove', reason: 'tombstone-horizon-passed', evidence: `tombstone removed: a v${h.magic} message (no delete horizon) in a segment last modified at least delete.retention.ms ${drm} before the last segment below the first dirty offset` };
      }
      return { decision: 'remove', reason: 'tombstone-horizon-passed', evidence: `tombstone removed: horizon passed (delete horizon ${timeText(horizon!)} ≤ now ${timeText(x.now)})` };
    }
    default:
      break;
  }
  if (f.offset > BigInt(x.latestOffset)) {
    return { decision: 'keep', reason: 'beyond-map', evidence: `kept: past the offset map's last offset ${x.latestOffset}, not cleaned this round` };
  }
  if (f.isKeyless) return { decision: 'keep', reason: 'keyless', evidence: 'keyless: kept (classic rules)' };
  if (f.isTombstone) {
    if (x.rules.name === 'classic') {
      return { decision: 'keep', reason: 'tombstone-until-horizon', evidence: `tombstone kept: now − its timestamp = ${durationText(x.now - f.timestamp)}, not above delete.retention.ms ${drm} (classic rules)` };
    }
    if (h.magic < 2) {
      return { decision: 'keep', reason: 'tombstone-until-horizon', evidence: `tombstone kept: a v${h.magic} message (no delete horizon) in a segment last modified less than delete.retention.ms ${drm} before the last segment below the first dirty offset` };
    }
    if (horizon === null) {
      const hz = x.now + drm;
      return { decision: 'keep', reason: 'tombstone-until-horizon', evidence: `tombstone kept until its delete horizon ${timeText(hz)} (first cleaned now at ${timeText(x.now)}, delete.retention.ms ${drm}: the horizon is written into its batch)` };
    }
    return {
      decision: 'keep',
      reason: 'tombstone-until-horizon',
      evidence: `tombstone kept until its delete horizon ${timeText(horizon)} (first cleaned at ${timeText(horizon - drm)}, delete.retention.ms ${drm}; ${durationText(horizon - x.now)} to go)`,
    };
  }
  if (f.mapped === Number(f.offset)) return { decision: 'keep', reason: 'latest-for-key', evidence: `kept: latest for key ${key}` };
  return { decision: 'keep', reason: 'latest-for-key', evidence: `kept: latest for key ${key} (no later offset in the offset map)` };
}

/** Adds the decision of one data record (key and value text built only while rows are kept one by one: `facts(false)` may leave them null). */
export function explainRecord(x: ExplainContext, h: BatchHeader, facts: (withText: boolean) => RecordFacts, offset: bigint, removed: CompactionReason | null): void {
  if (!x.decisions.detailedNow) {
    const f = facts(false);
    const d = recordDecision(x, h, f, removed);
    x.decisions.addFolded(x.segment, d.decision, d.reason, offset, () => d.evidence);
    return;
  }
  const f = facts(true);
  const d = recordDecision(x, h, f, removed);
  x.decisions.add({ subject: 'record', offset, segment: x.segment, key: f.key, value: f.value, timestamp: f.timestamp, ...d });
}

/** Adds the decision of one control record (a transaction marker). */
export function explainControlRecord(x: ExplainContext, h: BatchHeader, offset: bigint, type: string, removed: boolean, discardable: boolean): void {
  const horizon = h.hasDeleteHorizon ? h.baseTimestamp : null;
  let d: { decision: DecisionVerdict; reason: DecisionReason; evidence: string };
  if (removed) {
    d = x.rules.name === 'classic'
      ? { decision: 'remove', reason: 'marker-horizon-passed', evidence: `control marker removed: its transaction has no data left and now − its timestamp = ${durationText(x.now - h.maxTimestamp)} > delete.retention.ms ${x.deleteRetentionMs} (classic rules)` }
      : { decision: 'remove', reason: 'marker-horizon-passed', evidence: `control marker removed: its transaction has no data left and its horizon ${horizon === null ? '' : timeText(horizon) + ' '}passed` };
  } else if (discardable) {
    const hz = horizon ?? x.now + x.deleteRetentionMs;
    d = x.rules.name === 'classic'
      ? { decision: 'keep', reason: 'marker-until-horizon', evidence: `control marker kept: its transaction has no data left but now − its timestamp = ${durationText(x.now - h.maxTimestamp)}, not above delete.retention.ms ${x.deleteRetentionMs} (classic rules)` }
      : { decision: 'keep', reason: 'marker-until-horizon', evidence: `control marker kept until its horizon ${timeText(hz)}${horizon === null ? ' (written now: now + delete.retention.ms)' : ''}: its transaction has no data left` };
  } else {
    // CleanedTransactionMetadata.onControlBatchRead: an ABORT marker is kept when this round read a
    // batch of its transaction (removed now as aborted data), a COMMIT marker when this round read
    // a transactional batch of its producer since the previous marker; other control types are always kept.
    d = {
      decision: 'keep',
      reason: 'marker-guards-data',
      evidence:
        type === 'ABORT'
          ? `control marker kept: this round read data of producer ${h.producerId}'s aborted transaction (removed now); a later round that finds none left starts the marker's delete horizon`
          : type === 'COMMIT'
            ? `control marker kept: this round read data of producer ${h.producerId}'s transaction`
            : `control record kept: a ${type} record (only ABORT and COMMIT markers are ever removed)`,
    };
  }
  if (!x.decisions.detailedNow) {
    x.decisions.addFolded(x.segment, d.decision, d.reason, offset, () => d.evidence);
    return;
  }
  x.decisions.add({ subject: 'record', offset, segment: x.segment, key: null, value: type, timestamp: h.maxTimestamp, ...d });
}

/** Why a batch that lost its records was kept (RETAIN_EMPTY), or dropped whole. */
export type BatchFate =
  | { kind: 'dropped-aborted' }
  | { kind: 'dropped-marker' }
  | { kind: 'dropped-empty' }
  | { kind: 'kept-empty'; lastOfProducer: boolean; upperBound: bigint }
  | { kind: 'copied' }
  | { kind: 'rebuilt'; records: number; horizonWritten: bigint | null };

/** Adds the decision of one batch. */
export function explainBatch(x: ExplainContext, h: BatchHeader, fate: BatchFate): void {
  let d: Pick<CleanerDecision, 'decision' | 'reason' | 'evidence'>;
  switch (fate.kind) {
    case 'dropped-aborted':
      d = { decision: 'remove', reason: 'batch-dropped', evidence: `batch dropped: aborted transaction data of producer ${h.producerId}` };
      break;
    case 'dropped-marker':
      d = { decision: 'remove', reason: 'batch-dropped', evidence: 'control batch dropped: its marker guards no data and its horizon passed' };
      break;
    case 'dropped-empty':
      d = { decision: 'remove', reason: 'batch-dropped', evidence: `batch dropped: none of its ${h.recordCount} records is kept` };
      break;
    case 'kept-empty':
      // Cleaner.cleanInto's checkBatchRetention: RETAIN_EMPTY for an active producer's last batch, and for the
      // batch whose next offset is the round's upper bound (LogCleaner ≤ 4.3; KAFKA-20452 made it the high watermark in 4.4).
      d = fate.lastOfProducer
        ? { decision: 'keep', reason: 'empty-batch-kept', evidence: `empty batch kept: last batch of producer ${h.producerId} (sequence ${h.baseSequence < 0 ? -1 : h.baseSequence + h.lastOffsetDelta}), so the producer's state survives` }
        : { decision: 'keep', reason: 'empty-batch-kept', evidence: `empty batch kept: it ends right before the first uncleanable offset ${fate.upperBound}, so the log keeps its last offset (Kafka 3.x–4.3; since 4.4 only a batch ending at the high watermark is kept empty)` };
      break;
    case 'copied':
      d = { decision: 'keep', reason: 'batch-copied', evidence: `batch copied byte for byte (${h.recordCount} record${h.recordCount === 1 ? '' : 's'})` };
      break;
    case 'rebuilt':
      d = {
        decision: 'keep',
        reason: 'batch-rebuilt',
        evidence: `batch rebuilt: ${fate.records} of ${h.recordCount} records kept, same baseOffset ${h.baseOffset} and lastOffsetDelta ${h.lastOffsetDelta}${fate.horizonWritten !== null ? `, delete horizon ${timeText(fate.horizonWritten)} written` : ''}`,
      };
      break;
  }
  x.decisions.add({ subject: 'batch', offset: h.baseOffset, lastOffset: h.lastOffset, segment: x.segment, key: null, ...d });
}
