/**
 * Finishing the trash entries of cleaner runs that a crash interrupted (issue 17, defect 6).
 *
 * A run writes its trash entry in state `prepared` with what it is about to commit
 * ({@link PendingCommit}) before its commit point, and marks it `committed` only at its very end.
 * A crash in between leaves a `prepared` entry that `undo` cannot use. Once the partition folder has
 * been through startup recovery (the engine's `recovery.ts`, `klx repair`, or a broker's
 * `LogLoader`, which completes or drops the `.swap` files), the folder itself says on which side of
 * the commit point the crash fell:
 *
 * - compaction (commit point: the last `.cleaned → .swap` rename, Kafka's `LocalLog.replaceSegments`):
 *   when every `.log` the run created is in the folder with the size and CRC-32C it wrote, the run
 *   committed; the entry is finished (index files as recovery left them, rebuilt indexes included;
 *   the `cleaner-offset-checkpoint` change recorded when the file holds the run's value: when the
 *   crash came before that write, the entry records no checkpoint change, as a broker whose cleaner
 *   died there would leave the old checkpoint, `LogCleanerManager.doneCleaning` never ran). When every
 *   `.log` the run replaced is still there at its size, the run changed nothing: the entry is removed;
 * - retention (commit point: the new `log-start-offset-checkpoint` entry, Kafka's
 *   `UnifiedLog.maybeIncrementLogStartOffset` before `deleteSegments`): when the checkpoint holds the
 *   run's log start offset, recovery rolls forward what the run had left to do (the
 *   `leader-epoch-checkpoint` truncated from the start, the segments below the new log start offset
 *   renamed `.deleted` and removed; their bytes are in the trash as hard links) and commits the entry;
 *   when it still holds the old value, the empty segment the run rolled (if any) is removed and the
 *   entry too.
 *
 * - repair (`repair-trash.ts`): its entry was complete before the first change; the changes that
 *   happened stay in it (committed), the others are dropped from it; none: the entry is removed.
 *
 * Anything else (the folder gone or changed by someone else, leftovers of an unrecovered swap, an
 * entry written before `pending` existed) leaves the entry as it is, with the reason.
 *
 * Every finishing step holds the partition's writer lock (so a run under way is never touched: it
 * holds that lock from before its entry exists until after it commits) and goes through
 * {@link FileSteps} (crash-safe: a crash while finishing leaves an entry that finishing completes).
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { KlxError } from '../errors.ts';
import { offsetFromFileName, parseSegmentFileName } from '../files/file-names.ts';
import { crc32c } from '../format/crc.ts';
import { acquireLock, CHECKPOINT_LOCK_FILE, WRITER_LOCK_FILE } from '../log/log-lock.ts';
import { readCheckpointEntry } from './checkpoint-entries.ts';
import { FileSteps, type CleanerFaultHook } from './file-steps.ts';
import { decideRepair } from './repair-trash.ts';
import { deleteSegmentFiles } from './segment-swap.ts';
import { listTrash, readManifest, TRASH_FILES, TRASH_MANIFEST, type CheckpointChange, type TrashEntryInfo, type TrashFile, type TrashManifest } from './trash.ts';

/** What finishing did with one `prepared` entry. */
export interface FinishedRun {
  /** Trash entry id. */
  id: string;
  runId: string;
  operation: TrashManifest['operation'];
  partitionDir: string;
  /**
   * `committed`: the run had passed its commit point; the entry is committed and undo works.
   * `rolled-back`: the run had changed nothing; the entry is removed.
   * `left`: the folder does not say (see `reason`); the entry is kept as it is.
   */
  outcome: 'committed' | 'rolled-back' | 'left';
  /** One sentence: what was found and done. */
  reason: string;
}

/** Options of {@link finishInterruptedRuns}. */
export interface FinishOptions {
  /** Only say what would be done. */
  dryRun?: boolean;
  /** Take each partition's writer lock (default true); false when the caller holds it. */
  lock?: boolean;
  /** Fault hook of the file steps (tests). */
  fault?: CleanerFaultHook;
  /** Only entries of these operations (default: all). */
  operations?: readonly TrashManifest['operation'][];
}

function isUnder(path: string, root: string): boolean {
  const p = resolve(path);
  const r = resolve(root);
  return p === r || p.startsWith(r.endsWith(sep) ? r : r + sep);
}

function fileMatches(path: string, f: TrashFile): boolean {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  if (!st.isFile() || st.size !== f.size) return false;
  return f.crc32c === undefined || crc32c(readFileSync(path)) === f.crc32c;
}

function unrecoveredLeftover(dir: string): string | null {
  for (const name of readdirSync(dir).sort()) {
    const p = parseSegmentFileName(name);
    if (p?.transient === 'swap' || p?.transient === 'cleaned') return name;
  }
  return null;
}

/** The checkpoint change as the finished entry records it: undo puts back only this partition's line. */
function recordedChange(m: TrashManifest): CheckpointChange | null {
  const c = m.pending?.checkpoint;
  if (!c) return null;
  const now = readCheckpointEntry(m.logDir, c.file, c.topic, c.partition);
  if (now === null || now.toString() !== c.after) return null;
  return { file: c.file, topic: c.topic, partition: c.partition, before: c.before, after: c.after, textBefore: null, textAfter: '', lineOnly: true };
}

