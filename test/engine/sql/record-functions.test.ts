/**
 * Values, headers and decoded columns are not kept in the SQL cache (issue 16): they are read back
 * from the segments, only by queries that name them, only for the rows those queries reach; the
 * cache holds metadata only; a log rewritten under an open session is an error, never another
 * record's bytes.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { openSql, rows, scalar } from './sql-test-helpers.ts';

/** 20 batches of 50 records: keys k0..k99 (each written 10 times), values `value-<offset>-` + 200 × 'x'. */
function bigLog(): string {
  const batches: BatchInput[] = [];
  for (let b = 0; b < 20; b++) {
    const records = [];
    for (let i = 0; i < 50; i++) {
      const n = b * 50 + i;
      records.push(rec(`k${n % 100}`, `value-${n}-${'x'.repeat(200)}`, 1000 + n));
    }
    batches.push({ baseOffset: BigInt(b * 50), records });
  }
  return buildPartition(tempDir(), { topic: 'big', segments: [{ batches: batches.slice(0, 10) }, { batches: batches.slice(10) }] });
}

/** Bytes of the `.log` files of a partition folder. */
function logBytes(dir: string): number {
  return readdirSync(dir).filter((n) => n.endsWith('.log')).reduce((a, n) => a + statSync(join(dir, n)).size, 0);
}

/** Sizes (12 + batchLength) of the batches at these baseOffsets, read from the `.log` files. */
function batchBytes(dir: string, baseOffsets: number[]): number {
  let sum = 0;
  for (const n of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const buf = readFileSync(join(dir, n));
    for (let pos = 0; pos + 12 <= buf.length; ) {
      const size = 12 + buf.readInt32BE(pos + 8);
      if (baseOffsets.includes(Number(buf.readBigInt64BE(pos)))) sum += size;
      pos += size;
    }
  }
  return sum;
}

