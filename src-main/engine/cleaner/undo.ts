/**
 * Undo of cleaner runs: puts back, byte for byte, the files a run replaced, from its trash entries
 * (see `trash.ts`), newest entry first, and removes the files the run created.
 *
 * Before touching anything, undo checks that the partition is still exactly what the run left:
 * every file the run created exists with the size and CRC-32C recorded, no file the run removed
 * has reappeared, and the checkpoint entries the run wrote still hold its values. Otherwise it
 * refuses (a broker or another tool wrote to the partition since; undoing would lose that data).
 *
 * The steps are crash-safe in the same way as the runs:
 * - retention undo: the deleted segments come back first (below the log start offset, so not yet
 *   readable), then `leader-epoch-checkpoint`, then the log start offset entry (the commit point),
 *   then the empty segment the run rolled is removed;
 * - compaction undo: the old segments come back as `.cleaned` files and replace the run's segments
 *   through the `.cleaned → .swap → final` protocol of `segment-swap.ts`, then the cleaner
 *   checkpoint entry is restored;
 * - repair undo (`repair-trash.ts`): the cut `.log` files grow back with their kept tails, the files
 *   the repair created go, the kept files are moved back.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { KlxError } from '../errors.ts';
import { offsetFromFileName, parseSegmentFileName } from '../files/file-names.ts';
import { crc32c } from '../format/crc.ts';
import { acquireLock, CHECKPOINT_LOCK_FILE, WRITER_LOCK_FILE } from '../log/log-lock.ts';
import { readCheckpointEntry, restoreCheckpointEntry } from './checkpoint-entries.ts';
import { FileSteps, SimulatedCrash, ioErrorOf, type CleanerFaultHook } from './file-steps.ts';
import { finishInterruptedRuns } from './interrupted-runs.ts';
import { deleteSegmentFiles, replaceSegments, rollbackSwap } from './segment-swap.ts';
import { repairConflicts, undoRepairEntry } from './repair-trash.ts';
import { listTrash, TRASH_FILES, type TrashEntryInfo, type TrashManifest } from './trash.ts';

/** What one undone entry did. */
export interface UndoneEntry {
  id: string;
  operation: TrashManifest['operation'];
  partitionDir: string;
  /** Files put back into the partition folder. */
  restored: string[];
  /** Files of the run removed from the partition folder. */
  removed: string[];
  /** Checkpoint entries put back (`file: after → before`). */
  checkpoints: string[];
  notes: string[];
}

/** The result of {@link undoLastRun}. */
export interface UndoResult {
  runId: string;
  entries: UndoneEntry[];
}

/** Options of {@link undoLastRun}. */
export interface UndoOptions {
  trashDir: string;
  fault?: CleanerFaultHook;
}

function crcOfFile(path: string): number {
  return crc32c(readFileSync(path));
}

function isUnder(path: string, root: string): boolean {
  const p = resolve(path);
  const r = resolve(root);
  return p === r || p.startsWith(r.endsWith(sep) ? r : r + sep);
}

/**
 * The committed trash entries of the latest run that touched `path` (a partition folder, or a
 * log directory / folder holding partitions), newest first.
 */
