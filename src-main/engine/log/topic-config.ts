/**
 * Topic configuration with Kafka's names, defaults and validation (spec §14; Kafka's `LogConfig`,
 * `TopicConfig`, `ServerLogConfigs`).
 *
 * A broker keeps topic configs in ZooKeeper/KRaft, not in the log directory, so a folder on disk
 * does not say its `cleanup.policy`. The engine takes configs from, in order: explicit overrides
 * (CLI flags, UI forms); the sidecar file `klx-topic.properties` that `klx create` writes into a
 * partition folder (a broker ignores files it does not know); and inference (internal compacted
 * topics such as `__consumer_offsets`, a cleaner checkpoint entry). Each value carries its source.
 */
import { policyOr, refusedLinkTarget } from '../files/symlinks.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { TOPIC_CONFIG_HELP as SHARED_TOPIC_CONFIG_HELP } from '../../../src-shared/topic-config-help.ts';

/** The topic configs the engine honours. Durations in ms, sizes in bytes. */
export interface TopicConfig {
  'cleanup.policy': ('delete' | 'compact')[];
  'segment.bytes': number;
  'segment.ms': bigint;
  'segment.jitter.ms': bigint;
  'segment.index.bytes': number;
  'index.interval.bytes': number;
  'retention.ms': bigint;
  'retention.bytes': bigint;
  'delete.retention.ms': bigint;
  'min.compaction.lag.ms': bigint;
  'max.compaction.lag.ms': bigint;
  'min.cleanable.dirty.ratio': number;
  'max.message.bytes': number;
  'message.timestamp.type': 'CreateTime' | 'LogAppendTime';
  /** LogValidator refuses a CreateTime below now − this (Kafka 3.6+, KIP-937; before: message.timestamp.difference.max.ms). */
  'message.timestamp.before.max.ms': bigint;
  /** LogValidator refuses a CreateTime above now + this (Kafka 3.6+; default 3600000 since 4.0, KIP-1030). */
  'message.timestamp.after.max.ms': bigint;
  'file.delete.delay.ms': bigint;
}

export type TopicConfigKey = keyof TopicConfig;

/** Kafka's default `message.timestamp.before.max.ms`: Long.MAX_VALUE, no bound (ServerLogConfigs, 3.6+). */
export const MESSAGE_TIMESTAMP_BEFORE_MAX_MS_DEFAULT = 9223372036854775807n;
/** Kafka 4.0's default `message.timestamp.after.max.ms`: 3600000 ms, 1 h (ServerLogConfigs, KIP-1030; 3.6–3.9: Long.MAX_VALUE). */
export const MESSAGE_TIMESTAMP_AFTER_MAX_MS_DEFAULT = 3600000n;

/** Kafka's defaults (spec §14), as a Kafka 4.0 broker has them. */
export const DEFAULT_TOPIC_CONFIG: Readonly<TopicConfig> = Object.freeze<TopicConfig>({
  'cleanup.policy': ['delete'],
  'segment.bytes': 1073741824,
  'segment.ms': 604800000n,
  'segment.jitter.ms': 0n,
  'segment.index.bytes': 10485760,
  'index.interval.bytes': 4096,
  'retention.ms': 604800000n,
  'retention.bytes': -1n,
  'delete.retention.ms': 86400000n,
  'min.compaction.lag.ms': 0n,
  'max.compaction.lag.ms': 9223372036854775807n,
  'min.cleanable.dirty.ratio': 0.5,
  'max.message.bytes': 1048588,
  'message.timestamp.type': 'CreateTime',
  'message.timestamp.before.max.ms': MESSAGE_TIMESTAMP_BEFORE_MAX_MS_DEFAULT,
  'message.timestamp.after.max.ms': MESSAGE_TIMESTAMP_AFTER_MAX_MS_DEFAULT,
  'file.delete.delay.ms': 60000n,
});

