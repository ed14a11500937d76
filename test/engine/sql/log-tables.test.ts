/**
 * The SQL tables built from the engine's stream: records / latest / state on the six-record
 * log and on the behaviour cases that shape them (B01, B02, B04, B11, B14, B15), the retention
 * example (retained offsets 8–10, logStartOffset 8), and the other tables (segments, batches, holes,
 * partitions, damage, aborted_transactions) with real byte counts, plus value capping, headers,
 * binary keys, several partitions, progress and cancellation.
 */
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { retention } from '../../../src-main/engine/cleaner/cleaner.ts';
import { cappedLength } from '../../../src-main/engine/sql/log-tables.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { bytes, keyValues, markerBatch, openSql, rows, scalar, txnBatch } from './sql-test-helpers.ts';

/** kafkajs' CRC-32C (shares no code with ours). */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const at = (offset: number, key: string | null, value: string | null, ts = 1000): BatchInput => ({ baseOffset: BigInt(offset), records: [rec(key, value, ts)] });

describe('records, latest and state', () => {
  it('six records (keys 17, 28, 17, 28, 17, 39): state is exactly 17 = gamma @4 and 39 = two @5; latest adds 28 as a tombstone @3', async () => {
    const dir = buildPartition(tempDir(), {
      topic: 'prices',
      segments: [{ batches: singles(rec('17', 'alpha'), rec('28', 'one'), rec('17', 'beta'), rec('28', null), rec('17', 'gamma'), rec('39', 'two')) }],
    });
    const s = await openSql(dir);

    const all = await rows(s, 'SELECT "offset", key_text, value_text, is_tombstone FROM records ORDER BY "offset"');
    expect(all).toEqual([
      { offset: 0n, key_text: '17', value_text: 'alpha', is_tombstone: false },
      { offset: 1n, key_text: '28', value_text: 'one', is_tombstone: false },
      { offset: 2n, key_text: '17', value_text: 'beta', is_tombstone: false },
      { offset: 3n, key_text: '28', value_text: null, is_tombstone: true },
      { offset: 4n, key_text: '17', value_text: 'gamma', is_tombstone: false },
      { offset: 5n, key_text: '39', value_text: 'two', is_tombstone: false },
    ]);

    const state = await rows(s, 'SELECT topic, "partition", key, key_text, value, value_text, "offset" FROM state ORDER BY key_text');
    expect(state).toEqual([
      { topic: 'prices', partition: 0, key: bytes('17'), key_text: '17', value: bytes('gamma'), value_text: 'gamma', offset: 4n },
      { topic: 'prices', partition: 0, key: bytes('39'), key_text: '39', value: bytes('two'), value_text: 'two', offset: 5n },
    ]);

    const latest = await rows(s, 'SELECT key_text, value_text, "offset", is_tombstone FROM latest ORDER BY "offset"');
    expect(latest).toEqual([
      { key_text: '28', value_text: null, offset: 3n, is_tombstone: true },
      { key_text: '17', value_text: 'gamma', offset: 4n, is_tombstone: false },
      { key_text: '39', value_text: 'two', offset: 5n, is_tombstone: false },
    ]);
    expect(await scalar(s, 'SELECT count(*) FROM state')).toBe(2n);
  });

  it('latest follows offsets, not timestamps: a later offset with an older timestamp wins', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('k', 'new-ts', 9000), rec('k', 'old-ts', 1000)) }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT value_text, "offset", "timestamp" FROM state')).toEqual([{ value_text: 'old-ts', offset: 1n, timestamp: 1000n }]);
  });

  it('B04: a key rewritten in the active segment resolves to the active value (k1 → c), the closed copy is still in records', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('k1', 'a'), rec('k2', 'b')) }, { batches: singles(rec('k1', 'c')) }] });
    const s = await openSql(dir);
    expect(keyValues(await rows(s, 'SELECT key_text, value_text FROM state'))).toEqual({ k1: 'c', k2: 'b' });
    expect(await rows(s, `SELECT "offset", segment_base_offset FROM records WHERE key_text = 'k1' ORDER BY "offset"`)).toEqual([
      { offset: 0n, segment_base_offset: 0n },
      { offset: 2n, segment_base_offset: 2n },
    ]);
  });

  it('B01: after compaction retained offsets are [0,2,3,4]; records keep them, holes show offset 1, state has 4 keys', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: [at(0, 'k1', 'a'), at(2, 'k2', 'c'), at(3, 'k3', 'd')] }, { batches: [at(4, 'k4', 'e')] }] }, { cleanerOffset: 4n });
    const s = await openSql(dir);
    expect((await rows(s, 'SELECT "offset" FROM records ORDER BY 1')).map((r) => r.offset)).toEqual([0n, 2n, 3n, 4n]);
    expect(await rows(s, 'SELECT from_offset, to_offset, offset_count, cause FROM holes')).toEqual([{ from_offset: 1n, to_offset: 1n, offset_count: 1n, cause: 'compacted-between-batches' }]);
    expect(keyValues(await rows(s, 'SELECT key_text, value_text FROM state'))).toEqual({ k1: 'a', k2: 'c', k3: 'd', k4: 'e' });
    expect(await rows(s, 'SELECT log_start_offset, log_end_offset, record_count FROM partitions')).toEqual([{ log_start_offset: 0n, log_end_offset: 5n, record_count: 4n }]);
  });

  it('B02: a compacted batch keeps base 0 and lastOffsetDelta 9 with one record at offset 2; batches and holes say so', async () => {
    const batchA: BatchInput = { baseOffset: 0n, lastOffsetDelta: 9, records: [{ ...rec('k2', 'v2'), offsetDelta: 2 }] };
    const batchB: BatchInput = { baseOffset: 10n, lastOffsetDelta: 9, records: [0, 1, 3, 4, 5, 6, 7, 8, 9].map((k, i) => ({ ...rec(`k${k}`, `w${k}`), offsetDelta: [0, 1, 2, 3, 4, 5, 6, 7, 8][i]! })) };
    const dir = buildPartition(tempDir(), { segments: [{ batches: [batchA, { ...batchB, lastOffsetDelta: 8 }] }, { batches: [at(19, 'kz', 'z')] }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT base_offset, last_offset, last_offset_delta, record_count FROM batches ORDER BY base_offset')).toEqual([
      { base_offset: 0n, last_offset: 9n, last_offset_delta: 9, record_count: 1 },
      { base_offset: 10n, last_offset: 18n, last_offset_delta: 8, record_count: 9 },
      { base_offset: 19n, last_offset: 19n, last_offset_delta: 0, record_count: 1 },
    ]);
    expect(await rows(s, `SELECT from_offset, to_offset, cause FROM holes ORDER BY from_offset`)).toEqual([
      { from_offset: 0n, to_offset: 1n, cause: 'compacted-in-batch' },
      { from_offset: 3n, to_offset: 9n, cause: 'compacted-in-batch' },
    ]);
    // Batch B has no k2: k2's latest record is the one compaction kept in batch A; k3's is in batch B.
    expect(await rows(s, `SELECT key_text, "offset", value_text FROM state WHERE key_text IN ('k2', 'k3') ORDER BY 1`)).toEqual([
      { key_text: 'k2', offset: 2n, value_text: 'v2' },
      { key_text: 'k3', offset: 12n, value_text: 'w3' },
    ]);
  });

  it('B11: a cleaned segment holding 265–300 and an active one 301–310: logStartOffset 0, first record 265, 46 records for an offset span of 311', async () => {
    const cleaned = Array.from({ length: 36 }, (_, i) => at(265 + i, `k${i}`, `v${265 + i}`));
    const active = Array.from({ length: 10 }, (_, i) => at(301 + i, `n${i}`, `v${301 + i}`));
    const dir = buildPartition(tempDir(), { topic: 'compacted', segments: [{ baseOffset: 0n, batches: cleaned }, { batches: active }] }, { logStartOffset: 0n, cleanerOffset: 301n });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT log_start_offset, log_end_offset, log_end_offset - log_start_offset AS offset_span, record_count, segment_count FROM partitions')).toEqual([
      { log_start_offset: 0n, log_end_offset: 311n, offset_span: 311n, record_count: 46n, segment_count: 2 },
    ]);
    expect(await rows(s, 'SELECT min("offset") AS first, count(*) AS n FROM records')).toEqual([{ first: 265n, n: 46n }]);
    expect(await rows(s, `SELECT from_offset, to_offset, cause FROM holes`)).toEqual([{ from_offset: 0n, to_offset: 264n, cause: 'compacted-between-batches' }]);
  });

  it('B14: a committed transaction: records 0 and 1 are data, the COMMIT marker at 2 is a control row kept out of latest and state', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: [txnBatch(7, 0, ['k1', 'k2']), markerBatch(7, 'COMMIT', 2)] }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT "offset", is_control, control_type, is_transactional, aborted, producer_id FROM records ORDER BY "offset"')).toEqual([
      { offset: 0n, is_control: false, control_type: null, is_transactional: true, aborted: false, producer_id: 7n },
      { offset: 1n, is_control: false, control_type: null, is_transactional: true, aborted: false, producer_id: 7n },
      { offset: 2n, is_control: true, control_type: 'COMMIT', is_transactional: true, aborted: false, producer_id: 7n },
    ]);
    expect((await rows(s, 'SELECT "offset" FROM latest ORDER BY 1')).map((r) => r.offset)).toEqual([0n, 1n]);
    expect(await rows(s, 'SELECT log_end_offset, last_stable_offset, open_transactions FROM partitions')).toEqual([{ log_end_offset: 3n, last_stable_offset: 3n, open_transactions: 0 }]);
    expect(await scalar(s, 'SELECT count(*) FROM aborted_transactions')).toBe(0n);
  });

  it('B15: aborted data (0–1 of producer 5, 6–7 of producer 6) is flagged and left out of state, which holds what read_committed returns: [4, 9]', async () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        {
          batches: [txnBatch(5, 0, ['k1', 'k2']), markerBatch(9, 'ABORT', 2), markerBatch(5, 'ABORT', 3), txnBatch(5, 4, ['k3']), markerBatch(5, 'COMMIT', 5), txnBatch(6, 6, ['k4', 'k5']), markerBatch(6, 'ABORT', 8)],
          txnIndex: [
            { producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
            { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
          ],
        },
        { batches: [at(9, 'k6', 'v-k6')] },
      ],
    });
    const s = await openSql(dir);
    expect((await rows(s, 'SELECT "offset" FROM records WHERE aborted ORDER BY 1')).map((r) => r.offset)).toEqual([0n, 1n, 6n, 7n]);
    expect((await rows(s, 'SELECT "offset" FROM state ORDER BY 1')).map((r) => r.offset)).toEqual([4n, 9n]);
    expect(keyValues(await rows(s, 'SELECT key_text, value_text FROM state'))).toEqual({ k3: 'v-k3', k6: 'v-k6' });
    expect(await rows(s, 'SELECT producer_id, first_offset, last_offset, last_stable_offset FROM aborted_transactions ORDER BY last_offset')).toEqual([
      { producer_id: 5n, first_offset: 0n, last_offset: 3n, last_stable_offset: 4n },
      { producer_id: 6n, first_offset: 6n, last_offset: 8n, last_stable_offset: 9n },
    ]);
    expect(await rows(s, 'SELECT base_offset, aborted FROM batches WHERE NOT is_control ORDER BY base_offset')).toEqual([
      { base_offset: 0n, aborted: true },
      { base_offset: 4n, aborted: false },
      { base_offset: 6n, aborted: true },
      { base_offset: 9n, aborted: false },
    ]);
    // The empty transaction of producer 9 has no data and no aborted_transactions row; its marker is a control record.
    expect(await rows(s, `SELECT "offset", control_type FROM records WHERE is_control ORDER BY 1`)).toEqual([
      { offset: 2n, control_type: 'ABORT' },
      { offset: 3n, control_type: 'ABORT' },
      { offset: 5n, control_type: 'COMMIT' },
      { offset: 8n, control_type: 'ABORT' },
    ]);
  });

  it('B15 (c): an open transaction stays in latest (read_uncommitted view) and sets last_stable_offset to its first offset', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: [at(0, 'a', 'x'), txnBatch(11, 1, ['k7'])] }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT last_stable_offset, open_transactions, log_end_offset FROM partitions')).toEqual([{ last_stable_offset: 1n, open_transactions: 1, log_end_offset: 2n }]);
    expect(keyValues(await rows(s, 'SELECT key_text, value_text FROM state'))).toEqual({ a: 'x', k7: 'v-k7' });
  });

  it('keyless records are listed in records but never in latest/state (the cleaner drops them, B07)', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec(null, 'x'), rec('k1', 'a'), rec(null, 'y'), rec('k1', 'b')) }] });
    const s = await openSql(dir);
    expect(await scalar(s, 'SELECT count(*) FROM records WHERE key IS NULL')).toBe(2n);
    expect(await rows(s, 'SELECT "offset", key_text, value_text FROM latest')).toEqual([{ offset: 3n, key_text: 'k1', value_text: 'b' }]);
  });

  it('records below logStartOffset (DeleteRecords) stay in records and are left out of latest (B10)', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('a', '3'), rec('c', '4')) }] }, { logStartOffset: 2n });
    const s = await openSql(dir);
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(4n);
    expect(await rows(s, 'SELECT log_start_offset FROM partitions')).toEqual([{ log_start_offset: 2n }]);
    expect(keyValues(await rows(s, 'SELECT key_text, value_text FROM state'))).toEqual({ a: '3', c: '4' });
    expect(await rows(s, `SELECT from_offset, to_offset, cause FROM holes`)).toEqual([{ from_offset: 0n, to_offset: 1n, cause: 'below-log-start' }]);
  });
});

