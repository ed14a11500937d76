/**
 * The load's fast replay path (records read in place, offset commits written into their packed
 * entries) against a plain record-by-record replay of the same folder (every record decoded with the
 * checked decoders and applied with `GroupStore.apply`, as Kafka's coordinator replays them): the
 * whole loaded state must be the same, field for field and in the same order, on a bench-like folder
 * that mixes everything the fast path has to hand back (every OffsetCommitValue version, metadata,
 * compressed and transactional batches, tombstones, group records, damaged values, a corrupt batch,
 * segments), on the crafted scenario and on the real data sets.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeConsumerOffsetsKey, decodeConsumerOffsetsValue, groupIdOfKey } from '../../../src-main/engine/decode/internal/consumer-offsets.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../../../src-main/engine/format/control.ts';
import { encodeBatch, type RecordSpec } from '../../../src-main/engine/format/record-batch.ts';
import { GroupStore, type OffsetsRecordPlace } from '../../../src-main/engine/groups/group-replay.ts';
import { loadGroups, type LoadedGroups } from '../../../src-main/engine/groups/groups-load.ts';
import { offsetsPartitionFor } from '../../../src-main/engine/groups/offsets-topic.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import { groupsSnapshot } from '../../support/groups-snapshot.ts';
import { buildGroupsScenario, encodeOffsetsRecords, T0, type OffsetsRecordSpec } from '../../support/groups-scenario.ts';
import { buildPartition, markerBatch, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

/** The folder loaded by {@link loadGroups}, then replayed again record by record into a fresh store. */
async function bothWays(dir: string, offsetsTopicPartitions?: number): Promise<{ fast: LoadedGroups; plain: LoadedGroups }> {
  const logs = allPartitions(openPath(dir)).map((p) => p.log);
  const fast = await loadGroups(logs, { offsetsTopicPartitions });
  const store = new GroupStore();
  for (const log of fast.offsetsLogs.values()) {
    const p = log.partition;
    for (const e of walkLog(log)) {
      if (e.type === 'segment') continue;
      if (e.type !== 'batch') {
        if (!e.zeros) store.problem({ offsetsPartition: p, file: e.file, position: e.position, offset: -1n, groupId: null, reason: e.reason });
        continue;
      }
      const h = e.header;
      const file = e.segment.files.log;
      if (h.lastOffset < log.logStartOffset) continue;
      if (h.crcValid === false) {
        store.problem({ offsetsPartition: p, file, position: h.position, offset: h.baseOffset, groupId: null, reason: 'crc' });
        continue;
      }
      const records = recordsOf(e);
      if (h.isControl) {
        const t = records[0]?.control?.typeId;
        if (h.producerId >= 0n && (t === CONTROL_COMMIT || t === CONTROL_ABORT)) store.onMarker(p, h.producerId, t === CONTROL_COMMIT);
        continue;
      }
      const producerId = h.magic === 2 && h.isTransactional && h.producerId >= 0n ? h.producerId : null;
      for (const r of records) {
        if (r.offset < log.logStartOffset) continue;
        const place: OffsetsRecordPlace = { offsetsPartition: p, file, position: h.position, offset: r.offset };
        let key;
        try {
          key = decodeConsumerOffsetsKey(r.key!);
        } catch {
          store.problem({ ...place, groupId: null, reason: 'key' });
          continue;
        }
        if (key.recordType === 'Unknown') {
          store.problem({ ...place, groupId: null, reason: 'unknown type' });
          store.apply(key, null, place, null);
          continue;
        }
        let value = null;
        if (r.value !== null) {
          try {
            value = decodeConsumerOffsetsValue(key.type, r.value);
          } catch {
            store.problem({ ...place, groupId: groupIdOfKey(key), reason: 'value' });
            continue;
          }
        }
        store.apply(key, value, place, producerId);
      }
    }
  }
  return { fast, plain: { ...fast, store } };
}

