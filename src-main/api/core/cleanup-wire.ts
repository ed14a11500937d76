/**
 * The engine's cleaner reports (`CleanerReport`, `PartitionOutcome`, undo results, trash entries)
 * turned into the JSON-safe wire shapes of `src-shared/cleanup-types.ts`: int64 offsets and
 * timestamps as decimal strings, ranges as `{first, last}`, removals as a list in
 * {@link REMOVAL_REASONS} order, absent optional parts as null.
 *
 * Pure functions (no I/O); the cleaner worker uses them so that only plain JSON crosses back to the
 * main thread. Shared by the cleanup and lessons domains, hence in core/.
 */
import type { CleanerReport, OffsetRange, SegmentSummary } from '../../engine/cleaner/cleaner-plan.ts';
import type { PartitionOutcome } from '../../engine/cleaner/cleaner.ts';
import type { TrashEntryInfo } from '../../engine/cleaner/trash.ts';
import type { UndoResult } from '../../engine/cleaner/undo.ts';
import type { RunRecord } from '../../engine/cleaner/run-history.ts';
import type { CleanerDecision, DecisionList } from '../../engine/cleaner/decisions.ts';
import { REMOVAL_REASONS, type CleanerDecisionWire, type CleanupPartitionOutcome, type CleanupReport, type CleanupRunRecord, type DecisionListWire, type CleanupSegment, type OffsetRange as WireRange, type TrashEntry, type UndoneEntry } from '../../../src-shared/cleanup-types.ts';
import { toWireError } from '../../../src-shared/wire.ts';

const s = (v: bigint | number): string => v.toString();
const sn = (v: bigint | null | undefined): string | null => (v === null || v === undefined ? null : v.toString());

function rangeWire(r: OffsetRange): WireRange {
  return { first: s(r.first), last: s(r.last) };
}

function segmentWire(x: SegmentSummary): CleanupSegment {
  return { baseOffset: s(x.baseOffset), file: x.file, bytes: x.bytes, records: x.records, batches: x.batches, firstOffset: sn(x.firstOffset), lastOffset: sn(x.lastOffset), ...(x.deletedBy ? { deletedBy: x.deletedBy } : {}) };
}

/** A report on the wire (see `cleanupReport` in `cleanup-types.ts`). */
export function reportWire(r: CleanerReport): CleanupReport {
  const removed = REMOVAL_REASONS.filter((k) => r.removed[k] !== undefined && r.removed[k]!.records > 0).map((k) => {
    const v = r.removed[k]!;
    return { reason: k, records: v.records, ranges: v.ranges.map(rangeWire), truncated: v.truncated };
  });
  const c = r.cleanable;
  return {
    operation: r.operation,
    dryRun: r.dryRun,
    partitionDir: r.partitionDir,
    topic: r.topic,
    partition: r.partition,
    now: s(Math.trunc(r.now)),
    rules: r.rules ?? null,
    nothingToDo: r.nothingToDo,
    notes: [...r.notes],
    segments: { deleted: r.segments.deleted.map(segmentWire), rewritten: r.segments.rewritten.map(segmentWire), created: r.segments.created.map(segmentWire) },
    before: { ...r.before },
    after: { ...r.after },
    log: {
      bytesBefore: r.log.bytesBefore,
      bytesAfter: r.log.bytesAfter,
      logStartOffsetBefore: s(r.log.logStartOffsetBefore),
      logStartOffsetAfter: s(r.log.logStartOffsetAfter),
      logEndOffset: s(r.log.logEndOffset),
      highWatermark: s(r.log.highWatermark),
    },
    removed,
    removedTotal: removed.reduce((a, x) => a + x.records, 0),
    holes: r.holes.map(rangeWire),
    holesTruncated: r.holesTruncated,
    cleanable: c
      ? {
          firstDirtyOffset: s(c.firstDirtyOffset),
          checkpointReset: c.checkpointReset,
          firstUncleanableOffset: s(c.firstUncleanableOffset),
          uncleanableReason: c.uncleanableReason,
          lastStableOffset: s(c.lastStableOffset),
          cleanBytes: c.cleanBytes,
          cleanableBytes: c.cleanableBytes,
          dirtyRatio: c.dirtyRatio,
          minCleanableDirtyRatio: c.minCleanableDirtyRatio,
          maxCompactionDelayMs: Number.isFinite(c.maxCompactionDelayMs) ? c.maxCompactionDelayMs : 0,
          mustCleanNow: c.mustCleanNow,
          brokerWouldClean: c.brokerWouldClean,
          brokerNeverCompacts: c.brokerNeverCompacts,
        }
      : null,
    passes: r.passes ?? null,
    invalidMessages: r.invalidMessages ?? null,
    cleanerCheckpoint: r.cleanerCheckpoint ? { before: sn(r.cleanerCheckpoint.before), after: sn(r.cleanerCheckpoint.after) } : null,
    checkpointsWritten: [...r.checkpointsWritten],
    trashEntries: [...(r.trashEntries ?? [])],
  };
}

