/**
 * A crafted log directory for the consumer-group tests: data partitions with holes, a moved log start,
 * transactions (committed, aborted, open), and `__consumer_offsets` partitions whose keys and values
 * are encoded by the independent Python codec (test/support/consumer_offsets_codec.py, written from
 * Kafka's schemas), each group in the partition Kafka would put it in (50 partitions).
 *
 * Expected answers (committed offset → diagnosis, lag, record lag, next offset) are written next to
 * each group in {@link SCENARIO_EXPECTED}; they follow from the layout below, by hand.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../src-main/engine/format/control.ts';
import type { RecordSpec } from '../../src-main/engine/format/record-batch.ts';
import { offsetsPartitionFor } from '../../src-main/engine/groups/offsets-topic.ts';
import { toJsonText } from '../../src-main/engine/decode/json-text.ts';
import { buildPartition, type BatchInput } from './log-builder.ts';
import { REPO_ROOT } from './real-data.ts';

const CODEC = join(REPO_ROOT, 'test/support/consumer_offsets_codec.py');

/** A `__consumer_offsets` record to encode: record type, key fields, value version and fields (null: tombstone). */
export interface OffsetsRecordSpec {
  type: number;
  key: Record<string, unknown>;
  version?: number;
  value: Record<string, unknown> | null;
}

