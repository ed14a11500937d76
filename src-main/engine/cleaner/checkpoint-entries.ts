/**
 * One partition's entry in a log-directory offset checkpoint (`log-start-offset-checkpoint`,
 * `cleaner-offset-checkpoint`; spec §11.1; Kafka's `OffsetCheckpointFile`, updated the way
 * `LogManager.checkpointLogStartOffsetsInDir` / `LogCleanerManager.updateCheckpoints` do it):
 * read the file, replace (or add, or drop) this partition's line, write it back atomically
 * (`.tmp`, fsync, rename, fsync of the folder). The file is shared by every partition of the log
 * directory, so the read-modify-write runs under the log directory's checkpoint lock, and undo puts
 * back only this partition's entry unless the file is still exactly what the run wrote (then the
 * previous bytes are restored as they were).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { formatOffsetCheckpoint, parseOffsetCheckpoint, type OffsetCheckpointEntry } from '../files/checkpoint.ts';
import { withCheckpointLock } from '../log/log-lock.ts';
import type { FileSteps } from './file-steps.ts';
import type { CheckpointChange } from './trash.ts';

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new KlxError('io-error', `cannot read checkpoint: ${(err as Error).message}`, { file: path, cause: err });
  }
}

/** The partition's entry in a checkpoint file, or null (file or entry absent). */
export function readCheckpointEntry(logDir: string, file: string, topic: string, partition: number): bigint | null {
  const path = join(logDir, file);
  const text = readText(path);
  if (text === null) return null;
  const entries = parseOffsetCheckpoint(Buffer.from(text, 'utf8'), path);
  let found: bigint | null = null;
  for (const e of entries) if (e.topic === topic && e.partition === partition) found = e.offset;
  return found;
}

function withEntry(entries: OffsetCheckpointEntry[], topic: string, partition: number, value: bigint | null): OffsetCheckpointEntry[] {
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

/**
 * Sets (or with `value` null removes) the partition's entry in `logDir/file`, atomically and under
 * the checkpoint lock.
 * @returns the change, for the trash manifest.
 * @throws KlxError `corrupt-checkpoint` when the existing file cannot be parsed (it is left alone),
 *   `locked`, `io-error`; a {@link SimulatedCrash} from the fault hook.
 */
export function setCheckpointEntry(logDir: string, file: string, topic: string, partition: number, value: bigint | null, steps: FileSteps): CheckpointChange {
  const path = join(logDir, file);
  return withCheckpointLock(
    logDir,
    () => {
      const textBefore = readText(path);
      const entries = textBefore === null ? [] : parseOffsetCheckpoint(Buffer.from(textBefore, 'utf8'), path);
      let before: bigint | null = null;
      for (const e of entries) if (e.topic === topic && e.partition === partition) before = e.offset;
      const textAfter = formatOffsetCheckpoint(withEntry(entries, topic, partition, value));
      steps.writeCheckpoint(path, textAfter);
      return { file, topic, partition, before: before === null ? null : before.toString(), after: value === null ? null : value.toString(), textBefore, textAfter };
    },
    { purpose: `klx cleaner: ${file}` },
  );
}

/**
 * Puts the partition's entry back as it was before `change`. When the file still holds exactly the
 * text the run wrote, its previous text is restored byte for byte (or the file removed when the run
 * created it); otherwise only this partition's line is changed (put back, or removed when absent).
 * @throws KlxError `corrupt-checkpoint`, `locked`, `io-error`.
 */
export function restoreCheckpointEntry(logDir: string, change: CheckpointChange, steps: FileSteps): void {
  const path = join(logDir, change.file);
  withCheckpointLock(
    logDir,
    () => {
      const now = readText(path);
      if (now === change.textAfter) {
        if (change.textBefore === null) steps.unlink('write-checkpoint', path);
        else steps.writeCheckpoint(path, change.textBefore);
        return;
      }
      const entries = now === null ? [] : parseOffsetCheckpoint(Buffer.from(now, 'utf8'), path);
      steps.writeCheckpoint(path, formatOffsetCheckpoint(withEntry(entries, change.topic, change.partition, change.before === null ? null : BigInt(change.before))));
    },
    { purpose: `klx undo: ${change.file}` },
  );
}