describe('retention', () => {
  it('a log whose retained offsets are 8, 9 and 10 after retention reports min(offset) = 8, max(offset) = 10 and logStartOffset 8', async () => {
    const logDir = tempDir();
    const old = 1_000;
    const recent = 10_000_000;
    const dir = buildPartition(logDir, {
      topic: 'events',
      segments: [
        { batches: singles(rec('a', '0', old), rec('b', '1', old), rec('c', '2', old), rec('d', '3', old)) },
        { batches: singles(rec('e', '4', old), rec('f', '5', old), rec('g', '6', old), rec('h', '7', old)) },
        { batches: singles(rec('i', '8', recent), rec('j', '9', recent), rec('k', '10', recent)) },
      ],
    });
    const cacheDir = tempDir('klx-sql-cache-');
    const before = await openSql(dir, { cacheDir });
    expect(await rows(before, 'SELECT min("offset") AS lo, max("offset") AS hi FROM records')).toEqual([{ lo: 0n, hi: 10n }]);
    before.close();

    const outcome = retention(dir, { now: recent + 60_000, config: { 'retention.ms': 3_600_000n }, trashDir: tempDir('klx-trash-') });
    expect(outcome.partitions[0]!.error).toBeUndefined();
    expect(readdirSync(dir).filter((n) => n.endsWith('.log'))).toEqual(['00000000000000000008.log']);

    const after = await openSql(dir, { cacheDir });
    expect(after.reused).toBe(false);
    expect(await rows(after, 'SELECT min("offset") AS lo, max("offset") AS hi, count(*) AS n FROM records')).toEqual([{ lo: 8n, hi: 10n, n: 3n }]);
    expect(await rows(after, 'SELECT log_start_offset, log_end_offset, segment_count FROM partitions')).toEqual([{ log_start_offset: 8n, log_end_offset: 11n, segment_count: 1 }]);
    expect(keyValues(await rows(after, 'SELECT key_text, value_text FROM state'))).toEqual({ i: '8', j: '9', k: '10' });
  });
});

