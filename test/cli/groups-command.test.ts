/**
 * `klx groups` on a log directory written only with klx itself: `klx create`, `klx append --records`
 * (keys and values of `__consumer_offsets` from the independent Python codec, as base64),
 * `klx roll` + `klx compact` (offset holes) and `klx retention --delete-before-offset` (a moved log
 * start). Each diagnosis comes out of `--json`, with expiry against `--now`, KIP-848 members and a
 * tombstoned offset.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { offsetsPartitionFor } from '../../src-main/engine/groups/offsets-topic.ts';
import { encodeOffsetsRecords, type OffsetsRecordSpec } from '../support/groups-scenario.ts';
import { tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';

function ok(...args: string[]): string {
  const r = klx(...args);
  if (r.status !== 0) throw new Error(`klx ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

const T = 1_767_225_600_000; // 2026-01-01
const DAY = 86_400_000;
const TOPIC_ID = 'q83vEjRWeJCrze8SNFZ4kA';

/** Group names that all live in the same __consumer_offsets partition (so one folder holds them). */
function sameHome(bases: string[]): { names: Record<string, string>; partition: number } {
  const partition = offsetsPartitionFor(bases[0]!, 50);
  const names: Record<string, string> = { [bases[0]!]: bases[0]! };
  for (const b of bases.slice(1)) {
    for (let i = 0; ; i++) {
      if (offsetsPartitionFor(`${b}-${i}`, 50) === partition) {
        names[b] = `${b}-${i}`;
        break;
      }
    }
  }
  return { names, partition };
}

