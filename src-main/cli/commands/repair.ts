/**
 * `klx repair DIR [--dry-run] [--truncate-at-corruption] [--json]`: the startup recovery a broker
 * runs (spec §10.4), on every partition under DIR. Prints the plan of each partition; without
 * `--dry-run` applies it (crash-safely, holding the partition's writer lock `<partition>/klx-writer.lock`) and prints what it did.
 *
 * The files it deletes, replaces or cuts are kept in the trash first (`engine/cleaner/repair-trash.ts`,
 * in `--trash-dir`): `klx undo DIR` puts the bytes back. An unparsable log-directory offset checkpoint
 * is rewritten from the partitions (`engine/log/checkpoint-repair.ts`; the user's choice: a broker
 * takes the directory offline instead when the file is malformed,
 * CheckpointFileWithFailureHandler.read; checkpoint-repair.ts says what it does with a number that does not parse), the old file kept in the trash.
 *
 * Then finishes the trash entries of `klx retention` / `klx compact` runs that a crash interrupted
 * (`engine/cleaner/interrupted-runs.ts`, in `--trash-dir`), so that `klx undo` works after it.
 *
 * Exit code: 0 when every partition ends up repaired (or, with --dry-run, would), 1 when something
 * is left that needs a decision (a corrupt region followed by valid batches without
 * `--truncate-at-corruption`, indexes that cannot be rebuilt, an interrupted run's trash entry the
 * folder cannot decide), 2 usage error.
 */
import { basename, relative, resolve } from 'node:path';
import { int64Json } from '../../engine/format/batch-json.ts';
import { planCheckpointRewrites, REWRITABLE_CHECKPOINTS } from '../../engine/log/checkpoint-repair.ts';
import { allPartitions, openLogDirectory, openPath } from '../../engine/log/log-dir.ts';
import { acquirePartitionLock, describeAction, planRecovery, type RecoveryAction, type RecoveryPlan } from '../../engine/log/recovery.ts';
import { finishInterruptedRuns } from '../../engine/cleaner/interrupted-runs.ts';
import { applyRepairWithTrash, rewriteCheckpointsWithTrash } from '../../engine/cleaner/repair-trash.ts';
import { defaultTrashDir, emptyTrash, newRunId } from '../../engine/cleaner/trash.ts';
import { OutputWriter } from '../output.ts';

export interface RepairCliOptions {
  dryRun?: boolean;
  trashDir?: string;
  truncateAtCorruption?: boolean;
  json?: boolean;
}

