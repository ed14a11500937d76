/**
 * `klx retention DIR [--retention-ms N] [--retention-bytes N] [--delete-before-offset N] [--now MS]
 * [--dry-run] [--json] [--config K=V...] [--trash-dir DIR]`: deletes the segments a broker's
 * retention would delete (spec §12), in every partition under DIR (a partition folder, a log
 * directory or a folder of log directories). `--dry-run` prints the plan and touches nothing; a run
 * keeps the deleted files in the trash (`klx undo DIR` puts them back).
 *
 * Config flags take Kafka's names and defaults; invalid values are refused with the reason. Also
 * exports the helpers the other cleaner commands share (output, flag parsers).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { KlxError } from '../../engine/errors.ts';
import { reportJson, reportText } from '../../engine/cleaner/cleaner-plan.ts';
import { retention, type CleanerOutcome } from '../../engine/cleaner/cleaner.ts';
import { parseConfigPairs, parseConfigValue, type TopicConfig, type TopicConfigKey } from '../../engine/log/topic-config.ts';

/** Parses a config flag with Kafka's validation; commander prints the reason on failure. */
export function configFlag<K extends TopicConfigKey>(key: K): (v: string) => TopicConfig[K] {
  return (v: string) => {
    try {
      return parseConfigValue(key, v);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof KlxError ? err.reason : String(err));
    }
  };
}

/** Collects repeated `--config k=v` flags, validating each. */
export function collectConfig(v: string, prev: Partial<TopicConfig> = {}): Partial<TopicConfig> {
  try {
    return { ...prev, ...parseConfigPairs([v]) };
  } catch (err) {
    throw new InvalidArgumentError(err instanceof KlxError ? err.reason : String(err));
  }
}

/** Parses a non-negative int64 flag (offsets, `--now`). */
export function int64Flag(name: string): (v: string) => bigint {
  return (v: string) => {
    if (!/^\d{1,19}$/.test(v.trim()) || BigInt(v.trim()) > 9223372036854775807n) throw new InvalidArgumentError(`${name} must be a non-negative integer, got "${v}"`);
    return BigInt(v.trim());
  };
}

/** Parses `--now MS` (ms since the epoch). */
export function nowFlag(v: string): number {
  if (!/^\d{1,16}$/.test(v.trim())) throw new InvalidArgumentError(`--now must be milliseconds since the epoch (a non-negative integer), got "${v}"`);
  return Number(v.trim());
}

/**
 * Prints an outcome (text or JSON) and sets the exit code: 1 when a partition failed.
 */
export function printOutcome(outcome: CleanerOutcome, json: boolean): void {
  if (json) {
    const o = {
      runId: outcome.runId,
      dryRun: outcome.dryRun,
      partitions: outcome.partitions.map((p) => ({
        partitionDir: p.partitionDir,
        rel: p.rel,
        topic: p.topic,
        partition: p.partition,
        ...(p.report ? { report: reportJson(p.report) } : {}),
        ...(p.error ? { error: p.error } : {}),
      })),
    };
    process.stdout.write(JSON.stringify(o, null, 2) + '\n');
  } else {
    for (const p of outcome.partitions) {
      if (p.report) process.stdout.write(reportText(p.report).join('\n') + '\n');
      if (p.error) process.stdout.write(`${p.topic}-${p.partition}: NOT DONE (${p.error.code}): ${p.error.message}\n`);
    }
    if (outcome.partitions.length === 0) process.stdout.write('no partition found\n');
  }
  const failed = outcome.partitions.filter((p) => p.error);
  if (failed.length > 0) {
    process.stderr.write(`klx: ${failed.length} partition(s) not done: ${failed.map((p) => `${p.topic}-${p.partition} (${p.error!.code})`).join(', ')}\n`);
    process.exitCode = 1;
  }
}

interface RetentionFlags {
  retentionMs?: bigint;
  retentionBytes?: bigint;
  deleteBeforeOffset?: bigint;
  now?: number;
  dryRun?: boolean;
  json?: boolean;
  config?: Partial<TopicConfig>;
  trashDir?: string;
}

/** Registers `klx retention`. */
export function registerRetention(program: Command): void {
  program
    .command('retention')
    .description('delete the segments a broker\'s retention would delete (time, size, log start offset), keeping them in the trash for klx undo')
    .argument('<dir>', 'partition folder, log directory or folder of log directories')
    .option('--retention-ms <n>', 'retention.ms: delete a segment once now − its largest timestamp exceeds N ms (−1: never; default 604800000)', configFlag('retention.ms'))
    .option('--retention-bytes <n>', 'retention.bytes: keep each partition below N bytes of .log, whole segments only (−1: unlimited, the default)', configFlag('retention.bytes'))
    .option('--delete-before-offset <n>', 'raise the log start offset to N (DeleteRecords) and delete the segments wholly below it', int64Flag('--delete-before-offset'))
    .option('--now <ms>', 'the clock to use, ms since the epoch (default: now)', nowFlag)
    .option('--dry-run', 'print the plan; change nothing')
    .option('--json', 'print the result as JSON')
    .option('--config <k=v>', 'another topic config (repeatable), e.g. cleanup.policy=compact,delete', collectConfig)
    .option('--trash-dir <dir>', 'where replaced files are kept for undo (default: $KLX_TRASH_DIR or the user data folder)')
    .action((dir: string, flags: RetentionFlags) => {
      const config: Partial<TopicConfig> = { ...(flags.config ?? {}) };
      if (flags.retentionMs !== undefined) config['retention.ms'] = flags.retentionMs;
      if (flags.retentionBytes !== undefined) config['retention.bytes'] = flags.retentionBytes;
      const outcome = retention(dir, {
        config,
        ...(flags.now !== undefined ? { now: flags.now } : {}),
        ...(flags.deleteBeforeOffset !== undefined ? { deleteBeforeOffset: flags.deleteBeforeOffset } : {}),
        dryRun: flags.dryRun ?? false,
        ...(flags.trashDir ? { trashDir: flags.trashDir } : {}),
      });
      printOutcome(outcome, flags.json ?? false);
    });
}