describe('klx groups', () => {
  const dir = tempDir('klx-groups-cli-');
  const { names: n, partition: home } = sameHome(['ok', 'beyond', 'hole', 'below', 'notopened', 'nocommit', 'old', 'kip848', 'gone', 'streams']);
  let rows: Record<string, unknown>[];

  beforeAll(() => {
    const lines = (recs: { key: string; value: string }[]) => {
      const f = join(dir, `records-${Math.random().toString(36).slice(2)}.ndjson`);
      writeFileSync(f, recs.map((r) => JSON.stringify({ key: r.key, value: r.value, timestamp: T })).join('\n') + '\n');
      return f;
    };
    ok('create', join(dir, 'orders-0'));
    ok('append', join(dir, 'orders-0'), '--records', lines(Array.from({ length: 10 }, (_x, i) => ({ key: `k${i}`, value: `v${i}` }))));
    writeFileSync(join(dir, 'orders-0', 'partition.metadata'), `version: 0\ntopic_id: ${TOPIC_ID}`);
    // compacted-0: k0..k5, then k1, k2 again; roll and compact: offsets 1 and 2 go
    ok('create', join(dir, 'compacted-0'), '--config', 'cleanup.policy=compact');
    ok('append', join(dir, 'compacted-0'), '--records', lines(Array.from({ length: 6 }, (_x, i) => ({ key: `k${i}`, value: `a${i}` }))));
    ok('append', join(dir, 'compacted-0'), '--records', lines([{ key: 'k1', value: 'b1' }, { key: 'k2', value: 'b2' }]));
    ok('roll', join(dir, 'compacted-0'));
    ok('compact', join(dir, 'compacted-0'), '--trash-dir', join(dir, '..', `${dir.split('/').pop()}-trash`), '--now', String(T + DAY));
    // retained-0: 10 records, log start raised to 5 (DeleteRecords)
    ok('create', join(dir, 'retained-0'));
    ok('append', join(dir, 'retained-0'), '--records', lines(Array.from({ length: 10 }, (_x, i) => ({ key: `k${i}`, value: `v${i}` }))));
    ok('retention', join(dir, 'retained-0'), '--delete-before-offset', '5', '--retention-ms', '-1', '--trash-dir', join(dir, '..', `${dir.split('/').pop()}-trash`));

    const commit = (group: string, topic: string, offset: number, ts = T): OffsetsRecordSpec => ({ type: 1, key: { group, topic, partition: 0 }, version: 3, value: { offset, leaderEpoch: 0, metadata: '', commitTimestamp: ts } });
    const specs: OffsetsRecordSpec[] = [
      { type: 2, key: { group: n.ok! }, version: 3, value: { protocolType: 'consumer', generation: 2, protocol: 'range', leader: 'm-ok', currentStateTimestamp: T, members: [{ memberId: 'm-ok', groupInstanceId: null, clientId: 'c-ok', clientHost: '/10.1.1.1', rebalanceTimeout: 300000, sessionTimeout: 45000, subscription: { topics: ['orders'], userData: null, ownedPartitions: [] }, assignment: { assignedPartitions: [{ topic: 'orders', partitions: [0] }], userData: null } }] } },
      commit(n.ok!, 'orders', 4),
      commit(n.beyond!, 'orders', 50),
      commit(n.hole!, 'compacted', 1),
      commit(n.below!, 'retained', 2),
      commit(n.notopened!, 'missing', 0),
      { type: 2, key: { group: n.nocommit! }, version: 3, value: { protocolType: 'consumer', generation: 1, protocol: 'range', leader: 'm-nc', currentStateTimestamp: T, members: [{ memberId: 'm-nc', groupInstanceId: null, clientId: 'c-nc', clientHost: '/10.1.1.2', rebalanceTimeout: 300000, sessionTimeout: 45000, subscription: { topics: ['orders'], userData: null, ownedPartitions: [] }, assignment: { assignedPartitions: [{ topic: 'orders', partitions: [0] }], userData: null } }] } },
      commit(n.old!, 'orders', 3, T - 30 * DAY),
      { type: 3, key: { GroupId: n.kip848! }, version: 0, value: { Epoch: 4 } },
      { type: 6, key: { GroupId: n.kip848! }, version: 0, value: { AssignmentEpoch: 4 } },
      { type: 5, key: { GroupId: n.kip848!, MemberId: 'mem-x' }, version: 0, value: { InstanceId: null, RackId: null, ClientId: 'c-848', ClientHost: '/10.1.1.3', SubscribedTopicNames: ['orders'], SubscribedTopicRegex: null, RebalanceTimeoutMs: 300000, ServerAssignor: 'uniform' } },
      { type: 8, key: { GroupId: n.kip848!, MemberId: 'mem-x' }, version: 0, value: { MemberEpoch: 4, PreviousMemberEpoch: 3, State: 0, AssignedPartitions: [{ TopicId: TOPIC_ID, Partitions: [0] }], PartitionsPendingRevocation: [] } },
      commit(n.kip848!, 'orders', 6),
      commit(n.gone!, 'orders', 1),
      { type: 1, key: { group: n.gone!, topic: 'orders', partition: 0 }, value: null },
      // a streams group (KIP-1071, Kafka 4.1.0 records): task 0_0 reads orders-0
      { type: 23, key: { GroupId: n.streams! }, version: 0, value: { Epoch: 1, Subtopologies: [{ SubtopologyId: '0', SourceTopics: ['orders'], SourceTopicRegex: [], StateChangelogTopics: [], RepartitionSinkTopics: [], RepartitionSourceTopics: [], CopartitionGroups: [] }] } },
      { type: 17, key: { GroupId: n.streams! }, version: 0, value: { Epoch: 2, MetadataHash: 5 } },
      { type: 19, key: { GroupId: n.streams!, MemberId: 'sm' }, version: 0, value: { InstanceId: null, RackId: null, ClientId: 'c-streams', ClientHost: '/10.1.1.4', RebalanceTimeoutMs: 300000, TopologyEpoch: 1, ProcessId: 'p', UserEndpoint: null, ClientTags: [] } },
      { type: 20, key: { GroupId: n.streams! }, version: 0, value: { AssignmentEpoch: 2 } },
      { type: 22, key: { GroupId: n.streams!, MemberId: 'sm' }, version: 0, value: { MemberEpoch: 2, PreviousMemberEpoch: 1, State: 0, ActiveTasks: [{ SubtopologyId: '0', Partitions: [0] }] } },
      commit(n.streams!, 'orders', 7),
    ];
    const enc = encodeOffsetsRecords(specs);
    const off = join(dir, `__consumer_offsets-${home}`);
    ok('create', off, '--config', 'cleanup.policy=compact');
    const f = join(dir, 'offsets.ndjson');
    writeFileSync(f, enc.map((e) => JSON.stringify({ keyBase64: e.keyBase64, valueBase64: e.valueBase64, timestamp: T })).join('\n') + '\n');
    ok('append', off, '--records', f);
    rows = ok('groups', dir, '--json', '--now', String(T + DAY)).trim().split('\n').map((l) => JSON.parse(l));
  }, 300_000);

  it('--json gives each diagnosis with the kafka-consumer-groups.sh fields, record lag and next offset', () => {
    const pick = (g: string) => rows.filter((r) => r.group === g).map((r) => ({ topic: r.topic, partition: r.partition, currentOffset: r.currentOffset, logStartOffset: r.logStartOffset, logEndOffset: r.logEndOffset, lag: r.lag, recordLag: r.recordLag, nextOffset: r.nextOffset, diagnosis: r.diagnosis }));
    expect(pick(n.ok!)).toEqual([{ topic: 'orders', partition: 0, currentOffset: 4, logStartOffset: 0, logEndOffset: 10, lag: 6, recordLag: 6, nextOffset: 4, diagnosis: 'ok' }]);
    expect(pick(n.beyond!)).toEqual([{ topic: 'orders', partition: 0, currentOffset: 50, logStartOffset: 0, logEndOffset: 10, lag: -40, recordLag: null, nextOffset: null, diagnosis: 'beyond-log-end' }]);
    expect(pick(n.hole!)).toEqual([{ topic: 'compacted', partition: 0, currentOffset: 1, logStartOffset: 0, logEndOffset: 8, lag: 7, recordLag: 5, nextOffset: 3, diagnosis: 'in-hole' }]);
    expect(pick(n.below!)).toEqual([{ topic: 'retained', partition: 0, currentOffset: 2, logStartOffset: 5, logEndOffset: 10, lag: 8, recordLag: 5, nextOffset: 5, diagnosis: 'below-log-start' }]);
    expect(pick(n.notopened!)).toEqual([{ topic: 'missing', partition: 0, currentOffset: 0, logStartOffset: null, logEndOffset: null, lag: null, recordLag: null, nextOffset: null, diagnosis: 'partition-not-opened' }]);
    expect(pick(n.nocommit!)).toEqual([{ topic: 'orders', partition: 0, currentOffset: null, logStartOffset: 0, logEndOffset: 10, lag: null, recordLag: null, nextOffset: null, diagnosis: 'no-commit' }]);
    expect(rows.filter((r) => r.group === n.gone)).toEqual([]);
    const ok848 = rows.find((r) => r.group === n.kip848)!;
    expect(ok848).toMatchObject({ currentOffset: 6, lag: 4, diagnosis: 'ok', consumerId: 'mem-x', host: '/10.1.1.3', clientId: 'c-848', commitTimestamp: T });
    expect(rows.find((r) => r.group === n.ok)).toMatchObject({ consumerId: 'm-ok', host: '/10.1.1.1', clientId: 'c-ok', expired: false, expiresAt: null });
  });

  it('a streams group: its offsets with the member running the task, and its line in the text output', () => {
    expect(rows.filter((r) => r.group === n.streams)).toEqual([expect.objectContaining({ topic: 'orders', partition: 0, currentOffset: 7, lag: 3, diagnosis: 'ok', consumerId: 'sm', host: '/10.1.1.4', clientId: 'c-streams' })]);
    const text = ok('groups', dir, '--group', n.streams!, '--now', String(T + DAY));
    expect(text).toContain(`Group ${n.streams}: streams, state Stable, 1 member, epoch 2, __consumer_offsets-${home}`);
  });

  it('expiry follows --now: a simple group committed 30 days before is expired, then not at an earlier now', () => {
    // The text summary says the expired offset's lag is left out of the group's lag (fresh tester's finding).
    const text = ok('groups', dir, '--group', n.old!, '--now', String(T + DAY));
    expect(text).toMatch(new RegExp(`Group ${n.old}: .*; lag 0, record lag 0; 1 expired offset, not counted in the lag\\n`));
    expect(rows.find((r) => r.group === n.old)).toMatchObject({ expired: true, expiresAt: T - 23 * DAY, currentOffset: 3 });
    const earlier = ok('groups', dir, '--json', '--group', n.old!, '--now', String(T - 24 * DAY)).trim().split('\n').map((l) => JSON.parse(l));
    expect(earlier).toHaveLength(1);
    expect(earlier[0]).toMatchObject({ expired: false });
  });

  it('the text table has the kafka-consumer-groups.sh columns; a group in an absent partition is named', () => {
    const text = ok('groups', dir, '--group', n.ok!, '--now', String(T + DAY));
    expect(text).toContain('GROUP');
    expect(text.split('\n').find((l) => l.startsWith('GROUP'))!.split(/\s+/)).toEqual(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', 'RECORD-LAG', 'NEXT-OFFSET', 'DIAGNOSIS']);
    expect(text).toMatch(new RegExp(`${n.ok} +orders +0 +4 +10 +6 +m-ok +/10\\.1\\.1\\.1 +c-ok +6 +4 +ok`));
    let other = 'x';
    for (let i = 0; offsetsPartitionFor(other, 50) === home; i++) other = `x${i}`;
    const r = klx('groups', dir, '--group', other);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`group "${other}" is not listed: it lives in __consumer_offsets-${offsetsPartitionFor(other, 50)} (abs(hashCode) % 50`);
  });
});