/** A cleaner decision on the wire (offsets and timestamps as decimal strings, absent parts null). */
export function decisionWire(d: CleanerDecision): CleanerDecisionWire {
  return {
    subject: d.subject,
    offset: d.offset.toString(),
    lastOffset: sn(d.lastOffset),
    segment: d.segment.toString(),
    key: d.key,
    value: d.value ?? null,
    timestamp: sn(d.timestamp),
    decision: d.decision,
    reason: d.reason,
    evidence: d.evidence,
    count: d.count ?? null,
  };
}

/** A report's decision list on the wire (null when the plan was not asked to explain). */
export function decisionListWire(d: DecisionList | undefined): DecisionListWire | null {
  if (!d) return null;
  return { rows: d.rows.map(decisionWire), total: d.total, summarized: d.summarized };
}

/** A partition outcome on the wire; `rel` is given by the caller (the engine's is relative to the partition itself). */
export function outcomeWire(o: PartitionOutcome, rel: string): CleanupPartitionOutcome {
  return {
    partitionDir: o.partitionDir,
    rel,
    topic: o.topic,
    partition: o.partition,
    report: o.report ? reportWire(o.report) : null,
    error: o.error ? toWireError(o.error) : null,
    decisions: decisionListWire(o.report?.decisions),
  };
}

/** A run of the history on the wire: removed records counted per reason from its ranges, at most 50 ranges listed. */
export function runRecordWire(r: RunRecord): CleanupRunRecord {
  const per = new Map<RunRecord['removed'][number]['reason'], number>();
  for (const x of r.removed) per.set(x.reason, (per.get(x.reason) ?? 0) + Number(BigInt(x.last) - BigInt(x.first) + 1n));
  return {
    runId: r.runId,
    at: new Date(r.at).toISOString(),
    operation: r.operation,
    rules: r.rules ?? null,
    now: String(Math.trunc(r.now)),
    summary: r.summary,
    logStartOffsetBefore: r.logStartOffsetBefore,
    logStartOffsetAfter: r.logStartOffsetAfter,
    removed: [...per].map(([reason, records]) => ({ reason, records })),
    ranges: r.removed.slice(0, 50).map((x) => ({ reason: x.reason, first: x.first, last: x.last })),
    removedRanges: r.removed.length,
    undone: r.undone ?? false,
  };
}

/** An undo result's entries on the wire. */
export function undoWire(r: UndoResult): { runId: string; entries: UndoneEntry[] } {
  return {
    runId: r.runId,
    entries: r.entries.map((e) => ({ id: e.id, operation: e.operation, partitionDir: e.partitionDir, restored: [...e.restored], removed: [...e.removed], checkpoints: [...e.checkpoints], notes: [...e.notes] })),
  };
}

/** A trash entry with a readable manifest on the wire (null for an unreadable one). */
export function trashEntryWire(e: TrashEntryInfo): TrashEntry | null {
  const m = e.manifest;
  if (!m) return null;
  return {
    id: e.id,
    runId: m.runId,
    operation: m.operation,
    state: m.state,
    partitionDir: m.partitionDir,
    topic: m.topic,
    partition: m.partition,
    createdAt: new Date(m.createdAtMs).toISOString(),
    bytes: e.bytes,
    files: m.removed.length,
    summary: m.summary,
  };
}