type Decision = { outcome: FinishedRun['outcome']; reason: string; apply?: (steps: FileSteps) => void };

function decideCompaction(info: TrashEntryInfo, m: TrashManifest): Decision {
  const dir = m.partitionDir;
  const createdLogs = m.created.filter((f) => f.name.endsWith('.log'));
  const removedLogs = m.removed.filter((f) => f.name.endsWith('.log'));
  const newInPlace = createdLogs.length > 0 && createdLogs.every((f) => fileMatches(join(dir, f.name), f));
  const oldInPlace = removedLogs.every((f) => existsSync(join(dir, f.name)) && statSync(join(dir, f.name)).size === f.size) && !createdLogs.some((f) => fileMatches(join(dir, f.name), f));
  const checkpoint = m.pending?.checkpoint;
  if (newInPlace || (createdLogs.length === 0 && checkpoint && recordedChange(m))) {
    return {
      outcome: 'committed',
      reason: `the compaction had passed its commit point (${createdLogs.map((f) => f.name).join(', ') || 'checkpoint'} in place): entry committed, undo restores the ${removedLogs.length} replaced segment(s)`,
      apply: (steps) => {
        // Index files: as the repair before this left them. A broker since 3.0 renames swapped-in index files as they
        // are and rebuilds them only where it recovers the segment (LogLoader.load, recoverLog); 2.x recovered every
        // swapped-in segment (Log.completeSwapOperations).
        m.created = m.created.flatMap((f) => {
          if (f.name.endsWith('.log')) return [f];
          const p = join(dir, f.name);
          if (!existsSync(p)) return [];
          const bytes = readFileSync(p);
          return [{ ...f, size: bytes.length, crc32c: crc32c(bytes) }];
        });
        const change = recordedChange(m);
        if (change) m.checkpoints.push(change);
        finish(info, m, steps, `compaction: ${createdLogs.length} cleaned segment(s) replaced ${removedLogs.length} segment(s); cleaner checkpoint ${change ? `${change.before ?? '(none)'} → ${change.after}` : 'not written before the crash (left as it was)'}`);
      },
    };
  }
  if (oldInPlace && createdLogs.length > 0) {
    return { outcome: 'rolled-back', reason: 'the compaction stopped before its commit point: the partition holds its old segments; entry removed', apply: () => discard(info) };
  }
  return { outcome: 'left', reason: `neither every segment the compaction wrote nor every segment it replaced is in ${dir}: the folder changed since; entry kept` };
}

function decideRetention(info: TrashEntryInfo, m: TrashManifest): Decision {
  const dir = m.partitionDir;
  const c = m.pending!.checkpoint;
  const now = readCheckpointEntry(m.logDir, c.file, c.topic, c.partition);
  const nowText = now === null ? null : now.toString();
  if (nowText === c.after) {
    return {
      outcome: 'committed',
      reason: `the retention had passed its commit point (${c.file} holds ${c.after}): segments below it removed, entry committed, undo restores them`,
      apply: (steps) => {
        const epochText = m.pending!.leaderEpochText;
        const epochPath = join(dir, 'leader-epoch-checkpoint');
        if (epochText != null && existsSync(epochPath)) {
          const current = readFileSync(epochPath, 'utf8');
          const saved = join(info.path, TRASH_FILES, 'leader-epoch-checkpoint');
          if (current !== epochText && existsSync(saved) && readFileSync(saved, 'utf8') === current) steps.writeCheckpoint(epochPath, epochText);
          if (readFileSync(epochPath, 'utf8') === epochText) {
            const bytes = Buffer.from(epochText);
            m.metadataFiles.push({ name: 'leader-epoch-checkpoint', afterCrc32c: crc32c(bytes), afterSize: bytes.length, existedBefore: true });
          }
        }
        const createdNames = new Set(m.created.map((f) => f.name));
        const bases = [...new Set(m.removed.filter((f) => !createdNames.has(f.name) && f.name !== 'leader-epoch-checkpoint').map((f) => offsetFromFileName(f.name)))];
        for (const b of bases) {
          const names = m.removed.filter((f) => offsetFromFileName(f.name) === b && !createdNames.has(f.name));
          // Only files that are still the ones the trash holds (same size) are removed.
          const extra = names.filter((f) => f.name.endsWith('.snapshot')).map((f) => join(dir, f.name));
          if (names.every((f) => !existsSync(join(dir, f.name)) || statSync(join(dir, f.name)).size === f.size)) deleteSegmentFiles(dir, b, steps, extra);
          for (const f of names) if (existsSync(join(dir, f.name + '.deleted'))) steps.unlink('delete-file', join(dir, f.name + '.deleted'));
        }
        steps.fsyncDir(dir);
        m.checkpoints.push({ file: c.file, topic: c.topic, partition: c.partition, before: c.before, after: c.after, textBefore: null, textAfter: '', lineOnly: true });
        finish(info, m, steps, `retention: ${bases.length} segment(s) deleted, log start offset ${c.before ?? '(none)'} → ${c.after}`);
      },
    };
  }
  if (nowText === c.before) {
    return {
      outcome: 'rolled-back',
      reason: `the retention stopped before its commit point (${c.file} still holds ${c.before ?? 'no entry'}): nothing was deleted; entry removed`,
      apply: (steps) => {
        // The empty segment it may have rolled at the log end offset goes (as the run's own rollback does).
        for (const f of m.created) if (fileMatches(join(dir, f.name), f)) steps.unlink('delete-file', join(dir, f.name));
        if (m.created.length > 0) steps.fsyncDir(dir);
        discard(info);
      },
    };
  }
  return { outcome: 'left', reason: `${c.file} holds ${nowText ?? 'no entry'} for ${c.topic}-${c.partition}, neither the run's ${c.after} nor the previous ${c.before ?? 'none'}: entry kept` };
}

