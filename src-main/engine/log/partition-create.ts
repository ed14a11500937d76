/**
 * Creating a partition folder as a broker does for a new partition it leads with epoch 0
 * (`LogManager.createLog` + `Partition.makeLeader`; spec §11): plan first, then build it under a
 * temporary `-delete` name and rename it into place.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, statSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { KlxError } from '../errors.ts';
import {
  LEADER_EPOCH_CHECKPOINT_FILE,
  META_PROPERTIES_FILE,
  PARTITION_METADATA_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  partitionDirName,
  segmentFileName,
} from '../files/file-names.ts';
import {
  formatLeaderEpochCheckpoint,
  formatPartitionMetadata,
  writeMetaProperties,
  uuidFromBytes,
  METADATA_TOPIC_ID,
  ZERO_UUID,
} from '../files/checkpoint.ts';
import { fsyncDirectory, writeFileDurable } from '../files/fsync-write.ts';
import { SIDECAR_FILE, formatConfigValue, formatSidecar, parseConfigValue, type TopicConfig, type TopicConfigKey } from './topic-config.ts';
import { updateCheckpointEntry } from './checkpoint-entry.ts';
import { Stepper, createEmptyFile, type WriterFaultHook, type WriterStep } from './write-steps.ts';

/** A random Kafka `Uuid` printed as 22 URL-safe base64 characters (`Uuid.randomUuid`: a v4 UUID, never the zero or metadata id, never starting with '-'). */
export function randomKafkaUuid(): string {
  for (;;) {
    const bytes = Buffer.from(randomUUID().replace(/-/g, ''), 'hex');
    const s = uuidFromBytes(bytes);
    if (s !== ZERO_UUID && s !== METADATA_TOPIC_ID && !s.startsWith('-')) return s;
  }
}

/** Validates a typed partial config the way the CLI parser would (round trip through the text form). */
function validateConfig(cfg: Partial<TopicConfig>): void {
  for (const [k, v] of Object.entries(cfg)) {
    if (v === undefined) continue;
    parseConfigValue(k as TopicConfigKey, formatConfigValue(k as TopicConfigKey, v as TopicConfig[TopicConfigKey]));
  }
}

// ---------------------------------------------------------------------------------------------
// Create

/** Options of {@link createPartition} / {@link planCreatePartition}. */
export interface CreatePartitionOptions {
  /** Fault-injection hook (tests). */
  fault?: WriterFaultHook;
  /** Topic id to write into `partition.metadata` (default: a random Kafka Uuid). */
  topicId?: string;
}

/** What {@link createPartition} creates (or, as a plan, would create). */
export interface CreatePartitionPlan {
  /** The new partition folder `<logDir>/<topic>-<partition>` (absolute). */
  dir: string;
  logDir: string;
  topic: string;
  partition: number;
  /** 22-character base64 topic id written to `partition.metadata`. */
  topicId: string;
  /** Files created inside the partition folder, by name. */
  files: string[];
  /** `meta.properties` of the log dir: created (version 1, node.id 0, random cluster.id/directory.id) or kept. */
  metaProperties: { path: string; create: boolean; nodeId?: number; clusterId?: string; directoryId?: string };
  /** Topic configs written to the sidecar `klx-topic.properties` (only those given). */
  config: Partial<TopicConfig>;
}

/**
 * Plans the creation of a partition folder without touching anything (see {@link createPartition}).
 * @throws KlxError `invalid-argument` for an illegal topic or partition, the KRaft metadata topic,
 *   a folder that exists and is not empty, or a log dir path that is a file; `invalid-config` for a
 *   config value out of range.
 */
export function planCreatePartition(logDir: string, topic: string, partition: number, config: Partial<TopicConfig> = {}, opts: CreatePartitionOptions = {}): CreatePartitionPlan {
  const absLogDir = resolve(logDir);
  const name = partitionDirName(topic, partition);
  if (topic.length > 249) throw new KlxError('invalid-argument', `topic name is ${topic.length} characters; Kafka allows at most 249`);
  if (topic === '__cluster_metadata') throw new KlxError('invalid-argument', '__cluster_metadata is the KRaft metadata log, which only a controller writes');
  validateConfig(config);
  if (existsSync(absLogDir) && !statSync(absLogDir).isDirectory()) throw new KlxError('invalid-argument', 'the log directory path is a file', { file: absLogDir });
  const dir = join(absLogDir, name);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new KlxError('invalid-argument', 'a file with the partition folder name already exists', { file: dir });
    const inside = readdirSync(dir);
    if (inside.length > 0) {
      throw new KlxError('invalid-argument', `the partition folder already exists and is not empty (${inside.length} entr${inside.length === 1 ? 'y' : 'ies'}); refusing to overwrite it`, { file: dir });
    }
  }
  const topicId = opts.topicId ?? randomKafkaUuid();
  formatPartitionMetadata(topicId); // validates
  const metaPath = join(absLogDir, META_PROPERTIES_FILE);
  const create = !existsSync(metaPath);
  const base = segmentFileName(0n, '');
  return {
    dir,
    logDir: absLogDir,
    topic,
    partition,
    topicId,
    files: [`${base}.log`, `${base}.index`, `${base}.timeindex`, LEADER_EPOCH_CHECKPOINT_FILE, PARTITION_METADATA_FILE, SIDECAR_FILE],
    metaProperties: create ? { path: metaPath, create, nodeId: 0, clusterId: randomKafkaUuid(), directoryId: randomKafkaUuid() } : { path: metaPath, create },
    config: Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)) as Partial<TopicConfig>,
  };
}

