/**
 * `log.verify`, `log.verifyFolder`, `log.countRecords` and `log.holes` split over segments (issue 16): with `KLX_SCAN_SPLIT_MIN_BYTES=0`
 * the log worker thread running the job reads the partition's segments on the scan pool's threads
 * (threads started from a worker thread); the answer is the one-thread answer (`verifyJob`,
 * `countJob`, `holesJob` without a runner, in this thread), progress is reported and the job can be cancelled.
 */
process.env.KLX_SCAN_SPLIT_MIN_BYTES = '0';

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobProgressEvent, MethodName } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { countJob, holesJob, verifyJob } from '../../../src-main/api/log/log-jobs.ts';
import { verifyFolderJob } from '../../../src-main/api/log/log-folder-verify.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';

const CALL = { readOnly: true };
let server: ServerApi;
let root: string;

beforeAll(() => {
  root = tempDir('klx-verify-split-');
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
});

afterAll(async () => {
  await server.ctx.jobs.shutdown();
  rmSync(root, { recursive: true, force: true });
});

async function runJob(method: MethodName, req: unknown, cancelAtProgress = false): Promise<{ end: JobEndEvent; progress: JobProgressEvent[] }> {
  const progress: JobProgressEvent[] = [];
  let jobId = '';
  const off = server.ctx.events.subscribe((e) => {
    if (e.type === 'job.progress' && e.jobId === jobId) {
      progress.push(e);
      if (cancelAtProgress && e.done > 0) server.ctx.jobs.cancel(jobId);
    }
  });
  const env = await server.dispatch(method, req, CALL);
  if (!env.ok) throw new Error(env.error.message);
  jobId = (env.result as { jobId: string }).jobId;
  const end = await server.ctx.jobs.wait(jobId);
  off();
  return { end, progress };
}

const ten = (from: number) => Array.from({ length: 10 }, (_, i) => rec(`k${from + i}`, 'x'.repeat(200), 1000 + from + i));
const seg = (from: number, n: number) => ({ batches: Array.from({ length: n }, (_, b) => ({ baseOffset: BigInt(from + b * 10), records: ten(from + b * 10) })) });

describe('log.verify, log.countRecords and log.holes split over segments', () => {
  it('answers what one thread answers (a CRC failure in a middle segment, a torn tail), with progress', async () => {
    const dir = buildPartition(join(root, 'a'), { topic: 'orders', segments: [seg(0, 20), seg(200, 20), { ...seg(400, 20), tail: encodeBatch({ baseOffset: 600n, records: ten(600) }).subarray(0, 70) }] }, { recoveryPoint: 200n });
    const file = join(dir, `${'200'.padStart(20, '0')}.log`);
    const bytes = readFileSync(file);
    const third = [...scanLogFile(file)].flatMap((e) => (e.type === 'batch' ? [e.header.position] : []))[3]!;
    bytes[third + 80] ^= 1;
    writeFileSync(file, bytes);
    const opened = await server.dispatch('log.open', { path: join(root, 'a') }, CALL);
    expect(opened.ok).toBe(true);
    const { end, progress } = await runJob('log.verify', { dir, deep: true, limit: 5000 });
    expect(end.ok).toBe(true);
    const expected = await verifyJob(PartitionLog.open(dir), { dir, deep: true, limit: 5000 }, { jobId: '', readOnly: true, signal: new AbortController().signal, progress: () => {} }, { setVerify: () => {} });
    // The contract's answer has no damaged-batch totals (the CLI prints them).
    const { damagedBatches, damagedRecords, ...stats } = expected.stats as typeof expected.stats & { damagedBatches: number; damagedRecords: number };
    expect([damagedBatches, damagedRecords]).toEqual([1, 10]);
    expect(end.ok && end.result).toEqual({ ...expected, stats });
    expect(expected.findings.map((f) => f.code)).toEqual(expect.arrayContaining(['crc-mismatch', 'invalid-tail']));
    expect(progress.at(-1)).toMatchObject({ phase: 'verifying', done: expected.stats.bytes });
  }, 60_000);

  it('log.verifyFolder: the one-thread rows', async () => {
    const { end } = await runJob('log.verifyFolder', { dir: join(root, 'a', 'orders-0'), deep: true });
    expect(end.ok).toBe(true);
    const expected = await verifyFolderJob(join(root, 'a'), true, { signal: new AbortController().signal, progress: () => {} });
    expect(end.ok && end.result).toEqual(expected);
    expect(expected.partitions).toHaveLength(1);
    expect(expected.partitions[0]!.errors).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('log.countRecords: the one-thread counts, per segment too (a compacted-looking segment, an empty one, a log start inside a segment)', async () => {
    const dir = buildPartition(
      join(root, 'c'),
      { topic: 'counts', segments: [seg(0, 20), { baseOffset: 200n, batches: [{ baseOffset: 250n, records: ten(250) }, { baseOffset: 300n, records: [rec('a', 'b', 1)] }] }, { baseOffset: 320n, batches: [] }, seg(400, 20)] },
      { logStartOffset: 55n },
    );
    expect((await server.dispatch('log.open', { path: join(root, 'c') }, CALL)).ok).toBe(true);
    const { end, progress } = await runJob('log.countRecords', { dir });
    expect(end.ok).toBe(true);
    const expected = await countJob(PartitionLog.open(dir), { jobId: '', readOnly: true, signal: new AbortController().signal, progress: () => {} }, { setCounts: () => {} });
    expect(end.ok && end.result).toEqual(expected);
    expect(expected).toMatchObject({ records: 145 + 11 + 200, logStartOffset: '55' });
    expect(progress.at(-1)).toMatchObject({ phase: 'counting records', done: progress.at(-1)!.total });
  }, 60_000);

  it('log.holes: the one-thread holes, totals and buckets (transactions across segments, a missing segment)', async () => {
    const t = (o: number, pid: number) => ({ baseOffset: BigInt(o), producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [rec('t', 'x', o)] });
    const dir = buildPartition(join(root, 'h'), { topic: 'holes', segments: [{ batches: [...seg(0, 5).batches, t(50, 7)] }, { baseOffset: 51n, batches: [t(51, 8), ...seg(52, 3).batches] }, seg(100, 4)] });
    expect((await server.dispatch('log.open', { path: join(root, 'h') }, CALL)).ok).toBe(true);
    const req = { dir, limit: 1000, buckets: 16 };
    const { end } = await runJob('log.holes', req);
    expect(end.ok).toBe(true);
    const expected = await holesJob(PartitionLog.open(dir), req, { jobId: '', readOnly: true, signal: new AbortController().signal, progress: () => {} });
    expect(end.ok && end.result).toEqual(expected);
    expect(expected.holes.map((h) => h.cause)).toContain('missing-segment');
  }, 60_000);

  it('is cancelled', async () => {
    const dir = buildPartition(join(root, 'b'), { topic: 'big', segments: Array.from({ length: 8 }, (_, i) => seg(i * 6000, 600)) });
    expect((await server.dispatch('log.open', { path: join(root, 'b') }, CALL)).ok).toBe(true);
    const { end } = await runJob('log.verify', { dir, deep: true, limit: 5000 }, true);
    expect(end.ok).toBe(false);
    expect(!end.ok && end.error.code).toBe('cancelled');
  }, 60_000);
});
