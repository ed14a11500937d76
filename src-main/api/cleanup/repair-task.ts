/**
 * The repair work of the cleaner worker (`cleaner-worker.ts`), for `cleanup.repairPlan` and
 * `cleanup.repair`: the startup recovery `klx repair` runs (engine `planRecovery` / `applyRecovery`,
 * Kafka's `LogLoader`), on one partition folder, with the replaced files kept in the trash
 * (`engine/cleaner/repair-trash.ts`) so that `cleanup.undo` puts them back.
 *
 * - **plan**: reads every `.log` (progress in bytes; cancel polls the shared flag), touches nothing;
 *   with `withCheckpoints`, also the rewrites of the partition's log directory's unparsable offset
 *   checkpoints (`engine/log/checkpoint-repair.ts`). Gives the wire plan and its signature.
 * - **run**: under the partition's writer lock, first finishes a repair a crash interrupted, then
 *   plans again and refuses (`invalid-argument`, `details.reason: 'plan-stale'`, nothing touched) when
 *   the plan is not the previewed one; then rewrites the checkpoints and applies the plan, each with
 *   its trash entry, one run id for both.
 */
import { basename, dirname } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { finishInterruptedRuns } from '../../engine/cleaner/interrupted-runs.ts';
import { applyRepairWithTrash, rewriteCheckpointsWithTrash } from '../../engine/cleaner/repair-trash.ts';
import { newRunId } from '../../engine/cleaner/trash.ts';
import { planCheckpointRewrites, REWRITABLE_CHECKPOINTS, type CheckpointRewrite } from '../../engine/log/checkpoint-repair.ts';
import { openLogDirectory } from '../../engine/log/log-dir.ts';
import { readLogDirCheckpoints } from '../../engine/log/partition-log.ts';
import { acquirePartitionLock, planRecovery, type RecoveryPlan } from '../../engine/log/recovery.ts';
import type { RepairPlanWire } from '../../../src-shared/repair-types.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { repairPlanWire, repairSignature } from '../core/repair-wire.ts';

/** A repair task (structured-cloneable). */
export type RepairTask =
  | { kind: 'repairPlan'; path: string; truncateAtCorruption: boolean; withCheckpoints: boolean }
  | { kind: 'repairRun'; path: string; truncateAtCorruption: boolean; withCheckpoints: boolean; trashDir: string; expected: string };

/** What a repair plan gives back. */
export interface RepairPlanTaskResult {
  kind: 'repairPlan';
  plan: RepairPlanWire;
  signature: string;
}

/** What a repair run gives back. */
export interface RepairRunTaskResult {
  kind: 'repairRun';
  runId: string;
  plan: RepairPlanWire;
  /** One line per action done (checkpoint rewrites first). */
  done: string[];
  trashEntries: string[];
}

/** Cancel flag and progress sink (as the cleaner tasks'). */
export interface RepairTaskEnv {
  signal?: { readonly aborted: boolean };
  onProgress?: (p: JobProgress) => void;
}

/** An AbortSignal-like object the engine's `planRecovery` / `applyRecovery` read (`aborted` only). */
function signalOf(env: RepairTaskEnv): AbortSignal | undefined {
  return env.signal as AbortSignal | undefined;
}

function rewritesOf(dir: string, withCheckpoints: boolean): CheckpointRewrite[] {
  if (!withCheckpoints) return [];
  const logDir = dirname(dir);
  const problems = readLogDirCheckpoints(logDir).problems;
  if (!problems.some((p) => (REWRITABLE_CHECKPOINTS as readonly string[]).includes(basename(p.file)))) return [];
  return planCheckpointRewrites(openLogDirectory(logDir));
}

async function planOf(task: RepairTask, env: RepairTaskEnv): Promise<{ plan: RecoveryPlan; rewrites: CheckpointRewrite[]; wire: RepairPlanWire }> {
  const signal = signalOf(env);
  const plan = await planRecovery(task.path, {
    truncateAtCorruption: task.truncateAtCorruption,
    ...(signal ? { signal } : {}),
    onProgress: (p) => env.onProgress?.({ phase: `reading ${basename(p.file)}`, done: p.bytesDone, total: p.bytesTotal, bytes: p.bytesDone }),
  });
  const rewrites = rewritesOf(task.path, task.withCheckpoints);
  return { plan, rewrites, wire: repairPlanWire(plan, rewrites) };
}

/**
 * Runs a repair task (see the module comment).
 * @throws KlxError from the engine (`locked`, `not-found`, `io-error`...), `cancelled`,
 *   `invalid-argument` with `details.reason: 'plan-stale'` when the folder changed since the preview.
 */
export async function runRepairTask(task: RepairTask, env: RepairTaskEnv = {}): Promise<RepairPlanTaskResult | RepairRunTaskResult> {
  if (task.kind === 'repairPlan') {
    const { wire } = await planOf(task, env);
    return { kind: 'repairPlan', plan: wire, signature: repairSignature(wire) };
  }
  const lock = acquirePartitionLock(task.path, 'klx app: repair');
  try {
    finishInterruptedRuns(task.path, task.trashDir, { operations: ['repair'], lock: false });
    const { plan, rewrites, wire } = await planOf(task, env);
    if (repairSignature(wire) !== task.expected) {
      throw new KlxError('invalid-argument', 'the folder changed since the preview, so the repair plan differs: preview again, so that what runs is what you saw', { file: task.path, details: { reason: 'plan-stale', changes: ['the repair plan differs from the preview'] } });
    }
    const runId = newRunId();
    const trashEntries: string[] = [];
    const done: string[] = [];
    env.onProgress?.({ phase: `repairing: ${wire.actions.length} action(s)`, done: 0, total: wire.actions.length, bytes: 0 });
    if (rewrites.length > 0) {
      const id = rewriteCheckpointsWithTrash(dirname(task.path), rewrites, { trashDir: task.trashDir, runId });
      if (id) trashEntries.push(id);
      done.push(...rewrites.map((r) => `rewrote ${r.name}`));
    }
    const signal = signalOf(env);
    const res = await applyRepairWithTrash(plan, { trashDir: task.trashDir, runId, logDir: dirname(task.path), ...(signal ? { signal } : {}) });
    if (res.trashEntry) trashEntries.push(res.trashEntry);
    done.push(...res.done.map((d) => `${d.skipped ? '(already done) ' : ''}${d.description}`));
    env.onProgress?.({ phase: 'repaired', done: wire.actions.length, total: wire.actions.length, bytes: 0 });
    return { kind: 'repairRun', runId, plan: wire, done, trashEntries };
  } finally {
    lock.release();
  }
}