function expectSame(r: { fast: LoadedGroups; plain: LoadedGroups }): void {
  expect(groupsSnapshot(r.fast, { reasons: false })).toBe(groupsSnapshot(r.plain, { reasons: false }));
}

const commit = (group: string, topic: string, partition: number, offset: number, ts: number, version: number, metadata = ''): OffsetsRecordSpec => ({
  type: 1,
  key: { group, topic, partition },
  version,
  value: { offset, ...(version >= 3 ? { leaderEpoch: offset % 3 === 0 ? -1 : 7 } : {}), metadata, commitTimestamp: ts, ...(version === 1 ? { expireTimestamp: offset % 2 === 0 ? -1 : ts + 1000 } : {}) },
});

/** A records spec from the Python codec's encoding. */
function records(specs: OffsetsRecordSpec[], ts: number): RecordSpec[] {
  return encodeOffsetsRecords(specs).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64'), timestamp: BigInt(ts) }));
}

describe('the fast replay path gives what a record-by-record replay gives', () => {
  it('on a bench-like folder: commit requests of many groups round after round, with everything the fast path hands back', async () => {
    const dir = tempDir('klx-groups-fast-path-');
    const groups = ['app-a', 'app-b', 'app-ç', 'app-d', 'app-e', 'app-f'];
    const topics = ['orders', 'payments', 'pré-commandes'];
    // every spec of every round first (one Python call), then the batches
    type Planned = { specs: OffsetsRecordSpec[]; compression?: 'gzip' | 'snappy' | 'lz4' | 'zstd'; pid?: number; marker?: 'COMMIT' | 'ABORT'; damage?: 'value-length' | 'metadata-utf8' | 'crc' };
    const plan: Planned[] = [];
    const codecs = [undefined, undefined, 'gzip', undefined, 'snappy', 'lz4', undefined, 'zstd'] as const;
    for (let round = 0; round < 12; round++) {
      for (const [gi, g] of groups.entries()) {
        const ts = T0 + round * 60_000 + gi;
        const version = (round + gi) % 5; // v0–v4 (v4 is flexible: the checked path)
        const specs: OffsetsRecordSpec[] = [];
        // the same partitions in the same order each round, except app-d, which commits them in a rotating order
        for (let k = 0; k < 8; k++) {
          const kk = g === 'app-d' ? (k + round) % 8 : k;
          specs.push(commit(g, topics[kk % 3]!, kk, round * 100 + kk, ts, version, gi === 2 && round % 3 === 2 ? `meta-€-${round}` : ''));
        }
        if (g === 'app-e' && round % 4 === 3) specs.push({ type: 1, key: { group: g, topic: 'orders', partition: 0 }, value: null }); // offset deleted
        plan.push({ specs, compression: codecs[(round + gi) % codecs.length] });
        if (round % 2 === 0) plan.push({ specs: [{ type: 2, key: { group: g }, version: 3, value: { protocolType: 'consumer', generation: round + 1, protocol: 'range', leader: null, currentStateTimestamp: ts, members: [] } }] });
      }
      // a transactional commit (committed, then aborted on odd rounds) of app-b
      plan.push({ specs: [commit('app-b', 'orders', 1, 9000 + round, T0 + round, 3)], pid: 77 });
      plan.push({ specs: [], pid: 77, marker: round % 2 === 0 ? 'COMMIT' : 'ABORT' });
      if (round === 5) {
        // app-f deleted (group tombstone and offsets tombstoned), then back in later rounds
        plan.push({ specs: [{ type: 2, key: { group: 'app-f' }, value: null }, ...Array.from({ length: 8 }, (_x, k): OffsetsRecordSpec => ({ type: 1, key: { group: 'app-f', topic: topics[k % 3]!, partition: k }, value: null }))] });
        plan.push({ specs: [commit('app-a', 'orders', 0, 1, T0, 3)], damage: 'value-length' });
        plan.push({ specs: [commit('app-a', 'orders', 3, 1, T0, 2, 'x')], damage: 'metadata-utf8' });
        plan.push({ specs: [commit('app-b', 'orders', 0, 424242, T0, 3)], damage: 'crc' });
        plan.push({ specs: [{ type: 3, key: { GroupId: 'kip848' }, version: 0, value: { Epoch: 4 } }, { type: 1, key: { group: 'kip848', topic: 'orders', partition: 0 }, version: 3, value: { offset: 5, leaderEpoch: 1, metadata: '', commitTimestamp: T0 } }] });
      }
    }
    const encoded = records(plan.flatMap((x) => x.specs), T0);
    let at = 0;
    let next = 0;
    const segments: { batches: BatchInput[] }[] = [{ batches: [] }];
    for (const x of plan) {
      if (x.marker) {
        segments[segments.length - 1]!.batches.push(markerBatch(x.pid!, x.marker, next++));
        continue;
      }
      const recs = encoded.slice(at, at + x.specs.length).map((r, i) => ({ ...r, offsetDelta: i }));
      at += x.specs.length;
      const v0 = recs[0]?.value as Buffer | undefined;
      if (x.damage === 'value-length') recs[0]!.value = Buffer.concat([v0!, Buffer.from([0])]); // a v3 value one byte too long
      if (x.damage === 'metadata-utf8') v0![12] = 0xff; // its one metadata byte (v2: after version, offset, length): not UTF-8
      const spec = { baseOffset: BigInt(next), records: recs, compression: x.compression, ...(x.pid !== undefined ? { isTransactional: true, producerId: BigInt(x.pid), producerEpoch: 0 } : {}) };
      const batch = encodeBatch(spec);
      if (x.damage === 'crc') batch[batch.length - 1]! ^= 0x01;
      segments[segments.length - 1]!.batches.push(batch);
      next += recs.length;
      if (segments[segments.length - 1]!.batches.length >= 40) segments.push({ batches: [] });
    }
    buildPartition(dir, { topic: '__consumer_offsets', partition: 0, segments: segments.filter((s) => s.batches.length > 0) });
    const r = await bothWays(dir, 1);
    expectSame(r);
    // what the fixture was made for: the fast path met every case
    const g = r.fast.store.groups;
    expect([...g.keys()].sort()).toEqual([...groups, 'kip848'].sort());
    expect(g.get('app-e')!.offsets.has('orders\u00000')).toBe(false); // tombstoned in the last round
    expect(new Set([...g.get('app-a')!.offsets.values()].map((o) => o.valueVersion)).size).toBe(1);
    expect(r.fast.store.counts.abortedCommits).toBe(6);
    expect(r.fast.store.problems.map((p) => p.reason)).toEqual([expect.stringContaining('CRC-32C mismatch')]);
    // a value one byte too long and metadata that is not UTF-8 are applied, as the coordinator reads them (CoordinatorRecordSerde.deserialize, Readable.readString)
    expect(g.get('app-a')!.problems).toEqual([]);
    expect(g.get('app-ç')!.offsets.get('orders\u00000')!.metadata).toBe('meta-€-11');
    expect(offsetsPartitionFor('app-a', 1)).toBe(0);
  }, 60_000);

  it('on the crafted scenario (every diagnosis, transactions, KIP-848, share and streams groups)', async () => {
    const dir = tempDir('klx-groups-fast-path-scenario-');
    buildGroupsScenario(dir);
    expectSame(await bothWays(dir));
  }, 60_000);
});

describeRealData('the fast replay path on the real data sets', () => {
  for (const c of ['kafka-0.10.1-magic1', 'kafka-2.7.1-compacted-offsets', 'cp-5.1-lz4-connect', 'kafka-2.8.0-snappy', 'gzip-mixed-bitnami']) {
    it(c, async () => {
      const r = await bothWays(join(REAL_DATA, c));
      expect(r.fast.store.counts.records).toBeGreaterThan(0);
      expectSame(r);
    });
  }
});
