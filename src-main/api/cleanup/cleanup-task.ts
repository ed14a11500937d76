/**
 * The work of the cleaner worker (`cleaner-worker.ts`), as one synchronous function so it can also
 * run in-process in tests: a retention or compaction **plan** (engine `planRetention` /
 * `planCompaction`, touching nothing) with the fingerprint of the files it looked at, a **run**
 * (engine `runRetention` / `runCompaction` under each partition's writer lock, replaced files in the
 * trash) after checking the files still match the preview's fingerprint, or an **undo** of the
 * latest run (engine `undo`).
 *
 * Partitions are handled one by one, as the engine's `retention()` / `compact()` do: for a single
 * partition folder its error is thrown as is (a `KlxError` keeps code, file, byte position and
 * details); over a log directory a failing partition is reported in its outcome and the others go
 * on (B21). Cancellation reads `env.signal.aborted` only (the engine's cleaner reads nothing else),
 * so a flag shared with another thread works as a signal.
 */
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import { keepHistory, newRunId, planCompaction, planRetention, runCompaction, runRetention, undo, type CleanerReport, type PartitionOutcome } from '../../engine/cleaner/cleaner.ts';
import type { RunContext } from '../../engine/cleaner/cleaner-plan.ts';
import { keyHashAlgorithm, type KeyHashName } from '../../engine/cleaner/key-hash.ts';
import { MAP_BUILD_WORKER } from '../../engine/cleaner/map-builder.ts';
import { startEntryWorker } from '../core/entry-worker.ts';
import { allPartitions, openPath } from '../../engine/log/log-dir.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import type { TopicConfig } from '../../engine/log/topic-config.ts';
import type { CleanupOperation, CleanupPartitionOutcome, UndoneEntry } from '../../../src-shared/cleanup-types.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { fingerprintChanges, fingerprintOf, type Fingerprint } from './cleanup-fingerprint.ts';
import { outcomeWire, undoWire } from '../core/cleanup-wire.ts';
import type { RepairPlanTaskResult, RepairRunTaskResult, RepairTask } from './repair-task.ts';

/** Engine options of a plan or run, already validated (config parsed by the engine's parser). */
export interface EngineCleanupOptions {
  /** The clock, ms since the epoch. */
  now: number;
  config: Partial<TopicConfig>;
  rules?: 'kafka' | 'classic';
  likeBroker?: boolean;
  deleteBeforeOffset?: bigint;
  dedupeBufferSize?: number;
  /** The offset map's key digest (default murmur3; md5 is Kafka's). */
  keyHash?: KeyHashName;
  /** List the decisions (engine `explain`), this many one by one per partition before summarising; absent: no decisions. */
  explainLimit?: number;
}

/** A task for the cleaner worker (structured-cloneable: bigints allowed). */
export type CleanerTask =
  | { kind: 'plan'; path: string; operation: CleanupOperation; options: EngineCleanupOptions }
  | { kind: 'run'; path: string; operation: CleanupOperation; options: EngineCleanupOptions; trashDir: string; expected: Fingerprint }
  | { kind: 'undo'; path: string; trashDir: string }
  | RepairTask;

/** What a plan gives back. */
export interface PlanTaskResult {
  kind: 'plan';
  partitions: CleanupPartitionOutcome[];
  /** The files the plan looked at (taken before planning, checked unchanged after). */
  fingerprint: Fingerprint;
}

/** What a run gives back. */
export interface RunTaskResult {
  kind: 'run';
  runId: string;
  /** Measured reports (dryRun false). */
  partitions: CleanupPartitionOutcome[];
  /** Partition folders whose files changed, or may have (a partition that failed). */
  changedDirs: string[];
  trashEntries: string[];
}

/** What an undo gives back. */
export interface UndoTaskResult {
  kind: 'undo';
  runId: string;
  entries: UndoneEntry[];
}

