/**
 * Writer locks of Kafka Log Explorer. Kafka itself locks a whole log directory with an OS file lock
 * on `<logDir>/.lock` (`FileLock` / `FileChannel.tryLock` in `LogManager.lockLogDirs`), which Node
 * cannot take and which only the running broker holds. Ours are plain lock files instead, so that two
 * `klx` processes (or two writers in one process) never write the same partition at once:
 *
 * - the **partition writer lock** `<partition>/klx-writer.lock`, held for as long as a partition is
 *   open for writing (append, roll, and any other tool that rewrites the partition's files);
 * - the **checkpoint lock** `<logDir>/.klx-checkpoints.lock`, held for the few milliseconds of a
 *   read-modify-write of a log-dir offset checkpoint (`recovery-point-offset-checkpoint`...), which is
 *   shared by every partition of the directory.
 *
 * Format: the file is created with `O_CREAT | O_EXCL` (so exactly one creator wins) and holds one
 * line of JSON: `{"pid":1234,"hostname":"box","createdAt":"2025-01-01T00:00:00.000Z","purpose":"klx append","nonce":"…"}`.
 *
 * Rules:
 * - a lock whose holder is alive, or lives on another host (we cannot tell whether it is alive), is
 *   refused with KlxError `locked` naming the holder (pid, host, since when, for what);
 * - a second writer in the same process is refused the same way (the holder is this process);
 * - a **stale** lock (holder on this host, process gone) is taken over. The takeover itself is
 *   serialised with a second `O_EXCL` file `<lock>.takeover`, so two processes that both see the
 *   stale lock cannot both win; a takeover file older than {@link TAKEOVER_STALE_MS} is itself stale;
 * - a lock file that is empty or unreadable (its creator died between creating and writing it) is
 *   stale once it is older than {@link TAKEOVER_STALE_MS};
 * - release deletes the file only if it still holds our nonce (never somebody else's lock).
 *
 * A broker ignores both files (a partition folder may hold unknown files: LogLoader.loadSegmentFiles
 * loads only segment and index files; LogManager.loadLogs looks only at sub-folders of a log dir).
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';

/** Name of the partition writer lock file, inside the partition folder. */
export const WRITER_LOCK_FILE = 'klx-writer.lock';
/** Name of the short-lived checkpoint lock file, at the root of the log directory. */
export const CHECKPOINT_LOCK_FILE = '.klx-checkpoints.lock';
/** Age (ms) after which an unreadable lock file or an abandoned `.takeover` file counts as stale. */
export const TAKEOVER_STALE_MS = 10_000;

/** Who holds a lock, as written in the lock file. */
export interface LockHolder {
  /** Process id of the holder. */
  pid: number;
  /** `os.hostname()` of the holder's machine. */
  hostname: string;
  /** When the lock was taken (ISO-8601). */
  createdAt: string;
  /** What the holder is doing, e.g. `klx append`. */
  purpose: string;
  /** Random id of this particular acquisition. */
  nonce: string;
}

/** A lock that is held. Call {@link LockHandle.release} when done (idempotent). */
export interface LockHandle {
  /** The lock file. */
  readonly path: string;
  readonly holder: LockHolder;
  /** When a stale lock was taken over: who had it. */
  readonly tookOverFrom?: LockHolder;
  /** Deletes the lock file if it is still ours. Never throws. */
  release(): void;
}

/**
 * Whether a process with this id exists on this machine (`kill(pid, 0)`: ESRCH = gone, EPERM = it
 * exists but belongs to another user).
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Reads the holder written in a lock file.
 * @returns the holder, or null when the file is missing, empty or not the expected JSON.
 */
export function readLockHolder(path: string): LockHolder | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const o = JSON.parse(text) as Partial<LockHolder>;
    if (typeof o.pid !== 'number' || typeof o.hostname !== 'string') return null;
    return { pid: o.pid, hostname: o.hostname, createdAt: String(o.createdAt ?? ''), purpose: String(o.purpose ?? ''), nonce: String(o.nonce ?? '') };
  } catch {
    return null;
  }
}