describe('the other tables', () => {
  it('segments, batches and partitions carry the files\' real sizes, offsets and counts', async () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { topic: 'orders', partition: 3, segments: [{ batches: [{ records: [rec('a', 'x', 1000), rec('b', 'y', 1005)] }, { records: [rec('c', 'z', 990)] }] }, { batches: singles(rec('d', 'w', 2000)) }] }, { highWatermark: 4n, recoveryPoint: 3n });
    const s = await openSql(logDir);
    const seg0 = statSync(join(dir, '00000000000000000000.log')).size;
    const seg3 = statSync(join(dir, '00000000000000000003.log')).size;
    expect(await rows(s, 'SELECT topic, "partition", base_offset, next_offset, file, size_bytes, txnindex_bytes, is_active, batch_count, record_count, first_offset, last_offset, max_timestamp, damaged_bytes FROM segments ORDER BY base_offset')).toEqual([
      { topic: 'orders', partition: 3, base_offset: 0n, next_offset: 3n, file: 'orders-3/00000000000000000000.log', size_bytes: BigInt(seg0), txnindex_bytes: null, is_active: false, batch_count: 2n, record_count: 3n, first_offset: 0n, last_offset: 2n, max_timestamp: 1005n, damaged_bytes: 0n },
      { topic: 'orders', partition: 3, base_offset: 3n, next_offset: 4n, file: 'orders-3/00000000000000000003.log', size_bytes: BigInt(seg3), txnindex_bytes: null, is_active: true, batch_count: 1n, record_count: 1n, first_offset: 3n, last_offset: 3n, max_timestamp: 2000n, damaged_bytes: 0n },
    ]);
    const b0 = encodeBatch({ baseOffset: 0n, records: [rec('a', 'x', 1000), rec('b', 'y', 1005)] });
    expect(await rows(s, 'SELECT "position", "size", magic, base_offset, last_offset, record_count, compression, timestamp_type, base_timestamp, max_timestamp, producer_id, crc, crc_valid FROM batches ORDER BY base_offset LIMIT 2')).toEqual([
      { position: 0n, size: b0.length, magic: 2, base_offset: 0n, last_offset: 1n, record_count: 2, compression: 'none', timestamp_type: 'CreateTime', base_timestamp: 1000n, max_timestamp: 1005n, producer_id: -1n, crc: BigInt(b0.readUInt32BE(17)), crc_valid: true },
      { position: BigInt(b0.length), size: seg0 - b0.length, magic: 2, base_offset: 2n, last_offset: 2n, record_count: 1, compression: 'none', timestamp_type: 'CreateTime', base_timestamp: 990n, max_timestamp: 990n, producer_id: -1n, crc: expect.any(BigInt), crc_valid: true },
    ]);
    expect(await rows(s, 'SELECT "position", batch_base_offset, segment_base_offset FROM records ORDER BY "offset"')).toEqual([
      { position: 0n, batch_base_offset: 0n, segment_base_offset: 0n },
      { position: 0n, batch_base_offset: 0n, segment_base_offset: 0n },
      { position: BigInt(b0.length), batch_base_offset: 2n, segment_base_offset: 0n },
      { position: 0n, batch_base_offset: 3n, segment_base_offset: 3n },
    ]);
    expect(await rows(s, 'SELECT topic, "partition", kind, dir, log_dir, cleanup_policy, log_start_offset, log_end_offset, high_watermark, recovery_point, cleaner_checkpoint, segment_count, log_size_bytes, batch_count, record_count FROM partitions')).toEqual([
      { topic: 'orders', partition: 3, kind: 'normal', dir: 'orders-3', log_dir: '.', cleanup_policy: 'delete', log_start_offset: 0n, log_end_offset: 4n, high_watermark: 4n, recovery_point: 3n, cleaner_checkpoint: null, segment_count: 2, log_size_bytes: BigInt(seg0 + seg3), batch_count: 3n, record_count: 4n },
    ]);
  });

  it('damage: a zero-filled tail is an invalid-tail row with file, byte position and reason; the batches before it are all there', async () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ batches: singles(rec('a', '1'), rec('b', '2')), tail: Buffer.alloc(40) }] });
    const size = statSync(join(dir, '00000000000000000000.log')).size;
    const s = await openSql(dir);
    const d = await rows(s, 'SELECT segment_base_offset, file, "position", "size", kind, code, reason FROM damage');
    expect(d).toEqual([{ segment_base_offset: 0n, file: '00000000000000000000.log', position: BigInt(size - 40), size: 40n, kind: 'invalid-tail', code: expect.any(String), reason: expect.stringContaining('40 invalid bytes at the end') }]);
    expect(d[0]!.reason).toContain('all zero bytes');
    expect(await rows(s, 'SELECT record_count, damaged_bytes FROM partitions')).toEqual([{ record_count: 2n, damaged_bytes: 40n }]);
  });

  it('damage: a batch whose CRC does not match is listed as crc-mismatch and its records are still in records', async () => {
    const good = encodeBatch({ baseOffset: 0n, records: [rec('a', 'one')] });
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('b', 'two')] });
    bad[bad.length - 2] ^= 0xff; // flip a byte of the value: the CRC no longer matches
    const last = encodeBatch({ baseOffset: 2n, records: [rec('c', 'three')] });
    const dir = buildPartition(tempDir(), { segments: [{ batches: [good, bad, last] }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT "position", kind, code FROM damage')).toEqual([{ position: BigInt(good.length), kind: 'crc-mismatch', code: 'crc-mismatch' }]);
    // Both CRCs, as Kafka words it (issue 13 finding 1); the computed one by kafkajs' CRC-32C.
    const computed = kjsCrc32C(bad.subarray(21)) >>> 0;
    expect(await scalar(s, 'SELECT reason FROM damage')).toBe(`Record is corrupt (stored crc = ${bad.readUInt32BE(17)}, computed crc = ${computed}; CRC-32C): the batch at baseOffset 1 fails its CRC; its records are still listed (crc_valid = false)`);
    expect(await rows(s, 'SELECT "offset", crc_valid FROM records ORDER BY 1')).toEqual([
      { offset: 0n, crc_valid: true },
      { offset: 1n, crc_valid: false },
      { offset: 2n, crc_valid: true },
    ]);
    expect(await rows(s, 'SELECT base_offset, crc_valid FROM batches ORDER BY 1')).toEqual([
      { base_offset: 0n, crc_valid: true },
      { base_offset: 1n, crc_valid: false },
      { base_offset: 2n, crc_valid: true },
    ]);
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(3n);
  });

  it('several partitions: one table set, each row with its topic and partition; the same key in two partitions is two state rows', async () => {
    const logDir = tempDir();
    buildPartition(logDir, { topic: 'a', partition: 0, segments: [{ batches: singles(rec('k', 'a0'), rec('k', 'a1')) }] });
    buildPartition(logDir, { topic: 'b.c-d', partition: 1, segments: [{ batches: singles(rec('k', 'b0')) }] });
    const s = await openSql(logDir);
    expect(await rows(s, 'SELECT topic, "partition", value_text, "offset" FROM state ORDER BY topic')).toEqual([
      { topic: 'a', partition: 0, value_text: 'a1', offset: 1n },
      { topic: 'b.c-d', partition: 1, value_text: 'b0', offset: 0n },
    ]);
    expect(await rows(s, 'SELECT topic, "partition", dir, record_count FROM partitions ORDER BY topic')).toEqual([
      { topic: 'a', partition: 0, dir: 'a-0', record_count: 2n },
      { topic: 'b.c-d', partition: 1, dir: 'b.c-d-1', record_count: 1n },
    ]);
  });
});