export type CleanerTaskResult = PlanTaskResult | RunTaskResult | UndoTaskResult | RepairPlanTaskResult | RepairRunTaskResult;

/** Cancel flag and progress sink of a task. */
export interface TaskEnv {
  /** Only `aborted` is read (the engine's cleaner reads nothing else of an AbortSignal). */
  signal?: { readonly aborted: boolean };
  onProgress?: (p: JobProgress) => void;
}

function nameOf(log: PartitionLog): string {
  return `${log.topic}-${log.partition}`;
}

function engineOptions(o: EngineCleanupOptions, op: CleanupOperation): Record<string, unknown> {
  const base: Record<string, unknown> = { now: o.now, config: o.config };
  if (o.explainLimit !== undefined) base.explain = { limit: o.explainLimit };
  if (op === 'retention') {
    if (o.deleteBeforeOffset !== undefined) base.deleteBeforeOffset = o.deleteBeforeOffset;
  } else {
    base.rules = o.rules ?? 'kafka';
    base.likeBroker = o.likeBroker ?? false;
    if (o.dedupeBufferSize !== undefined) base.dedupeBufferSize = o.dedupeBufferSize;
    if (o.keyHash !== undefined) base.keyHash = keyHashAlgorithm(o.keyHash);
    // The offset map of a large dirty section is built on two threads (engine `map-builder.ts`).
    base.mapWorker = () => startEntryWorker(MAP_BUILD_WORKER.entry, MAP_BUILD_WORKER.near);
  }
  return base;
}

/** The `invalid-argument` error of a preview whose files changed (details.reason `plan-stale`). */
export function staleError(path: string, changes: string[], when: 'since' | 'while'): KlxError {
  const what = when === 'since' ? 'the files changed since the preview' : 'the files changed while the preview ran';
  return new KlxError('invalid-argument', `${what} (${changes.join('; ')}): preview again, so that what runs is what you saw`, {
    file: path,
    details: { reason: 'plan-stale', changes },
  });
}

function cancelled(path: string, what: string, changedDirs: string[]): KlxError {
  const done = changedDirs.length > 0 ? `; ${changedDirs.length} partition(s) were already done and stay changed (Undo restores them)` : '';
  return new KlxError('cancelled', `${what} cancelled: nothing was changed${done}`, { file: path, details: { changedDirs } });
}

function partitionsUnder(path: string): { rel: string; log: PartitionLog }[] {
  return allPartitions(openPath(path));
}

function plan(task: Extract<CleanerTask, { kind: 'plan' }>, env: TaskEnv): PlanTaskResult {
  const parts = partitionsUnder(task.path);
  const logs = parts.map((p) => p.log);
  const before = fingerprintOf(logs);
  const total = logs.reduce((a, l) => a + l.logSize, 0);
  const single = parts.length === 1 && parts[0]!.log.dir === task.path;
  const opts = engineOptions(task.options, task.operation);
  const out: CleanupPartitionOutcome[] = [];
  let done = 0;
  for (const { rel, log } of parts) {
    if (env.signal?.aborted) throw cancelled(task.path, 'preview', []);
    env.onProgress?.({ phase: `planning ${task.operation} of ${nameOf(log)}${parts.length > 1 ? ` (${out.length + 1} of ${parts.length})` : ''}`, done, total, bytes: done });
    let report: CleanerReport | undefined;
    let error: ReturnType<typeof toErrorInfo> | undefined;
    try {
      report = task.operation === 'retention' ? planRetention(log.dir, opts) : planCompaction(log.dir, opts);
    } catch (err) {
      if (single) throw err;
      error = toErrorInfo(err);
    }
    const o: PartitionOutcome = { partitionDir: log.dir, rel, topic: log.topic, partition: log.partition, ...(report ? { report } : {}), ...(error ? { error } : {}) };
    out.push(outcomeWire(o, rel));
    done += log.logSize;
  }
  env.onProgress?.({ phase: `planning ${task.operation}`, done: total, total, bytes: total });
  const after = fingerprintOf(logs);
  const changes = fingerprintChanges(before, after);
  if (changes.length > 0) throw staleError(task.path, changes, 'while');
  return { kind: 'plan', partitions: out, fingerprint: before };
}

