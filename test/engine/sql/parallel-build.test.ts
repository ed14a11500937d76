/**
 * The SQL build with segments decoded in worker threads (issue 16: `sql-build-pool.ts`,
 * `sql-build-worker.ts`) writes the same tables as the build that decodes in the calling thread:
 * every table, row for row in insertion order, compared as the text of each row (BLOBs as escaped
 * bytes, NULLs as NULL; `latest_offsets`, a GROUP BY without row order, by content; `meta` without
 * its build time), on a generated partition of three segments that has a segment of more
 * than one chunk (70,000 records > CHUNK_RECORDS), a transaction aborted across a segment boundary,
 * a committed one, headers, keyless records, tombstones, a CRC-corrupted batch and a damaged tail;
 * and on real broker data (a multi-segment partition written by a broker).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEntryWorker } from '../../../src-main/api/core/entry-worker.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
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

async function bothBuilds(dir: string): Promise<{ one: Record<string, { rows: number; digest: string }>; two: Record<string, { rows: number; digest: string }>; records: number }> {
  const one = await openSql(dir, { threads: 1 });
  const two = await openSql(dir, { threads: 2, startWorker, parallelFromBytes: 0 });
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
