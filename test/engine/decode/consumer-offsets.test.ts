/**
 * The `__consumer_offsets` decoder (engine/decode/internal/consumer-offsets.ts).
 *
 * Real data: every `__consumer_offsets` record of every data set in ../shared/kafka-real-data is read
 * by the engine from the segment files, checked to carry the key/value bytes the independent peer
 * decoder wrote in EXPECTED.jsonl, and decoded; the result must equal what an independent Python
 * decoder (test/support/consumer_offsets_codec.py, written from Kafka's schemas) gives for the
 * EXPECTED bytes. Versions no data set holds (key v0, values v0/v2/v4, group metadata v0/v4, all
 * KIP-848 and share-group record types) are encoded by that Python codec and decoded here.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src-main/engine/decode/decode-error.ts';
import {
  decodeConsumerOffsetsKey,
  decodeConsumerOffsetsRecord,
  decodeConsumerOffsetsValue,
  groupIdOfKey,
  summarizeConsumerOffsetsKey,
  summarizeConsumerOffsetsValue,
} from '../../../src-main/engine/decode/internal/consumer-offsets.ts';
import { parseJsonExact, toJsonText } from '../../../src-main/engine/decode/json-text.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import { openPath, allPartitions } from '../../../src-main/engine/log/log-dir.ts';
import { describeRealData, expectedBatches, REAL_DATA, realDataCases, REPO_ROOT } from '../../support/real-data.ts';
import { encodeOffsetsRecords, type OffsetsRecordSpec } from '../../support/groups-scenario.ts';

const CODEC = join(REPO_ROOT, 'test/support/consumer_offsets_codec.py');
const b64 = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('base64'));
const fromB64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** Runs the Python codec over JSON lines. */
function codec(mode: 'decode' | 'encode', lines: unknown[]): Record<string, unknown>[] {
  const out = execFileSync('/usr/bin/python3', [CODEC, mode], { input: lines.map((l) => toJsonText(l)).join('\n') + '\n', maxBuffer: 256 << 20 }).toString('utf8');
  return out.split('\n').filter(Boolean).map((l) => parseJsonExact(l) as Record<string, unknown>);
}

/** The TypeScript decode of a record as plain JSON (recordType dropped: the Python codec has only the type number). */
function tsDecode(key: Uint8Array | null, value: Uint8Array | null): unknown {
  const d = decodeConsumerOffsetsRecord(key, value);
  const { recordType: _omit, ...k } = d.key;
  return parseJsonExact(toJsonText({ key: k, value: d.value }));
}

describeRealData('every __consumer_offsets record of the real data sets', () => {
  const cases = realDataCases().filter((c) => expectedBatches(c).some((b) => String(b.file).startsWith('__consumer_offsets-')));

  it('the data sets with __consumer_offsets records', () => {
    expect(cases).toEqual(['cp-5.1-lz4-connect', 'gzip-mixed-bitnami', 'kafka-0.10.1-magic1', 'kafka-2.7.1-compacted-offsets', 'kafka-2.8.0-snappy']);
  });

  for (const c of cases) {
    it(`${c}: the engine reads the EXPECTED bytes and the decode equals the independent one`, () => {
      const expected = new Map<string, { key: string | null; value: string | null }>();
      for (const b of expectedBatches(c)) {
        const file = String(b.file);
        if (!file.startsWith('__consumer_offsets-')) continue;
        for (const r of b.records as { offset: number; key: string | null; value: string | null }[]) expected.set(`${file.split('/')[0]}@${r.offset}`, { key: r.key, value: r.value });
      }
      const read = new Map<string, { key: Uint8Array | null; value: Uint8Array | null }>();
      for (const { log } of allPartitions(openPath(join(REAL_DATA, c)))) {
        if (log.topic !== '__consumer_offsets') continue;
        for (const e of walkLog(log)) {
          if (e.type !== 'batch') continue;
          for (const r of recordsOf(e)) read.set(`__consumer_offsets-${log.partition}@${r.offset}`, { key: r.key, value: r.value });
        }
      }
      expect(read.size).toBe(expected.size);
      expect(read.size).toBeGreaterThan(0);
      const ids = [...expected.keys()];
      for (const id of ids) {
        const r = read.get(id)!;
        expect({ id, key: b64(r.key), value: b64(r.value) }).toEqual({ id, ...expected.get(id) });
      }
      const independent = codec('decode', ids.map((id) => expected.get(id)));
      const types = new Set<string>();
      ids.forEach((id, i) => {
        const r = read.get(id)!;
        const ind = independent[i]!;
        expect(ind.error, `${id}: the independent decoder failed`).toBeUndefined();
        expect({ id, ...(tsDecode(r.key, r.value) as object) }).toEqual({ id, ...ind });
        const k = decodeConsumerOffsetsKey(r.key!);
        types.add(`${k.type}/${r.value === null ? 'tombstone' : (decodeConsumerOffsetsValue(k.type, r.value).version)}`);
      });
      // what each data set exercises (key type / value version)
      const want: Record<string, string[]> = {
        'kafka-0.10.1-magic1': ['1/1', '2/1'],
        'kafka-2.7.1-compacted-offsets': ['1/3', '1/tombstone', '2/3', '2/tombstone'],
        'cp-5.1-lz4-connect': ['1/3', '1/tombstone', '2/2', '2/tombstone'],
        'gzip-mixed-bitnami': ['2/3'],
        'kafka-2.8.0-snappy': ['1/3', '2/3'],
      };
      expect([...types].sort()).toEqual(want[c]);
    });
  }
});