/** A sentence naming the holder, used in `locked` errors. */
export function describeHolder(h: LockHolder): string {
  const self = h.pid === process.pid && h.hostname === hostname() ? ' (this process)' : '';
  return `pid ${h.pid}${self} on host ${h.hostname} since ${h.createdAt || 'an unknown time'}${h.purpose ? ` (${h.purpose})` : ''}`;
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Creates `path` exclusively with `content`; false when it already exists. */
function createExclusive(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EEXIST') return false;
    throw new KlxError(e.code === 'ENOENT' ? 'not-found' : 'io-error', `cannot create lock file: ${e.message}`, { file: path, cause: err });
  }
  try {
    // No fsync: a lock only has to exclude live processes; after a power cut any holder is dead anyway.
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/** Options of {@link acquireLock}. */
export interface AcquireLockOptions {
  /** What the lock is for, written into the file and shown to whoever is refused (e.g. `klx append`). */
  purpose?: string;
  /** What is being locked, for messages (default: "this folder"). */
  what?: string;
}

/**
 * Takes the lock file `path` (see the module comment for the rules).
 * @returns the held lock.
 * @throws KlxError `locked` naming the holder when the lock is held by a live process, by this
 *   process, or by a process on another host (the message says how to remove a lock that is known to
 *   be dead); `not-found` / `io-error` when the file cannot be created.
 */
export function acquireLock(path: string, opts: AcquireLockOptions = {}): LockHandle {
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), createdAt: new Date().toISOString(), purpose: opts.purpose ?? 'klx', nonce: randomBytes(8).toString('hex') };
  const content = JSON.stringify(holder) + '\n';
  const what = opts.what ?? 'this folder';
  const handle = (tookOverFrom?: LockHolder): LockHandle => {
    let released = false;
    return {
      path,
      holder,
      ...(tookOverFrom ? { tookOverFrom } : {}),
      release(): void {
        if (released) return;
        released = true;
        const now = readLockHolder(path);
        if (now && now.nonce === holder.nonce) unlinkQuietly(path);
      },
    };
  };
  if (createExclusive(path, content)) return handle();

  const current = readLockHolder(path);
  const stale = current === null ? ageMs(path) > TAKEOVER_STALE_MS : current.hostname === holder.hostname && !isProcessAlive(current.pid);
  if (!stale) {
    if (current === null) {
      throw new KlxError('locked', `${what} is locked by another writer that is starting (the lock file is still empty); try again`, { file: path });
    }
    const remote = current.hostname !== holder.hostname;
    throw new KlxError(
      'locked',
      `${what} is locked by another writer: ${describeHolder(current)}${remote ? `; its process cannot be checked from this host: if it is gone, delete ${path}` : ''}`,
      { file: path, details: { holder: current } },
    );
  }

  // Stale: take it over, serialised by a second exclusive file.
  const mutex = `${path}.takeover`;
  if (!createExclusive(mutex, content)) {
    if (ageMs(mutex) > TAKEOVER_STALE_MS) {
      unlinkQuietly(mutex);
      if (!createExclusive(mutex, content)) throw new KlxError('locked', `${what}: another writer is taking over a stale lock; try again`, { file: path });
    } else {
      throw new KlxError('locked', `${what}: another writer is taking over a stale lock; try again`, { file: path });
    }
  }
  try {
    const again = readLockHolder(path);
    const same = current === null ? again === null : again !== null && again.nonce === current.nonce && again.pid === current.pid;
    if (!same) {
      if (again === null && current !== null) {
        // Released in the meantime: simply take it.
        if (createExclusive(path, content)) return handle();
      }
      throw new KlxError('locked', `${what} is locked by another writer${again ? `: ${describeHolder(again)}` : ''}`, { file: path, ...(again ? { details: { holder: again } } : {}) });
    }
    unlinkQuietly(path);
    if (!createExclusive(path, content)) {
      const winner = readLockHolder(path);
      throw new KlxError('locked', `${what} is locked by another writer${winner ? `: ${describeHolder(winner)}` : ''}`, { file: path });
    }
    return handle(current ?? { pid: 0, hostname: holder.hostname, createdAt: '', purpose: 'unreadable lock file', nonce: '' });
  } finally {
    unlinkQuietly(mutex);
  }
}

/** Sleeps synchronously (the engine's writers are synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` while holding the log directory's checkpoint lock (`<logDir>/.klx-checkpoints.lock`),
 * retrying for up to `timeoutMs` while another live writer holds it.
 * @returns what `fn` returns.
 * @throws KlxError `locked` when the lock is still held after `timeoutMs` (default 10 000 ms);
 *   whatever `fn` throws (the lock is released first).
 */
export function withCheckpointLock<T>(logDir: string, fn: () => T, opts: { timeoutMs?: number; purpose?: string } = {}): T {
  const path = join(logDir, CHECKPOINT_LOCK_FILE);
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let lock: LockHandle | undefined;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      lock = acquireLock(path, { purpose: opts.purpose ?? 'klx checkpoint update', what: `the checkpoints of log directory ${logDir}` });
      break;
    } catch (err) {
      if (!(err instanceof KlxError) || err.code !== 'locked' || Date.now() >= deadline) throw err;
      sleepSync(wait);
    }
  }
  try {
    return fn();
  } finally {
    lock.release();
  }
}