describe('columns read back from the segments', () => {
  it('queries over kept columns read nothing from the log; value queries read only the batches they reach', async () => {
    const dir = bigLog();
    const s = await openSql(dir);
    const count = await s.query('SELECT count(*), sum(value_size), count(*) FILTER (WHERE is_tombstone) FROM records');
    expect(count.rows[0]).toEqual([1000n, 1000n * 207n + BigInt([...Array(1000).keys()].reduce((a, n) => a + String(n).length, 0)), 0n]);
    expect(count.readFromLog).toEqual({ batches: 0, bytes: 0 });
    expect((await s.query('SELECT count(*) FROM state')).readFromLog.batches).toBe(0);

    // state holds offsets 900..999: the last two batches of the second segment.
    const st = await s.query('SELECT key_text, value_text FROM state ORDER BY "offset"');
    expect(st.rowCount).toBe(100);
    expect(st.rows[0]).toEqual(['k0', `value-900-${'x'.repeat(200)}`]);
    expect(st.readFromLog.batches).toBe(2);
    expect(st.readFromLog.bytes).toBe(batchBytes(dir, [900, 950]));

    const one = await s.query(`SELECT value_text, headers FROM records WHERE "offset" = 123`);
    expect(one.rows).toEqual([[`value-123-${'x'.repeat(200)}`, []]]);
    expect(one.readFromLog.batches).toBe(1);
    expect(one.readFromLog.bytes).toBe(batchBytes(dir, [100]));

    const all = await s.query('SELECT count(*) FROM records WHERE value_text LIKE $$value-5__-%$$');
    expect(all.rows[0]).toEqual([100n]);
    // 20 batches reached, each counted once with its size in the log: together the two .log files.
    expect(all.readFromLog.batches).toBe(20);
    expect(all.readFromLog.bytes).toBe(logBytes(dir));
  });

  it("a filter on topic or partition is applied before values are read back: only that partition's batches are read", async () => {
    const logDir = tempDir();
    const batches = (topic: string) => Array.from({ length: 10 }, (_, b) => ({ baseOffset: BigInt(b * 5), records: Array.from({ length: 5 }, (_, i) => rec(`k${i}`, `${topic}-${b * 5 + i}`, 1000 + b)) }));
    buildPartition(logDir, { topic: 'orders', partition: 0, segments: [{ batches: batches('orders') }] });
    buildPartition(logDir, { topic: 'payments', partition: 0, segments: [{ batches: batches('payments') }] });
    buildPartition(logDir, { topic: 'payments', partition: 1, segments: [{ batches: batches('payments1') }] });
    const s = await openSql(logDir);
    // 10 batches of orders-0, none of the 20 of payments (all 30 were read back before the filter).
    const one = await s.query(`SELECT count(value_text), min(value_text) FROM records WHERE topic = 'orders'`);
    expect(one.rows[0]).toEqual([50n, 'orders-0']);
    expect(one.readFromLog.batches).toBe(10);
    s.close();
    const s2 = await openSql(logDir);
    const two = await s2.query(`SELECT count(value_text), max(value_text) FROM state WHERE topic = 'payments' AND "partition" = 1`);
    expect(two.rows[0]).toEqual([5n, 'payments1-49']);
    expect(two.readFromLog.batches).toBe(1);
    s2.close();
  });

  it('the cache keeps metadata columns only: no value, headers or decoded column; keys stay', async () => {
    const dir = bigLog();
    const s = await openSql(dir);
    const logBytes = Number(await scalar(s, 'SELECT sum(size_bytes) FROM segments'));
    expect(logBytes).toBeGreaterThan(200_000);
    const cols = (await rows(s, `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'klx_internal' AND table_name = 'record_rows'`)).map((r) => r.column_name);
    expect(cols).not.toContain('value');
    expect(cols).not.toContain('headers');
    expect(cols).not.toContain('value_decoded');
    expect(cols).toContain('key');
  });

  it('decoded columns are computed when asked: JSON values decode, and only the rows reached are read', async () => {
    const dir = buildPartition(tempDir(), {
      topic: 'json',
      segments: [{ batches: [{ baseOffset: 0n, records: [rec('a', '{"n":1}'), rec('b', '{"n":2}'), rec('a', null)] }] }],
    });
    const s = await openSql(dir);
    const r = await s.query(`SELECT key_text, value_format, value_decoded->>'n' AS n, decode_error FROM records ORDER BY "offset"`);
    expect(r.rows).toEqual([
      ['a', 'json', '1', null],
      ['b', 'json', '2', null],
      ['a', r.rows[2]![1], null, null],
    ]);
    expect(r.readFromLog.batches).toBe(1);
    const off = await openSql(dir, { decode: false });
    expect((await off.query('SELECT value_format, value_decoded FROM records')).rows).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
  });

  it('a decoded chunk that failed half-way leaves nothing behind for the next one: short texts stay short', async () => {
    // Topic `long`: JSON values of ~60 bytes in two segments (the second is zeroed below);
    // topic `short`: JSON values of 7 bytes, which DuckDB keeps inline.
    const logDir = tempDir();
    const longValue = (n: number) => `{"n":${n},"pad":"${'p'.repeat(50)}"}`;
    buildPartition(logDir, {
      topic: 'long',
      segments: [{ batches: [{ baseOffset: 0n, records: [0, 1, 2].map((n) => rec(`k${n}`, longValue(n))) }] }, { batches: [{ baseOffset: 3n, records: [3, 4].map((n) => rec(`k${n}`, longValue(n))) }] }],
    });
    buildPartition(logDir, { topic: 'short', segments: [{ batches: [{ baseOffset: 0n, records: [0, 1, 2, 3, 4].map((n) => rec(`s${n}`, `{"n":${n}}`)) }] }] });
    const s = await openSql(logDir);
    const second = join(logDir, 'long-0', '00000000000000000003.log');
    writeFileSync(second, Buffer.alloc(statSync(second).size));
    await expect(s.query(`SELECT value_decoded FROM records WHERE topic = 'long' ORDER BY "offset"`)).rejects.toThrow(/the log changed since the SQL tables were built/);
    const r = await s.query(`SELECT value_decoded FROM records WHERE topic = 'short' ORDER BY "offset"`);
    expect(r.rows.map((x) => x[0])).toEqual(['{"n":0}', '{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}']);
  });

  it('a log rewritten under an open session gives an error naming the partition and place, not other bytes', async () => {
    const dir = bigLog();
    const s = await openSql(dir);
    const log = join(dir, '00000000000000000000.log');
    const size = statSync(log).size;
    writeFileSync(log, Buffer.alloc(size)); // same size, zeros: no batch at any recorded position
    await expect(s.query('SELECT value_text FROM records WHERE "offset" = 3')).rejects.toThrow(/the log changed since the SQL tables were built \(big-0, segment 0, position 0: no batch starts there\)/);
  });
});
