/**
 * `klx create DIR [--config k=v ...] [--dry-run] [--json]`: creates an empty partition folder
 * `DIR = <logdir>/<topic>-<partition>` the way a broker does for a new partition it leads with epoch 0
 * (LogManager.getOrCreateLog, Partition.makeLeader; engine: `createPartition` in `engine/log/partition-writer.ts`). `--config` values are validated
 * with Kafka's rules and saved in the folder's `klx-topic.properties` sidecar.
 */
import { basename, dirname } from 'node:path';
import { KlxError } from '../../engine/errors.ts';
import { parsePartitionDirName } from '../../engine/files/file-names.ts';
import { createPartition, planCreatePartition, type CreatePartitionPlan } from '../../engine/log/partition-create.ts';
import { formatConfigValue, parseConfigPairs, resolveTopicConfig, segmentBytesNote, type TopicConfig, type TopicConfigKey } from '../../engine/log/topic-config.ts';
import { printResult } from './append.ts';

export interface CreateOptions {
  config: string[];
  dryRun?: boolean;
  json?: boolean;
}

/**
 * Splits a partition folder path into its log dir, topic and partition.
 * @throws KlxError `invalid-argument` when the folder name is not `<topic>-<partition>`.
 */
export function partitionPathParts(dir: string): { logDir: string; topic: string; partition: number } {
  const parsed = parsePartitionDirName(basename(dir));
  if (!parsed || parsed.kind !== 'normal') {
    throw new KlxError('invalid-argument', `"${basename(dir)}" is not a partition folder name: give <logdir>/<topic>-<partition>, e.g. /data/kafka-logs/orders-0`, { file: dir });
  }
  return { logDir: dirname(dir), topic: parsed.topic, partition: parsed.partition };
}

/** Runs `klx create` (its options and help are declared in `../registry.ts`). */
export async function runCreate(dir: string, opts: CreateOptions): Promise<void> {
  const { logDir, topic, partition } = partitionPathParts(dir);
  const config = parseConfigPairs(opts.config);
  const plan = opts.dryRun ? planCreatePartition(logDir, topic, partition, config) : createPartition(logDir, topic, partition, config);
  // segment.bytes below 1 MiB: accepted as a Kafka 4.0 topic config, refused by 4.1+ (LogConfig); say so.
  const seg = segmentBytesNote(resolveTopicConfig(topic, null, config));
  const notes = seg ? [seg] : [];
  await printResult({ ...plan, dryRun: Boolean(opts.dryRun), notes }, Boolean(opts.json), () => [...createText(plan, Boolean(opts.dryRun)), ...notes.map((n) => `note: ${n}`)]);
}

function createText(plan: CreatePartitionPlan, dryRun: boolean): string[] {
  const mp = plan.metaProperties;
  const cfg = Object.entries(plan.config).map(([k, v]) => `${k}=${formatConfigValue(k as TopicConfigKey, v as TopicConfig[TopicConfigKey])}`);
  return [
    `${dryRun ? 'would create' : 'created'} partition ${plan.topic}-${plan.partition}: ${plan.dir}`,
    `  topic id: ${plan.topicId}`,
    `  files: ${plan.files.join(', ')}`,
    `  leader epoch 0 starts at offset 0; log end offset 0`,
    `  meta.properties: ${mp.create ? `${dryRun ? 'would be created' : 'created'} (version 1, node.id ${mp.nodeId}, cluster.id ${mp.clusterId}, directory.id ${mp.directoryId})` : 'kept as it is'}`,
    `  config: ${cfg.length ? cfg.join(', ') : '(Kafka defaults)'}`,
  ];
}
