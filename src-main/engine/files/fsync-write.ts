/**
 * Durable file replacement, the way Kafka writes checkpoint and metadata files (spec §1.1, §11.1;
 * Kafka's `CheckpointFile.write` + `Utils.atomicMoveWithFallback`, `PartitionMetadataFile.maybeFlush`):
 *
 *   1. `write-tmp`  write the whole content to `<path>.tmp` (created or truncated);
 *   2. `fsync-tmp`  fsync that file, so its bytes are on disk before it gets the real name;
 *   3. `rename`     rename `<path>.tmp` over `<path>` (atomic on POSIX file systems);
 *   4. `fsync-dir`  fsync the parent directory, so the rename itself survives a power cut.
 *
 * Invariant: at every instant `<path>` holds either the complete old content or the complete new
 * content, never a mix. A crash can leave a stale `<path>.tmp`, which readers must ignore (spec §10.3)
 * and the next write simply overwrites.
 *
 * Crash tests inject a {@link FaultHook}: it is called with the step name before each step and may
 * throw to simulate a crash right there; such a throw propagates unchanged and nothing is cleaned up
 * (as after a real crash).
 *
 * Also {@link writeFileDurable}, the plain durable write (create or truncate, write, fsync) for files
 * whose safety comes from elsewhere: a folder that is not live yet, or a rename step of the caller.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { KlxError } from '../errors.ts';

/** The steps of {@link writeFileAtomic}, in order. */
export const WRITE_STEPS = ['write-tmp', 'fsync-tmp', 'rename', 'fsync-dir'] as const;

/** One step of {@link writeFileAtomic}. */
export type WriteStep = (typeof WRITE_STEPS)[number];

/**
 * Called before each step of an atomic write with the step name and the final path.
 * Throwing aborts the write at that point (used to simulate crashes).
 */
export type FaultHook = (step: WriteStep, path: string) => void;

/** Options shared by every writer of the files layer. */
export interface WriteOptions {
  /** Fault-injection hook (tests); see {@link FaultHook}. */
  fault?: FaultHook;
  /** fsync the parent directory after the rename (default true). */
  syncDir?: boolean;
}

/**
 * Creates (or truncates) `path`, writes all of `data` (bytes or UTF-8 text) and fsyncs it. Durable
 * but not atomic: a crash can leave the file partly written, so use it only where that is safe.
 * @throws the operating system's error as it is (not wrapped).
 */
export function writeFileDurable(path: string, data: Uint8Array | string): void {
  const fd = openSync(path, 'w');
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let done = 0;
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The temporary name used while replacing `path`: `<path>.tmp` (as Kafka's CheckpointFile.write does). */
export function tmpPathFor(path: string): string {
  return `${path}.tmp`;
}

function ioError(err: unknown, path: string, what: string): KlxError {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code === 'ENOENT' ? 'not-found' : 'io-error';
  return new KlxError(code, `${what}: ${e?.message ?? String(err)}`, { file: path, cause: err });
}

/**
 * fsyncs a directory so that renames and creations inside it are durable.
 * On Windows directories cannot be opened for fsync; the call is then a no-op.
 * @throws KlxError `io-error` / `not-found` when the directory cannot be opened or synced (POSIX).
 */
export function fsyncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch (err) {
    if (process.platform === 'win32') return;
    throw ioError(err, dir, 'cannot open directory for fsync');
  }
  try {
    fsyncSync(fd);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!(process.platform === 'win32' || code === 'EINVAL' || code === 'EISDIR')) throw ioError(err, dir, 'fsync of directory failed');
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` with `data` atomically and durably: `<path>.tmp`, write, fsync, rename, fsync dir.
 *
 * @param path final file path.
 * @param data the complete new content (bytes or UTF-8 text).
 * @throws whatever `opts.fault` throws, unchanged (the `.tmp` file is left as a crash would leave it);
 *   KlxError `io-error` (or `not-found` when the directory is missing) for an operating-system failure,
 *   after a best-effort removal of `<path>.tmp`.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string, opts: WriteOptions = {}): void {
  const fault = opts.fault ?? (() => {});
  const tmp = tmpPathFor(path);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  // Mutable state read in the catch block (an object, so TypeScript does not narrow it away).
  const state: { step: WriteStep; faulted: boolean } = { step: 'write-tmp', faulted: false };
  const at = (s: WriteStep): void => {
    state.step = s;
    state.faulted = true;
    fault(s, path);
    state.faulted = false;
  };
  try {
    at('write-tmp');
    const fd = openSync(tmp, 'w');
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
      at('fsync-tmp');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    at('rename');
    renameSync(tmp, path);
    if (opts.syncDir ?? true) {
      at('fsync-dir');
      fsyncDirectory(dirname(path));
    }
  } catch (err) {
    if (state.faulted) throw err; // simulated crash: leave everything as it is
    if (err instanceof KlxError) throw err;
    const step = state.step;
    if (step !== 'fsync-dir') {
      try {
        unlinkSync(tmp);
      } catch {
        /* best effort */
      }
    }
    throw ioError(err, step === 'write-tmp' || step === 'fsync-tmp' ? tmp : path, `atomic write failed at step ${step}`);
  }
}

/**
 * Reads a whole file into memory (index and state files are bounded: 10 MiB by default).
 * @returns the file's bytes.
 * @throws KlxError `not-found` if the file does not exist, `io-error` for any other failure
 *   (a directory, permission denied...).
 */
export function readFileBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw ioError(err, path, 'cannot read file');
  }
}
