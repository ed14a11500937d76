/**
 * Loads the consumer groups of opened log directories from every `__consumer_offsets` partition among
 * them, as Kafka's group coordinator loads a partition when it becomes its leader
 * (`GroupMetadataManager.loadGroupsAndOffsets`; the new coordinator's `CoordinatorLoaderImpl` feeding
 * `GroupCoordinatorShard.replay`): every record in offset order, transaction markers applied, the
 * latest record per key winning (see group-replay.ts).
 *
 * Opened folders may hold several replicas of a partition (a support bundle with one folder per
 * broker): for `__consumer_offsets` and for data partitions, the replica with the highest log end
 * offset is used (the others are named in {@link LoadedGroups.replicasIgnored}).
 *
 * Bad input never stops the load: damaged bytes, a key or value that does not decode are listed with
 * file, byte position, offset and reason (on their group when the key could be read).
 */
import { DecodeError } from '../decode/decode-error.ts';
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, groupIdOfKey, type ConsumerOffsetsKey } from '../decode/internal/consumer-offsets.ts';
import { KlxError } from '../errors.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import type { KafkaRecord } from '../format/types.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { GroupStore } from './group-replay.ts';
import { DEFAULT_OFFSETS_TOPIC_PARTITIONS, OFFSETS_TOPIC, offsetsPartitionFor } from './offsets-topic.ts';

/** Options of {@link loadGroups}. */
export interface LoadGroupsOptions extends LongReadOptions {
  /** offsets.topic.num.partitions; default: 50 (Kafka's default), or more when a higher partition is opened. */
  offsetsTopicPartitions?: number;
}

/** What is known of `__consumer_offsets` in the opened folders. */
export interface OffsetsTopicLayout {
  /** offsets.topic.num.partitions used to place groups. */
  numPartitions: number;
  /** True when `numPartitions` is Kafka's default or inferred, not given. */
  numPartitionsAssumed: boolean;
  /** Partitions whose folder was opened (ascending). */
  present: number[];
  /** Partitions of [0, numPartitions) without a folder among the opened ones (ascending). */
  absent: number[];
}

/** Result of {@link loadGroups}. */
export interface LoadedGroups {
  store: GroupStore;
  offsetsTopic: OffsetsTopicLayout;
  /** The `__consumer_offsets` partitions read, by partition number. */
  offsetsLogs: Map<number, PartitionLog>;
  /** The data partitions opened, by `topic\u0000partition` (one replica each). */
  partitions: Map<string, PartitionLog>;
  /** Partition folders not used because another replica of the same partition has a higher log end offset. */
  replicasIgnored: string[];
  /** Bytes of `__consumer_offsets` segments read. */
  bytesRead: number;
}

/** Key of a data partition in {@link LoadedGroups.partitions}. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * The one replica per partition of `logs`: highest log end offset wins (ties: the first given).
 * Only `normal` partition folders (not `-delete`/`-future`/`-stray`).
 */
export function choosePartitions(logs: readonly PartitionLog[]): { chosen: Map<string, PartitionLog>; ignored: string[] } {
  const chosen = new Map<string, PartitionLog>();
  const ignored: string[] = [];
  for (const log of logs) {
    if (log.kind !== 'normal') continue;
    const k = partitionKey(log.topic, log.partition);
    const prev = chosen.get(k);
    if (!prev) chosen.set(k, log);
    else if (log.logEndOffset > prev.logEndOffset) {
      ignored.push(prev.dir);
      chosen.set(k, log);
    } else ignored.push(log.dir);
  }
  return { chosen, ignored };
}

/**
 * Loads the groups of every `__consumer_offsets` partition in `logs`.
 * @param logs every opened partition (data partitions are kept for lag, not read here)
 * @throws KlxError `cancelled` when the signal aborts; never for bad records (listed instead).
 */
export async function loadGroups(logs: readonly PartitionLog[], opts: LoadGroupsOptions = {}): Promise<LoadedGroups> {
  const { chosen, ignored } = choosePartitions(logs);
  const offsetsLogs = [...chosen.values()].filter((l) => l.topic === OFFSETS_TOPIC).sort((a, b) => a.partition - b.partition);
  const present = offsetsLogs.map((l) => l.partition);
  let numPartitions = opts.offsetsTopicPartitions ?? DEFAULT_OFFSETS_TOPIC_PARTITIONS;
  let assumed = opts.offsetsTopicPartitions === undefined;
  if (assumed && present.length > 0 && present[present.length - 1]! >= numPartitions) numPartitions = present[present.length - 1]! + 1;
  if (!Number.isInteger(numPartitions) || numPartitions < 1) throw new KlxError('invalid-argument', `offsets.topic.num.partitions must be a positive integer, got ${numPartitions}`);
  const have = new Set(present);
  const absent: number[] = [];
  for (let p = 0; p < numPartitions; p++) if (!have.has(p)) absent.push(p);

  const store = new GroupStore();
  const total = offsetsLogs.reduce((s, l) => s + l.logSize, 0);
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: 'load consumer groups from __consumer_offsets', total });
  let bytesRead = 0;
  for (const log of offsetsLogs) {
    bytesRead += await replayPartition(log, store, pacer);
    store.endPartition(log.partition);
  }
  pacer.finish();
  const partitions = new Map<string, PartitionLog>();
  for (const [k, l] of chosen) if (l.topic !== OFFSETS_TOPIC) partitions.set(k, l);
  return { store, offsetsTopic: { numPartitions, numPartitionsAssumed: assumed, present, absent }, offsetsLogs: new Map(offsetsLogs.map((l) => [l.partition, l])), partitions, replicasIgnored: ignored, bytesRead };
}