describe('record columns', () => {
  it('values above the cap keep a prefix cut at a UTF-8 character boundary, with the real size', async () => {
    const long = 'é'.repeat(100); // 200 bytes
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('k', long), rec('s', 'short')) }] });
    const s = await openSql(dir, { valueCapBytes: 51 });
    expect(await rows(s, 'SELECT key_text, octet_length(value) AS kept, value_size, value_truncated, value_text FROM records ORDER BY "offset"')).toEqual([
      { key_text: 'k', kept: 50n, value_size: 200, value_truncated: true, value_text: 'é'.repeat(25) },
      { key_text: 's', kept: 5n, value_size: 5, value_truncated: false, value_text: 'short' },
    ]);
    expect(cappedLength(Buffer.from('aé'), 2)).toBe(1);
    expect(cappedLength(Buffer.from('aé'), 3)).toBe(3);
    expect(cappedLength(Buffer.from('€€'), 4)).toBe(3);
  });

  it('headers are a list of {key, value}; a binary key has no key_text; timestamps are ms', async () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        {
          batches: [
            { records: [rec('k', 'v', 1700000000123, [{ key: 'trace', value: 'abc' }, { key: 'empty', value: null }, { key: 'trace', value: 'again' }])] },
            { records: [{ key: new Uint8Array([0xff, 0x00, 0x01]), value: new Uint8Array([0xc3]), timestamp: 5n }] },
          ],
        },
      ],
    });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT headers, key, key_text, value_text, "timestamp", is_tombstone FROM records ORDER BY "offset"')).toEqual([
      {
        headers: [
          { key: 'trace', value: bytes('abc') },
          { key: 'empty', value: null },
          { key: 'trace', value: bytes('again') },
        ],
        key: bytes('k'),
        key_text: 'k',
        value_text: 'v',
        timestamp: 1700000000123n,
        is_tombstone: false,
      },
      { headers: [], key: Buffer.from([0xff, 0x00, 0x01]), key_text: null, value_text: null, timestamp: 5n, is_tombstone: false },
    ]);
    expect(await scalar(s, `SELECT count(*) FROM records, unnest(headers) AS h(x) WHERE x.key = 'trace'`)).toBe(2n);
  });

  it('more rows than one DuckDB chunk (2048) and records of compressed batches are all there, in log order', async () => {
    const batches: BatchInput[] = [];
    for (let b = 0; b < 30; b++) batches.push({ compression: b % 2 ? 'gzip' : 'lz4', records: Array.from({ length: 100 }, (_, i) => rec(`k${(b * 100 + i) % 250}`, `v${b * 100 + i}`, 1000 + i, i % 10 === 0 ? [{ key: 'h', value: `${i}` }] : undefined)) });
    const dir = buildPartition(tempDir(), { segments: [{ batches }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT count(*) AS n, count(DISTINCT "offset") AS d, min("offset") AS lo, max("offset") AS hi, sum(len(headers)) AS h FROM records')).toEqual([{ n: 3000n, d: 3000n, lo: 0n, hi: 2999n, h: 300n }]);
    const st = await rows(s, 'SELECT key_text, value_text FROM state');
    expect(st).toHaveLength(250);
    expect(keyValues(st).k0).toBe('v2750');
    expect(await rows(s, 'SELECT compression, count(*) AS n FROM batches GROUP BY 1 ORDER BY 1')).toEqual([
      { compression: 'gzip', n: 15n },
      { compression: 'lz4', n: 15n },
    ]);
  });
});

describe('building', () => {
  it('reports progress {phase, done, total, bytes} and is cancelled by its signal, leaving no cache file', async () => {
    const batches = Array.from({ length: 3000 }, (_, i) => ({ records: [rec(`k${i}`, 'x'.repeat(200))] }));
    const dir = buildPartition(tempDir(), { segments: [{ batches }] });
    const total = statSync(join(dir, '00000000000000000000.log')).size;

    const seen: { phase: string; done: number; total: number | null; bytes: number }[] = [];
    const s = await SqlSession.open(dir, { onProgress: (p) => seen.push(p) });
    s.close();
    const build = seen.filter((p) => p.phase === 'build SQL tables');
    expect(build.at(-1)).toEqual({ phase: 'build SQL tables', done: total, total, bytes: total });

    const cacheDir = tempDir('klx-sql-cache-');
    const ac = new AbortController();
    const err = await SqlSession.open(dir, { cacheDir, signal: ac.signal, onProgress: () => ac.abort() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).code).toBe('cancelled');
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('a folder that is not a Kafka log is refused with the engine\'s error', async () => {
    const err = await SqlSession.open(tempDir()).catch((e: unknown) => e);
    expect((err as KlxError).code).toBe('not-a-log-dir');
  });
});
