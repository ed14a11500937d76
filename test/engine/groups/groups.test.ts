/**
 * The groups engine: loading `__consumer_offsets` as the coordinator does, lag / record lag /
 * diagnosis / expiry on a crafted log directory (keys and values from the independent Python codec),
 * the commit history, the missing-partition message, and the real data sets against an independent
 * decode of EXPECTED.jsonl (latest record per key, tombstones deleting).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { commitHistory } from '../../../src-main/engine/groups/commit-history.ts';
import { describeGroups, type GroupsDescription } from '../../../src-main/engine/groups/group-offsets.ts';
import { loadGroups, type LoadedGroups } from '../../../src-main/engine/groups/groups-load.ts';
import { javaStringHashCode, offsetsPartitionFor } from '../../../src-main/engine/groups/offsets-topic.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { parseJsonExact, toJsonText } from '../../../src-main/engine/decode/json-text.ts';
import { buildGroupsScenario, DAY, encodeOffsetsRecords, GROUP_IN_ABSENT_PARTITION, SCENARIO_EXPECTED, SCENARIO_NOW, T0, type OffsetsRecordSpec } from '../../support/groups-scenario.ts';
import { buildPartition, tempDir } from '../../support/log-builder.ts';
import { describeRealData, expectedBatches, REAL_DATA, REPO_ROOT } from '../../support/real-data.ts';

const load = (dir: string, opts = {}) => loadGroups(allPartitions(openPath(dir)).map((p) => p.log), opts);
const num = (v: bigint | null) => (v === null ? null : Number(v));

describe('Java String.hashCode and the __consumer_offsets partition of a group', () => {
  it('matches Java on known strings (values from the JDK)', () => {
    expect(javaStringHashCode('')).toBe(0);
    expect(javaStringHashCode('a')).toBe(97);
    expect(javaStringHashCode('hello')).toBe(99162322);
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648); // Integer.MIN_VALUE: Utils.abs gives 0
    expect(offsetsPartitionFor('polygenelubricants', 50)).toBe(0);
    expect(javaStringHashCode('é𝄞')).toBe(((0xe9 * 31 + 0xd834) * 31 + 0xdd1e) | 0); // UTF-16 code units
  });
});

describe('a crafted log directory: every diagnosis, expiry, tombstones, transactions, KIP-848 and share groups', () => {
  let dir: string;
  let loaded: LoadedGroups;
  let d: GroupsDescription;
  let partitionsWritten: number[];

  beforeAll(async () => {
    dir = tempDir('klx-groups-');
    partitionsWritten = buildGroupsScenario(dir);
    loaded = await load(dir);
    d = await describeGroups(loaded, { now: BigInt(SCENARIO_NOW) });
  });

  it('lists the groups that exist (tombstoned ones gone) with their types and states', () => {
    const byId = Object.fromEntries(d.groups.map((g) => [g.group, g]));
    expect(Object.keys(byId).sort()).toEqual(Object.keys(SCENARIO_EXPECTED).sort());
    expect(byId['g-tomb']).toBeUndefined();
    expect(byId['g-deleted']).toBeUndefined();
    expect(byId['g-ok']).toMatchObject({ type: 'classic', protocolType: 'consumer', protocol: 'range', state: 'Stable', generation: 3, members: 1, topics: ['orders'] });
    expect(byId['g-empty']).toMatchObject({ type: 'classic', state: 'Empty', members: 0 });
    expect(byId['g-hole']).toMatchObject({ type: 'simple', state: 'Empty', protocolType: null });
    expect(byId['cg848']).toMatchObject({ type: 'consumer', state: 'Stable', generation: 5, members: 1, protocol: 'uniform' });
    expect(byId['sg']).toMatchObject({ type: 'share', state: 'Stable', generation: 3, members: 1, partitions: 0 });
    expect(byId['streams-app']).toMatchObject({ type: 'streams', state: 'Stable', generation: 4, members: 1, protocolType: null, protocol: null, topics: ['orders'] });
    expect(byId['g-eos']!.pendingTransactionalProducers).toEqual(['44']);
    for (const g of d.groups) expect(g.offsetsPartition).toBe(offsetsPartitionFor(g.group, 50));
  });

  it('gives each group and partition the committed offset, lag, record lag, next offset and diagnosis', () => {
    for (const [group, rows] of Object.entries(SCENARIO_EXPECTED)) {
      const got = d.offsets.filter((r) => r.group === group).map((r) => ({ topic: r.topic, partition: r.partition, committed: num(r.committedOffset), diagnosis: r.diagnosis, lag: num(r.lag), recordLag: r.recordLag, nextOffset: num(r.nextOffset) }));
      expect({ group, rows: got }).toEqual({ group, rows });
    }
    const ok = d.offsets.find((r) => r.group === 'g-ok')!;
    expect(ok).toMatchObject({ logStartOffset: 0n, logEndOffset: 10n, highWatermark: 10n, lastStableOffset: 10n, consumerId: 'ok-m1', clientId: 'client-ok-m1', host: '/10.0.0.7', leaderEpoch: 0, commitTimestamp: BigInt(T0 + 2000) });
    const txn = d.offsets.find((r) => r.group === 'g-txn')!;
    expect(txn).toMatchObject({ highWatermark: 13n, lastStableOffset: 11n, logEndOffset: 13n });
    const below = d.offsets.find((r) => r.group === 'g-below')!;
    expect(below.detail).toContain('offsets 5–21 were deleted');
    expect(below.detail).toContain('00000000000000000020.log (base offset 20');
    expect(below.detail).toContain('log-start-offset-checkpoint says 22');
    expect(d.offsets.find((r) => r.group === 'cg848')).toMatchObject({ consumerId: 'mem-1', host: '/1.2.3.4', clientId: 'cli-848' });
    expect(d.offsets.find((r) => r.group === 'g-nocommit')).toMatchObject({ consumerId: 'nc-m1', logEndOffset: 10n });
    expect(d.offsets.find((r) => r.group === 'g-eos')).toMatchObject({ transactional: true, committedOffset: 9n });
  });

  it('read_committed record lag stops at the last stable offset', async () => {
    const rc = await describeGroups(loaded, { now: BigInt(SCENARIO_NOW), isolation: 'read_committed', group: 'g-txn' });
    expect(rc.offsets.map((r) => [r.recordLag, r.lag])).toEqual([[6, 13n]]);
  });

  it('marks expired offsets as the coordinator would at `now`', async () => {
    const exp = (rows: GroupsDescription['offsets'], g: string) => rows.find((r) => r.group === g)!;
    const at = (ms: number) => describeGroups(loaded, { now: BigInt(ms) }).then((x) => x.offsets);
    // simple group: 7 days from its commit
    expect(exp(d.offsets, 'g-expired')).toMatchObject({ expired: true, expiresAt: BigInt(T0 + 7 * DAY) });
    expect(exp(await at(T0 + 7 * DAY - 1), 'g-expired').expired).toBe(false);
    // v1 value: its own expire timestamp
    expect(exp(d.offsets, 'g-v1')).toMatchObject({ expired: true, expiresAt: BigInt(T0 + DAY), expireTimestamp: BigInt(T0 + DAY) });
    expect(exp(await at(T0 + DAY - 1), 'g-v1').expired).toBe(false);
    // Empty classic group: 7 days from when it became Empty (currentStateTimestamp), not from the commit
    expect(exp(d.offsets, 'g-empty')).toMatchObject({ expired: false, expiresAt: BigInt(T0 + 9 * DAY) });
    expect(exp(await at(T0 + 9 * DAY), 'g-empty').expired).toBe(true);
    // stable consumer groups subscribed to the topic never expire it; a pending transaction blocks expiry
    for (const g of ['g-ok', 'cg848', 'g-eos']) expect(exp(await at(T0 + 400 * DAY), g)).toMatchObject({ expired: false, expiresAt: null });
    // a different retention
    expect(exp((await describeGroups(loaded, { now: BigInt(T0 + DAY), offsetsRetentionMs: BigInt(DAY) })).offsets, 'g-hole').expired).toBe(true);
  });

  it('a pending transactional commit holds back the expiry of its own partition only (OffsetMetadataManager.cleanupExpiredOffsets, Kafka 4.x)', async () => {
    const ld = tempDir('klx-groups-pending-');
    for (const partition of [0, 1]) buildPartition(ld, { topic: 'orders', partition, segments: [{ batches: [{ records: [{ key: 'k', value: 'v', timestamp: BigInt(T0) }] }] }] });
    const spec = (partition: number, offset: number): OffsetsRecordSpec => ({ type: 1, key: { group: 'g-part', topic: 'orders', partition }, version: 3, value: { offset, leaderEpoch: 0, metadata: '', commitTimestamp: T0 } });
    const recs = (specs: OffsetsRecordSpec[]) => encodeOffsetsRecords(specs).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64'), timestamp: BigInt(T0) }));
    buildPartition(ld, {
      topic: '__consumer_offsets',
      partition: offsetsPartitionFor('g-part', 50),
      segments: [{ batches: [{ records: recs([spec(0, 1)]) }, { records: recs([spec(1, 1)]) }, { producerId: 55n, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: recs([spec(1, 1)]) }] }],
    });
    const rows = (await describeGroups(await load(ld), { now: BigInt(T0 + 8 * DAY) })).offsets.filter((r) => r.group === 'g-part');
    expect(rows.map((r) => [r.partition, r.expired, r.expiresAt])).toEqual([
      [0, true, BigInt(T0 + 7 * DAY)],
      [1, false, null],
    ]);
  });

  it('lag is counted to the high watermark, as kafka-consumer-groups.sh prints it (ListOffsets latest: Partition.fetchOffsetForTimestamp)', async () => {
    const ld = tempDir('klx-groups-hw-');
    // 10 records on disk, but replication-offset-checkpoint says the in-sync replicas have only 7.
    buildPartition(ld, { topic: 'orders', partition: 0, segments: [{ batches: [{ records: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: 'v', timestamp: BigInt(T0 + i) })) }] }] }, { highWatermark: 7n });
    const spec = (group: string, offset: number): OffsetsRecordSpec => ({ type: 1, key: { group, topic: 'orders', partition: 0 }, version: 3, value: { offset, leaderEpoch: 0, metadata: '', commitTimestamp: T0 } });
    const recs = (specs: OffsetsRecordSpec[]) => encodeOffsetsRecords(specs).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64'), timestamp: BigInt(T0) }));
    for (const group of ['g-hw-3', 'g-hw-7']) {
      buildPartition(ld, { topic: '__consumer_offsets', partition: offsetsPartitionFor(group, 50), segments: [{ batches: [{ records: recs([spec(group, Number(group.slice(5)))]) }] }] });
    }
    const rows = (await describeGroups(await load(ld), { now: BigInt(T0) })).offsets;
    const row = (g: string) => rows.find((r) => r.group === g)!;
    expect(row('g-hw-3')).toMatchObject({ committedOffset: 3n, logEndOffset: 10n, highWatermark: 7n, lastStableOffset: 7n, lag: 4n, recordLag: 4, diagnosis: 'ok' });
    expect(row('g-hw-7')).toMatchObject({ committedOffset: 7n, lag: 0n, recordLag: 0, diagnosis: 'ok' });
    expect(row('g-hw-7').detail).toBe("caught up: the committed offset is at or past the high watermark 7, where a consumer's fetches end (records up to the log end offset 10 are not yet replicated to every in-sync replica)");
  });

  it('below the log start, a reset to latest lands on the high watermark, not the log end offset (ListOffsets latest, read_uncommitted)', async () => {
    const ld = tempDir('klx-groups-hw-start-');
    buildPartition(ld, { topic: 'orders', partition: 0, segments: [{ batches: [{ records: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: 'v', timestamp: BigInt(T0 + i) })) }] }] }, { highWatermark: 7n, logStartOffset: 4n });
    const spec: OffsetsRecordSpec = { type: 1, key: { group: 'g-low', topic: 'orders', partition: 0 }, version: 3, value: { offset: 2, leaderEpoch: 0, metadata: '', commitTimestamp: T0 } };
    const recs = encodeOffsetsRecords([spec]).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64'), timestamp: BigInt(T0) }));
    buildPartition(ld, { topic: '__consumer_offsets', partition: offsetsPartitionFor('g-low', 50), segments: [{ batches: [{ records: recs }] }] });
    const r = (await describeGroups(await load(ld), { now: BigInt(T0) })).offsets.find((x) => x.group === 'g-low')!;
    expect(r).toMatchObject({ committedOffset: 2n, logStartOffset: 4n, logEndOffset: 10n, highWatermark: 7n, diagnosis: 'below-log-start', lag: 5n });
    expect(r.detail).toMatch(/the consumer gets OFFSET_OUT_OF_RANGE and resets per auto\.offset\.reset \(earliest: 4, latest: 7, the high watermark\)$/);
  });

  it('names the records that could not be read, keeps the group listed with what was read', () => {
    const bad = d.groups.find((g) => g.group === 'g-bad')!;
    expect(bad.problems).toHaveLength(1);
    const p = bad.problems[0]!;
    expect(p.file).toBe(join(dir, `__consumer_offsets-${offsetsPartitionFor('g-bad', 50)}`, '00000000000000000000.log'));
    expect(p.offset).toBe(1n);
    expect(p.reason).toBe('value of OffsetCommit (record type 1): byte 2: offset: needs 8 bytes, 5 left');
    const global = loaded.store.problems.map((x) => x.reason);
    expect(global).toEqual([
      'key version (record type) 99 is not one this tool or Kafka\'s coordinators know; the record is skipped, as Kafka\'s coordinator skips unknown record types',
      'key: byte 4: group: needs 40 bytes, 1 left',
    ]);
    expect(loaded.store.counts).toMatchObject({ transactionalCommits: 1, abortedCommits: 1 });
  });

  it('a partition holding a record the coordinator cannot deserialize is one a broker fails to load: every group of it says so (CoordinatorLoaderImpl); an unknown record type alone does not', () => {
    const pBad = offsetsPartitionFor('g-bad', 50);
    const pOk = offsetsPartitionFor('g-ok', 50);
    expect([...loaded.store.loadFailures.keys()].sort((a, b) => a - b)).toEqual([pBad, pOk].sort((a, b) => a - b));
    const bad = d.groups.find((g) => g.group === 'g-bad')!.offsetsPartitionLoadFailure!;
    expect(bad.offset).toBe(1n);
    expect(bad.text).toBe(
      `a broker would fail to load __consumer_offsets-${pBad}: the record at offset 1 does not deserialize (value of OffsetCommit (record type 1): byte 2: offset: needs 8 bytes, 5 left); ` +
        'the group coordinator stops loading there (CoordinatorLoaderImpl rethrows what GroupCoordinatorRecordSerde throws, skipping only unknown record types; 3.x GroupMetadataManager.loadGroupsAndOffsets fails likewise), so no group of that partition is served until the record is removed',
    );
    // g-ok's own records are fine; the key that does not decode in its partition (after the type-99 record, which is skipped) fails the load
    const ok = d.groups.find((g) => g.group === 'g-ok')!.offsetsPartitionLoadFailure!;
    expect(ok.reason).toBe('key: byte 4: group: needs 40 bytes, 1 left');
    for (const g of d.groups) expect(g.offsetsPartitionLoadFailure === null).toBe(g.offsetsPartition !== pBad && g.offsetsPartition !== pOk);
  });

  it('says which __consumer_offsets partitions are absent, and where a missing group would be', async () => {
    expect(loaded.offsetsTopic.present).toEqual(partitionsWritten);
    expect(loaded.offsetsTopic.absent).toHaveLength(50 - partitionsWritten.length);
    const home = offsetsPartitionFor(GROUP_IN_ABSENT_PARTITION, 50);
    expect(loaded.offsetsTopic.absent).toContain(home);
    const err = await describeGroups(loaded, { group: GROUP_IN_ABSENT_PARTITION }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).message).toBe(`group "${GROUP_IN_ABSENT_PARTITION}" is not listed: it lives in __consumer_offsets-${home} (abs(hashCode) % 50 (assumed: Kafka's default offsets.topic.num.partitions; give the real one if it differs)), whose folder is not among the opened ones`);
  });

  it('replays a streams group (KIP-1071, Kafka 4.1.0 records encoded by the Python codec): topology, members, tasks, tombstones', async () => {
    const g = loaded.store.groups.get('streams-app')!;
    expect(g.type).toBe('streams');
    const sg = g.streams!;
    expect({ groupEpoch: sg.groupEpoch, metadataHash: sg.metadataHash, assignmentEpoch: sg.assignmentEpoch }).toEqual({ groupEpoch: 4, metadataHash: 9007199254740993n, assignmentEpoch: 4 });
    expect(sg.topology).toEqual({
      epoch: 1,
      subtopologies: [{ SubtopologyId: '0', SourceTopics: ['orders'], SourceTopicRegex: [], StateChangelogTopics: [{ Name: 'streams-app-store-changelog', Partitions: 1, ReplicationFactor: 3, TopicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }], RepartitionSinkTopics: [], RepartitionSourceTopics: [], CopartitionGroups: [] }],
    });
    // sm-2: CurrentMemberAssignment, TargetAssignmentMember and MemberMetadata tombstones remove it
    expect([...sg.members.keys()]).toEqual(['sm-1']);
    expect(sg.members.get('sm-1')).toMatchObject({ rackId: 'r2', clientId: 'streams-app-StreamThread-1', clientHost: '/10.1.2.3', topologyEpoch: 1, processId: 'p-1', userEndpoint: { host: 'app-1.local', port: 8080 }, clientTags: [{ key: 'zone', value: 'a' }], memberEpoch: 4, previousMemberEpoch: 3, state: 0 });
    expect(sg.members.get('sm-1')!.assigned).toEqual({ active: [{ SubtopologyId: '0', Partitions: [0] }], standby: [], warmup: [] });
    expect(sg.members.get('sm-1')!.targetAssignment).toEqual({ active: [{ SubtopologyId: '0', Partitions: [0] }], standby: [], warmup: [] });
    // the member running task 0_0 owns orders-0 (task partition 0 of a subtopology reading orders)
    expect(d.members.filter((m) => m.group === 'streams-app')).toEqual([{ group: 'streams-app', memberId: 'sm-1', groupInstanceId: null, clientId: 'streams-app-StreamThread-1', host: '/10.1.2.3', sessionTimeoutMs: null, rebalanceTimeoutMs: 300000, memberEpoch: 4, subscribedTopics: ['orders'], assignment: ['orders-0'] }]);
    expect(d.offsets.find((r) => r.group === 'streams-app')).toMatchObject({ consumerId: 'sm-1', clientId: 'streams-app-StreamThread-1', host: '/10.1.2.3', committedOffset: 8n, expired: false, expiresAt: null });
  });

  it('reads the commit history of a group and partition, with transactional commits resolved', async () => {
    const h = await commitHistory(loaded, 'g-ok', 'orders', 0);
    expect(h.points.map((p) => [num(p.committedOffset), Number(p.timestamp) - T0, p.transaction])).toEqual([[1, 0, 'none'], [2, 1000, 'none'], [4, 2000, 'none']]);
    expect(h).toMatchObject({ total: 3, thinned: false, logStartOffset: 0n, logEndOffset: 10n });
    const eos = await commitHistory(loaded, 'g-eos', 'orders', 0);
    expect(eos.points.map((p) => [num(p.committedOffset), p.transaction])).toEqual([[9, 'committed'], [1, 'aborted'], [3, 'pending']]);
    const tomb = await commitHistory(loaded, 'g-tomb', 'orders', 0);
    expect(tomb.points.map((p) => num(p.committedOffset))).toEqual([3, null]);
    const thin = await commitHistory(loaded, 'g-ok', 'orders', 0, { maxPoints: 2 });
    expect(thin.total).toBe(3);
  });
});

describeRealData('the real data sets list their groups with the offsets an independent decode of EXPECTED gives', () => {
  const CODEC = join(REPO_ROOT, 'test/support/consumer_offsets_codec.py');
  for (const c of ['kafka-0.10.1-magic1', 'kafka-2.7.1-compacted-offsets', 'cp-5.1-lz4-connect', 'kafka-2.8.0-snappy', 'gzip-mixed-bitnami']) {
    it(c, async () => {
      // independent: every __consumer_offsets record of EXPECTED.jsonl in file/offset order, decoded in Python,
      // latest per key wins, tombstones delete
      const recs: { partition: number; key: string; value: string | null }[] = [];
      for (const b of expectedBatches(c)) {
        const file = String(b.file);
        if (!file.startsWith('__consumer_offsets-')) continue;
        for (const r of b.records as { key: string; value: string | null }[]) recs.push({ partition: Number(file.split('/')[0]!.split('-')[1]), key: r.key, value: r.value });
      }
      const out = execFileSync('/usr/bin/python3', [CODEC, 'decode'], { input: recs.map((r) => JSON.stringify({ key: r.key, value: r.value })).join('\n') + '\n' }).toString('utf8');
      const decoded = out.split('\n').filter(Boolean).map((l) => parseJsonExact(l) as { key: { type: number; data: Record<string, unknown> }; value: { data: Record<string, unknown> } | null });
      const offsets = new Map<string, number>();
      const groupRecords = new Map<string, Record<string, unknown> | null>();
      decoded.forEach((x, i) => {
        expect(recs[i]!.partition).toBe(offsetsPartitionFor(String(x.key.data.group), 50)); // brokers placed each group by its hash
        if (x.key.type <= 1) {
          const k = `${x.key.data.group}|${x.key.data.topic}|${x.key.data.partition}`;
          if (x.value === null) offsets.delete(k);
          else offsets.set(k, Number(x.value.data.offset));
        } else if (x.key.type === 2) groupRecords.set(String(x.key.data.group), x.value?.data ?? null);
      });
      const expectedGroups = new Set([...offsets.keys()].map((k) => k.split('|')[0]!));
      for (const [g, v] of groupRecords) if (v !== null) expectedGroups.add(g);

      const loaded = await load(join(REAL_DATA, c));
      const d = await describeGroups(loaded, { now: 1_700_000_000_000n });
      expect(loaded.store.problems).toEqual([]);
      expect(d.groups.map((g) => g.group).sort()).toEqual([...expectedGroups].sort());
      const got = new Map(d.offsets.filter((r) => r.committedOffset !== null).map((r) => [`${r.group}|${r.topic}|${r.partition}`, Number(r.committedOffset)]));
      expect(got).toEqual(offsets);
      for (const g of d.groups) {
        const v = groupRecords.get(g.group) as { protocolType: string; generation: number; members: unknown[] } | null | undefined;
        if (v) expect({ g: g.group, protocolType: g.protocolType, generation: g.generation, members: g.members }).toEqual({ g: g.group, protocolType: v.protocolType, generation: v.generation, members: v.members.length });
        else expect(g.type).toBe('simple');
      }
      expect(toJsonText(d.groups.length)).toBe(String(expectedGroups.size));
    });
  }

  it('what the real data says: a Confluent Control Center group whose committed offset fell below the log start', async () => {
    const d = await describeGroups(await load(join(REAL_DATA, 'cp-5.1-lz4-connect')), { group: '_confluent-controlcenter-5-1-2-1', now: 1_700_000_000_000n });
    const r = d.offsets.find((x) => x.topic === '_confluent-monitoring' && x.partition === 0)!;
    expect(r).toMatchObject({ committedOffset: 10n, logStartOffset: 14n, logEndOffset: 14n, diagnosis: 'below-log-start', lag: 4n, recordLag: 0, nextOffset: 14n });
  });
});

describe('the replay fast path (keys read in place, found again by position or hash)', () => {
  it('keeps groups and topics apart when keys of the same length interleave, repeat out of order, are tombstoned and carry non-ASCII names', async () => {
    const dir = tempDir('klx-groups-fast-');
    const c = (group: string, topic: string, partition: number, offset: number, version = 3): OffsetsRecordSpec => ({ type: 1, key: { group, topic, partition }, version, value: { offset, ...(version >= 3 ? { leaderEpoch: 2 } : {}), metadata: version === 2 ? 'm€' : '', commitTimestamp: T0 + offset, ...(version === 1 ? { expireTimestamp: -1 } : {}) } });
    const round1 = [c('ga', 'ta', 0, 10), c('gb', 'ta', 0, 20), c('ga', 'tb', 1, 30), c('gb', 'tb', 1, 40), c('gé', 'ta', 0, 50, 2), c('ga', 'ta', 1, 60, 1)];
    // round 2 in another order, and one key tombstoned; round 3 commits the tombstoned key again
    const round2 = [c('gb', 'tb', 1, 41), c('ga', 'ta', 0, 11), { type: 1, key: { group: 'gb', topic: 'ta', partition: 0 }, value: null }, c('gé', 'ta', 0, 51, 2), c('ga', 'tb', 1, 31, 0)];
    const round3 = [c('ga', 'ta', 1, 61), c('gb', 'ta', 0, 22)];
    const batches = [round1, round2, round3].map((specs) => ({ records: encodeOffsetsRecords(specs).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64'), timestamp: BigInt(T0) })) }));
    buildPartition(dir, { topic: '__consumer_offsets', partition: 0, segments: [{ batches }] });
    const loaded = await load(dir, { offsetsTopicPartitions: 1 });
    const got = Object.fromEntries(
      [...loaded.store.groups.values()].map((g) => [g.groupId, Object.fromEntries([...g.offsets.values()].map((o) => [`${o.topic}-${o.partition}`, { offset: Number(o.offset), ts: Number(o.commitTimestamp) - T0, v: o.valueVersion, epoch: o.leaderEpoch, metadata: o.metadata, at: Number(o.place.offset) }]))]),
    );
    expect(got).toEqual({
      ga: { 'ta-0': { offset: 11, ts: 11, v: 3, epoch: 2, metadata: '', at: 7 }, 'tb-1': { offset: 31, ts: 31, v: 0, epoch: null, metadata: '', at: 10 }, 'ta-1': { offset: 61, ts: 61, v: 3, epoch: 2, metadata: '', at: 11 } },
      gb: { 'tb-1': { offset: 41, ts: 41, v: 3, epoch: 2, metadata: '', at: 6 }, 'ta-0': { offset: 22, ts: 22, v: 3, epoch: 2, metadata: '', at: 12 } },
      'gé': { 'ta-0': { offset: 51, ts: 51, v: 2, epoch: null, metadata: 'm€', at: 9 } },
    });
    expect(loaded.store.counts).toMatchObject({ records: 13, tombstones: 1, offsetCommits: 13 });
  });

  it('applies a commit with bytes after its last field and a group id that is not valid UTF-8, as the coordinator loads them (CoordinatorRecordSerde.deserialize, Readable.readString)', async () => {
    const dir = tempDir('klx-groups-lenient-');
    const c = (group: string, offset: number): OffsetsRecordSpec => ({ type: 1, key: { group, topic: 'orders', partition: 0 }, version: 3, value: { offset, leaderEpoch: 2, metadata: '', commitTimestamp: T0 + offset } });
    const enc = encodeOffsetsRecords([c('gt', 10), c('gt', 20), c('gx', 5)]).map((e) => ({ key: Buffer.from(e.keyBase64, 'base64'), value: Buffer.from(e.valueBase64!, 'base64'), timestamp: BigInt(T0) }));
    enc[1]!.value = Buffer.concat([enc[1]!.value, Buffer.from([0xab, 0xcd])]); // 2 bytes after commitTimestamp
    enc[2]!.key[5] = 0xff; // 'gx' -> 'g' + an invalid byte
    buildPartition(dir, { topic: '__consumer_offsets', partition: 0, segments: [{ batches: [{ records: enc }] }] });
    const loaded = await load(dir, { offsetsTopicPartitions: 1 });
    expect(loaded.store.problems).toEqual([]);
    const offsets = Object.fromEntries([...loaded.store.groups.values()].map((g) => [g.groupId, [...g.offsets.values()].map((o) => Number(o.offset))]));
    expect(offsets).toEqual({ gt: [20], 'g\ufffd': [5] });
  });
});
