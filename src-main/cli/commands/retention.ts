/**
 * `klx retention DIR [--retention-ms N] [--retention-bytes N] [--delete-before-offset N] [--now MS]
 * [--dry-run] [--json] [--config K=V...] [--trash-dir DIR] [--explain [--explain-limit N]]`: deletes the segments a broker's
 * retention would delete (UnifiedLog.deleteOldSegments; spec §12), in every partition under DIR (a partition folder, a log
 * directory or a folder of log directories). `--dry-run` prints the plan and touches nothing; a run
 * keeps the deleted files in the trash (`klx undo DIR` puts them back).
 *
 * Config flags take Kafka's names and defaults; invalid values are refused with the reason (the
 * flags and their parsers are declared in `../registry.ts`). Also exports the output helper the
 * other cleaner commands share.
 */
import { exitCodeOfErrors } from '../exit-codes.ts';
import { instantUtc } from '../time-arg.ts';
import { reportJson, reportText } from '../../engine/cleaner/cleaner-plan.ts';
import { decisionJson, decisionText } from '../../engine/cleaner/decisions.ts';
import { retention, type CleanerOutcome } from '../../engine/cleaner/cleaner.ts';
import type { TopicConfig } from '../../engine/log/topic-config.ts';

/**
 * Prints an outcome (text or JSON) and sets the exit code: 1 when a partition failed. `now` (ms): the
 * `--now` given, echoed in UTC on stderr (each report's JSON carries `now` in ms).
 */
export function printOutcome(outcome: CleanerOutcome, json: boolean, explain = false, now?: number): void {
  // On stderr, so that stdout stays the report (one line for a pass that changes nothing; JSON with --json).
  if (now !== undefined) process.stderr.write(`klx: now ${instantUtc(now)} (--now ${now} ms since the epoch, UTC)\n`);
  if (explain && json) {
    // NDJSON: one decision per line.
    for (const p of outcome.partitions) {
      for (const row of p.report?.decisions?.rows ?? []) process.stdout.write(JSON.stringify({ ...decisionJson(row), topic: p.topic, partition: p.partition }) + '\n');
    }
  } else if (json) {
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
        ...(p.uncleanableBytes !== undefined ? { uncleanableBytes: p.uncleanableBytes } : {}),
      })),
    };
    // One line, as every other --json of klx (compact JSON; NDJSON where there are several objects).
    process.stdout.write(JSON.stringify(o) + '\n');
  } else {
    for (const p of outcome.partitions) {
      if (p.report) process.stdout.write(reportText(p.report).join('\n') + '\n');
      if (p.report && explain) {
        const d = p.report.decisions;
        const rows = d?.rows ?? [];
        process.stdout.write(`  decisions (${rows.length} rows for ${d?.total ?? 0} decisions${d?.summarized ? `; beyond ${d.limit} they are summarised per segment and reason` : ''}):\n`);
        for (const row of rows) process.stdout.write(decisionText(row) + '\n');
      }
      if (p.error) process.stdout.write(`${p.topic}-${p.partition}: NOT DONE (${p.error.code}): ${p.error.message}${typeof p.uncleanableBytes === 'number' ? `; uncleanable: ${p.uncleanableBytes} bytes (Kafka's uncleanable-bytes: the dirty segments from the first dirty offset, LogCleanerManager)` : ''}\n`);
    }
    if (outcome.partitions.length === 0) process.stdout.write('no partition found\n');
  }
  const failed = outcome.partitions.filter((p) => p.error);
  if (failed.length > 0) {
    process.stderr.write(`klx: ${failed.length} partition(s) not done: ${failed.map((p) => `${p.topic}-${p.partition} (${p.error!.code})`).join(', ')}\n`);
    // Exit 2 when every partition refused what was asked (invalid-config, invalid-argument), else 1 (README: exit codes).
    process.exitCode = exitCodeOfErrors(failed.map((p) => p.error!));
  }
}

export interface RetentionFlags {
  retentionMs?: bigint;
  retentionBytes?: bigint;
  deleteBeforeOffset?: bigint;
  now?: number;
  dryRun?: boolean;
  json?: boolean;
  config?: Partial<TopicConfig>;
  trashDir?: string;
  explain?: boolean;
  explainLimit?: number;
}

/** Runs `klx retention` (its options and help are declared in `../registry.ts`). */
export function runRetention(dir: string, flags: RetentionFlags): void {
  const config: Partial<TopicConfig> = { ...(flags.config ?? {}) };
  if (flags.retentionMs !== undefined) config['retention.ms'] = flags.retentionMs;
  if (flags.retentionBytes !== undefined) config['retention.bytes'] = flags.retentionBytes;
  const outcome = retention(dir, {
    config,
    ...(flags.now !== undefined ? { now: flags.now } : {}),
    ...(flags.deleteBeforeOffset !== undefined ? { deleteBeforeOffset: flags.deleteBeforeOffset } : {}),
    dryRun: flags.dryRun ?? false,
    ...(flags.trashDir ? { trashDir: flags.trashDir } : {}),
    ...(flags.explain ? { explain: { ...(flags.explainLimit !== undefined ? { limit: flags.explainLimit } : {}) } } : {}),
  });
  printOutcome(outcome, flags.json ?? false, flags.explain ?? false, flags.now);
}