/** Encodes records with the Python codec: base64 key and value per record. */
export function encodeOffsetsRecords(specs: OffsetsRecordSpec[]): { keyBase64: string; valueBase64: string | null }[] {
  if (specs.length === 0) return [];
  const out = execFileSync('/usr/bin/python3', [CODEC, 'encode'], { input: specs.map((s) => toJsonText(s)).join('\n') + '\n' }).toString('utf8');
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Base time of the scenario (ms): 2026-01-01T00:00:00Z. */
export const T0 = 1767225600000;
export const DAY = 86_400_000;
/** The topic id written in orders-0/partition.metadata (used by the KIP-848 assignment). */
export const ORDERS_TOPIC_ID = 'q83vEjRWeJCrze8SNFZ4kA';

const commit = (group: string, topic: string, partition: number, offset: number, ts: number, version = 3, extra: Record<string, unknown> = {}): OffsetsRecordSpec => ({
  type: 1,
  key: { group, topic, partition },
  version,
  value: { offset, leaderEpoch: 0, metadata: '', commitTimestamp: ts, ...extra },
});
const consumerGroup = (group: string, members: { id: string; topics: string[]; assigned: { topic: string; partitions: number[] }[] }[], stateTs: number): OffsetsRecordSpec => ({
  type: 2,
  key: { group },
  version: 3,
  value: {
    protocolType: 'consumer',
    generation: 3,
    protocol: members.length ? 'range' : null,
    leader: members[0]?.id ?? null,
    currentStateTimestamp: stateTs,
    members: members.map((m) => ({ memberId: m.id, groupInstanceId: null, clientId: `client-${m.id}`, clientHost: '/10.0.0.7', rebalanceTimeout: 300000, sessionTimeout: 45000, subscription: { topics: m.topics, userData: null, ownedPartitions: [] }, assignment: { assignedPartitions: m.assigned, userData: null } })),
  },
});

/** What each crafted group should show (row per topic-partition). Offsets as numbers. */
export const SCENARIO_EXPECTED: Record<string, { topic: string; partition: number; committed: number | null; diagnosis: string; lag: number | null; recordLag: number | null; nextOffset: number | null }[]> = {
  'g-ok': [{ topic: 'orders', partition: 0, committed: 4, diagnosis: 'ok', lag: 6, recordLag: 6, nextOffset: 4 }],
  'g-hole': [{ topic: 'compacted', partition: 0, committed: 3, diagnosis: 'in-hole', lag: 7, recordLag: 3, nextOffset: 5 }],
  'g-below': [{ topic: 'retained', partition: 0, committed: 5, diagnosis: 'below-log-start', lag: 25, recordLag: 8, nextOffset: 22 }],
  'g-beyond': [{ topic: 'orders', partition: 0, committed: 50, diagnosis: 'beyond-log-end', lag: -40, recordLag: null, nextOffset: null }],
  'g-notopened': [{ topic: 'missing', partition: 0, committed: 3, diagnosis: 'partition-not-opened', lag: null, recordLag: null, nextOffset: null }],
  'g-nocommit': [{ topic: 'orders', partition: 0, committed: null, diagnosis: 'no-commit', lag: null, recordLag: null, nextOffset: null }],
  // txn-0: data 0-2, aborted txn 3-5 (+ABORT 6), committed txn 7-9 (+COMMIT 10), open txn 11-12
  'g-txn': [{ topic: 'txn', partition: 0, committed: 0, diagnosis: 'ok', lag: 13, recordLag: 8, nextOffset: 0 }],
  'g-txn-marker': [{ topic: 'txn', partition: 0, committed: 6, diagnosis: 'ok', lag: 7, recordLag: 5, nextOffset: 7 }],
  'g-expired': [{ topic: 'orders', partition: 0, committed: 2, diagnosis: 'ok', lag: 8, recordLag: 8, nextOffset: 2 }],
  'g-v1': [{ topic: 'orders', partition: 0, committed: 1, diagnosis: 'ok', lag: 9, recordLag: 9, nextOffset: 1 }],
  'g-empty': [{ topic: 'orders', partition: 0, committed: 3, diagnosis: 'ok', lag: 7, recordLag: 7, nextOffset: 3 }],
  'g-eos': [{ topic: 'orders', partition: 0, committed: 9, diagnosis: 'ok', lag: 1, recordLag: 1, nextOffset: 9 }],
  cg848: [{ topic: 'orders', partition: 0, committed: 7, diagnosis: 'ok', lag: 3, recordLag: 3, nextOffset: 7 }],
  sg: [],
  'streams-app': [{ topic: 'orders', partition: 0, committed: 8, diagnosis: 'ok', lag: 2, recordLag: 2, nextOffset: 8 }],
  'g-bad': [{ topic: 'orders', partition: 0, committed: 5, diagnosis: 'ok', lag: 5, recordLag: 5, nextOffset: 5 }],
};

/** The `now` at which g-expired (committed at T0) has expired but g-empty (Empty since T0 + 2 days) has not. */
export const SCENARIO_NOW = T0 + 7 * DAY + 60_000;

/** A group whose `__consumer_offsets` partition is not written (named by the missing-partition message). */
export const GROUP_IN_ABSENT_PARTITION = 'g-in-absent-partition';

/**
 * Writes the scenario into `logDir` (a log directory). Returns the `__consumer_offsets` partitions written.
 */
export function buildGroupsScenario(logDir: string): number[] {
  const rec = (key: string, value: string, ts = T0): RecordSpec => ({ key, value, timestamp: BigInt(ts) });
  // orders-0: 10 dense records 0..9
  buildPartition(logDir, { topic: 'orders', partition: 0, segments: [{ batches: [{ records: Array.from({ length: 10 }, (_x, i) => rec(`k${i}`, `v${i}`)) }] }] });
  writeFileSync(join(logDir, 'orders-0', 'partition.metadata'), `version: 0\ntopic_id: ${ORDERS_TOPIC_ID}`);
  // compacted-0: records at 0,1,2,5,6,9 (holes 3-4, 7-8), LEO 10
  buildPartition(logDir, { topic: 'compacted', partition: 0, segments: [{ batches: [0, 1, 2, 5, 6, 9].map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`)] })) }] });
  // retained-0: one segment from 20, records 20..29; log start moved to 22 (DeleteRecords)
  buildPartition(logDir, { topic: 'retained', partition: 0, segments: [{ batches: [{ baseOffset: 20n, records: Array.from({ length: 10 }, (_x, i) => rec(`k${i}`, `v${i}`)) }] }] });
  // txn-0
  const pid = (p: number) => ({ producerId: BigInt(p), producerEpoch: 0, baseSequence: 0 });
  const marker = (producerId: number, type: number): BatchInput => ({ ...pid(producerId), isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type), value: encodeEndTxnMarkerValue(0), timestamp: BigInt(T0) }] });
  buildPartition(logDir, {
    topic: 'txn',
    partition: 0,
    segments: [{
      batches: [
        { records: [rec('a', '0'), rec('b', '1'), rec('c', '2')] },
        { ...pid(7), isTransactional: true, records: [rec('d', '3'), rec('e', '4'), rec('f', '5')] },
        marker(7, 0),
        { ...pid(8), isTransactional: true, records: [rec('g', '7'), rec('h', '8'), rec('i', '9')] },
        marker(8, 1),
        { ...pid(9), isTransactional: true, records: [rec('j', '11'), rec('k', '12')] },
      ],
      txnIndex: [{ producerId: 7n, firstOffset: 3n, lastOffset: 6n, lastStableOffset: 7n }],
    }],
  });
  // checkpoints of all partitions
  const entries = (lines: string[]) => `0\n${lines.length}\n${lines.join('\n')}\n`;
  writeFileSync(join(logDir, 'log-start-offset-checkpoint'), entries(['retained 0 22']));
  writeFileSync(join(logDir, 'replication-offset-checkpoint'), entries(['orders 0 10', 'compacted 0 10', 'retained 0 30', 'txn 0 13']));

  // __consumer_offsets: records per group, in its partition
  const groups: Record<string, { batches: { specs: OffsetsRecordSpec[]; txn?: { producerId: number; end?: 'commit' | 'abort' }; corrupt?: number }[] }> = {
    'g-ok': { batches: [{ specs: [consumerGroup('g-ok', [{ id: 'ok-m1', topics: ['orders'], assigned: [{ topic: 'orders', partitions: [0] }] }], T0)] }, { specs: [commit('g-ok', 'orders', 0, 1, T0)] }, { specs: [commit('g-ok', 'orders', 0, 2, T0 + 1000)] }, { specs: [commit('g-ok', 'orders', 0, 4, T0 + 2000)] }] },
    'g-hole': { batches: [{ specs: [commit('g-hole', 'compacted', 0, 3, T0)] }] },
    'g-below': { batches: [{ specs: [commit('g-below', 'retained', 0, 5, T0)] }] },
    'g-beyond': { batches: [{ specs: [commit('g-beyond', 'orders', 0, 50, T0)] }] },
    'g-notopened': { batches: [{ specs: [commit('g-notopened', 'missing', 0, 3, T0)] }] },
    'g-nocommit': { batches: [{ specs: [consumerGroup('g-nocommit', [{ id: 'nc-m1', topics: ['orders'], assigned: [{ topic: 'orders', partitions: [0] }] }], T0)] }] },
    'g-txn': { batches: [{ specs: [commit('g-txn', 'txn', 0, 0, T0)] }] },
    'g-txn-marker': { batches: [{ specs: [commit('g-txn-marker', 'txn', 0, 6, T0)] }] },
    'g-expired': { batches: [{ specs: [commit('g-expired', 'orders', 0, 2, T0)] }] },
    // v1 value with its own expireTimestamp (T0 + 1 day)
    'g-v1': { batches: [{ specs: [commit('g-v1', 'orders', 0, 1, T0, 1, { expireTimestamp: T0 + DAY })] }] },
    // Empty classic group since T0 + 2 days; committed at T0: expires at T0 + 2 d + 7 d
    'g-empty': { batches: [{ specs: [commit('g-empty', 'orders', 0, 3, T0)] }, { specs: [consumerGroup('g-empty', [], T0 + 2 * DAY)] }] },
    // transactional offset commits: producer 42 commits 9 (COMMIT), 43 commits 1 (ABORT), 44 commits 3 (no marker)
    'g-eos': {
      batches: [
        { specs: [commit('g-eos', 'orders', 0, 9, T0)], txn: { producerId: 42, end: 'commit' } },
        { specs: [commit('g-eos', 'orders', 0, 1, T0 + 1000)], txn: { producerId: 43, end: 'abort' } },
        { specs: [commit('g-eos', 'orders', 0, 3, T0 + 2000)], txn: { producerId: 44 } },
      ],
    },
    // tombstones: an offset committed then deleted; a group created then deleted
    'g-tomb': { batches: [{ specs: [commit('g-tomb', 'orders', 0, 3, T0)] }, { specs: [{ type: 1, key: { group: 'g-tomb', topic: 'orders', partition: 0 }, value: null }] }] },
    'g-deleted': { batches: [{ specs: [consumerGroup('g-deleted', [], T0)] }, { specs: [{ type: 2, key: { group: 'g-deleted' }, value: null }] }] },
    // KIP-848 consumer group: epoch 5, one member (mem-1) assigned orders-0, a second one removed
    cg848: {
      batches: [{
        specs: [
          { type: 3, key: { GroupId: 'cg848' }, version: 0, value: { Epoch: 5 } },
          { type: 6, key: { GroupId: 'cg848' }, version: 0, value: { AssignmentEpoch: 5 } },
          { type: 5, key: { GroupId: 'cg848', MemberId: 'mem-0' }, version: 0, value: { InstanceId: null, RackId: null, ClientId: 'old', ClientHost: '/1.1.1.1', SubscribedTopicNames: ['orders'], SubscribedTopicRegex: null, RebalanceTimeoutMs: 300000, ServerAssignor: 'uniform' } },
          { type: 5, key: { GroupId: 'cg848', MemberId: 'mem-1' }, version: 0, value: { InstanceId: null, RackId: 'r1', ClientId: 'cli-848', ClientHost: '/1.2.3.4', SubscribedTopicNames: ['orders'], SubscribedTopicRegex: null, RebalanceTimeoutMs: 300000, ServerAssignor: 'uniform' } },
          { type: 7, key: { GroupId: 'cg848', MemberId: 'mem-1' }, version: 0, value: { TopicPartitions: [{ TopicId: ORDERS_TOPIC_ID, Partitions: [0] }] } },
          { type: 8, key: { GroupId: 'cg848', MemberId: 'mem-1' }, version: 0, value: { MemberEpoch: 5, PreviousMemberEpoch: 4, State: 0, AssignedPartitions: [{ TopicId: ORDERS_TOPIC_ID, Partitions: [0] }], PartitionsPendingRevocation: [] } },
          { type: 5, key: { GroupId: 'cg848', MemberId: 'mem-0' }, value: null },
          commit('cg848', 'orders', 0, 7, T0),
        ],
      }],
    },
    // share group: epoch 3, one member
    sg: {
      batches: [{
        specs: [
          { type: 11, key: { GroupId: 'sg' }, version: 0, value: { Epoch: 3, MetadataHash: -7046029254386353131n } },
          { type: 10, key: { GroupId: 'sg', MemberId: 's-1' }, version: 0, value: { RackId: null, ClientId: 'share-cli', ClientHost: '/5.6.7.8', SubscribedTopicNames: ['orders'] } },
          { type: 14, key: { GroupId: 'sg', MemberId: 's-1' }, version: 0, value: { MemberEpoch: 3, PreviousMemberEpoch: 2, State: 0, AssignedPartitions: [{ TopicId: ORDERS_TOPIC_ID, Partitions: [0] }] } },
        ],
      }],
    },
    // streams group (KIP-1071, Kafka 4.1.0 records): epoch 4, one subtopology reading orders, member sm-1
    // running active task 0_0, member sm-2 gone (its assignment, target and metadata tombstoned)
    'streams-app': {
      batches: [{
        specs: [
          { type: 23, key: { GroupId: 'streams-app' }, version: 0, value: { Epoch: 1, Subtopologies: [{ SubtopologyId: '0', SourceTopics: ['orders'], SourceTopicRegex: [], StateChangelogTopics: [{ Name: 'streams-app-store-changelog', Partitions: 1, ReplicationFactor: 3, TopicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }], RepartitionSinkTopics: [], RepartitionSourceTopics: [], CopartitionGroups: [] }] } },
          { type: 17, key: { GroupId: 'streams-app' }, version: 0, value: { Epoch: 4, MetadataHash: 9007199254740993n } },
          { type: 19, key: { GroupId: 'streams-app', MemberId: 'sm-2' }, version: 0, value: { InstanceId: null, RackId: null, ClientId: 'old-thread', ClientHost: '/9.9.9.9', RebalanceTimeoutMs: 300000, TopologyEpoch: 1, ProcessId: 'p-2', UserEndpoint: null, ClientTags: [] } },
          { type: 19, key: { GroupId: 'streams-app', MemberId: 'sm-1' }, version: 0, value: { InstanceId: null, RackId: 'r2', ClientId: 'streams-app-StreamThread-1', ClientHost: '/10.1.2.3', RebalanceTimeoutMs: 300000, TopologyEpoch: 1, ProcessId: 'p-1', UserEndpoint: { Host: 'app-1.local', Port: 8080 }, ClientTags: [{ Key: 'zone', Value: 'a' }] } },
          { type: 20, key: { GroupId: 'streams-app' }, version: 0, value: { AssignmentEpoch: 4 } },
          { type: 21, key: { GroupId: 'streams-app', MemberId: 'sm-1' }, version: 0, value: { ActiveTasks: [{ SubtopologyId: '0', Partitions: [0] }], StandbyTasks: [], WarmupTasks: [] } },
          { type: 22, key: { GroupId: 'streams-app', MemberId: 'sm-1' }, version: 0, value: { MemberEpoch: 4, PreviousMemberEpoch: 3, State: 0, ActiveTasks: [{ SubtopologyId: '0', Partitions: [0] }], StandbyTasks: [], WarmupTasks: [], ActiveTasksPendingRevocation: [], StandbyTasksPendingRevocation: [], WarmupTasksPendingRevocation: [] } },
          { type: 22, key: { GroupId: 'streams-app', MemberId: 'sm-2' }, value: null },
          { type: 21, key: { GroupId: 'streams-app', MemberId: 'sm-2' }, value: null },
          { type: 19, key: { GroupId: 'streams-app', MemberId: 'sm-2' }, value: null },
          commit('streams-app', 'orders', 0, 8, T0 + 5000),
        ],
      }],
    },
    // a good commit, then one whose value is cut short (3rd batch: corrupt = bytes kept of the value)
    'g-bad': { batches: [{ specs: [commit('g-bad', 'orders', 0, 5, T0)] }, { specs: [commit('g-bad', 'orders', 0, 6, T0 + 1000)], corrupt: 7 }] },
  };

  const byPartition = new Map<number, BatchInput[]>();
  const add = (group: string, b: BatchInput) => {
    const p = offsetsPartitionFor(group, 50);
    let list = byPartition.get(p);
    if (!list) byPartition.set(p, (list = []));
    list.push(b);
  };
  for (const [group, { batches }] of Object.entries(groups)) {
    for (const b of batches) {
      const enc = encodeOffsetsRecords(b.specs);
      const records: RecordSpec[] = enc.map((e) => {
        let value = e.valueBase64 === null ? null : Buffer.from(e.valueBase64, 'base64');
        if (value && b.corrupt !== undefined) value = value.subarray(0, b.corrupt);
        return { key: Buffer.from(e.keyBase64, 'base64'), value, timestamp: BigInt(T0) };
      });
      if (b.txn) {
        add(group, { producerId: BigInt(b.txn.producerId), producerEpoch: 0, baseSequence: 0, isTransactional: true, records });
        if (b.txn.end) add(group, { producerId: BigInt(b.txn.producerId), producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(b.txn.end === 'commit' ? 1 : 0), value: encodeEndTxnMarkerValue(0), timestamp: BigInt(T0) }] });
      } else add(group, { records });
    }
  }
  // a record of an unknown type (99) and one whose key does not decode, in g-ok's partition
  add('g-ok', { records: [{ key: Buffer.from([0, 99, 1, 2]), value: Buffer.from([0, 0]), timestamp: BigInt(T0) }] });
  add('g-ok', { records: [{ key: Buffer.from([0, 1, 0, 40, 0x61]), value: null, timestamp: BigInt(T0) }] });
  if (byPartition.has(offsetsPartitionFor(GROUP_IN_ABSENT_PARTITION, 50))) throw new Error('scenario: the absent partition holds a group');
  for (const [p, batches] of byPartition) buildPartition(logDir, { topic: '__consumer_offsets', partition: p, segments: [{ batches }] });
  return [...byPartition.keys()].sort((a, b) => a - b);
}