describe('records no data set holds, encoded by the independent codec from the schemas', () => {
  const T1 = 'AAAAAAAAAAAAAAAAAAAAAQ'; // a Uuid's Kafka text (base64url, 16 bytes)
  const T2 = 'q83vEjRWeJCrze8SNFZ4kA';
  const cases: { name: string; type: number; key: Record<string, unknown>; version?: number; value: Record<string, unknown> | null }[] = [
    { name: 'offset commit key v0 / value v0', type: 0, key: { group: 'g', topic: 't', partition: 7 }, version: 0, value: { offset: 42, metadata: 'meta', commitTimestamp: 1000 } },
    { name: 'value v1 with expireTimestamp', type: 1, key: { group: 'g', topic: 't', partition: 0 }, version: 1, value: { offset: 5, metadata: '', commitTimestamp: 1000, expireTimestamp: 2000 } },
    { name: 'value v2 beyond 2^53', type: 1, key: { group: 'g', topic: 't', partition: 1 }, version: 2, value: { offset: 9007199254740993n, metadata: '', commitTimestamp: 2000 } },
    { name: 'value v4 (flexible)', type: 1, key: { group: 'g', topic: 't', partition: 2 }, version: 4, value: { offset: 9, leaderEpoch: 3, metadata: 'm', commitTimestamp: 3000 } },
    {
      name: 'group metadata v0 (consumer)',
      type: 2,
      key: { group: 'g' },
      version: 0,
      value: {
        protocolType: 'consumer', generation: 4, protocol: 'range', leader: 'm1',
        members: [{ memberId: 'm1', clientId: 'c1', clientHost: '/10.0.0.1', sessionTimeout: 10000, subscription: { topics: ['orders'], userData: null, ownedPartitions: [{ topic: 'orders', partitions: [1] }] }, assignment: { assignedPartitions: [{ topic: 'orders', partitions: [0, 1] }], userData: 'AQI=' } }],
      },
    },
    {
      name: 'group metadata v4 (flexible, connect protocol: bytes kept)',
      type: 2,
      key: { group: 'connect-cluster' },
      version: 4,
      value: { protocolType: 'connect', generation: 9, protocol: null, leader: null, currentStateTimestamp: 77, members: [{ memberId: 'm2', groupInstanceId: 'static-1', clientId: 'c2', clientHost: '/h', rebalanceTimeout: 60000, sessionTimeout: 45000, subscription: 'AQI=', assignment: '' }] },
    },
    { name: 'group metadata tombstone', type: 2, key: { group: 'gone' }, value: null },
    { name: 'ConsumerGroupMetadata', type: 3, key: { GroupId: 'cg' }, version: 0, value: { Epoch: 12 } },
    {
      name: 'ConsumerGroupMemberMetadata',
      type: 5,
      key: { GroupId: 'cg', MemberId: 'mem-1' },
      version: 0,
      value: { InstanceId: null, RackId: 'r1', ClientId: 'cli', ClientHost: '/1.2.3.4', SubscribedTopicNames: ['orders', 'payments'], SubscribedTopicRegex: null, RebalanceTimeoutMs: 300000, ServerAssignor: 'uniform' },
    },
    { name: 'ConsumerGroupTargetAssignmentMetadata', type: 6, key: { GroupId: 'cg' }, version: 0, value: { AssignmentEpoch: 12 } },
    { name: 'ConsumerGroupTargetAssignmentMember', type: 7, key: { GroupId: 'cg', MemberId: 'mem-1' }, version: 0, value: { TopicPartitions: [{ TopicId: T1, Partitions: [0, 2] }] } },
    {
      name: 'ConsumerGroupCurrentMemberAssignment',
      type: 8,
      key: { GroupId: 'cg', MemberId: 'mem-1' },
      version: 0,
      value: { MemberEpoch: 12, PreviousMemberEpoch: 11, State: 0, AssignedPartitions: [{ TopicId: T1, Partitions: [0] }, { TopicId: T2, Partitions: [3] }], PartitionsPendingRevocation: [] },
    },
    { name: 'ConsumerGroupMemberMetadata tombstone', type: 5, key: { GroupId: 'cg', MemberId: 'mem-0' }, value: null },
    { name: 'ShareGroupMemberMetadata', type: 10, key: { GroupId: 'sg', MemberId: 's-1' }, version: 0, value: { RackId: null, ClientId: 'share-cli', ClientHost: '/5.6.7.8', SubscribedTopicNames: ['orders'] } },
    { name: 'ShareGroupMetadata', type: 11, key: { GroupId: 'sg' }, version: 0, value: { Epoch: 3, MetadataHash: -7046029254386353131n } },
    { name: 'ShareGroupTargetAssignmentMetadata', type: 12, key: { GroupId: 'sg' }, version: 0, value: { AssignmentEpoch: 3 } },
    { name: 'ShareGroupTargetAssignmentMember', type: 13, key: { GroupId: 'sg', MemberId: 's-1' }, version: 0, value: { TopicPartitions: [{ TopicId: T2, Partitions: [0, 1, 2] }] } },
    { name: 'ShareGroupCurrentMemberAssignment', type: 14, key: { GroupId: 'sg', MemberId: 's-1' }, version: 0, value: { MemberEpoch: 3, PreviousMemberEpoch: 2, State: 0, AssignedPartitions: [{ TopicId: T2, Partitions: [1] }] } },
  ];
  const encoded = codec('encode', cases.map((c) => ({ type: c.type, key: c.key, version: c.version, value: c.value })));

  cases.forEach((c, i) => {
    it(c.name, () => {
      const e = encoded[i] as { keyBase64: string; valueBase64: string | null };
      const d = decodeConsumerOffsetsRecord(fromB64(e.keyBase64), e.valueBase64 === null ? null : fromB64(e.valueBase64));
      expect(d.key.type).toBe(c.type);
      expect(parseJsonExact(toJsonText(d.key.data))).toEqual(c.key);
      if (c.value === null) {
        expect(d.value).toBeNull();
        return;
      }
      expect(d.value!.version).toBe(c.version);
      expect(d.value!.unknownTaggedFields).toBeUndefined();
      const want = parseJsonExact(toJsonText(c.value));
      const got = parseJsonExact(toJsonText(d.value!.data)) as Record<string, unknown>;
      if (c.type === 2) {
        // fields of later versions are absent; for "consumer" the member bytes are decoded with the
        // consumer protocol (v1 subscription: ownedPartitions; no generationId/rackId)
        const g = c.value as { members: Record<string, unknown>[] };
        const members = (got.members as Record<string, unknown>[]).map((m, j) => ({ ...g.members[j], ...m }));
        expect({ ...got, members }).toEqual({ ...(want as object), members: members });
        expect(got.members).toHaveLength(1);
        if (c.version === 0) {
          expect(got).not.toHaveProperty('currentStateTimestamp');
          expect((got.members as Record<string, unknown>[])[0]).toEqual({
            memberId: 'm1', clientId: 'c1', clientHost: '/10.0.0.1', sessionTimeout: 10000,
            subscription: { topics: ['orders'], userData: null, ownedPartitions: [{ topic: 'orders', partitions: [1] }] },
            assignment: { assignedPartitions: [{ topic: 'orders', partitions: [0, 1] }], userData: 'AQI=' },
          });
        } else {
          expect((got.members as Record<string, unknown>[])[0]).toMatchObject({ subscription: 'AQI=', assignment: '', groupInstanceId: 'static-1', rebalanceTimeout: 60000 });
        }
        return;
      }
      expect(got).toEqual(want);
    });
  });

  it('groupIdOfKey and the one-line summaries', () => {
    const e = encoded as { keyBase64: string; valueBase64: string | null }[];
    const k0 = decodeConsumerOffsetsKey(fromB64(e[3]!.keyBase64));
    expect(groupIdOfKey(k0)).toBe('g');
    expect(summarizeConsumerOffsetsKey(k0)).toBe('OffsetCommit · g · t-2');
    expect(summarizeConsumerOffsetsValue(k0, decodeConsumerOffsetsValue(k0.type, fromB64(e[3]!.valueBase64!)))).toBe('offset 9 · epoch 3 · "m" · v4');
    const k8 = decodeConsumerOffsetsKey(fromB64(e[11]!.keyBase64));
    expect(summarizeConsumerOffsetsKey(k8)).toBe('ConsumerGroupCurrentMemberAssignment · cg · member mem-1');
    expect(summarizeConsumerOffsetsValue(k8, decodeConsumerOffsetsValue(8, fromB64(e[11]!.valueBase64!)))).toBe('MemberEpoch 12 · v0');
    expect(summarizeConsumerOffsetsValue(k8, null)).toBe('tombstone (deleted)');
  });
});

