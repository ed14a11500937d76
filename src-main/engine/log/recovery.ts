/**
 * Applying a recovery plan (recovery-plan.ts) to a partition folder, crash-safely; and the lock a
 * writer holds on the folder while it does (spec §10.3, §10.4; Kafka's `LogLoader`, `LocalLog`
 * replace/delete, `LogSegment.recover` / `truncateTo`).
 *
 * Every action is atomic on its own and the plan orders them so that a crash (or a thrown fault)
 * between any two primitive steps leaves a folder that opens, and whose next plan completes the work
 * with no valid record lost or duplicated:
 * - deletes and renames are single `unlink` / `rename` calls, each followed by an fsync of the folder;
 * - index files are replaced with `writeFileAtomic` (`.tmp`, fsync, rename, fsync folder), so an index
 *   is either the old one or the new one; a stale `.tmp` is deleted by the next plan;
 * - a `.log` is cut in place with `ftruncate` + fsync. Only bytes that are not valid batches are cut
 *   (or, with `truncateAtCorruption`, bytes after the first invalid batch): a crash before the cut
 *   leaves the same bytes, which the next plan cuts again; the cut itself is one metadata update,
 *   so no half-truncated state exists. No copy is needed (and none of a 1 GiB segment is made);
 * - indexes are rebuilt before the `.log` they describe is cut: they only reference the batches that
 *   stay, so they are right both before and after the cut.
 *
 * Each action checks that the folder still looks as planned (sizes, absent targets) and refuses to
 * go on otherwise (`invalid-argument`: plan again). Re-running an action that already happened is a
 * no-op (a deleted file stays deleted, a renamed file stays renamed, a cut file stays cut).
 *
 * Locking: applying holds the partition's writer lock `<partition>/klx-writer.lock` (`log-lock.ts`,
 * shared with `PartitionWriter`; a stale lock of a dead process is taken over). Kafka's own `.lock`
 * (in the log directory, held by a running broker with an OS file lock) cannot be tested from Node:
 * stop the broker before repairing.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { KlxError } from '../errors.ts';
import { writeLeaderEpochCheckpoint } from '../files/checkpoint.ts';
import { fsyncDirectory, writeFileAtomic, type WriteStep } from '../files/fsync-write.ts';
import { writeOffsetIndex } from '../files/offset-index.ts';
import { writeTimeIndex } from '../files/time-index.ts';
import { writeTxnIndex } from '../files/txn-index.ts';
import { WRITER_LOCK_FILE, acquireLock, type LockHandle } from './log-lock.ts';
import { describeAction, type RecoveryAction, type RecoveryPlan } from './recovery-plan.ts';

export * from './recovery-plan.ts';

/**
 * A primitive step of {@link applyRecovery}: `unlink`, `rename` and `fsync-dir` for file
 * deletes/renames, `truncate` and `fsync-file` for cuts, and the steps of `writeFileAtomic`
 * (`write-tmp`, `fsync-tmp`, `rename`, `fsync-dir`) for rewritten files.
 */
export type RecoveryStep = 'unlink' | 'rename' | 'fsync-dir' | 'truncate' | 'fsync-file' | WriteStep;

/**
 * Called before every primitive step with the step, the index of the action in `plan.actions`, its
 * type and the file concerned. Throwing aborts right there, as a crash would (tests).
 */
export type RecoveryFaultHook = (step: RecoveryStep, info: { action: number; type: RecoveryAction['type']; file: string }) => void;

/** Options of {@link applyRecovery}. */
export interface ApplyRecoveryOptions {
  faultHook?: RecoveryFaultHook;
  /** Checked between actions; stopping between actions is always safe. */
  signal?: AbortSignal;
  /** Take the partition's writer lock for the duration (default true); false when the caller already holds it. */
  lock?: boolean;
}