function finish(info: TrashEntryInfo, m: TrashManifest, steps: FileSteps, summary: string): void {
  m.state = 'committed';
  m.summary = summary;
  m.finishedByRecovery = `finished by recovery after an interruption past the commit point (${new Date().toISOString()})`;
  steps.writeCheckpoint(join(info.path, TRASH_MANIFEST), JSON.stringify(m, null, 2) + '\n', 'write-manifest');
}

/** Removes the entry: the partition holds the original files, the entry's hard links are not needed. */
function discard(info: TrashEntryInfo): void {
  rmSync(info.path, { recursive: true, force: true });
}

function decide(info: TrashEntryInfo): Decision {
  const m = info.manifest!;
  const dir = m.partitionDir;
  if (!existsSync(dir)) return { outcome: 'left', reason: `the partition folder ${dir} no longer exists: entry kept` };
  // A repair: each of its file changes says by itself whether it happened (repair-trash.ts).
  if (m.operation === 'repair') return decideRepair(info);
  const leftover = unrecoveredLeftover(dir);
  if (leftover) return { outcome: 'left', reason: `the folder holds ${leftover}, left by the interrupted run: recover it first (klx repair); entry kept` };
  if (!m.pending) {
    // The run wrote `pending` before its commit point: without it, it stopped before (or the entry
    // is an older version's). It changed nothing when every file it took is still in place and
    // none it created is there; removing the entry then drops only hard links.
    const untouched = m.removed.every((f) => existsSync(join(dir, f.name)) && statSync(join(dir, f.name)).size === f.size) && !m.created.some((f) => fileMatches(join(dir, f.name), f));
    if (untouched) return { outcome: 'rolled-back', reason: `the ${m.operation} stopped before its commit point: the partition holds its old files; entry removed`, apply: () => discard(info) };
    return { outcome: 'left', reason: 'the entry holds no record of what the run was about to commit (written by an older version) and the folder changed: entry kept' };
  }
  return m.operation === 'compaction' ? decideCompaction(info, m) : decideRetention(info, m);
}

/**
 * Finishes every `prepared` trash entry of a partition under `path` (a partition folder, a log
 * directory or a folder of them), after startup recovery: commits it when the run had passed its
 * commit point, removes it when the run had changed nothing (see the module comment).
 * @param trashDir the trash folder the runs used.
 * @returns one line per `prepared` entry found, in trash order.
 * @throws KlxError `locked` when a partition's writer lock is held (a run or another tool is working
 *   on it), `io-error` from a file step; a {@link SimulatedCrash} from the fault hook.
 */
export function finishInterruptedRuns(path: string, trashDir: string, opts: FinishOptions = {}): FinishedRun[] {
  const out: FinishedRun[] = [];
  const steps = new FileSteps(opts.fault);
  for (const listed of listTrash(trashDir)) {
    if (!listed.manifest || listed.manifest.state !== 'prepared' || !isUnder(listed.manifest.partitionDir, path)) continue;
    if (opts.operations && !opts.operations.includes(listed.manifest.operation)) continue;
    const m0 = listed.manifest;
    const lockFile = m0.operation === 'repair' && m0.partitionDir === m0.logDir ? CHECKPOINT_LOCK_FILE : WRITER_LOCK_FILE;
    const lock = opts.dryRun || opts.lock === false || !existsSync(m0.partitionDir) ? null : acquireLock(join(m0.partitionDir, lockFile), { purpose: `klx repair: interrupted ${m0.operation} run`, what: `partition ${m0.topic}-${m0.partition}` });
    try {
      // Read again under the lock: the run may have finished meanwhile.
      let info: TrashEntryInfo;
      try {
        info = { ...listed, manifest: readManifest(listed.path) };
      } catch (err) {
        if (err instanceof KlxError && err.code === 'not-found') continue;
        throw err;
      }
      if (info.manifest!.state !== 'prepared') continue;
      const d = decide(info);
      if (!opts.dryRun) d.apply?.(steps);
      out.push({ id: m0.id, runId: m0.runId, operation: m0.operation, partitionDir: m0.partitionDir, outcome: d.outcome, reason: d.reason });
    } finally {
      lock?.release();
    }
  }
  return out;
}
