/**
 * One partition's entry in a log-directory offset checkpoint (`log-start-offset-checkpoint`,
 * `cleaner-offset-checkpoint`; spec §11.1; Kafka's `OffsetCheckpointFile`, updated the way
 * `LogManager.checkpointLogStartOffsetsInDir` / `LogCleanerManager.updateCheckpoints` do it), as the
 * cleaner changes and undoes it: read the file, replace (or add, or drop) this partition's line, write
 * it back atomically (`.tmp`, fsync, rename, fsync of the folder; fault points `write-checkpoint`).
 * The read-modify-write under the log directory's checkpoint lock is `log/checkpoint-entry.ts`'s
 * (shared with the partition writer); this module adds the trash manifest's record of the change,
 * and undo, which puts back only this partition's entry unless the file is still exactly what the run
 * wrote (then the previous bytes are restored as they were).
 */
import { join } from 'node:path';
import { formatOffsetCheckpoint, parseOffsetCheckpoint } from '../files/checkpoint.ts';
import { checkpointEntryOf, readCheckpointBytes, updateCheckpointEntry, withCheckpointEntry } from '../log/checkpoint-entry.ts';
import { withCheckpointLock } from '../log/log-lock.ts';
import type { FileSteps } from './file-steps.ts';
import type { CheckpointChange } from './trash.ts';

/** The partition's entry in a checkpoint file, or null (file or entry absent). */
export function readCheckpointEntry(logDir: string, file: string, topic: string, partition: number): bigint | null {
  const path = join(logDir, file);
  const bytes = readCheckpointBytes(path);
  if (bytes === null) return null;
  return checkpointEntryOf(parseOffsetCheckpoint(bytes, path), topic, partition);
}

/**
 * Sets (or with `value` null removes) the partition's entry in `logDir/file`, atomically and under
 * the checkpoint lock.
 * @returns the change, for the trash manifest.
 * @throws KlxError `corrupt-checkpoint` when the existing file cannot be parsed (it is left alone),
 *   `locked`, `io-error`; a {@link SimulatedCrash} from the fault hook.
 */
export function setCheckpointEntry(logDir: string, file: string, topic: string, partition: number, value: bigint | null, steps: FileSteps): CheckpointChange {
  const u = updateCheckpointEntry(logDir, file, topic, partition, value, { fault: steps.checkpointFault(), purpose: `klx cleaner: ${file}` });
  return { file, topic, partition, before: u.before === null ? null : u.before.toString(), after: value === null ? null : value.toString(), textBefore: u.textBefore, textAfter: u.textAfter! };
}

/**
 * Puts the partition's entry back as it was before `change`. When the file still holds exactly the
 * text the run wrote (and the change is not `lineOnly`), its previous text is restored byte for byte
 * (or the file removed when the run created it); otherwise only this partition's line is changed
 * (put back, or removed when absent).
 * @throws KlxError `corrupt-checkpoint`, `locked`, `io-error`.
 */
export function restoreCheckpointEntry(logDir: string, change: CheckpointChange, steps: FileSteps): void {
  const path = join(logDir, change.file);
  withCheckpointLock(
    logDir,
    () => {
      const bytes = readCheckpointBytes(path);
      if (!change.lineOnly && bytes !== null && bytes.toString('utf8') === change.textAfter) {
        if (change.textBefore === null) steps.unlink('write-checkpoint', path);
        else steps.writeCheckpoint(path, change.textBefore);
        return;
      }
      const entries = bytes === null ? [] : parseOffsetCheckpoint(bytes, path);
      steps.writeCheckpoint(path, formatOffsetCheckpoint(withCheckpointEntry(entries, change.topic, change.partition, change.before === null ? null : BigInt(change.before))));
    },
    { purpose: `klx undo: ${change.file}` },
  );
}
