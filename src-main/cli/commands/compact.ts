/**
 * `klx compact DIR [--delete-retention-ms N] [--min-compaction-lag-ms N] [--segment-bytes N]
 * [--rules kafka|classic] [--now MS] [--dry-run] [--json] [--like-broker] [--config K=V...]
 * [--dedupe-buffer-size N] [--key-hash murmur3|md5] [--trash-dir DIR] [--explain [--explain-limit N]]`: compacts every partition under DIR the way a broker's
 * log cleaner does (spec §13; LogCleaner.Cleaner), then applies retention when cleanup.policy is compact,delete
 * (as the cleaner thread does after cleaning: LogCleanerManager.deletableLogs, UnifiedLog.deleteOldSegments).
 * `--dry-run` prints the plan and touches nothing; a run keeps the replaced segments in the trash
 * (`klx undo DIR` puts them back). A corrupt partition is reported uncleanable (exit status 1) and
 * the others are still compacted.
 *
 * Rules: `kafka` (default) is Kafka ≥ 3.1; `classic` is the textbook model (keyless records kept,
 * a tombstone removed in one pass once older than delete.retention.ms) — see `cleaner-rules.ts`.
 *
 * `--key-hash md5` digests keys as Kafka's `SkimpyOffsetMap` does (`key-hash.ts`): the default
 * MurmurHash3 is cheaper but has seed-independent multicollisions, so keys crafted to collide could
 * make the default drop a record a broker keeps; with MD5 the same keys collide for both.
 */
import { compact } from '../../engine/cleaner/cleaner.ts';
import { keyHashAlgorithm } from '../../engine/cleaner/key-hash.ts';
import { MAP_BUILD_WORKER } from '../../engine/cleaner/map-builder.ts';
import { startEntryWorker } from '../../api/core/entry-worker.ts';
import type { TopicConfig } from '../../engine/log/topic-config.ts';
import { printOutcome } from './retention.ts';

export interface CompactFlags {
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
  /** The offset map's key digest: `murmur3` (default) or `md5` (Kafka's). */
  keyHash?: 'murmur3' | 'md5';
  trashDir?: string;
  explain?: boolean;
  explainLimit?: number;
}

/** Runs `klx compact` (its options and help are declared in `../registry.ts`). */
export function runCompact(dir: string, flags: CompactFlags): void {
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
    ...(flags.keyHash !== undefined ? { keyHash: keyHashAlgorithm(flags.keyHash) } : {}),
    mapWorker: () => startEntryWorker(MAP_BUILD_WORKER.entry, MAP_BUILD_WORKER.near),
    dryRun: flags.dryRun ?? false,
    ...(flags.trashDir ? { trashDir: flags.trashDir } : {}),
    ...(flags.explain ? { explain: { ...(flags.explainLimit !== undefined ? { limit: flags.explainLimit } : {}) } } : {}),
  });
  printOutcome(outcome, flags.json ?? false, flags.explain ?? false, flags.now);
}