function run(task: Extract<CleanerTask, { kind: 'run' }>, env: TaskEnv): RunTaskResult {
  const parts = partitionsUnder(task.path);
  const changes = fingerprintChanges(task.expected, fingerprintOf(parts.map((p) => p.log)));
  if (changes.length > 0) throw staleError(task.path, changes, 'since');
  const single = parts.length === 1 && parts[0]!.log.dir === task.path;
  const runId = newRunId();
  const opts = engineOptions(task.options, task.operation);
  const out: CleanupPartitionOutcome[] = [];
  const changedDirs: string[] = [];
  const trashEntries: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const { rel, log } = parts[i]!;
    if (env.signal?.aborted) throw cancelled(task.path, task.operation, changedDirs);
    const prefix = `${nameOf(log)}${parts.length > 1 ? ` (${i + 1} of ${parts.length})` : ''}`;
    env.onProgress?.({ phase: `${prefix}: ${task.operation}`, done: 0, total: null, bytes: 0 });
    const ctx: RunContext = {
      runId,
      trashDir: task.trashDir,
      ...(env.signal ? { signal: env.signal as AbortSignal } : {}),
      onProgress: (p) => env.onProgress?.({ phase: `${prefix}: ${p.phase}`, done: Math.max(0, Math.round(p.done)), total: p.total === null ? null : Math.max(0, Math.round(p.total)), bytes: Math.max(0, Math.round(p.bytes)) }),
    };
    let report: CleanerReport | undefined;
    let error: ReturnType<typeof toErrorInfo> | undefined;
    try {
      report = task.operation === 'retention' ? runRetention(log.dir, opts, ctx) : runCompaction(log.dir, opts, ctx);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'cancelled') throw cancelled(task.path, task.operation, changedDirs);
      // A failed partition may have changed (an io-error past the commit point says so): reload it.
      changedDirs.push(log.dir);
      if (single) {
        if (err instanceof KlxError) throw new KlxError(err.code, err.reason, { file: err.file, position: err.position, details: { ...err.details, changedDirs }, cause: err });
        throw err;
      }
      error = toErrorInfo(err);
    }
    if (report) {
      // The folder's run history (kept with the trash): what the timeline and the hole causes read.
      if (!report.nothingToDo) keepHistory(task.trashDir, runId, report);
      if (!report.nothingToDo) changedDirs.push(log.dir);
      trashEntries.push(...(report.trashEntries ?? []));
    }
    const o: PartitionOutcome = { partitionDir: log.dir, rel, topic: log.topic, partition: log.partition, ...(report ? { report } : {}), ...(error ? { error } : {}) };
    out.push(outcomeWire(o, rel));
  }
  return { kind: 'run', runId, partitions: out, changedDirs, trashEntries };
}

/**
 * Runs a cleaner task synchronously (see the module comment).
 * @throws KlxError from the engine (`locked`, `corrupt-*` with file and position, `invalid-config`,
 *   `offset-out-of-range`, `not-found`...), `cancelled` (details.changedDirs: partitions already
 *   done), `invalid-argument` with details.reason `plan-stale` when the files changed.
 */
export function runCleanerTask(task: CleanerTask, env: TaskEnv = {}): CleanerTaskResult {
  switch (task.kind) {
    case 'plan':
      return plan(task, env);
    case 'run':
      return run(task, env);
    case 'undo':
      return { kind: 'undo', ...undoWire(undo(task.path, { trashDir: task.trashDir })) };
    case 'repairPlan':
    case 'repairRun':
      throw new KlxError('internal', 'a repair task is asynchronous: run it with runRepairTask (repair-task.ts)');
  }
}
