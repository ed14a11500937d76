/**
 * SQL tables `transactions` and `cluster_metadata`: on a `__transaction_state` partition written with
 * `klx create` + `klx append --records` from an independent Python encoder of Kafka's schemas, and on
 * both broker-written KRaft data sets (counts from their PROVENANCE.md; exact data checked against the
 * schemas byte by byte in the decoder tests).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { transactionStatePartition } from '../../support/txn-state.ts';
import { openSql, rows, scalar } from './sql-test-helpers.ts';

const big = (v: unknown) => (v === null ? null : BigInt(v as bigint | number | string));

describe('transactions table', () => {
  const dir = transactionStatePartition();

  it('one row per transaction-state record, tombstone included, with Kafka state names and defaults of absent tagged fields', async () => {
    const s = await openSql(join(dir, '..'));
    const rs = await rows(
      s,
      `SELECT record_offset, transactional_id, is_tombstone, version, producer_id, previous_producer_id, next_producer_id, producer_epoch, next_producer_epoch,
              transaction_timeout_ms, state_id, state, partitions::VARCHAR AS partitions, last_update_timestamp, start_timestamp,
              strftime(last_update_utc, '%Y-%m-%d %H:%M:%S.%g') AS last_update_utc, start_utc IS NULL AS no_start, client_transaction_version, decode_error
       FROM transactions ORDER BY record_offset`,
    );
    const pick = rs.map((r) => ({ ...r, record_offset: big(r.record_offset), producer_id: big(r.producer_id), previous_producer_id: big(r.previous_producer_id), next_producer_id: big(r.next_producer_id), last_update_timestamp: big(r.last_update_timestamp), start_timestamp: big(r.start_timestamp) }));
    const parts = '[{"topic":"orders","partitionIds":[0,2]},{"topic":"audit","partitionIds":[1]}]';
    expect(pick).toEqual([
      { record_offset: 0n, transactional_id: 'payments-1', is_tombstone: false, version: 0, producer_id: 4001n, previous_producer_id: -1n, next_producer_id: -1n, producer_epoch: 0, next_producer_epoch: -1, transaction_timeout_ms: 60000, state_id: 1, state: 'Ongoing', partitions: parts, last_update_timestamp: 1700000000010n, start_timestamp: 1700000000005n, last_update_utc: '2023-11-14 22:13:20.010', no_start: false, client_transaction_version: 0, decode_error: null },
      { record_offset: 1n, transactional_id: 'payments-1', is_tombstone: false, version: 1, producer_id: 4001n, previous_producer_id: -1n, next_producer_id: -1n, producer_epoch: 0, next_producer_epoch: 1, transaction_timeout_ms: 60000, state_id: 2, state: 'PrepareCommit', partitions: parts, last_update_timestamp: 1700000000020n, start_timestamp: 1700000000005n, last_update_utc: '2023-11-14 22:13:20.020', no_start: false, client_transaction_version: 2, decode_error: null },
      { record_offset: 2n, transactional_id: 'payments-1', is_tombstone: false, version: 1, producer_id: 4001n, previous_producer_id: 4000n, next_producer_id: -1n, producer_epoch: 1, next_producer_epoch: -1, transaction_timeout_ms: 60000, state_id: 4, state: 'CompleteCommit', partitions: '[]', last_update_timestamp: 1700000000030n, start_timestamp: 1700000000005n, last_update_utc: '2023-11-14 22:13:20.030', no_start: false, client_transaction_version: 2, decode_error: null },
      { record_offset: 3n, transactional_id: 'reports-7', is_tombstone: false, version: 1, producer_id: 1152921504606846977n, previous_producer_id: -1n, next_producer_id: -1n, producer_epoch: 3, next_producer_epoch: -1, transaction_timeout_ms: 900000, state_id: 0, state: 'Empty', partitions: null, last_update_timestamp: 1700000000040n, start_timestamp: -1n, last_update_utc: '2023-11-14 22:13:20.040', no_start: true, client_transaction_version: 0, decode_error: null },
      { record_offset: 4n, transactional_id: 'reports-7', is_tombstone: true, version: null, producer_id: null, previous_producer_id: null, next_producer_id: null, producer_epoch: null, next_producer_epoch: null, transaction_timeout_ms: null, state_id: null, state: null, partitions: null, last_update_timestamp: null, start_timestamp: null, last_update_utc: null, no_start: true, client_transaction_version: null, decode_error: null },
    ]);
    // The JSON columns are DuckDB JSON: paths work, int64 stays exact.
    expect(await scalar(s, `SELECT value_json->>'$.data.producerId' FROM transactions WHERE record_offset = 3`)).toBe('1152921504606846977');
    expect(await scalar(s, `SELECT key_json->'data'->>'transactionalId' FROM transactions WHERE record_offset = 0`)).toBe('payments-1');
    // A tagged field no version defines: in its own column, not in value_json (dump-log does not print it)
    expect(await rows(s, `SELECT record_offset, unknown_tagged_fields::VARCHAR AS u, contains(value_json::VARCHAR, 'AQI=') AS in_json FROM transactions WHERE unknown_tagged_fields IS NOT NULL`)).toEqual([
      { record_offset: 3n, u: '[{"path":"","tag":9,"data":"AQI="}]', in_json: false },
    ]);
    expect(await scalar(s, `SELECT count(*) FROM transactions t, unnest(from_json(t.partitions, '["json"]')) AS p(x) WHERE record_offset = 1`)).toBe(2n);
    // Nothing of the other tables changed: the records are there as bytes too.
    expect(await scalar(s, `SELECT count(*) FROM records WHERE topic = '__transaction_state'`)).toBe(5n);
    expect(await scalar(s, `SELECT count(*) FROM cluster_metadata`)).toBe(0n);
  });
});

describeRealData('cluster_metadata table on the KRaft data sets', () => {
  it('kraft-metadata-small: every record with type, version and data as dump-log prints them', async () => {
    const s = await openSql(join(REAL_DATA, 'kraft-metadata-small'));
    const rs = await rows(s, `SELECT record_offset, type, version, data::VARCHAR AS data, is_control, decode_error FROM cluster_metadata ORDER BY record_offset`);
    expect(rs.map((r) => [Number(r.record_offset), r.type, r.version, r.is_control, r.decode_error])).toEqual([
      [0, 'LEADER_CHANGE', 0, true, null],
      [1, 'REGISTER_BROKER_RECORD', 0, false, null],
      [2, 'UNFENCE_BROKER_RECORD', 0, false, null],
      [3, 'TOPIC_RECORD', 0, false, null],
      [4, 'PARTITION_RECORD', 0, false, null],
      [5, 'PARTITION_RECORD', 0, false, null],
      [6, 'PARTITION_RECORD', 0, false, null],
    ]);
    expect(rs[3]!.data).toBe('{"name":"test1","topicId":"pqFUXC1fRJ-sOJ2VK_4P4A"}');
    expect(rs[0]!.data).toBe('{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}');
    expect(await scalar(s, `SELECT payload FROM cluster_metadata WHERE record_offset = 2`)).toBe('{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":0}}');
    expect(await scalar(s, `SELECT data->>'$.endPoints[1].host' FROM cluster_metadata WHERE type = 'REGISTER_BROKER_RECORD'`)).toBe('172.18.0.14');
  });

  it('kraft-3x-metadata-2seg: 23,767 rows, zero decode errors, 23,717 NoOps, 5 leader changes', async () => {
    const s = await openSql(join(REAL_DATA, 'kraft-3x-metadata-2seg'));
    expect(await scalar(s, `SELECT count(*) FROM cluster_metadata`)).toBe(23767n);
    expect(await scalar(s, `SELECT count(*) FROM cluster_metadata WHERE decode_error IS NOT NULL OR unknown_tagged_fields IS NOT NULL`)).toBe(0n);
    expect(await scalar(s, `SELECT count(*) FROM cluster_metadata WHERE type = 'NO_OP_RECORD'`)).toBe(23717n);
    expect((await rows(s, `SELECT record_offset FROM cluster_metadata WHERE type = 'LEADER_CHANGE' ORDER BY 1`)).map((r) => Number(r.record_offset))).toEqual([0, 3442, 3612, 14667, 21698]);
    expect(await scalar(s, `SELECT data::VARCHAR FROM cluster_metadata WHERE type = 'PRODUCER_IDS_RECORD'`)).toBe('{"brokerId":1,"brokerEpoch":21723,"nextProducerId":1000}');
    expect(await scalar(s, `SELECT strftime(timestamp_utc, '%Y-%m-%d') FROM cluster_metadata WHERE record_offset = 0`)).toBe('2025-06-11');
  });
});
