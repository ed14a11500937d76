/**
 * The wire form of a repair plan (`src-shared/repair-types.ts`) from the engine's `RecoveryPlan`
 * (`engine/log/recovery-plan.ts`) and the log-directory checkpoint rewrites
 * (`engine/log/checkpoint-repair.ts`), shared by the cleanup domain (`cleanup.repairPlan`,
 * `cleanup.repair`) and the log domain's whole-folder verify.
 *
 * Each action is marked `broker` (what a broker does at startup: Kafka's `LogLoader`,
 * `LogSegment.recover`) or `choice`: a cut the broker would not make at startup (the plan's reason
 * says "your choice": a segment below the recovery point or after a clean shutdown) and the later
 * segments it deletes and the index rebuild of the segment it cuts, an index rebuild a broker would not do (`LogSegment.sanityCheck` checks only
 * that the `.index` exists), and every checkpoint rewrite (a broker never rewrites an unreadable
 * checkpoint: it takes the directory offline, or for a number Java cannot parse falls back, loses its
 * cleaner thread or does not start: `unreadableCheckpointConsequence` in quick-check.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { describeAction, type RecoveryAction, type RecoveryPlan } from '../../engine/log/recovery-plan.ts';
import type { CheckpointRewrite } from '../../engine/log/checkpoint-repair.ts';
import type { RepairAction, RepairPlanWire } from '../../../src-shared/repair-types.ts';

function sizeOf(path: string): number {
  try {
    return existsSync(path) ? statSync(path).size : 0;
  } catch {
    return 0;
  }
}

/** Whether the plan's truncations include one that is the user's choice (the later segment deletions follow it). */
function choiceCut(plan: RecoveryPlan): boolean {
  return plan.actions.some((a) => a.type === 'truncate-log' && !a.byBroker);
}

/** `broker` or `choice` for one action of `plan` (see the module comment). */
export function actionOrigin(plan: RecoveryPlan, a: RecoveryAction): 'broker' | 'choice' {
  switch (a.type) {
    case 'truncate-log':
      return a.byBroker ? 'broker' : 'choice';
    case 'delete-segment':
      return choiceCut(plan) ? 'choice' : 'broker';
    case 'rebuild-indexes':
      // Rebuilt because of a cut that is the user's choice, or where a broker would not rebuild it (LogSegment.recover
      // rebuilds the indexes only of the segments LogLoader.recoverLog or loadSegmentFiles recovers).
      if (plan.actions.some((t) => t.type === 'truncate-log' && t.baseOffset === a.baseOffset && !t.byBroker)) return 'choice';
      return a.byBroker ? 'broker' : 'choice';
    default:
      return 'broker';
  }
}

function actionWire(plan: RecoveryPlan, a: RecoveryAction): RepairAction {
  const rel = (p: string) => relative(plan.dir, p) || '.';
  const base = { type: a.type, origin: actionOrigin(plan, a), text: describeAction(a, rel) };
  switch (a.type) {
    case 'delete-file':
      return { ...base, files: [{ path: a.file, bytes: a.size }], bytes: a.size, records: 0 };
    case 'rename': {
      const b = sizeOf(a.from);
      return { ...base, files: [{ path: a.from, bytes: b }], bytes: 0, records: 0 };
    }
    case 'delete-segment': {
      const files = a.files.map((f) => ({ path: f, bytes: sizeOf(f) }));
      return { ...base, files, bytes: files.reduce((s, f) => s + f.bytes, 0), records: a.records };
    }
    case 'rebuild-indexes': {
      const files = [a.index?.file, a.timeindex?.file, a.txnindex?.file].filter((f): f is string => f !== undefined).map((f) => ({ path: f, bytes: sizeOf(f) }));
      return { ...base, files, bytes: files.reduce((s, f) => s + f.bytes, 0), records: 0 };
    }
    case 'truncate-log':
      return { ...base, files: [{ path: a.file, bytes: a.fromBytes }], bytes: a.fromBytes - a.toBytes, records: a.droppedRecords };
    case 'create-segment':
      return { ...base, files: [a.files.log, a.files.index, a.files.timeindex].map((f) => ({ path: f, bytes: 0 })), bytes: 0, records: 0 };
    case 'write-leader-epochs': {
      const b = sizeOf(a.file);
      return { ...base, files: [{ path: a.file, bytes: b }], bytes: b, records: 0 };
    }
  }
}

/** The wire plan: the checkpoint rewrites first (they run first), then the plan's actions in order. */
export function repairPlanWire(plan: RecoveryPlan, rewrites: readonly CheckpointRewrite[]): RepairPlanWire {
  const note = (n: RecoveryPlan['unresolved'][number]) => ({ kind: n.kind, file: n.file, position: n.position ?? null, reason: n.reason });
  return {
    dir: plan.dir,
    topic: plan.topic,
    partition: plan.partition,
    cleanShutdown: plan.cleanShutdown,
    recoveryPoint: plan.recoveryPoint === null ? null : String(plan.recoveryPoint),
    truncateAtCorruption: plan.truncateAtCorruption,
    logEndOffsetBefore: String(plan.logEndOffsetBefore),
    logEndOffsetAfter: String(plan.logEndOffsetAfter),
    actions: [
      ...rewrites.map((r): RepairAction => {
        const b = sizeOf(r.file);
        return { type: 'rewrite-checkpoint', origin: 'choice', text: `../${r.name}: ${r.reason}`, files: [{ path: r.file, bytes: b }], bytes: b, records: 0 };
      }),
      ...plan.actions.map((a) => actionWire(plan, a)),
    ],
    unresolved: plan.unresolved.map(note),
    notes: plan.notes.map(note),
    segmentsScanned: plan.segmentsScanned,
  };
}

/** What a run must find again to run what was previewed: each action's type and text, and the damage left. */
export function repairSignature(w: RepairPlanWire): string {
  return JSON.stringify({ a: w.actions.map((a) => [a.type, a.text]), u: w.unresolved.map((n) => n.reason), t: w.truncateAtCorruption });
}
