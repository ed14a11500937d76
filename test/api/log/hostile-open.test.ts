/**
 * Issue 17, defects 5 and 9: a batch at baseOffset 2^63 − 1 (valid CRC) is a typed
 * `offset-overflow` finding on its partition while every other partition of the folder still
 * opens; `dedupeBufferSize` is refused above Kafka's per-cleaner-thread cap (Int.MaxValue) with a
 * clear `invalid-argument`, never an `internal` error.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import type { MethodName, Res } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { scanLogFile, type DamageEntry } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';

const INT64_MAX = (1n << 63n) - 1n;
/** kafkajs's CRC-32C (an implementation independent of ours). */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;
let server: ServerApi;
let root: string;

beforeAll(() => {
  root = tempDir('klx-hostile-open-');
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
});

afterAll(async () => {
  await server.ctx.jobs.shutdown();
  rmSync(root, { recursive: true, force: true });
});

async function dispatch(method: MethodName, req: unknown) {
  return server.dispatch(method, req, { readOnly: true });
}

describe('int64 offsets at the edge', () => {
  it('a batch at baseOffset 2^63 − 1 is an offset-overflow finding; the other partition still opens', async () => {
    const d = join(root, 'edge');
    mkdirSync(d, { recursive: true });
    buildPartition(d, { topic: 'orders', partition: 0, segments: [{ batches: singles(rec('a', '1', 1000), rec('b', '2', 2000)) }] });
    const edge = encodeBatch({ baseOffset: INT64_MAX, compression: 'none', records: [{ timestamp: 1000n, key: 'k', value: 'v' }] });
    buildPartition(d, { topic: 'orders', partition: 1, segments: [{ baseOffset: 0n, batches: [edge], noIndex: true, noTimeIndex: true }] });

    const log = join(d, 'orders-1', '00000000000000000000.log');
    const rss0 = process.memoryUsage().rss;
    const t0 = Date.now();
    const items = [...scanLogFile(log)];
    // Generous bounds: one batch; an offset walk to 2^63 or an array sized from it would not end.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(64 * 1024 * 1024);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'corrupt-region', position: 0, size: edge.length, code: 'offset-overflow' });
    expect((items[0] as DamageEntry).reason).toBe('batch at baseOffset 9223372036854775807 ends at offset 9223372036854775807: the next offset would be past 2^63 − 1 (Long.MAX_VALUE), which no broker can write');

    const t1 = Date.now();
    const env = await dispatch('log.open', { path: d });
    expect(Date.now() - t1).toBeLessThan(30_000);
    expect(env.ok).toBe(true);
    if (!env.ok) return;
    const parts = (env.result as Res<'log.open'>).logDirs[0]!.partitions;
    expect(parts.map((p) => [p.name, p.logEndOffset])).toEqual([
      ['orders-0', '2'],
      ['orders-1', '0'],
    ]);

    const report = await verifyPartition(PartitionLog.open(join(d, 'orders-1')));
    const overflow = report.findings.filter((f) => f.code === 'offset-overflow');
    expect(overflow).toHaveLength(1);
    expect(overflow[0]).toMatchObject({ severity: 'error', file: log, position: 0 });
  });
});

describe('int64 offsets at the low edge (fuzz seed 401, input 899400)', () => {
  it('a batch at baseOffset −2^63 whose lastOffsetDelta is negative (valid CRC) is an offset-overflow finding, not a contract failure', async () => {
    const d = join(root, 'low-edge');
    mkdirSync(d, { recursive: true });
    buildPartition(d, { topic: 'orders', partition: 0, segments: [{ batches: singles(rec('a', '1', 1000)) }] });
    const low = Buffer.from(encodeBatch({ baseOffset: -(1n << 63n), compression: 'none', records: [{ timestamp: 1000n, key: 'k', value: 'v' }] }));
    low.writeInt32BE(-5, 23); // lastOffsetDelta
    low.writeUInt32BE(kjsCrc32C(low.subarray(21)) >>> 0, 17); // CRC-32C by kafkajs, over attributes..end
    buildPartition(d, { topic: 'orders', partition: 1, segments: [{ baseOffset: 0n, batches: [low], noIndex: true, noTimeIndex: true }] });

    const items = [...scanLogFile(join(d, 'orders-1', '00000000000000000000.log'))];
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'corrupt-region', position: 0, size: low.length, code: 'offset-overflow' });
    expect((items[0] as DamageEntry).reason).toBe("batch at baseOffset -9223372036854775808 ends at offset -9223372036854775813: below −2^63 (Long.MIN_VALUE), where DefaultRecordBatch.lastOffset's long arithmetic wraps; no broker writes it");

    for (const [method, req] of [['log.open', { path: d }], ['log.partition', { dir: join(d, 'orders-1') }]] as const) {
      const env = await dispatch(method, req);
      expect(env.ok, `${method}: ${JSON.stringify(env)}`).toBe(true);
    }
    const env = await dispatch('log.open', { path: d });
    if (!env.ok) return;
    expect((env.result as Res<'log.open'>).logDirs[0]!.partitions.map((p) => [p.name, p.logEndOffset])).toEqual([
      ['orders-0', '1'],
      ['orders-1', '0'],
    ]);
  });
});

describe('cleanup.plan dedupeBufferSize', () => {
  it('above 2147483647 (Kafka caps one cleaner thread\'s offset map at Int.MaxValue) is a clear invalid-argument', async () => {
    const d = join(root, 'dedupe');
    mkdirSync(d, { recursive: true });
    buildPartition(d, { topic: 'c', partition: 0, segments: [{ batches: singles(rec('a', '1', 1000)) }] });
    await dispatch('session.open', { path: d });
    for (const size of [2 ** 31, 2 ** 33, 2 ** 40]) {
      const env = await dispatch('cleanup.plan', { dir: join(d, 'c-0'), operation: 'compaction', dedupeBufferSize: size });
      expect(env.ok).toBe(false);
      if (env.ok) return;
      expect(env.error.code).toBe('invalid-argument');
      expect(env.error.message).toContain('dedupeBufferSize must be at most 2147483647 bytes');
      expect(env.error.message).not.toMatch(/\n\s+at /);
    }
  });
});
