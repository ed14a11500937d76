/**
 * The commit history of one group and partition: every offset-commit record of that key in
 * `__consumer_offsets` (not only the latest one, as far as compaction kept them), so a stalled or
 * rewound group shows at a glance. Read on demand from the group's `__consumer_offsets` partition
 * only (Kafka places a group by `abs(groupId.hashCode()) % offsets.topic.num.partitions`, GroupCoordinatorService.partitionFor); memory is
 * bounded by `maxPoints` (older points are thinned out evenly when there are more).
 */
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, type OffsetCommitValueData } from '../decode/internal/consumer-offsets.ts';
import { KlxError } from '../errors.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import { OFFSETS_TOPIC, offsetsPartitionFor } from './offsets-topic.ts';
import { partitionKey, type LoadedGroups } from './groups-load.ts';

/** One commit (or deletion) of the group's offset for the partition. */
export interface CommitPoint {
  /** Offset of the commit record in `__consumer_offsets`. */
  recordOffset: bigint;
  /** commitTimestamp of the value (ms), or the batch's max timestamp for a tombstone. */
  timestamp: bigint;
  /** The committed offset; null for a tombstone (the offset was deleted or expired). */
  committedOffset: bigint | null;
  /** Written in a transaction; `aborted` when its ABORT marker was read, `pending` when none yet. */
  transaction: 'none' | 'committed' | 'aborted' | 'pending';
}

/** Result of {@link commitHistory}. */
export interface CommitHistory {
  group: string;
  topic: string;
  partition: number;
  offsetsPartition: number;
  points: CommitPoint[];
  /** Commit records found (before thinning). */
  total: number;
  /** True when `points` holds fewer than `total` (evenly thinned). */
  thinned: boolean;
  /** The partition's offsets now, when its folder is opened. */
  logStartOffset: bigint | null;
  logEndOffset: bigint | null;
}

/**
 * Reads the commit history of `group` for `topic`-`partition`.
 * @param maxPoints most points returned (default 5000)
 * @throws KlxError `not-found` when the group's `__consumer_offsets` partition is not opened; `cancelled`.
 */
export async function commitHistory(loaded: LoadedGroups, group: string, topic: string, partition: number, opts: LongReadOptions & { maxPoints?: number } = {}): Promise<CommitHistory> {
  const home = offsetsPartitionFor(group, loaded.offsetsTopic.numPartitions);
  const g = loaded.store.groups.get(group);
  const candidates = new Set<number>([home, ...(g?.offsetsPartitions ?? [])]);
  const logs = [...candidates].map((p) => loaded.offsetsLogs.get(p)).filter((l) => l !== undefined);
  if (logs.length === 0) {
    throw new KlxError('not-found', `the commit history of group "${group}" is in ${OFFSETS_TOPIC}-${home}, whose folder is not among the opened ones`);
  }
  const maxPoints = Math.max(2, opts.maxPoints ?? 5000);
  let points: CommitPoint[] = [];
  let stride = 1;
  let seen = 0;
  let total = 0;
  const pending = new Map<bigint, CommitPoint[]>();
  const keep = (p: CommitPoint) => {
    total++;
    if (seen++ % stride !== 0) return;
    points.push(p);
    if (points.length >= maxPoints * 2) {
      points = points.filter((_x, i) => i % 2 === 0);
      stride *= 2;
    }
  };
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `read the commit history of ${group}`, total: logs.reduce((s, l) => s + l.logSize, 0) });
  for (const log of logs) {
    for (const e of walkLog(log)) {
      if (e.type !== 'batch') continue;
      const h = e.header;
      await pacer.step(h.size);
      let records;
      try {
        records = recordsOf(e);
      } catch {
        continue;
      }
      if (h.isControl) {
        const t = records[0]?.control?.typeId;
        const list = pending.get(h.producerId);
        if (list && (t === CONTROL_ABORT || t === CONTROL_COMMIT)) {
          for (const p of list) p.transaction = t === CONTROL_COMMIT ? 'committed' : 'aborted';
          pending.delete(h.producerId);
        }
        continue;
      }
      const txn = h.magic === 2 && h.isTransactional && h.producerId >= 0n;
      for (const r of records) {
        if (r.key === null || r.key.length < 2 || r.key[0] !== 0 || r.key[1]! > 1) continue;
        let k;
        try {
          k = decodeConsumerOffsetsKey(r.key);
        } catch {
          continue;
        }
        const d = k.data as { group: string; topic: string; partition: number };
        if (d.group !== group || d.topic !== topic || d.partition !== partition) continue;
        let point: CommitPoint;
        if (r.value === null) point = { recordOffset: r.offset, timestamp: h.maxTimestamp, committedOffset: null, transaction: txn ? 'pending' : 'none' };
        else {
          try {
            const v = decodeConsumerOffsetsValue(k.type, r.value).data as OffsetCommitValueData;
            point = { recordOffset: r.offset, timestamp: v.commitTimestamp, committedOffset: v.offset, transaction: txn ? 'pending' : 'none' };
          } catch {
            continue;
          }
        }
        if (txn) {
          let list = pending.get(h.producerId);
          if (!list) pending.set(h.producerId, (list = []));
          list.push(point);
        }
        keep(point);
      }
    }
  }
  pacer.finish();
  const data = loaded.partitions.get(partitionKey(topic, partition));
  return { group, topic, partition, offsetsPartition: home, points, total, thinned: points.length < total, logStartOffset: data?.logStartOffset ?? null, logEndOffset: data?.logEndOffset ?? null };
}