/**
 * One-line help text per config, shown in forms and `--help`. The text lives in
 * `src-shared/topic-config-help.ts` (the renderer's forms read the same copy); this type makes a
 * config missing there a compile error.
 */
export const TOPIC_CONFIG_HELP: Readonly<Record<TopicConfigKey, string>> = SHARED_TOPIC_CONFIG_HELP;

/** Where a config value came from. */
export type ConfigSource = 'default' | 'inferred' | 'sidecar' | 'override';

export interface ResolvedTopicConfig {
  config: TopicConfig;
  sources: Record<TopicConfigKey, ConfigSource>;
  /** Why a value was inferred, e.g. "__consumer_offsets is compacted by the broker". */
  notes: string[];
}

/** Name of the sidecar file `klx create` writes into a partition folder. */
export const SIDECAR_FILE = 'klx-topic.properties';

const INT64_MAX = 9223372036854775807n;

function parseLong(key: string, v: string, min: bigint): bigint {
  if (!/^-?\d+$/.test(v.trim())) throw new KlxError('invalid-config', `${key} must be an integer number of ${key.endsWith('.ms') ? 'milliseconds' : 'bytes'}, got "${v}"`);
  const n = BigInt(v.trim());
  if (n < min || n > INT64_MAX) throw new KlxError('invalid-config', `${key} must be ${min === -1n ? '−1 or more' : 'at least ' + min}, got ${v}`);
  return n;
}

function parseInt32(key: string, v: string, min: number): number {
  const n = parseLong(key, v, BigInt(min));
  if (n > 2147483647n) throw new KlxError('invalid-config', `${key} must be at most 2147483647, got ${v}`);
  return Number(n);
}

/**
 * Validates and converts one config value given as text (a `k=v` flag or a properties line).
 * @throws KlxError `invalid-config` naming the key, the value and the rule it breaks.
 */
export function parseConfigValue<K extends TopicConfigKey>(key: K, value: string): TopicConfig[K] {
  const v = value.trim();
  let out: unknown;
  switch (key) {
    case 'cleanup.policy': {
      const parts = v.split(',').map((s) => s.trim()).filter(Boolean);
      if (parts.length === 0 || parts.some((p) => p !== 'delete' && p !== 'compact')) throw new KlxError('invalid-config', `cleanup.policy must be delete, compact or compact,delete, got "${value}"`);
      out = [...new Set(parts)].sort() as ('delete' | 'compact')[];
      break;
    }
    case 'segment.bytes':
      out = parseInt32(key, v, 14);
      break;
    case 'segment.index.bytes':
      out = parseInt32(key, v, 4);
      break;
    case 'index.interval.bytes':
    case 'max.message.bytes':
      out = parseInt32(key, v, 0);
      break;
    case 'segment.ms':
      out = parseLong(key, v, 1n);
      break;
    case 'retention.ms':
    case 'retention.bytes':
      out = parseLong(key, v, -1n);
      break;
    case 'segment.jitter.ms':
    case 'message.timestamp.before.max.ms':
    case 'message.timestamp.after.max.ms':
    case 'delete.retention.ms':
    case 'min.compaction.lag.ms':
    case 'file.delete.delay.ms':
      out = parseLong(key, v, 0n);
      break;
    case 'max.compaction.lag.ms':
      out = parseLong(key, v, 1n);
      break;
    case 'min.cleanable.dirty.ratio': {
      const n = Number(v);
      if (v === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new KlxError('invalid-config', `min.cleanable.dirty.ratio must be a number between 0 and 1, got "${value}"`);
      out = n;
      break;
    }
    case 'message.timestamp.type':
      if (v !== 'CreateTime' && v !== 'LogAppendTime') throw new KlxError('invalid-config', `message.timestamp.type must be CreateTime or LogAppendTime, got "${value}"`);
      out = v;
      break;
    default:
      throw new KlxError('invalid-config', `unknown topic config "${key as string}"; known: ${Object.keys(DEFAULT_TOPIC_CONFIG).join(', ')}`);
  }
  return out as TopicConfig[K];
}

/**
 * Parses `k=v` strings (CLI `--config` flags) into a partial config.
 * @throws KlxError `invalid-config` for an unknown key, a missing `=`, or a bad value.
 */
export function parseConfigPairs(pairs: string[]): Partial<TopicConfig> {
  const out: Partial<TopicConfig> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new KlxError('invalid-config', `config must be key=value, got "${p}"`);
    const key = p.slice(0, eq).trim() as TopicConfigKey;
    if (!(key in DEFAULT_TOPIC_CONFIG)) throw new KlxError('invalid-config', `unknown topic config "${key}"; known: ${Object.keys(DEFAULT_TOPIC_CONFIG).join(', ')}`);
    (out as Record<string, unknown>)[key] = parseConfigValue(key, p.slice(eq + 1));
  }
  return out;
}

