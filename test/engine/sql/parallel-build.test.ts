/**
 * The SQL build with segments decoded in worker threads (issue 16: `sql-build-pool.ts`,
 * `sql-build-worker.ts`) writes the same tables as the build that decodes in the calling thread:
 * every table, row for row in insertion order, compared as the text of each row (BLOBs as escaped
 * bytes, NULLs as NULL; `latest_offsets`, a GROUP BY without row order, by content; `meta` without
 * its build time), on a generated partition of three segments that has a segment of more
 * than one chunk (70,000 records > CHUNK_RECORDS), a transaction aborted across a segment boundary,
 * a committed one, headers, keyless records, tombstones, a CRC-corrupted batch and a damaged tail;
 * on one with batches of every codec, keys longer than DuckDB's 12 inline bytes, bytes that are not
 * a batch inside a segment and a batch whose records cannot be decoded, also with the head of the
 * first segment decoded by the building thread (`firstSegmentHeadBytes`) and split at several places;
 * and on real broker data (a multi-segment partition written by a broker).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEntryWorker } from '../../../src-main/api/core/entry-worker.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { COMPRESSIONS } from '../../../src-main/engine/format/types.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { SQL_BUILD_WORKER } from '../../../src-main/engine/sql/sql-build-pool.ts';
import { CHUNK_RECORDS } from '../../../src-main/engine/sql/segment-rows.ts';
import type { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { markerBatch, openSql, scalar, txnBatch } from './sql-test-helpers.ts';

const startWorker = () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near);

/** Every table the build writes: (name, rows in insertion order as text, row count). */
async function tableDump(s: SqlSession): Promise<Record<string, { rows: number; digest: string }>> {
  const tables = await s.query(
    `SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name IN ('main', 'klx_internal') AND NOT temporary ORDER BY 1`,
    { limit: Infinity },
  );
  const out: Record<string, { rows: number; digest: string }> = {};
  for (const [name] of tables.rows) {
    // latest_offsets comes from a GROUP BY (no row order, even between two one-thread builds): by
    // content; meta: without the build's clock.
    const unordered = name === 'klx_internal.latest_offsets';
    const where = name === 'klx_internal.meta' ? `WHERE key <> 'built_at_ms'` : '';
    const r = await s.query(
      `SELECT count(*), md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY ${unordered ? 'CAST(t AS VARCHAR)' : 't.rowid'}), '')) ` +
        `FROM (SELECT ${unordered ? '' : 'rowid, '}* FROM ${String(name)} ${where}) t`,
    );
    out[String(name)] = { rows: Number(r.rows[0]![0]), digest: String(r.rows[0]![1]) };
  }
  return out;
}

/**
 * The one-thread build and the threaded one (two decoding threads; every segment decoded by them, unless
 * `firstSegmentHeadBytes` gives the building thread the head of the first segment; null: the
 * default, the building thread decodes chunks of it until a decoding thread has started).
 */
async function bothBuilds(dir: string, firstSegmentHeadBytes: number | null = 0): Promise<{ one: Record<string, { rows: number; digest: string }>; two: Record<string, { rows: number; digest: string }>; records: number }> {
  const one = await openSql(dir, { threads: 1 });
  const two = await openSql(dir, { threads: 3, startWorker, parallelFromBytes: 0, ...(firstSegmentHeadBytes === null ? {} : { firstSegmentHeadBytes }) });
  return { one: await tableDump(one), two: await tableDump(two), records: one.buildSummary!.records };
}

