/**
 * Where a group lives in `__consumer_offsets`: Kafka's `GroupCoordinator.partitionFor` /
 * `GroupMetadataManager.partitionFor` put a group in partition `Utils.abs(groupId.hashCode()) %
 * offsets.topic.num.partitions`, with Java's `String.hashCode` over the UTF-16 code units.
 */

/** The internal topic of the group coordinator. */
export const OFFSETS_TOPIC = '__consumer_offsets';

/** `offsets.topic.num.partitions` default (Kafka `GroupCoordinatorConfig`). */
export const DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50;

/** `offsets.retention.minutes` default since Kafka 2.0 (KIP-186): 10080 minutes = 7 days, in ms. */
export const DEFAULT_OFFSETS_RETENTION_MS = 10080 * 60_000;

/** Java's `String.hashCode()`: s[0]·31^(n−1) + … + s[n−1] over UTF-16 code units, as a signed int32. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's `Utils.abs(int)`: Math.abs, except Integer.MIN_VALUE gives 0. */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

/**
 * The `__consumer_offsets` partition holding `groupId` (Kafka `GroupCoordinatorShard` /
 * `GroupMetadataManager.partitionFor`).
 * @param numPartitions offsets.topic.num.partitions (≥ 1)
 */
export function offsetsPartitionFor(groupId: string, numPartitions: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % numPartitions;
}