/** Text of a config value as Kafka prints it. */
export function formatConfigValue(key: TopicConfigKey, v: TopicConfig[TopicConfigKey]): string {
  return key === 'cleanup.policy' ? (v as string[]).join(',') : String(v);
}

/** Serialises a partial config as a Java-properties sidecar file. */
export function formatSidecar(cfg: Partial<TopicConfig>): string {
  // LogLoader.loadSegmentFiles passes over a file that is neither a segment file, an index nor a snapshot.
  const lines = ['# Topic configuration written by Kafka Log Explorer (klx). Brokers ignore this file.'];
  for (const [k, v] of Object.entries(cfg)) lines.push(`${k}=${formatConfigValue(k as TopicConfigKey, v as TopicConfig[TopicConfigKey])}`);
  return lines.join('\n') + '\n';
}

/**
 * Reads the sidecar file of a partition folder, if any.
 * @throws KlxError `invalid-config` with the file and the line's byte position.
 */
export function readSidecar(partitionDir: string): Partial<TopicConfig> {
  const file = join(partitionDir, SIDECAR_FILE);
  if (!existsSync(file)) return {};
  // A sidecar that is a symlink out of the folder is not read (files/symlinks.ts; the open lists it as refused).
  if (refusedLinkTarget(file, policyOr(undefined, partitionDir)) !== null) return {};
  const text = readFileSync(file, 'utf8');
  const out: Partial<TopicConfig> = {};
  let pos = 0;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t && !t.startsWith('#') && !t.startsWith('!')) {
      const eq = t.search(/[=:]/);
      if (eq <= 0) throw new KlxError('invalid-config', `expected key=value, got "${t}"`, { file, position: pos });
      const key = t.slice(0, eq).trim() as TopicConfigKey;
      try {
        if (key in DEFAULT_TOPIC_CONFIG) (out as Record<string, unknown>)[key] = parseConfigValue(key, t.slice(eq + 1));
      } catch (err) {
        throw new KlxError('invalid-config', (err as KlxError).reason, { file, position: pos });
      }
    }
    pos += Buffer.byteLength(line) + 1;
  }
  return out;
}

/**
 * Topics created compacted: the internal topics a broker creates (GroupCoordinatorAdapter.groupMetadataTopicConfigs,
 * TransactionStateManager.transactionTopicConfigs), and Kafka Streams / Connect / Schema Registry conventions
 * (UnwindowedUnversionedChangelogTopicConfig; WindowedChangelogTopicConfig adds delete; KafkaConfigBackingStore).
 */
