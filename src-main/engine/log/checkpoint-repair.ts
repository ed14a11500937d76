/**
 * The rewrite `klx repair` offers for a log-directory offset checkpoint it cannot parse
 * (`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`, `replication-offset-checkpoint`,
 * `cleaner-offset-checkpoint`). This is the user's choice, not what a broker does: a broker that reads
 * such a file takes the whole log directory offline (`CheckpointFileWithFailureHandler.read` reports
 * the IOException to `LogDirFailureChannel`; see `unreadableCheckpointConsequence` in quick-check.ts)
 * and never rewrites it at startup (a number that does not parse leaves the directory online: then the
 * broker's periodic checkpoint rewrites the recovery-point and log-start files, see `brokerDoes`).
 *
 * The new file holds the values the broker's own fallbacks would use, from what the folder's
 * partitions say (the old values are lost; the old file goes to the trash):
 * - `recovery-point-offset-checkpoint`: each partition's first segment base offset, i.e. nothing is
 *   known to be flushed: the next unclean start recovers every segment (`LogManager.loadLogs` falls
 *   back to recovery point 0, which `LogLoader` reads as "recover from the first segment");
 * - `log-start-offset-checkpoint`: each partition's first segment base offset (`LogManager.loadLogs`'
 *   fallback; `UnifiedLog` starts the log there);
 * - `cleaner-offset-checkpoint`: no entry (`LogCleanerManager.allCleanerCheckpoints` treats an
 *   unreadable file as empty; the cleaner then starts each log at its log start offset);
 * - `replication-offset-checkpoint`: no entry: the high watermarks are not known offline
 *   (`Partition.createLogIfNotExists` starts a partition without an entry at high watermark 0, bounded
 *   to the log start offset, until its replicas agree again).
 * Partitions in `-delete` folders and stray logs get no entry (a broker checkpoints only its current and
 * future logs, `LogManager.checkpointLogRecoveryOffsetsInDir`).
 */
import { basename, join } from 'node:path';
import type { OffsetCheckpointEntry } from '../files/checkpoint.ts';
import { formatOffsetCheckpoint } from '../files/checkpoint.ts';
import type { LogDirectory } from './log-dir.ts';
import type { PartitionLog } from './partition-log.ts';

/**
 * What a broker does instead, by the file and the parse error's kind (see `unreadableCheckpointConsequence`):
 * a malformed file takes the log directory offline (CheckpointFileWithFailureHandler.read), so nothing
 * rewrites it; a number that does not parse leaves the directory online, and for the recovery-point and
 * log-start checkpoints LogManager.loadLogs falls back and its periodic checkpoint then writes the file
 * anew from the loaded logs (LogManager.checkpointLogRecoveryOffsets / checkpointLogStartOffsets, every
 * `log.flush.offset.checkpoint.interval.ms` / `log.flush.start.offset.checkpoint.interval.ms`, 60 s by default).
 */
function brokerDoes(name: string, kind: unknown): string {
  if (kind !== 'number-format') return 'a broker never rewrites it (on a malformed file it takes the log directory offline: CheckpointFileWithFailureHandler.read, LogDirFailureChannel)';
  const nf = 'a number that does not parse is a NumberFormatException, which CheckpointFileWithFailureHandler does not catch, so the directory stays online';
  if (name === 'recovery-point-offset-checkpoint')
    return `a broker does not rewrite it at startup (${nf}: LogManager.loadLogs recovers from recovery point 0, then LogManager.checkpointLogRecoveryOffsets writes the file anew from what it loaded, every log.flush.offset.checkpoint.interval.ms (60 s by default))`;
  if (name === 'log-start-offset-checkpoint')
    return `a broker does not rewrite it at startup (${nf}: LogManager.loadLogs starts each log at its first segment, then LogManager.checkpointLogStartOffsets writes the file anew from what it loaded, every log.flush.start.offset.checkpoint.interval.ms (60 s by default))`;
  return `a broker never rewrites it (${nf}; the verify finding says where it ends)`;
}

/** Names of the log-directory offset checkpoints a repair may rewrite. */
export const REWRITABLE_CHECKPOINTS = ['recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint', 'cleaner-offset-checkpoint'] as const;

/** One checkpoint file a repair would rewrite. */
export interface CheckpointRewrite {
  /** Absolute path of the file. */
  file: string;
  name: (typeof REWRITABLE_CHECKPOINTS)[number];
  /** Why it cannot be read (the parse error, with its byte position when known). */
  problem: string;
  position?: number;
  /** What the new file holds, and its text. */
  entries: OffsetCheckpointEntry[];
  text: string;
  /** One sentence: what is written and what a broker does instead. */
  reason: string;
}

/**
 * The rewrites of a log directory's unparsable offset checkpoints (see the module comment).
 * @param logDir the log directory as opened; `partitions` are the logs whose entries are written (open
 *   the whole directory: a log left out would lose its entry).
 * @returns one rewrite per unparsable checkpoint; empty when every checkpoint reads (a missing file
 *   is fine: it means no entries) or is a symlink the policy refuses (left alone).
 */
export function planCheckpointRewrites(logDir: Pick<LogDirectory, 'path' | 'checkpoints' | 'partitions'>): CheckpointRewrite[] {
  const out: CheckpointRewrite[] = [];
  const logs = logDir.partitions.filter((p) => p.kind === 'normal' || p.kind === 'future').sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  const firstBase = (p: PartitionLog) => p.segments[0]?.baseOffset ?? p.logStartOffset;
  for (const problem of logDir.checkpoints.problems) {
    const name = basename(problem.file) as CheckpointRewrite['name'];
    if (!REWRITABLE_CHECKPOINTS.includes(name) || problem.code === 'symlink-outside' || problem.code === 'not-found') continue;
    let entries: OffsetCheckpointEntry[] = [];
    let what: string;
    switch (name) {
      case 'recovery-point-offset-checkpoint':
        entries = logs.map((p) => ({ topic: p.topic, partition: p.partition, offset: firstBase(p) }));
        what = `recovery point = each partition's first segment base offset (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}): the next start without a clean shutdown recovers every segment, as LogManager.loadLogs' fallback (recovery point 0) would`;
        break;
      case 'log-start-offset-checkpoint':
        entries = logs.map((p) => ({ topic: p.topic, partition: p.partition, offset: firstBase(p) }));
        what = `log start offset = each partition's first segment base offset (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}), LogManager.loadLogs' fallback; a log start raised by DeleteRecords above it is lost`;
        break;
      case 'cleaner-offset-checkpoint':
        what = 'no entry: the cleaner starts each compacted log at its log start offset, as LogCleanerManager.allCleanerCheckpoints does with an unreadable file (records already cleaned are cleaned again, with the same result)';
        break;
      case 'replication-offset-checkpoint':
        what = 'no entry: the high watermarks are unknown offline; a broker starts such a partition at the log start offset (Partition.createLogIfNotExists) until its replicas agree again';
        break;
    }
    out.push({
      file: join(logDir.path, name),
      name,
      problem: problem.reason,
      ...(problem.position !== undefined ? { position: problem.position } : {}),
      entries,
      text: formatOffsetCheckpoint(entries),
      reason: `rewrite ${name} (unparsable: ${problem.reason}) with ${what}. Your choice, not a broker's: ${brokerDoes(name, problem.details?.kind)}; the old file goes to the trash`,
    });
  }
  return out;
}