describe('klx groups: a __consumer_offsets partition a broker fails to load', () => {
  it('a value of version 9 after a good commit: the group line is followed by what a broker would do, the JSON rows carry it (CoordinatorLoaderImpl)', () => {
    const root = tempDir('klx-groups-loadfail-');
    const dir = join(root, 'logs', '__consumer_offsets-0');
    const [good, later] = encodeOffsetsRecords([
      { type: 1, key: { group: 'g1', topic: 'orders', partition: 0 }, version: 3, value: { offset: 5, leaderEpoch: 0, metadata: '', commitTimestamp: 1700000000000 } },
      { type: 1, key: { group: 'g1', topic: 'orders', partition: 0 }, version: 3, value: { offset: 9, leaderEpoch: 0, metadata: '', commitTimestamp: 1700000001000 } },
    ]);
    const v9 = Buffer.from(later!.valueBase64!, 'base64');
    v9.writeInt16BE(9, 0); // a value version no Kafka defines for OffsetCommitValue
    const f = join(root, 'r.ndjson');
    writeFileSync(f, [good!, { keyBase64: later!.keyBase64, valueBase64: v9.toString('base64') }].map((e) => JSON.stringify({ ...e, timestamp: 1700000000000 })).join('\n') + '\n');
    ok('create', dir, '--config', 'cleanup.policy=compact');
    ok('append', dir, '--records', f);
    const text = ok('groups', join(root, 'logs'), '--offsets-partitions', '1', '--now', '1700000002000');
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('Group g1:'));
    expect(lines[at + 1]).toBe(
      `!! a broker would fail to load __consumer_offsets-0: the record at offset 1 does not deserialize (value of OffsetCommit (record type 1): byte 0: OffsetCommitValue version 9 is not one of 0–4); ` +
        'the group coordinator stops loading there (CoordinatorLoaderImpl rethrows what GroupCoordinatorRecordSerde throws, skipping only unknown record types; 3.x GroupMetadataManager.loadGroupsAndOffsets fails likewise), so no group of that partition is served until the record is removed ' +
        `(${join(dir, '00000000000000000000.log')}: position 0); the rows below are what this tool read around it`,
    );
    const row = JSON.parse(ok('groups', join(root, 'logs'), '--offsets-partitions', '1', '--json').trim()) as { currentOffset: number; offsetsPartitionLoadFailure: string };
    expect(row.currentOffset).toBe(5);
    expect(row.offsetsPartitionLoadFailure).toMatch(/^a broker would fail to load __consumer_offsets-0: the record at offset 1 /);
  });
});
