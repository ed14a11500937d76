/**
 * The consumer-group SQL tables (engine/sql/group-tables.ts) on the crafted groups log directory:
 * `consumer_offsets` holds every record decoded (or why not), `group_offsets` the latest state with
 * lag, record lag and diagnosis, `group_metadata` and `group_members` the groups and members; and on
 * a real data set, the group_offsets rows equal what the groups engine gives.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildGroupsScenario, SCENARIO_EXPECTED } from '../../support/groups-scenario.ts';
import { tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { startEntryWorker } from '../../../src-main/api/core/entry-worker.ts';
import { SQL_BUILD_WORKER } from '../../../src-main/engine/sql/sql-build-pool.ts';
import type { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { openSql, rows } from './sql-test-helpers.ts';

describe('consumer-group tables', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('klx-groups-sql-');
    buildGroupsScenario(dir);
  });

  it('group_offsets: one row per group, topic and partition with lag, record_lag, diagnosis, next_offset', async () => {
    const s = await openSql(dir);
    const got = await rows(s, 'SELECT group_id, topic, "partition", committed_offset, diagnosis, lag, record_lag, next_offset FROM group_offsets ORDER BY group_id, topic');
    const want = Object.entries(SCENARIO_EXPECTED)
      .flatMap(([g, rs]) => rs.map((r) => ({ group_id: g, topic: r.topic, partition: r.partition, committed_offset: r.committed === null ? null : BigInt(r.committed), diagnosis: r.diagnosis, lag: r.lag === null ? null : BigInt(r.lag), record_lag: r.recordLag === null ? null : BigInt(r.recordLag), next_offset: r.nextOffset === null ? null : BigInt(r.nextOffset) })))
      .sort((a, b) => (a.group_id < b.group_id ? -1 : a.group_id > b.group_id ? 1 : a.topic < b.topic ? -1 : 1));
    expect(got).toEqual(want);
    // expired is computed against the clock when queried: the scenario's commits are from 2026-01-01
    const expired = await rows(s, `SELECT group_id FROM group_offsets WHERE expired ORDER BY group_id`);
    expect(expired.map((r) => r.group_id)).toContain('g-expired');
  });

  it('group_metadata and group_members', async () => {
    const s = await openSql(dir);
    const gm = await rows(
      s,
      `SELECT group_id, type, state, generation, members, problems, regexp_extract(offsets_partition_load_failure, 'does not deserialize \\((.*)\\); the group coordinator', 1) AS load_failure
       FROM group_metadata WHERE group_id IN ('cg848', 'g-ok', 'sg', 'g-bad', 'g-hole', 'streams-app') ORDER BY group_id`,
    );
    // g-bad's and g-ok's __consumer_offsets partitions hold a record a broker's coordinator cannot deserialize (CoordinatorLoaderImpl)
    expect(gm).toEqual([
      { group_id: 'cg848', type: 'consumer', state: 'Stable', generation: 5, members: 1, problems: 0, load_failure: null },
      { group_id: 'g-bad', type: 'simple', state: 'Empty', generation: null, members: 0, problems: 1, load_failure: 'value of OffsetCommit (record type 1): byte 2: offset: needs 8 bytes, 5 left' },
      { group_id: 'g-hole', type: 'simple', state: 'Empty', generation: null, members: 0, problems: 0, load_failure: null },
      { group_id: 'g-ok', type: 'classic', state: 'Stable', generation: 3, members: 1, problems: 0, load_failure: 'key: byte 4: group: needs 40 bytes, 1 left' },
      { group_id: 'sg', type: 'share', state: 'Stable', generation: 3, members: 1, problems: 0, load_failure: null },
      { group_id: 'streams-app', type: 'streams', state: 'Stable', generation: 4, members: 1, problems: 0, load_failure: null },
    ]);
    const mb = await rows(s, 'SELECT group_id, member_id, client_id, host, member_epoch, assignment FROM group_members ORDER BY group_id, member_id');
    expect(mb).toEqual([
      { group_id: 'cg848', member_id: 'mem-1', client_id: 'cli-848', host: '/1.2.3.4', member_epoch: 5, assignment: 'orders-0' },
      { group_id: 'g-nocommit', member_id: 'nc-m1', client_id: 'client-nc-m1', host: '/10.0.0.7', member_epoch: null, assignment: 'orders-0' },
      { group_id: 'g-ok', member_id: 'ok-m1', client_id: 'client-ok-m1', host: '/10.0.0.7', member_epoch: null, assignment: 'orders-0' },
      { group_id: 'sg', member_id: 's-1', client_id: 'share-cli', host: '/5.6.7.8', member_epoch: 3, assignment: 'orders-0' },
      { group_id: 'streams-app', member_id: 'sm-1', client_id: 'streams-app-StreamThread-1', host: '/10.1.2.3', member_epoch: 4, assignment: 'orders-0' },
    ]);
  });

  it('the group tables made in a SQL build thread (off the event loop) equal the ones made on the building thread', async () => {
    let started = 0;
    const startWorker = () => {
      started++;
      return startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near);
    };
    const digest = async (s: SqlSession, table: string) => (await rows(s, `SELECT count(*) AS n, md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.rowid), '')) AS d FROM (SELECT rowid, * FROM ${table}) t`))[0];
    const here = await openSql(dir);
    const thread = await openSql(dir, { startWorker, groupsInThreadFromBytes: 0 });
    // one thread started: the groups task (segments of this small folder are decoded here, below parallelFromBytes)
    expect(started).toBe(1);
    for (const t of ['consumer_offsets', 'group_metadata', 'klx_internal.group_offset_rows', 'group_members']) {
      const a = await digest(here, t);
      expect({ t, ...(await digest(thread, t)) }).toEqual({ t, ...a });
      expect(Number(a!.n)).toBeGreaterThan(0);
    }
  });

  it('consumer_offsets: every record decoded, or the reason it is not', async () => {
    const s = await openSql(dir);
    const g = await rows(s, `SELECT record_type, record_type_name, committed_offset, is_tombstone, is_transactional FROM consumer_offsets WHERE group_id = 'g-ok' ORDER BY "offset"`);
    expect(g).toEqual([
      { record_type: 2, record_type_name: 'GroupMetadata', committed_offset: null, is_tombstone: false, is_transactional: false },
      { record_type: 1, record_type_name: 'OffsetCommit', committed_offset: 1n, is_tombstone: false, is_transactional: false },
      { record_type: 1, record_type_name: 'OffsetCommit', committed_offset: 2n, is_tombstone: false, is_transactional: false },
      { record_type: 1, record_type_name: 'OffsetCommit', committed_offset: 4n, is_tombstone: false, is_transactional: false },
    ]);
    const errors = await rows(s, `SELECT group_id, decode_error FROM consumer_offsets WHERE decode_error IS NOT NULL ORDER BY "partition", "offset"`);
    expect(errors).toContainEqual({ group_id: 'g-bad', decode_error: 'byte 2: value: offset: needs 8 bytes, 5 left' });
    expect(errors).toContainEqual({ group_id: null, decode_error: 'byte 4: group: needs 40 bytes, 1 left' });
    const kip = await rows(s, `SELECT record_type_name, member_id, value_json FROM consumer_offsets WHERE group_id = 'cg848' AND record_type = 8`);
    expect(kip).toEqual([{ record_type_name: 'ConsumerGroupCurrentMemberAssignment', member_id: 'mem-1', value_json: '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":"q83vEjRWeJCrze8SNFZ4kA","partitions":[0]}],"partitionsPendingRevocation":[]}' }]);
    // as Kafka's JSON converters print data (camelCase), the share group's 4.1+ MetadataHash with all its digits
    expect(await rows(s, `SELECT key_json, value_json FROM consumer_offsets WHERE group_id = 'sg' AND record_type = 11`)).toEqual([{ key_json: '{"groupId":"sg"}', value_json: '{"epoch":3,"metadataHash":-7046029254386353131}' }]);
  });
});

describeRealData('consumer-group tables on real data', () => {
  it('cp-5.1: the Control Center group below the log start', async () => {
    const s = await openSql(join(REAL_DATA, 'cp-5.1-lz4-connect'));
    const r = await rows(s, `SELECT committed_offset, log_start_offset, diagnosis FROM group_offsets WHERE group_id = '_confluent-controlcenter-5-1-2-1' AND topic = '_confluent-monitoring'`);
    expect(r).toEqual([{ committed_offset: 10n, log_start_offset: 14n, diagnosis: 'below-log-start' }]);
    const n = await rows(s, `SELECT count(*) AS n FROM consumer_offsets`);
    expect(n).toEqual([{ n: 225n }]);
  });
});