describe('parallel SQL build', () => {
  it('writes the same tables as the one-thread build on a multi-segment partition with transactions and damage', async () => {
    const logDir = tempDir();
    // Segment 0: 70,000 records in batches of 1,000 (more than one chunk), every 7th keyless, every
    // 11th a tombstone, every 13th with headers; then producer 7's transactional data.
    const big: BatchInput[] = [];
    for (let b = 0; b < 70; b++) {
      big.push({
        records: Array.from({ length: 1000 }, (_, i) => {
          const n = b * 1000 + i;
          return rec(n % 7 === 0 ? null : `k${n % 5000}`, n % 11 === 0 ? null : `v${n}`, 1000 + n, n % 13 === 0 ? [{ key: 'h', value: `x${n}` }, { key: 'n', value: null }] : undefined);
        }),
      });
    }
    big.push(txnBatch(7, 70_000, ['t1', 't2', 't3']));
    // Segment 1: producer 8 commits, producer 7 aborts (its data is in segment 0), a batch whose CRC fails.
    const corrupt = encodeBatch({ baseOffset: 70_007n, records: [rec('c1', 'corrupt-me'), rec('c2', 'x')] });
    corrupt[corrupt.length - 3] ^= 0xff;
    const middle: BatchInput[] = [txnBatch(8, 70_003, ['u1', 'u2']), markerBatch(8, 'COMMIT', 70_005), markerBatch(7, 'ABORT', 70_006), corrupt, { records: [rec('k1', 'after')] }];
    // Segment 2 (active): data, then bytes that are not a batch.
    const active: BatchInput[] = [{ records: [rec('k2', 'last'), rec(null, 'keyless'), rec('k3', null)] }];
    const dir = buildPartition(logDir, { segments: [{ batches: big }, { batches: middle }, { batches: active, tail: Buffer.from('this is not a record batch, it is damage at the end of the log') }] });

    const { one, two, records } = await bothBuilds(dir);
    expect(70_000).toBeGreaterThan(CHUNK_RECORDS);
    expect(records).toBe(70_000 + 3 + 2 + 1 + 1 + 2 + 1 + 3);
    expect(one['klx_internal.record_rows']!.rows).toBe(records);
    expect(one['main.segments']!.rows).toBe(3);
    expect(one['main.damage']!.rows).toBe(2); // the CRC mismatch and the tail
    expect(one['main.aborted_transactions']!.rows).toBe(1);
    expect(one['main.holes']!.rows).toBeGreaterThan(0);
    expect(two).toEqual(one);
    // The default: segment 0's chunks decoded here until a thread has started, the rest by the threads.
    expect((await bothBuilds(dir, null)).two).toEqual(one);
  }, 120_000);

  it('writes the same tables as the one-thread build, every column and row, with compressed batches, long keys, a damaged segment and an undecodable batch', async () => {
    // Segment 0: 2,000 records in each codec (keys of 3 to 20 bytes, every 9th a tombstone, every
    // 10th keyless), 100 bytes that are not a batch after the second.
    const codecBatches = COMPRESSIONS.map((compression, c) =>
      encodeBatch({
        baseOffset: BigInt(c * 2000),
        compression,
        records: Array.from({ length: 2000 }, (_, i) => rec(i % 10 === 0 ? null : `key-${'x'.repeat(i % 17)}${i}`, i % 9 === 0 ? null : `v${c}-${i}`, 5000 + i)),
      }),
    );
    const garbage = Buffer.alloc(100, 0x42);
    const compressed: BatchInput[] = [codecBatches[0]!, codecBatches[1]!, garbage, ...codecBatches.slice(2)];
    const garbageAt = codecBatches[0]!.length + codecBatches[1]!.length;
    const fourthBatchAt = garbageAt + garbage.length + codecBatches[2]!.length;
    const afterCodecs = BigInt(COMPRESSIONS.length * 2000);
    // Segment 1: a transaction committed, bytes that are not a batch in the middle, then a batch whose
    // recordsCount claims more records than it holds (its records cannot be decoded), then data.
    const undecodable = encodeBatch({ baseOffset: afterCodecs + 4n, records: [rec('u1', 'x'), rec('u2', 'y')] });
    undecodable.writeInt32BE(3, 57);
    undecodable.writeUInt32BE(crc32c(undecodable.subarray(21)), 17); // a valid CRC: the batch is read, its records are not
    const middle: BatchInput[] = [
      txnBatch(9, Number(afterCodecs), ['t1', 't2', 't3']),
      markerBatch(9, 'COMMIT', Number(afterCodecs + 3n)),
      Buffer.alloc(100, 0x41),
      undecodable,
      { baseOffset: afterCodecs + 6n, compression: 'zstd', records: [rec('k-after-damage', 'v'), rec('k1', null)] },
    ];
    const dir = buildPartition(tempDir(), {
      segments: [{ batches: compressed }, { baseOffset: afterCodecs, batches: middle }, { batches: [{ records: [rec('k2', 'last')] }], tail: Buffer.from('not a batch') }],
    });

    const { one, two, records } = await bothBuilds(dir);
    expect(records).toBe(COMPRESSIONS.length * 2000 + 3 + 1 + 2 + 1);
    expect(one['klx_internal.record_rows']!.rows).toBe(records);
    expect(one['klx_internal.batch_rows']!.rows).toBe(COMPRESSIONS.length + 2 + 1 + 1 + 1);
    expect(one['main.damage']!.rows).toBe(4); // the 100 bytes in segments 0 and 1, the undecodable batch, the tail
    expect(two).toEqual(one);
    // The building thread decoding the head of segment 0 and a thread the rest, split inside the
    // first batch, inside the damaged bytes, exactly at a batch: the same tables.
    for (const head of [10, garbageAt + 50, fourthBatchAt]) expect({ head, tables: (await bothBuilds(dir, head)).two }).toEqual({ head, tables: one });
    const s = await openSql(dir, { threads: 2, startWorker, parallelFromBytes: 0 });
    expect(await scalar(s, `SELECT string_agg(DISTINCT compression, ',' ORDER BY compression) FROM batches`)).toBe('gzip,lz4,none,snappy,zstd');
    expect(await scalar(s, `SELECT count(*) FROM records WHERE key IS NULL`)).toBe(BigInt(COMPRESSIONS.length * 200));
    expect(await scalar(s, `SELECT key_text FROM records WHERE "offset" = 16`)).toBe('key-xxxxxxxxxxxxxxxx16');
    expect(await scalar(s, `SELECT records_decoded FROM batches WHERE base_offset = ${afterCodecs + 4n}`)).toBe(false);
  }, 120_000);

  it('reports the rows of the aborted transaction and the latest state as the one-thread build', async () => {
    const dir = buildPartition(tempDir(), {
      segments: [{ batches: [txnBatch(3, 0, ['a', 'b']), { records: [rec('a', 'plain')] }] }, { batches: [markerBatch(3, 'ABORT', 3), { records: [rec('b', 'kept')] }] }],
    });
    const s = await openSql(dir, { threads: 2, startWorker, parallelFromBytes: 0 });
    expect(await scalar(s, 'SELECT count(*) FROM records WHERE aborted')).toBe(2n);
    expect(await scalar(s, `SELECT string_agg(key_text || '=' || value_text, ',' ORDER BY key_text) FROM state`)).toBe('a=plain,b=kept');
  }, 60_000);
});

describeRealData('parallel SQL build on real broker data', () => {
  for (const name of ['multisegment-rolled']) {
    it(`${name}: the same tables as the one-thread build`, async () => {
      const { one, two, records } = await bothBuilds(join(REAL_DATA, name));
      expect(records).toBeGreaterThan(0);
      expect(two).toEqual(one);
    }, 120_000);
  }
});