/**
 * Creates `<logDir>/<topic>-<partition>/` as a broker does when it becomes leader of a new
 * partition with epoch 0 (`LogManager.createLog` + `Partition.makeLeader`):
 * - an empty active segment `00000000000000000000.log` with empty (trimmed) `.index` and `.timeindex`;
 * - `leader-epoch-checkpoint` `0\n1\n0 0\n` (epoch 0 starts at offset 0, as brokers write it for a
 *   fresh partition);
 * - `partition.metadata` with a random topic id (22-character URL-safe base64, spec §11.5);
 * - the config sidecar `klx-topic.properties` with the given configs;
 * - `meta.properties` in the log dir when it has none: version 1 (KRaft style), `node.id=0`, random
 *   `cluster.id` and `directory.id`;
 * - a `recovery-point-offset-checkpoint` entry `<topic> <partition> 0`, merged with existing ones.
 *
 * Crash safety: the folder is built under a temporary name of the form
 * `<topic>-<partition>.<32 hex>-delete` (a name a broker loads and then deletes, so a crash never
 * leaves a folder that stops a broker), fsynced, then renamed into place; a crash leaves either no
 * partition or the complete one.
 * @returns the plan that was carried out.
 * @throws see {@link planCreatePartition}; `io-error` for file-system failures; what `opts.fault` throws.
 */
export function createPartition(logDir: string, topic: string, partition: number, config: Partial<TopicConfig> = {}, opts: CreatePartitionOptions = {}): CreatePartitionPlan {
  const plan = planCreatePartition(logDir, topic, partition, config, opts);
  const stepper = new Stepper(opts.fault);
  const step = (s: WriterStep, file: string): void => stepper.step(s, file);
  const { dir, logDir: absLogDir } = plan;
  try {
    mkdirSync(absLogDir, { recursive: true });
    if (plan.metaProperties.create) {
      step('meta-properties', plan.metaProperties.path);
      writeMetaProperties(plan.metaProperties.path, { version: 1, nodeId: 0, clusterId: plan.metaProperties.clusterId!, directoryId: plan.metaProperties.directoryId! }, { fault: stepper.sub('meta-properties') });
    }
    const unique = randomUUID().replace(/-/g, '');
    const suffix = `-${partition}.${unique}-delete`;
    const tmp = join(absLogDir, topic.slice(0, Math.min(topic.length, 255 - suffix.length)) + suffix);
    step('create-tmp-dir', tmp);
    mkdirSync(tmp);
    step('create-segment', tmp);
    for (const f of plan.files.slice(0, 3)) createEmptyFile(join(tmp, f));
    step('write-metadata', tmp);
    writeFileDurable(join(tmp, LEADER_EPOCH_CHECKPOINT_FILE), formatLeaderEpochCheckpoint([{ epoch: 0, startOffset: 0n }]));
    writeFileDurable(join(tmp, PARTITION_METADATA_FILE), formatPartitionMetadata(plan.topicId));
    writeFileDurable(join(tmp, SIDECAR_FILE), formatSidecar(plan.config));
    step('fsync-tmp-dir', tmp);
    fsyncDirectory(tmp);
    step('rename-dir', dir);
    if (existsSync(dir)) rmdirSync(dir); // empty (checked by the plan); rmdir fails if something appeared since
    renameSync(tmp, dir);
    step('fsync-log-dir', absLogDir);
    fsyncDirectory(absLogDir);
    step('checkpoint', join(absLogDir, RECOVERY_POINT_CHECKPOINT_FILE));
    updateCheckpointEntry(absLogDir, RECOVERY_POINT_CHECKPOINT_FILE, topic, partition, 0n, { fault: stepper.sub('checkpoint'), onlyIfChanged: true });
  } catch (err) {
    throw stepper.wrap(err, dir, 'cannot create the partition');
  }
  return plan;
}