/** Feeds one `__consumer_offsets` partition to the store; returns the bytes walked. */
async function replayPartition(log: PartitionLog, store: GroupStore, pacer: Pacer): Promise<number> {
  const p = log.partition;
  const logStart = log.logStartOffset;
  let bytes = 0;
  // One decoded key per distinct key bytes: a group commits the same keys over and over.
  const keyCache = new Map<string, ConsumerOffsetsKey>();
  for (const e of walkLog(log)) {
    if (e.type === 'segment') continue;
    if (e.type !== 'batch') {
      // zero-filled tails (preallocated or crashed) are what a broker truncates on recovery: not a problem of the groups
      if (!e.zeros) store.problem({ offsetsPartition: p, file: e.file, position: e.position, offset: -1n, groupId: null, reason: `${e.size} bytes that are not a record batch: ${e.reason}` });
      continue;
    }
    const h = e.header;
    bytes += h.size;
    await pacer.step(h.size);
    if (h.lastOffset < logStart) continue;
    const file = e.segment.files.log;
    let records: KafkaRecord[];
    try {
      records = recordsOf(e);
    } catch (err) {
      const k = err instanceof KlxError ? err : null;
      store.problem({ offsetsPartition: p, file, position: h.position, offset: h.baseOffset, groupId: null, reason: k?.reason ?? String(err) });
      continue;
    }
    if (h.isControl) {
      const t = records[0]?.control?.typeId;
      if (h.producerId >= 0n && (t === CONTROL_COMMIT || t === CONTROL_ABORT)) store.onMarker(p, h.producerId, t === CONTROL_COMMIT);
      continue;
    }
    const producerId = h.magic === 2 && h.isTransactional && h.producerId >= 0n ? h.producerId : null;
    for (const r of records) {
      if (r.offset < logStart) continue;
      const place = { offsetsPartition: p, file, position: h.position, offset: r.offset };
      const keyBytes = r.key;
      if (keyBytes === null) {
        store.problem({ ...place, groupId: null, reason: 'record without a key (every __consumer_offsets record has one)' });
        continue;
      }
      const cacheKey = latin1(keyBytes);
      let key = keyCache.get(cacheKey);
      if (key === undefined) {
        try {
          key = decodeConsumerOffsetsKey(keyBytes);
        } catch (err) {
          store.problem({ ...place, groupId: null, reason: `key: ${reasonOf(err)}` });
          continue;
        }
        if (keyCache.size > 1_000_000) keyCache.clear();
        keyCache.set(cacheKey, key);
      }
      const groupId = groupIdOfKey(key);
      if (key.recordType === 'Unknown') {
        store.problem({ ...place, groupId: null, reason: `key version (record type) ${key.type} is not one this tool or Kafka's coordinators know; the record is skipped, as Kafka's coordinator skips unknown record types` });
        store.apply(key, null, place, null);
        continue;
      }
      const valueBytes = r.value;
      if (valueBytes === null) {
        store.apply(key, null, place, producerId);
        continue;
      }
      let value;
      try {
        value = decodeConsumerOffsetsValue(key.type, valueBytes);
      } catch (err) {
        store.problem({ ...place, groupId, reason: `value of ${key.recordType} (record type ${key.type}): ${reasonOf(err)}` });
        continue;
      }
      store.apply(key, value, place, producerId);
    }
  }
  return bytes;
}

function reasonOf(err: unknown): string {
  if (err instanceof DecodeError) return `byte ${err.position}: ${err.reason}`;
  if (err instanceof KlxError) return err.reason;
  return String(err);
}

/** The bytes as a latin1 string (a cheap exact map key). */
function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** Where `groupId` lives, and whether that partition is among the opened ones. */
export function offsetsPartitionOf(loaded: LoadedGroups, groupId: string): { partition: number; opened: boolean } {
  const partition = offsetsPartitionFor(groupId, loaded.offsetsTopic.numPartitions);
  return { partition, opened: loaded.offsetsTopic.present.includes(partition) };
}