/** Runs `klx repair` (its options and help are declared in `../registry.ts`). */
export async function runRepair(dir: string, opts: RepairCliOptions): Promise<void> {
  const out = new OutputWriter(process.stdout);
  const opened = openPath(dir);
  // A partition folder given itself is named by its folder name (`orders-0`), not '.'.
  const rel = (p: string) => relative(opened.root, p) || basename(p);
  /** A folder as `klx undo` takes it, from the folder given to repair (`.` for that folder itself). */
  const undoArg = (p: string) => relative(opened.root, p) || '.';
  const trashDir = opts.trashDir ?? defaultTrashDir();
  const runId = newRunId();
  const summary = { partitions: 0, skipped: 0, actionsPlanned: 0, actionsApplied: 0, unresolved: 0, dryRun: opts.dryRun ?? false };
  // A repair a crash interrupted: keep in its trash entry what it did, before planning again (repair-trash.ts).
  for (const f of finishInterruptedRuns(opened.root, trashDir, { operations: ['repair'], dryRun: opts.dryRun ?? false })) {
    if (f.outcome === 'left' && !opts.dryRun) summary.unresolved++;
    if (opts.json) await out.line(JSON.stringify({ type: 'interrupted-run', partition: rel(f.partitionDir), entry: f.id, operation: f.operation, outcome: f.outcome, reason: f.reason }));
    else await out.line(`${rel(f.partitionDir)}: interrupted repair (trash entry ${f.id}): ${opts.dryRun ? '(dry run) ' : ''}${f.reason}`);
  }
  for (const logDir of opened.logDirs) {
    // Log-directory checkpoints a broker cannot parse (CheckpointFile.read): rewritten (your choice), the old file to the trash.
    const rewritable = logDir.checkpoints.problems.some((p) => (REWRITABLE_CHECKPOINTS as readonly string[]).includes(basename(p.file)));
    const rewrites = rewritable ? planCheckpointRewrites(logDir.partitions.length === 1 && opened.root !== logDir.path ? openLogDirectory(logDir.path) : logDir) : [];
    for (const r of rewrites) {
      summary.actionsPlanned++;
      if (opts.json) await out.line(JSON.stringify({ type: 'checkpoint-rewrite', file: rel(r.file), position: r.position ?? null, entries: r.entries.map((e) => ({ topic: e.topic, partition: e.partition, offset: int64Json(e.offset) })), reason: r.reason }));
      else await out.line(`${rel(r.file)}: ${r.reason}`);
    }
    if (!opts.dryRun && rewrites.length > 0) {
      const id = rewriteCheckpointsWithTrash(logDir.path, rewrites, { trashDir, runId });
      summary.actionsApplied += rewrites.length;
      if (opts.json) await out.line(JSON.stringify({ type: 'applied', partition: rel(logDir.path), done: rewrites.map((r) => ({ type: 'rewrite-checkpoint', file: rel(r.file) })), trashEntry: id }));
      else await out.line(`  rewrote ${rewrites.length} checkpoint file${rewrites.length === 1 ? '' : 's'} (the old ones are in the trash: klx undo ${undoArg(logDir.path)} restores them)`);
    }
    for (const p of logDir.checkpoints.problems) {
      if (basename(p.file) !== 'meta.properties' || p.code === 'symlink-outside') continue;
      summary.unresolved++;
      const reason = `${p.reason}: klx does not rewrite meta.properties (its cluster.id and node.id cannot be inferred from the data); copy it from another log directory of the same broker`;
      if (opts.json) await out.line(JSON.stringify({ type: 'unresolved', file: rel(p.file), position: p.position ?? null, reason }));
      else await out.line(`${rel(p.file)}: ! left in place: ${reason}`);
    }
  }
  for (const { log } of allPartitions(opened)) {
    summary.partitions++;
    if (log.kind === 'delete') {
      summary.skipped++;
      const msg = 'a -delete folder: a broker schedules it for deletion without recovery (LogManager.loadLog, LogLoader skips recovery of -delete folders); left alone';
      await out.line(opts.json ? JSON.stringify({ type: 'skipped', partition: rel(log.dir), reason: msg }) : `${rel(log.dir)}: skipped (${msg})`);
      continue;
    }
    const lock = opts.dryRun ? null : acquirePartitionLock(log.dir);
    try {
      // Plan under the lock, from a fresh look at the folder.
      const plan = await planRecovery(log.dir, { truncateAtCorruption: opts.truncateAtCorruption });
      summary.actionsPlanned += plan.actions.length;
      summary.unresolved += plan.unresolved.length;
      await printPlan(out, plan, rel, opts);
      let entry: string | null = null;
      if (!opts.dryRun && plan.actions.length > 0) {
        // The replaced files go to the trash first (repair-trash.ts): `klx undo` puts them back.
        const result = await applyRepairWithTrash(plan, { trashDir, runId, logDir: resolve(log.dir, '..') });
        entry = result.trashEntry;
        summary.actionsApplied += result.done.filter((d) => !d.skipped).length;
        if (opts.json) await out.line(JSON.stringify({ type: 'applied', partition: rel(plan.dir), done: result.done.map((d) => ({ type: d.type, skipped: d.skipped })), trashEntry: result.trashEntry }));
        else await out.line(`  applied ${result.done.length} action${result.done.length === 1 ? '' : 's'}${result.trashEntry ? ` (the replaced bytes are in the trash: klx undo ${undoArg(plan.dir)} restores them)` : ''}`);
      }
      // Then the trash entries of cleaner runs a crash interrupted (interrupted-runs.ts): the folder is recovered now.
      const finished = finishInterruptedRuns(log.dir, trashDir, { lock: false, dryRun: opts.dryRun ?? false, operations: ['retention', 'compaction'] });
      for (const f of finished) {
        if (f.outcome === 'left' && !opts.dryRun) summary.unresolved++;
        if (opts.json) await out.line(JSON.stringify({ type: 'interrupted-run', partition: rel(f.partitionDir), entry: f.id, operation: f.operation, outcome: f.outcome, reason: f.reason }));
        else await out.line(`  interrupted ${f.operation} run (trash entry ${f.id}): ${opts.dryRun ? '(dry run) ' : ''}${f.reason}`);
      }
      // The repair finished (or dropped) an interrupted cleaner run: its steps belong to that run, whose
      // undo puts the folder back before it; a repair entry on top would make undo restore the crashed state.
      if (entry !== null && finished.some((f) => f.outcome !== 'left')) {
        emptyTrash(trashDir, [entry]);
        if (!opts.json) await out.line(`  (the repair completed an interrupted cleaner run: klx undo ${undoArg(log.dir)} reverses that run; the repair keeps no entry of its own)`);
      }
    } finally {
      lock?.release();
    }
  }
  if (opts.json) await out.line(JSON.stringify({ type: 'summary', ...summary }));
  else {
    await out.line(
      `repair${summary.dryRun ? ' (dry run: nothing changed)' : ''}: ${summary.partitions} partition(s), ${summary.actionsPlanned} action(s) planned, ` +
        `${summary.actionsApplied} applied, ${summary.unresolved} problem(s) left${summary.unresolved > 0 ? ' (see "left in place" above)' : ''}`,
    );
  }
  await out.end();
  process.exitCode = summary.unresolved > 0 ? 1 : 0;
}