export function inferredCompacted(topic: string): string | null {
  if (topic === '__consumer_offsets' || topic === '__transaction_state') return `${topic} is an internal topic the broker creates with cleanup.policy=compact`;
  if (topic === '__cluster_metadata') return '__cluster_metadata is the KRaft metadata log (not cleaned like a topic; snapshots replace it)';
  if (topic === '_schemas') return '_schemas (Schema Registry) is created with cleanup.policy=compact';
  if (/-changelog$/.test(topic)) return 'Kafka Streams changelog topics are created with cleanup.policy=compact (a windowed store\'s with compact,delete)';
  if (/^(connect|_connect|docker-connect)-(configs|offsets|status)$/.test(topic) || /-(configs|offsets|status)$/.test(topic) && topic.includes('connect')) return 'Kafka Connect internal topics are created with cleanup.policy=compact';
  return null;
}

/**
 * Resolves the effective config of a partition.
 * @param hasCleanerCheckpoint the log dir's cleaner-offset-checkpoint lists this partition (only compacted partitions get one).
 */
export function resolveTopicConfig(topic: string, partitionDir: string | null, overrides: Partial<TopicConfig> = {}, hasCleanerCheckpoint = false): ResolvedTopicConfig {
  const config = { ...DEFAULT_TOPIC_CONFIG, 'cleanup.policy': [...DEFAULT_TOPIC_CONFIG['cleanup.policy']] } as TopicConfig;
  const sources = Object.fromEntries(Object.keys(DEFAULT_TOPIC_CONFIG).map((k) => [k, 'default'])) as Record<TopicConfigKey, ConfigSource>;
  const notes: string[] = [];
  const why = inferredCompacted(topic) ?? (hasCleanerCheckpoint ? 'the cleaner-offset-checkpoint lists this partition, so a broker has compacted it (LogCleanerManager.updateCheckpoints writes an entry after a cleaning)' : null);
  if (why) {
    config['cleanup.policy'] = ['compact'];
    sources['cleanup.policy'] = 'inferred';
    notes.push(why);
  }
  const apply = (cfg: Partial<TopicConfig>, src: ConfigSource) => {
    for (const [k, v] of Object.entries(cfg)) {
      (config as unknown as Record<string, unknown>)[k] = v;
      sources[k as TopicConfigKey] = src;
    }
  };
  if (partitionDir) apply(readSidecar(partitionDir), 'sidecar');
  apply(overrides, 'override');
  return { config, sources, notes };
}

/** Where a config value came from, in words for messages. */
export const SOURCE_WORDS: Readonly<Record<ConfigSource, string>> = { default: "Kafka's default", inferred: 'inferred', sidecar: 'klx-topic.properties', override: '--config' };

/** Kafka 4.1+'s least topic-level `segment.bytes` (LogConfig: atLeast(1024 * 1024), KAFKA-19080). */
export const KAFKA_41_MIN_SEGMENT_BYTES = 1048576;

/**
 * What brokers make of a `segment.bytes` below 1 MiB, which this tool accepts (from 14 bytes, as a Kafka 4.0
 * topic config): a Kafka 4.1+ broker refuses it as a topic config at creation or alter (LogConfig validates
 * `segment.bytes` ≥ 1048576 since KAFKA-19080); 4.0 applies that minimum only to the broker-wide
 * `log.segment.bytes` (KIP-1030); 3.x and earlier accept 14 or more (LegacyRecord.RECORD_OVERHEAD_V0).
 * @returns the note, or null when `segment.bytes` ≥ 1048576.
 */
export function segmentBytesNote(resolved: ResolvedTopicConfig): string | null {
  const v = resolved.config['segment.bytes'];
  if (v >= KAFKA_41_MIN_SEGMENT_BYTES) return null;
  return `segment.bytes=${v} (${SOURCE_WORDS[resolved.sources['segment.bytes']]}) is below ${KAFKA_41_MIN_SEGMENT_BYTES}: a Kafka 4.1+ broker refuses it as a topic config (LogConfig validates segment.bytes ≥ 1048576, KAFKA-19080); Kafka 4.0 accepts it per topic (its 1 MiB minimum is only for the broker-wide log.segment.bytes, KIP-1030), as klx does, and 3.x and earlier accept 14 or more`;
}
