/**
 * `klx compact DIR [--delete-retention-ms N] [--min-compaction-lag-ms N] [--segment-bytes N]
 * [--rules kafka|classic] [--now MS] [--dry-run] [--json] [--like-broker] [--config K=V...]
 * [--dedupe-buffer-size N] [--trash-dir DIR]`: compacts every partition under DIR the way a broker's
 * log cleaner does (spec §13), then applies retention when cleanup.policy is compact,delete.
 * `--dry-run` prints the plan and touches nothing; a run keeps the replaced segments in the trash
 * (`klx undo DIR` puts them back). A corrupt partition is reported uncleanable (exit status 1) and
 * the others are still compacted.
 *
 * Rules: `kafka` (default) is Kafka ≥ 3.1; `classic` is the textbook model (keyless records kept,
 * a tombstone removed in one pass once older than delete.retention.ms) — see `cleaner-rules.ts`.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { compact } from '../../engine/cleaner/cleaner.ts';
import type { TopicConfig } from '../../engine/log/topic-config.ts';
import { parseNonNegativeInt } from '../output.ts';
import { collectConfig, configFlag, nowFlag, printOutcome } from './retention.ts';

interface CompactFlags {
  deleteRetentionMs?: bigint;
  minCompactionLagMs?: bigint;
  maxCompactionLagMs?: bigint;
  segmentBytes?: number;
  minCleanableDirtyRatio?: number;
  rules?: 'kafka' | 'classic';
  now?: number;
  dryRun?: boolean;
  json?: boolean;
  likeBroker?: boolean;
  config?: Partial<TopicConfig>;
  dedupeBufferSize?: number;
  trashDir?: string;
}

/** Registers `klx compact`. */
export function registerCompact(program: Command): void {
  program
    .command('compact')
    .description('compact partitions as a broker\'s log cleaner would (latest value per key, tombstones, transactions), keeping replaced segments in the trash for klx undo')
    .argument('<dir>', 'partition folder, log directory or folder of log directories')
    .option('--delete-retention-ms <n>', 'delete.retention.ms: how long tombstones and transaction markers survive (default 86400000)', configFlag('delete.retention.ms'))
    .option('--min-compaction-lag-ms <n>', 'min.compaction.lag.ms: records younger than this stay uncompacted (default 0)', configFlag('min.compaction.lag.ms'))
    .option('--max-compaction-lag-ms <n>', 'max.compaction.lag.ms: dirty data older than this is cleaned even below the dirty ratio', configFlag('max.compaction.lag.ms'))
    .option('--segment-bytes <n>', 'segment.bytes: largest cleaned segment (default 1073741824)', configFlag('segment.bytes'))
    .option('--min-cleanable-dirty-ratio <r>', 'min.cleanable.dirty.ratio, used with --like-broker (default 0.5)', configFlag('min.cleanable.dirty.ratio'))
    .option('--rules <rules>', 'kafka (Kafka ≥ 3.1, the default) or classic (the textbook model)', (v: string) => {
      if (v !== 'kafka' && v !== 'classic') throw new InvalidArgumentError(`--rules must be kafka or classic, got "${v}"`);
      return v;
    })
    .option('--like-broker', 'clean only when a broker would (dirty ratio above min.cleanable.dirty.ratio, or past max.compaction.lag.ms)')
    .option('--now <ms>', 'the clock to use, ms since the epoch (default: now)', nowFlag)
    .option('--dry-run', 'print the plan; change nothing')
    .option('--json', 'print the result as JSON')
    .option('--config <k=v>', 'another topic config (repeatable), e.g. cleanup.policy=compact,delete', collectConfig)
    .option('--dedupe-buffer-size <n>', 'bytes of the key map (log.cleaner.dedupe.buffer.size, default 134217728); more keys than fit take several passes', (v) => {
      const n = parseNonNegativeInt(v, '--dedupe-buffer-size');
      if (n < 48) throw new InvalidArgumentError(`--dedupe-buffer-size must hold at least 2 keys (48 bytes), got ${n}`);
      return n;
    })
    .option('--trash-dir <dir>', 'where replaced files are kept for undo (default: $KLX_TRASH_DIR or the user data folder)')
    .action((dir: string, flags: CompactFlags) => {
      const config: Partial<TopicConfig> = { ...(flags.config ?? {}) };
      if (flags.deleteRetentionMs !== undefined) config['delete.retention.ms'] = flags.deleteRetentionMs;
      if (flags.minCompactionLagMs !== undefined) config['min.compaction.lag.ms'] = flags.minCompactionLagMs;
      if (flags.maxCompactionLagMs !== undefined) config['max.compaction.lag.ms'] = flags.maxCompactionLagMs;
      if (flags.segmentBytes !== undefined) config['segment.bytes'] = flags.segmentBytes;
      if (flags.minCleanableDirtyRatio !== undefined) config['min.cleanable.dirty.ratio'] = flags.minCleanableDirtyRatio;
      const outcome = compact(dir, {
        config,
        rules: flags.rules ?? 'kafka',
        likeBroker: flags.likeBroker ?? false,
        ...(flags.now !== undefined ? { now: flags.now } : {}),
        ...(flags.dedupeBufferSize !== undefined ? { dedupeBufferSize: flags.dedupeBufferSize } : {}),
        dryRun: flags.dryRun ?? false,
        ...(flags.trashDir ? { trashDir: flags.trashDir } : {}),
      });
      printOutcome(outcome, flags.json ?? false);
    });
}
