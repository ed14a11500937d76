/**
 * One partition's entry in a log-directory offset checkpoint (`recovery-point-offset-checkpoint`,
 * `replication-offset-checkpoint`, `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`;
 * spec §11.1; Kafka's `OffsetCheckpointFile`, updated the way `LogManager.checkpointRecoveryOffsetsInDir`
 * / `checkpointLogStartOffsetsInDir` and `LogCleanerManager.updateCheckpoints` do it): read the file,
 * replace (or add, or drop) this partition's line keeping every other line and their order, write it
 * back atomically (`.tmp`, fsync, rename, fsync of the folder; each sub-step a fault point). The file
 * is shared by every partition of the log directory, so the read-modify-write runs under the log
 * directory's checkpoint lock (`log-lock.ts`).
 *
 * The one implementation behind the writer (recovery point, high watermark) and the cleaner (log
 * start offset, cleaner offset, and their undo in `cleaner/checkpoint-entries.ts`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { formatOffsetCheckpoint, parseOffsetCheckpoint, type OffsetCheckpointEntry } from '../files/checkpoint.ts';
import { writeFileAtomic, type FaultHook } from '../files/fsync-write.ts';
import { withCheckpointLock } from './log-lock.ts';

/**
 * The bytes of a checkpoint file, or null when it does not exist.
 * @throws KlxError `io-error` when it exists but cannot be read.
 */
export function readCheckpointBytes(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new KlxError('io-error', `cannot read checkpoint: ${(err as Error).message}`, { file: path, cause: err });
  }
}

/** The offset of the partition's line in `entries` (the last one, should it be listed twice), or null. */
export function checkpointEntryOf(entries: readonly OffsetCheckpointEntry[], topic: string, partition: number): bigint | null {
  let found: bigint | null = null;
  for (const e of entries) if (e.topic === topic && e.partition === partition) found = e.offset;
  return found;
}

/**
 * `entries` with the partition's line set to `value`: in place of its first line (later duplicates
 * dropped), or appended when it has none; with `value` null, its lines removed.
 */
export function withCheckpointEntry(entries: readonly OffsetCheckpointEntry[], topic: string, partition: number, value: bigint | null): OffsetCheckpointEntry[] {
  const out: OffsetCheckpointEntry[] = [];
  let placed = false;
  for (const e of entries) {
    if (e.topic === topic && e.partition === partition) {
      if (value !== null && !placed) out.push({ topic, partition, offset: value });
      placed = true;
    } else out.push(e);
  }
  if (!placed && value !== null) out.push({ topic, partition, offset: value });
  return out;
}

/** Options of {@link updateCheckpointEntry}. */
export interface CheckpointEntryOptions {
  /** Called before each sub-step of the atomic write (`write-tmp`, `fsync-tmp`, `rename`, `fsync-dir`). */
  fault?: FaultHook;
  /** Leave the file alone when it does not list the partition (the writer's high watermark). */
  onlyIfPresent?: boolean;
  /** Leave the file alone when it already lists the partition once, with `value`. */
  onlyIfChanged?: boolean;
  /** What the checkpoint lock file says holds it (default: `log-lock.ts`'s). */
  purpose?: string;
}

/** What {@link updateCheckpointEntry} found and did. */
export interface CheckpointEntryUpdate {
  /** False when an option left the file alone. */
  written: boolean;
  /** The partition's offset before (see {@link checkpointEntryOf}), or null. */
  before: bigint | null;
  /** The file's text before, or null when it did not exist. */
  textBefore: string | null;
  /** The text written; null when not `written`. */
  textAfter: string | null;
}

/**
 * Sets (or with `value` null removes) the partition's entry in `logDir/file`, atomically and under
 * the checkpoint lock; every other partition's line stays, in its order.
 * @throws KlxError `corrupt-checkpoint` when the existing file cannot be parsed (it is left alone),
 *   `locked` when the checkpoint lock stays held, `io-error`, `invalid-argument` (see
 *   `formatOffsetCheckpoint`); or what `opts.fault` throws.
 */
export function updateCheckpointEntry(logDir: string, file: string, topic: string, partition: number, value: bigint | null, opts: CheckpointEntryOptions = {}): CheckpointEntryUpdate {
  return withCheckpointLock(
    logDir,
    () => {
      const path = join(logDir, file);
      const bytes = readCheckpointBytes(path);
      const entries = bytes === null ? [] : parseOffsetCheckpoint(bytes, path);
      let listed = 0;
      for (const e of entries) if (e.topic === topic && e.partition === partition) listed++;
      const before = checkpointEntryOf(entries, topic, partition);
      const textBefore = bytes === null ? null : bytes.toString('utf8');
      if ((opts.onlyIfPresent && listed === 0) || (opts.onlyIfChanged && listed === 1 && before === value)) return { written: false, before, textBefore, textAfter: null };
      const textAfter = formatOffsetCheckpoint(withCheckpointEntry(entries, topic, partition, value));
      writeFileAtomic(path, textAfter, opts.fault ? { fault: opts.fault } : {});
      return { written: true, before, textBefore, textAfter };
    },
    { purpose: opts.purpose },
  );
}