export function lastRunEntries(path: string, trashDir: string): TrashEntryInfo[] {
  const mine = listTrash(trashDir).filter((e) => e.manifest && isUnder(e.manifest.partitionDir, path));
  if (mine.length === 0) return [];
  const last = mine.reduce((a, b) => (b.manifest!.createdAtMs > a.manifest!.createdAtMs || (b.manifest!.createdAtMs === a.manifest!.createdAtMs && b.id > a.id) ? b : a));
  const runId = last.manifest!.runId;
  return mine.filter((e) => e.manifest!.runId === runId).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** A repair entry of a rewritten log-directory checkpoint (its "partition folder" is the log directory). */
function isLogDirEntry(m: TrashManifest): boolean {
  return m.operation === 'repair' && m.partitionDir === m.logDir;
}

/** Why the partition no longer matches what the run left, or null when it does. */
function conflicts(m: TrashManifest): string | null {
  const dir = m.partitionDir;
  if (!existsSync(dir)) return `the partition folder ${dir} no longer exists`;
  const createdNames = new Set(m.created.map((f) => f.name));
  for (const f of m.created) {
    const p = join(dir, f.name);
    if (!existsSync(p)) return `${f.name}, written by the run, is gone`;
    const st = statSync(p);
    if (st.size !== f.size) return `${f.name}, written by the run, changed size (${f.size} → ${st.size} bytes)`;
    if (f.crc32c !== undefined && crcOfFile(p) !== f.crc32c) return `${f.name}, written by the run, changed content`;
  }
  for (const f of m.removed) {
    if (!createdNames.has(f.name) && existsSync(join(dir, f.name))) return `${f.name}, removed by the run, exists again`;
  }
  for (const c of m.checkpoints) {
    const now = readCheckpointEntry(m.logDir, c.file, c.topic, c.partition);
    const nowText = now === null ? null : now.toString();
    if (nowText !== c.after) return `${c.file} holds ${nowText ?? 'no entry'} for ${c.topic}-${c.partition}, not ${c.after ?? 'no entry'} as the run left it`;
  }
  for (const name of readdirSync(dir)) {
    const p = parseSegmentFileName(name);
    if (p?.transient === 'swap' || p?.transient === 'cleaned') return `the folder holds ${name}, left by an interrupted operation: recover it first`;
  }
  return null;
}

/** Puts a file of the trash entry back into the partition folder under `as`, keeping its mtime. */
function restoreFile(steps: FileSteps, entryDir: string, f: { name: string; mtimeMs: number }, as: string): void {
  const from = join(entryDir, TRASH_FILES, f.name);
  if (!existsSync(from)) throw new KlxError('not-found', `the trash entry lacks ${f.name}`, { file: from });
  steps.move('restore-file', from, as);
  const t = new Date(f.mtimeMs);
  utimesSync(as, t, t);
}

function undoEntry(info: TrashEntryInfo, steps: FileSteps): UndoneEntry {
  const m = info.manifest!;
  const dir = m.partitionDir;
  const out: UndoneEntry = { id: m.id, operation: m.operation, partitionDir: dir, restored: [], removed: [], checkpoints: [], notes: [] };
  if (m.state !== 'committed') {
    throw new KlxError('invalid-argument', `trash entry ${m.id} belongs to a run that did not finish (state ${m.state}): recover the partition folder first; the entry keeps the files it replaced`, { file: info.path, details: { needsRepair: true } });
  }
  const conflict = m.operation === 'repair' ? repairConflicts(m, info.path) : conflicts(m);
  if (conflict) throw new KlxError('invalid-argument', `cannot undo ${m.operation} of ${m.topic}-${m.partition} (trash entry ${m.id}): ${conflict}`, { file: dir });

  if (m.operation === 'repair') {
    const r = undoRepairEntry(info, steps);
    out.restored.push(...r.restored);
    out.removed.push(...r.removed);
  } else if (m.operation === 'retention') {
    for (const f of m.removed) {
      restoreFile(steps, info.path, f, join(dir, f.name));
      out.restored.push(f.name);
    }
    steps.fsyncDir(dir);
    for (const mf of m.metadataFiles) {
      const p = join(dir, mf.name);
      const saved = join(info.path, TRASH_FILES, mf.name);
      if (existsSync(p) && statSync(p).size === mf.afterSize && crcOfFile(p) === mf.afterCrc32c && existsSync(saved)) {
        steps.writeCheckpoint(p, readFileSync(saved));
        out.restored.push(mf.name);
      } else out.notes.push(`${mf.name} changed since the run: left as it is`);
    }
    for (const c of [...m.checkpoints].reverse()) {
      restoreCheckpointEntry(m.logDir, c, steps);
      out.checkpoints.push(`${c.file}: ${c.after ?? '(none)'} → ${c.before ?? '(none)'}`);
    }
    const rolled = [...new Set(m.created.map((f) => offsetFromFileName(f.name)))];
    for (const b of rolled) deleteSegmentFiles(dir, b, steps);
    out.removed.push(...m.created.map((f) => f.name));
    steps.fsyncDir(dir);
  } else {
    // Compaction: the old segments replace the run's segments through the swap protocol.
    const oldBases = [...new Set(m.removed.filter((f) => f.name.endsWith('.log')).map((f) => offsetFromFileName(f.name)))];
    const newBases = [...new Set(m.created.filter((f) => f.name.endsWith('.log')).map((f) => offsetFromFileName(f.name)))];
    let committed = false;
    try {
      for (const f of m.removed) restoreFile(steps, info.path, f, join(dir, f.name + '.cleaned'));
      for (const b of oldBases) for (const s of ['.log', '.index', '.timeindex', '.txnindex']) {
        const p = join(dir, `${b.toString().padStart(20, '0')}${s}.cleaned`);
        if (existsSync(p)) steps.fsyncFile(p);
      }
      replaceSegments(dir, oldBases, newBases, steps, () => {
        committed = true;
      });
    } catch (err) {
      if (err instanceof SimulatedCrash) throw err;
      if (!committed) {
        // Put the old files back into the trash entry and leave the partition as the run left it.
        for (const f of m.removed) {
          for (const sfx of ['.cleaned', '.swap']) {
            const p = join(dir, f.name + sfx);
            if (existsSync(p)) {
              try {
                steps.move('restore-file', p, join(info.path, TRASH_FILES, f.name));
              } catch {
                /* keep going */
              }
            }
          }
        }
        rollbackSwap(dir, oldBases);
        throw ioErrorOf(err, dir, 'undo (the partition was left as the run left it)');
      }
      throw ioErrorOf(err, dir, 'undo (committed: startup recovery completes it)');
    }
    out.restored.push(...m.removed.map((f) => f.name));
    out.removed.push(...m.created.map((f) => f.name));
    for (const c of [...m.checkpoints].reverse()) {
      restoreCheckpointEntry(m.logDir, c, steps);
      out.checkpoints.push(`${c.file}: ${c.after ?? '(none)'} → ${c.before ?? '(none)'}`);
    }
  }
  rmSync(info.path, { recursive: true, force: true });
  return out;
}

/**
 * Undoes the latest run that touched `path` (a partition folder or a log directory): every trash
 * entry of that run, newest first, each under the partition's writer lock.
 * A latest run that a crash interrupted is first finished from its recovered folder
 * (`interrupted-runs.ts`): past its commit point it is undone like any run.
 * @throws KlxError `not-found` when the trash holds no run for `path`; `invalid-argument` when the
 *   partition changed since the run (nothing is touched), the run did not finish and its folder was
 *   not recovered, or it was interrupted before its commit point (nothing to undo); `locked`;
 *   `io-error`.
 */
export function undoLastRun(path: string, opts: UndoOptions): UndoResult {
  const latest = lastRunEntries(path, opts.trashDir);
  if (latest.some((e) => e.manifest!.state === 'prepared')) {
    // A crash interrupted the latest run: once its folder is recovered, finish its entries first
    // (interrupted-runs.ts); entries the folder cannot decide stay `prepared` and are refused below.
    const finished = finishInterruptedRuns(path, opts.trashDir, opts.fault ? { fault: opts.fault } : {});
    const runId = latest[0]!.manifest!.runId;
    if (finished.some((f) => f.runId === runId && f.outcome === 'rolled-back') && !lastRunEntries(path, opts.trashDir).some((e) => e.manifest!.runId === runId)) {
      throw new KlxError('invalid-argument', `nothing to undo: the latest run (${runId}) was interrupted before its commit point and changed nothing; its trash entries are removed (undo again to reverse the run before it)`, { file: path });
    }
  }
  const entries = lastRunEntries(path, opts.trashDir);
  if (entries.length === 0) throw new KlxError('not-found', `the trash (${opts.trashDir}) holds no run to undo for this folder`, { file: path });
  const steps = new FileSteps(opts.fault);
  // Check the newest entry of every partition first, so that a refusal touches nothing.
  const seen = new Set<string>();
  for (const e of entries) {
    const m = e.manifest!;
    if (seen.has(m.partitionDir)) continue;
    seen.add(m.partitionDir);
    if (m.state !== 'committed') throw new KlxError('invalid-argument', `trash entry ${m.id} belongs to a run that did not finish (state ${m.state}): recover the partition folder first; the entry keeps the files it replaced`, { file: e.path, details: { needsRepair: true } });
    const conflict = m.operation === 'repair' ? repairConflicts(m, e.path) : conflicts(m);
    if (conflict) throw new KlxError('invalid-argument', `cannot undo ${m.operation} of ${m.topic}-${m.partition} (trash entry ${m.id}): ${conflict}`, { file: m.partitionDir });
  }
  const out: UndoneEntry[] = [];
  for (const e of entries) {
    // A log-directory checkpoint rewritten by a repair: the log directory's checkpoint lock.
    const lockFile = isLogDirEntry(e.manifest!) ? join(e.manifest!.partitionDir, CHECKPOINT_LOCK_FILE) : join(e.manifest!.partitionDir, WRITER_LOCK_FILE);
    const lock = acquireLock(lockFile, { purpose: 'klx undo', what: `partition ${e.manifest!.topic}-${e.manifest!.partition}` });
    try {
      out.push(undoEntry(e, steps));
    } finally {
      lock.release();
    }
  }
  return { runId: entries[0]!.manifest!.runId, entries: out };
}
