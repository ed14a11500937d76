/**
 * The steps of a partition write and the file helpers they share (fault injection for crash tests,
 * exclusive fsynced file creation, positioned writes). Used by `partition-create.ts` and
 * `partition-writer.ts`.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { KlxError } from '../errors.ts';
import type { FaultHook, WriteStep } from '../files/fsync-write.ts';

// ---------------------------------------------------------------------------------------------
// Steps and fault injection

/** Steps that are atomic file replacements (`writeFileAtomic`); their sub-steps are reported as `<step>/<sub-step>`. */
export type AtomicWriterStep = 'meta-properties' | 'leader-epoch' | 'checkpoint' | 'checkpoint-hw' | 'producer-snapshot';

/**
 * A step of a write, in the order they happen:
 * - create: `meta-properties` (only when the log dir has none), `create-tmp-dir`, `create-segment`,
 *   `write-metadata`, `fsync-tmp-dir`, `rename-dir`, `fsync-log-dir`, `checkpoint`;
 * - append / roll: `remove-clean-shutdown` (only when the marker exists), `leader-epoch` (only when
 *   a new epoch starts), `roll-trim-index`, `roll-create-segment`, `roll-fsync-dir` (only when
 *   rolling), `producer-snapshot` (after a roll, unless a snapshot is at or above the new base
 *   offset), `create-index-files` (only when the active segment has none), `write-log`,
 *   `fsync-log`, `write-index` (only when an entry is due), `write-timeindex` (only when it
 *   changes), `fsync-index`, `write-txnindex` (an ABORT of a non-empty transaction), `checkpoint`,
 *   `checkpoint-hw` (only when the high watermark is tracked).
 * Atomic steps also report `<step>/write-tmp`, `<step>/fsync-tmp`, `<step>/rename`, `<step>/fsync-dir`.
 */
export type WriterStep =
  | AtomicWriterStep
  | `${AtomicWriterStep}/${WriteStep}`
  | 'create-tmp-dir'
  | 'create-segment'
  | 'write-metadata'
  | 'fsync-tmp-dir'
  | 'rename-dir'
  | 'fsync-log-dir'
  | 'remove-clean-shutdown'
  | 'roll-trim-index'
  | 'roll-create-segment'
  | 'roll-fsync-dir'
  | 'create-index-files'
  | 'write-log'
  | 'fsync-log'
  | 'write-index'
  | 'write-timeindex'
  | 'fsync-index'
  | 'write-txnindex';

/**
 * Called before each step with the step name and the file (or folder) it concerns. Throwing aborts
 * the write right there, leaving the files as a crash would (tests); the writer is then unusable.
 */
export type WriterFaultHook = (step: WriterStep, file: string) => void;

/**
 * Calls a fault hook and remembers whether the error in flight came from it: such an error is a
 * simulated crash and must reach the caller unchanged, with nothing cleaned up.
 */
export class Stepper {
  /** Set while the hook runs; stays set when the hook throws. */
  faulted = false;
  constructor(private readonly hook: WriterFaultHook | undefined) {}

  step(s: WriterStep, file: string): void {
    if (!this.hook) return;
    this.faulted = true;
    this.hook(s, file);
    this.faulted = false;
  }

  /** The hook of `writeFileAtomic` for an atomic step, reporting `<step>/<sub-step>`. */
  sub(step: AtomicWriterStep): FaultHook | undefined {
    return this.hook ? (s, path) => this.step(`${step}/${s}`, path) : undefined;
  }

  /** The error to throw: the hook's own error unchanged, anything else as a KlxError. */
  wrap(err: unknown, file: string, what: string): unknown {
    return this.faulted ? err : ioError(err, file, what);
  }
}

// ---------------------------------------------------------------------------------------------
// File helpers

/** An I/O failure as a KlxError naming the file (`not-found` for ENOENT, else `io-error`); a KlxError passes unchanged. */
export function ioError(err: unknown, file: string, what: string): KlxError {
  if (err instanceof KlxError) return err;
  const e = err as NodeJS.ErrnoException;
  return new KlxError(e?.code === 'ENOENT' ? 'not-found' : 'io-error', `${what}: ${e?.message ?? String(err)}`, { file, cause: err });
}

/** Creates an empty file exclusively and fsyncs it. */
export function createEmptyFile(path: string): void {
  const fd = openSync(path, 'wx');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes all of `buf` at `position` (positioned writes, repeated until complete). */
export function writeAt(fd: number, buf: Uint8Array, position: number): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, position + done);
}