describe('tagged fields and bad input', () => {
  const hex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

  it('ConsumerGroupMemberMetadataValue with ClassicMemberMetadata (tag 0) and an unknown tag kept raw', () => {
    // v0; InstanceId null(00) RackId null(00) ClientId "c"(02 63) ClientHost "h"(02 68) Topics ["t"](02 02 74)
    // Regex null(00) RebalanceTimeoutMs 1000 ServerAssignor null(00); tags: 2 fields:
    // tag 0 size 13: present(01) SessionTimeoutMs 45000(0000afc8) SupportedProtocols [ {Name "range"(06 72616e6765) Metadata [09](02 09) tags(00)} ](02 ...) tags(00)
    const body = '01 0000afc8 02 06 72616e6765 02 09 00 00';
    const size = hex(body).length;
    const v = hex(`0000 00 00 0263 0268 02 0274 00 000003e8 00 02 00 ${size.toString(16).padStart(2, '0')} ${body} 05 02 abcd`);
    const d = decodeConsumerOffsetsValue(5, v);
    expect(d.data).toEqual({
      InstanceId: null, RackId: null, ClientId: 'c', ClientHost: 'h', SubscribedTopicNames: ['t'], SubscribedTopicRegex: null, RebalanceTimeoutMs: 1000, ServerAssignor: null,
      ClassicMemberMetadata: { SessionTimeoutMs: 45000, SupportedProtocols: [{ Name: 'range', Metadata: new Uint8Array([9]) }] },
    });
    expect(d.unknownTaggedFields).toEqual([{ tag: 5, data: new Uint8Array([0xab, 0xcd]) }]);
  });

  it('ConsumerGroupRegularExpression (type 16), a Streams key (type 17) and an unknown type', () => {
    const k16 = hex('0010 0002 6367 0003 6f2e2a');
    expect(decodeConsumerOffsetsKey(k16)).toEqual({ type: 16, recordType: 'ConsumerGroupRegularExpression', data: { GroupId: 'cg', RegularExpression: 'o.*' } });
    // v0: Topics ["orders"] (02 07 6f7264657273) Version 5 Timestamp 1700000000000 tags 00
    const v16 = hex('0000 02 07 6f7264657273 0000000000000005 0000018bcfe56800 00');
    expect(decodeConsumerOffsetsValue(16, v16)).toEqual({ version: 0, data: { Topics: ['orders'], Version: 5n, Timestamp: 1700000000000n } });
    expect(decodeConsumerOffsetsKey(hex('0011 0002 7367'))).toEqual({ type: 17, recordType: 'StreamsGroupMetadata', data: { GroupId: 'sg' } });
    // Kafka 4.1.0 has no record type 18 (StreamsGroupPartitionMetadata of development builds) nor 24
    expect(decodeConsumerOffsetsKey(hex('0012 0002 7367'))).toEqual({ type: 18, recordType: 'Unknown', data: {} });
    expect(decodeConsumerOffsetsKey(hex('0018 0002 7367'))).toEqual({ type: 24, recordType: 'Unknown', data: {} });
    expect(decodeConsumerOffsetsKey(hex('0063 0102'))).toEqual({ type: 99, recordType: 'Unknown', data: {} });
    expect(decodeConsumerOffsetsValue(99, hex('0001 ff'))).toEqual({ version: 1, data: { bytes: hex('ff') } });
  });

  it('streams group records (KIP-1071) as Apache Kafka 4.1.0 writes them, encoded by the Python codec from its schemas', () => {
    const tasks = [{ SubtopologyId: '0', Partitions: [0, 2] }, { SubtopologyId: '1', Partitions: [1] }];
    const specs: OffsetsRecordSpec[] = [
      { type: 17, key: { GroupId: 'app' }, version: 0, value: { Epoch: 7, MetadataHash: -8070450532247928832n } },
      { type: 19, key: { GroupId: 'app', MemberId: 'm1' }, version: 0, value: { InstanceId: 'i-1', RackId: null, ClientId: 'app-StreamThread-1', ClientHost: '/10.0.0.1', RebalanceTimeoutMs: 300000, TopologyEpoch: 2, ProcessId: 'proc-1', UserEndpoint: { Host: 'h.example', Port: 65535 }, ClientTags: [{ Key: 'zone', Value: 'eu-1a' }] } },
      { type: 19, key: { GroupId: 'app', MemberId: 'm2' }, version: 0, value: { InstanceId: null, RackId: null, ClientId: 'c', ClientHost: '/h', RebalanceTimeoutMs: -1, TopologyEpoch: 0, ProcessId: 'p', UserEndpoint: null, ClientTags: [] } },
      { type: 20, key: { GroupId: 'app' }, version: 0, value: { AssignmentEpoch: 7 } },
      { type: 21, key: { GroupId: 'app', MemberId: 'm1' }, version: 0, value: { ActiveTasks: tasks, StandbyTasks: [{ SubtopologyId: '1', Partitions: [0] }], WarmupTasks: [] } },
      { type: 22, key: { GroupId: 'app', MemberId: 'm1' }, version: 0, value: { MemberEpoch: 7, PreviousMemberEpoch: 6, State: 1, ActiveTasks: tasks, StandbyTasks: [], WarmupTasks: [], ActiveTasksPendingRevocation: [{ SubtopologyId: '0', Partitions: [4] }], StandbyTasksPendingRevocation: [], WarmupTasksPendingRevocation: [] } },
      { type: 23, key: { GroupId: 'app' }, version: 0, value: { Epoch: 2, Subtopologies: [
        { SubtopologyId: '0', SourceTopics: ['orders', 'payments'], SourceTopicRegex: [], StateChangelogTopics: [{ Name: 'app-store-changelog', Partitions: 6, ReplicationFactor: 3, TopicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }], RepartitionSinkTopics: ['app-rekey-repartition'], RepartitionSourceTopics: [], CopartitionGroups: [{ SourceTopics: [0, 1], SourceTopicRegex: [], RepartitionSourceTopics: [] }] },
        { SubtopologyId: '1', SourceTopics: [], SourceTopicRegex: ['audit-.*'], StateChangelogTopics: [], RepartitionSinkTopics: [], RepartitionSourceTopics: [{ Name: 'app-rekey-repartition', Partitions: 6, ReplicationFactor: -1, TopicConfigs: [] }], CopartitionGroups: [] },
      ] } },
    ];
    const enc = encodeOffsetsRecords(specs);
    const names = ['StreamsGroupMetadata', 'StreamsGroupMemberMetadata', 'StreamsGroupMemberMetadata', 'StreamsGroupTargetAssignmentMetadata', 'StreamsGroupTargetAssignmentMember', 'StreamsGroupCurrentMemberAssignment', 'StreamsGroupTopology'];
    enc.forEach((e, i) => {
      const rec = decodeConsumerOffsetsRecord(Buffer.from(e.keyBase64, 'base64'), Buffer.from(e.valueBase64!, 'base64'));
      expect(rec.key).toEqual({ type: specs[i]!.type, recordType: names[i], data: specs[i]!.key });
      expect(rec.value).toEqual({ version: 0, data: specs[i]!.value });
    });
    // a value cut short names the field and byte
    const cut = Buffer.from(enc[1]!.valueBase64!, 'base64').subarray(0, 20);
    expect(() => decodeConsumerOffsetsValue(19, cut)).toThrow(DecodeError);
  });

  it('errors name the byte position and the field', () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
        return `${(e as DecodeError).position}: ${(e as DecodeError).reason}`;
      }
      throw new Error('did not throw');
    };
    // key v1: group "group", topic length 10 but one byte left
    expect(err(() => decodeConsumerOffsetsKey(hex('0001 0005 67726f7570 000a 61')))).toBe('11: topic: needs 10 bytes, 1 left');
    // bytes after the last field are ignored and invalid UTF-8 reads as U+FFFD, as the coordinator reads them
    // (generated read + Readable.readString = new String(bytes, UTF_8); CoordinatorRecordSerde.deserialize)
    expect(decodeConsumerOffsetsKey(hex('0002 0001 67 00'))).toEqual({ type: 2, recordType: 'GroupMetadata', data: { group: 'g' } });
    expect(decodeConsumerOffsetsKey(hex('0001 0002 67ff 0001 74 00000003 0000'))).toEqual({ type: 1, recordType: 'OffsetCommit', data: { group: 'g\ufffd', topic: 't', partition: 3 } });
    expect(decodeConsumerOffsetsValue(1, hex('0003 000000000000002a 00000005 0000 0000018bcfe56800 abcd')).data).toEqual({ offset: 42n, leaderEpoch: 5, metadata: '', commitTimestamp: 1700000000000n });
    expect(err(() => decodeConsumerOffsetsValue(1, hex('0005 00')))).toBe('0: OffsetCommitValue version 5 is not one of 0–4');
    expect(err(() => decodeConsumerOffsetsValue(3, hex('0001 00000001 00')))).toBe('0: ConsumerGroupMetadataValue version 1 is not 0 (the only version this decoder knows)');
    expect(err(() => decodeConsumerOffsetsValue(1, hex('0003 0000000000000001')))).toBe('10: leaderEpoch: needs 4 bytes, 0 left');
    // members count claims 1,000,000 entries in 4 bytes
    expect(err(() => decodeGroupMetadataArrayBomb())).toMatch(/^\d+: members: array of 1000000 entries cannot fit/);
    expect(err(() => decodeConsumerOffsetsRecord(null, null))).toBe('0: key: a __consumer_offsets record always has a key');
    expect(err(() => decodeConsumerOffsetsRecord(hex('0001 0001 67 0001 74 00000000'), hex('0003 00')))).toBe('2: value: offset: needs 8 bytes, 1 left');
  });

  function decodeGroupMetadataArrayBomb() {
    return decodeConsumerOffsetsValue(2, hex('0000 0001 63 00000001 ffff ffff 000f4240 00000000'));
  }
});
