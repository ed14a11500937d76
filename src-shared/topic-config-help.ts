/**
 * Kafka's topic config names the engine honours, with one line of help each: the single copy the
 * engine (`src-main/engine/log/topic-config.ts`, which re-exports it as `TOPIC_CONFIG_HELP`), the
 * `klx` help texts and the renderer's Cleanup forms all read. Durations are in ms, sizes in bytes
 * (spec §14; Kafka's `TopicConfig` documentation, shortened; limits and rules as `LogConfig` and
 * `LogSegment.shouldRoll` / `timeWaitedForRoll` have them).
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */

/** The topic config names, in the order forms list them. */
export const TOPIC_CONFIG_NAMES = [
  'cleanup.policy',
  'segment.bytes',
  'segment.ms',
  'segment.jitter.ms',
  'segment.index.bytes',
  'index.interval.bytes',
  'retention.ms',
  'retention.bytes',
  'delete.retention.ms',
  'min.compaction.lag.ms',
  'max.compaction.lag.ms',
  'min.cleanable.dirty.ratio',
  'max.message.bytes',
  'message.timestamp.type',
  'message.timestamp.before.max.ms',
  'message.timestamp.after.max.ms',
  'file.delete.delay.ms',
] as const;

/** One of {@link TOPIC_CONFIG_NAMES}. */
export type TopicConfigName = (typeof TOPIC_CONFIG_NAMES)[number];

/** One-line help text per config, shown in forms and `--help`. */
export const TOPIC_CONFIG_HELP: Readonly<Record<TopicConfigName, string>> = {
  'cleanup.policy': 'delete, compact, or compact,delete: which cleanup the log gets',
  'segment.bytes': 'roll the active segment before it would exceed this many bytes (min 14, as Kafka up to 4.0; 4.1+ brokers require 1 MiB)',
  'segment.ms': 'roll when the newest record timestamp is this far past the first batch (record time; wall time since creation when the first batch has none)',
  'segment.jitter.ms': 'random reduction of segment.ms per segment (0 here: results are reproducible)',
  'segment.index.bytes': 'preallocated size of .index/.timeindex files; a full index forces a roll',
  'index.interval.bytes': 'bytes between offset-index entries',
  'retention.ms': 'delete a segment once now − its largest timestamp exceeds this (−1: never)',
  'retention.bytes': 'delete oldest segments while the partition exceeds this many bytes (−1: unlimited)',
  'delete.retention.ms': 'how long tombstones and transaction markers survive after their first cleaning',
  'min.compaction.lag.ms': 'a record stays uncompacted at least this long',
  'max.compaction.lag.ms': 'a dirty record is compacted at the latest after this long, ignoring the dirty ratio',
  'min.cleanable.dirty.ratio': 'compact only when dirty bytes / (clean + dirty bytes) is above this',
  'max.message.bytes': 'largest batch the broker accepts on append',
  'message.timestamp.type': 'CreateTime (producer time) or LogAppendTime (broker time)',
  'message.timestamp.before.max.ms': 'a CreateTime older than now minus this is refused on append (LogValidator; Kafka 3.6+)',
  'message.timestamp.after.max.ms': 'a CreateTime later than now plus this is refused on append (LogValidator; default 1 h since Kafka 4.0, unlimited in 3.6–3.9)',
  'file.delete.delay.ms': 'how long a broker keeps .deleted files before removing them',
};