/** What {@link applyRecovery} did. */
export interface RecoveryResult {
  dir: string;
  /** One line per action, in order; `skipped` when the folder already was in the planned state. */
  done: { type: RecoveryAction['type']; description: string; skipped: boolean }[];
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function sizeOrNull(p: string): number | null {
  try {
    return statSync(p).size;
  } catch {
    return null;
  }
}

function stale(file: string, reason: string): KlxError {
  return new KlxError('invalid-argument', `${reason}: the folder changed since the plan was made; plan again`, { file });
}

function ioErr(err: unknown, file: string, what: string): KlxError {
  if (err instanceof KlxError) return err;
  const e = err as NodeJS.ErrnoException;
  return new KlxError(e?.code === 'ENOENT' ? 'not-found' : 'io-error', `${what}: ${e?.message ?? String(err)}`, { file, cause: err });
}

/**
 * Executes a plan made by `planRecovery`, in order, crash-safely (see the module comment).
 * @returns what was done.
 * @throws KlxError `locked` when another writer holds the folder; `invalid-argument` when the folder
 *   no longer matches the plan; `cancelled` when `opts.signal` aborts between actions; `io-error`;
 *   or whatever `opts.faultHook` throws (the folder is then left exactly as a crash would leave it).
 */
export async function applyRecovery(plan: RecoveryPlan, opts: ApplyRecoveryOptions = {}): Promise<RecoveryResult> {
  const lock = opts.lock === false ? null : acquirePartitionLock(plan.dir);
  try {
    const done: RecoveryResult['done'] = [];
    for (let i = 0; i < plan.actions.length; i++) {
      if (opts.signal?.aborted) throw new KlxError('cancelled', `cancelled by the user after ${i} of ${plan.actions.length} actions (the folder is consistent; plan again to finish)`);
      const a = plan.actions[i]!;
      const hook = (step: RecoveryStep, file: string) => opts.faultHook?.(step, { action: i, type: a.type, file });
      const skipped = applyAction(a, hook);
      done.push({ type: a.type, description: describeAction(a), skipped });
      if (i % 16 === 15) await new Promise((r) => setImmediate(r));
    }
    return { dir: plan.dir, done };
  } finally {
    lock?.release();
  }
}

/** Runs one action; returns true when it had already been done. */
function applyAction(a: RecoveryAction, hook: (step: RecoveryStep, file: string) => void): boolean {
  switch (a.type) {
    case 'delete-file': {
      const size = sizeOrNull(a.file);
      if (size === null) return true;
      if (size !== a.size && a.why !== 'temp' && a.why !== 'deleted') throw stale(a.file, `size is ${size} bytes, planned ${a.size}`);
      unlink(a.file, hook);
      return false;
    }
    case 'rename': {
      const fromThere = exists(a.from);
      if (!fromThere && exists(a.to)) return true;
      if (!fromThere) throw stale(a.from, 'the file to rename is gone');
      if (exists(a.to)) throw stale(a.to, 'the rename target already exists');
      hook('rename', a.from);
      try {
        renameSync(a.from, a.to);
      } catch (err) {
        throw ioErr(err, a.from, 'rename failed');
      }
      syncDir(dirname(a.to), hook);
      return false;
    }
    case 'delete-segment': {
      let any = false;
      for (const f of a.files) {
        if (!exists(f)) continue;
        any = true;
        unlink(f, hook);
      }
      return !any;
    }
    case 'rebuild-indexes': {
      const size = sizeOrNull(a.log);
      if (size !== a.logSize) throw stale(a.log, `the .log is ${size ?? 'missing'}${size === null ? '' : ' bytes'}, planned ${a.logSize} bytes`);
      const fault = (file: string) => (step: WriteStep) => hook(step, file);
      if (a.index) writeOffsetIndex(a.index.file, a.baseOffset, a.index.entries, { fault: fault(a.index.file) });
      if (a.timeindex) writeTimeIndex(a.timeindex.file, a.baseOffset, a.timeindex.entries, { fault: fault(a.timeindex.file) });
      if (a.txnindex) writeTxnIndex(a.txnindex.file, a.baseOffset, a.txnindex.entries, { fault: fault(a.txnindex.file) });
      return false;
    }
    case 'truncate-log': {
      const size = sizeOrNull(a.file);
      if (size === a.toBytes) return true;
      if (size !== a.fromBytes) throw stale(a.file, `the .log is ${size ?? 'missing'}${size === null ? '' : ' bytes'}, planned ${a.fromBytes} bytes`);
      let fd: number;
      try {
        fd = openSync(a.file, 'r+');
      } catch (err) {
        throw ioErr(err, a.file, 'cannot open for truncation');
      }
      try {
        hook('truncate', a.file);
        ftruncateSync(fd, a.toBytes);
        hook('fsync-file', a.file);
        fsyncSync(fd);
      } catch (err) {
        if (err instanceof KlxError || !(err as NodeJS.ErrnoException)?.code) throw err;
        throw ioErr(err, a.file, 'truncation failed');
      } finally {
        closeSync(fd);
      }
      return false;
    }
    case 'create-segment': {
      if (exists(a.files.log)) return true;
      for (const f of [a.files.index, a.files.timeindex, a.files.log]) {
        if (!exists(f)) writeFileAtomic(f, new Uint8Array(0), { fault: (step) => hook(step, f) });
      }
      return false;
    }
    case 'write-leader-epochs': {
      writeLeaderEpochCheckpoint(a.file, a.entries, { fault: (step) => hook(step, a.file) });
      return false;
    }
  }
}

function unlink(file: string, hook: (step: RecoveryStep, file: string) => void): void {
  hook('unlink', file);
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ioErr(err, file, 'delete failed');
  }
  syncDir(dirname(file), hook);
}

function syncDir(dir: string, hook: (step: RecoveryStep, file: string) => void): void {
  hook('fsync-dir', dir);
  fsyncDirectory(dir);
}

// ---------------------------------------------------------------------------------------------
// Partition lock

/**
 * Takes the partition's writer lock (`<dir>/klx-writer.lock`, see `log-lock.ts`): the same lock
 * `PartitionWriter` holds, so a repair never runs while klx appends to the partition.
 * @returns the held lock; call `release()` in a `finally`.
 * @throws KlxError `locked` naming the holder when another live writer (or this process) holds it;
 *   `io-error` / `not-found` when the lock file cannot be created.
 */
export function acquirePartitionLock(dir: string, purpose = 'klx repair'): LockHandle {
  const abs = resolve(dir);
  return acquireLock(join(abs, WRITER_LOCK_FILE), { purpose, what: `partition folder ${abs}` });
}