async function printPlan(out: OutputWriter, plan: RecoveryPlan, rel: (p: string) => string, opts: RepairCliOptions): Promise<void> {
  if (opts.json) {
    await out.line(
      JSON.stringify({
        type: 'plan',
        partition: rel(plan.dir),
        topic: plan.topic,
        partitionNumber: plan.partition,
        cleanShutdown: plan.cleanShutdown,
        recoveryPoint: plan.recoveryPoint === null ? null : int64Json(plan.recoveryPoint),
        truncateAtCorruption: plan.truncateAtCorruption,
        logEndOffsetBefore: int64Json(plan.logEndOffsetBefore),
        logEndOffsetAfter: int64Json(plan.logEndOffsetAfter),
        actions: plan.actions.map((a) => actionJson(a, rel)),
        unresolved: plan.unresolved.map((n) => ({ ...n, file: rel(n.file) })),
        notes: plan.notes.map((n) => ({ ...n, file: rel(n.file) })),
      }),
    );
    return;
  }
  const head = `${rel(plan.dir)}: ${plan.actions.length === 0 ? 'nothing to do' : `${plan.actions.length} action${plan.actions.length === 1 ? '' : 's'}`}` +
    ` (log end offset ${plan.logEndOffsetBefore}${plan.logEndOffsetAfter !== plan.logEndOffsetBefore ? ` -> ${plan.logEndOffsetAfter}` : ''}; ` +
    `${plan.cleanShutdown ? 'clean shutdown' : `no clean shutdown, recovery point ${plan.recoveryPoint ?? 'none (0)'}`})`;
  await out.line(head);
  for (const [i, a] of plan.actions.entries()) await out.line(`  ${i + 1}. ${describeAction(a, rel)}`);
  for (const n of plan.unresolved) await out.line(`  ! left in place: ${rel(n.file)}${n.position !== undefined ? `@${n.position}` : ''}: ${n.reason}`);
  for (const n of plan.notes) await out.line(`  note: ${rel(n.file)}${n.position !== undefined ? `@${n.position}` : ''}: ${n.reason}`);
}

/** JSON of an action: paths relative, int64 JSON-safe, index entries summarised by count. */
function actionJson(a: RecoveryAction, rel: (p: string) => string): Record<string, unknown> {
  switch (a.type) {
    case 'delete-file':
      return { ...a, file: rel(a.file) };
    case 'rename':
      return { ...a, from: rel(a.from), to: rel(a.to) };
    case 'delete-segment':
      return { ...a, baseOffset: int64Json(a.baseOffset), files: a.files.map(rel) };
    case 'rebuild-indexes':
      return {
        type: a.type,
        baseOffset: int64Json(a.baseOffset),
        log: rel(a.log),
        logSize: a.logSize,
        ...(a.index ? { index: { file: rel(a.index.file), entries: a.index.entries.length } } : {}),
        ...(a.timeindex ? { timeindex: { file: rel(a.timeindex.file), entries: a.timeindex.entries.length } } : {}),
        ...(a.txnindex ? { txnindex: { file: rel(a.txnindex.file), entries: a.txnindex.entries.length } } : {}),
        reason: a.reason,
      };
    case 'truncate-log':
      return { ...a, file: rel(a.file), baseOffset: int64Json(a.baseOffset), nextOffset: int64Json(a.nextOffset) };
    case 'create-segment':
      return { ...a, baseOffset: int64Json(a.baseOffset), files: { log: rel(a.files.log), index: rel(a.files.index), timeindex: rel(a.files.timeindex) } };
    case 'write-leader-epochs':
      return {
        ...a,
        file: rel(a.file),
        entries: a.entries.map((e) => ({ epoch: e.epoch, startOffset: int64Json(e.startOffset) })),
        removed: a.removed.map((e) => ({ epoch: e.epoch, startOffset: int64Json(e.startOffset) })),
      };
  }
}
