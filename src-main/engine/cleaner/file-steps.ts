/**
 * The file steps of a cleaner run (writes, flushes, renames, deletes, checkpoint writes), each one
 * named, so that tests can inject a fault before any of them (spec §10.3; Kafka's
 * `LocalLog.replaceSegments`, `LogSegment.changeFileSuffixes`, `Utils.flushDir`).
 *
 * A fault hook is called with the step and the path just before the step runs. What it throws
 * decides what the fault simulates:
 * - an error with an errno-style string `code` (`ENOSPC`, `EACCES`, `EROFS`...) simulates the
 *   operating system refusing the step (full disk, read-only file): the run handles it like a real
 *   failure (rolls back, or rolls forward past its commit point) and reports a KlxError `io-error`;
 * - anything else simulates a crash: it is wrapped in {@link SimulatedCrash} and propagates with no
 *   clean-up at all, leaving the files exactly as a process killed at that instant would.
 *
 * Every write is followed by an fsync of the file; renames and deletes inside a folder are made
 * durable with an fsync of the folder ({@link FileSteps.fsyncDir}).
 */
import { closeSync, copyFileSync, fsyncSync, linkSync, openSync, renameSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { KlxError } from '../errors.ts';
import { fsyncDirectory, writeFileAtomic, writeFileDurable, type FaultHook } from '../files/fsync-write.ts';

/** The named steps of cleaner runs (and of undo). */
export const CLEANER_STEPS = [
  /** Appending bytes to a new segment's `.log.cleaned` (once per write call). */
  'write-cleaned',
  /** fsync of a `.cleaned` file. */
  'flush-cleaned',
  /** Writing a new segment's `.index.cleaned` / `.timeindex.cleaned` / `.txnindex.cleaned`. */
  'write-cleaned-index',
  /** Linking (or copying) a file that will be replaced into the trash. */
  'link-trash',
  /** Writing the trash entry's manifest. */
  'write-manifest',
  /** Creating the empty active segment retention rolls before deleting the old one (§12.4). */
  'roll-segment',
  /** Renaming a new segment file `.cleaned` → `.swap`. */
  'rename-cleaned-to-swap',
  /** Renaming an old segment file to `.deleted`. */
  'rename-to-deleted',
  /** Removing a `.deleted` file. */
  'delete-file',
  /** Renaming a new segment file `.swap` → its final name. */
  'rename-swap-to-final',
  /** fsync of the partition folder. */
  'fsync-dir',
  /** Any step of the atomic write of a checkpoint file (`.tmp`, fsync, rename, fsync of the folder). */
  'write-checkpoint',
  /** Undo: putting a file from the trash back into the partition folder. */
  'restore-file',
] as const;

/** One of {@link CLEANER_STEPS}. */
export type CleanerStep = (typeof CLEANER_STEPS)[number];

/** Called before each file step; see the module comment for what a throw means. */
export type CleanerFaultHook = (step: CleanerStep, path: string) => void;

/** A crash simulated by a fault hook. Never caught by the cleaner. */
export class SimulatedCrash extends Error {
  constructor(
    readonly step: CleanerStep,
    readonly path: string,
    cause: unknown,
  ) {
    super(`simulated crash before ${step} of ${path}`, { cause });
    this.name = 'SimulatedCrash';
  }
}

/** True for an error that looks like an operating-system error (`code` = `E...`). */
export function isOsError(err: unknown): err is NodeJS.ErrnoException {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code);
}

/** Turns an operating-system error into a KlxError `io-error` naming the file and the step. */
export function ioErrorOf(err: unknown, path: string, what: string): KlxError {
  if (err instanceof KlxError) return err;
  const e = err as NodeJS.ErrnoException;
  const reason = e?.code === 'ENOSPC' ? 'the disk is full' : e?.code === 'EROFS' ? 'the file system is read-only' : e?.code === 'EACCES' || e?.code === 'EPERM' ? 'permission denied (read-only file or folder?)' : e?.message ?? String(err);
  return new KlxError('io-error', `${what} failed: ${reason}${e?.code ? ` (${e.code})` : ''}`, { file: path, cause: err });
}

/** Runs the named file steps of one operation with an optional fault hook. */
export class FileSteps {
  constructor(private readonly fault?: CleanerFaultHook) {}

  /** Calls the fault hook for `step` (a no-op without a hook). */
  at(step: CleanerStep, path: string): void {
    if (!this.fault) return;
    try {
      this.fault(step, path);
    } catch (err) {
      if (isOsError(err)) throw err;
      throw new SimulatedCrash(step, path, err);
    }
  }

  /** Renames `from` to `to` (atomic inside one file system). */
  rename(step: CleanerStep, from: string, to: string): void {
    this.at(step, from);
    renameSync(from, to);
  }

  /** Removes a file (missing is fine). */
  unlink(step: CleanerStep, path: string): void {
    this.at(step, path);
    try {
      unlinkSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  /**
   * Gives `from` a second name `to` (a hard link: instant, no extra space). When the two paths are on
   * different file systems (or links are not supported) the file is copied and fsynced instead, and
   * its mtime kept.
   */
  linkOrCopy(step: CleanerStep, from: string, to: string): void {
    this.at(step, from);
    try {
      linkSync(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK' && code !== 'ENOSYS') throw err;
    }
    copyFileSync(from, to);
    const st = statSync(from);
    utimesSync(to, st.atime, st.mtime);
    this.fsyncFile(to);
  }

  /** Moves a file: rename, or (across file systems) copy + fsync + unlink. */
  move(step: CleanerStep, from: string, to: string): void {
    this.at(step, from);
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    }
    copyFileSync(from, to);
    const st = statSync(from);
    utimesSync(to, st.atime, st.mtime);
    this.fsyncFile(to);
    unlinkSync(from);
  }

  /** Creates (or truncates) `path` with `data` and fsyncs it. */
  writeFile(step: CleanerStep, path: string, data: Uint8Array): void {
    this.at(step, path);
    writeFileDurable(path, data);
  }

  /** fsyncs an existing file. */
  fsyncFile(path: string): void {
    const fd = openSync(path, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** fsyncs a folder so the renames and deletes inside it are durable. */
  fsyncDir(dir: string): void {
    this.at('fsync-dir', dir);
    fsyncDirectory(dir);
  }

  /**
   * Replaces a small file atomically (files layer `writeFileAtomic`: `.tmp`, fsync, rename, fsync of
   * the folder), each sub-step a fault point named `step` (default `write-checkpoint`).
   */
  writeCheckpoint(path: string, data: Uint8Array | string, step: CleanerStep = 'write-checkpoint'): void {
    writeFileAtomic(path, data, { fault: this.checkpointFault(step) });
  }

  /** The files layer's fault hook for the sub-steps of one atomic write: each a fault point named `step`. */
  checkpointFault(step: CleanerStep = 'write-checkpoint'): FaultHook {
    return (_s, p) => this.at(step, p);
  }
}
