/**
 * `verifyPartitionInParallel` (issue 16): a partition's segments verified on several threads give
 * exactly the one-thread report (`verifyPartition`): same findings, same order, same texts, same
 * counts and totals. On real broker data and on generated multi-segment partitions with damage in
 * the middle (a CRC failure, a zero region), a torn tail, an offset gap and overlapping segments
 * between segments, and transactions left open across a roll. Segments finish out of order on
 * purpose (random delays); the real pool (worker threads from source) is checked too, with cancel.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import type { SegmentTaskRunner } from '../../../src-main/engine/log/segment-tasks.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { verifyPartitionInParallel, verifySegmentTask } from '../../../src-main/engine/log/verify-parallel.ts';
import { closeScanPool, scanRunner } from '../../../src-main/api/log/scan-pool.ts';
import { inThisThread as inThisThreadRunner } from '../../support/segment-runner.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';

const dirs: string[] = [];
function logDir(): string {
  const d = tempDir('klx-verify-par-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(() => closeScanPool());

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

const inThisThread = (threads: number, seed = 1) => inThisThreadRunner('verifySegment', verifySegmentTask, threads, seed);

/** Both reports, deep-equal, and the one-thread one. */
async function same(dir: string, runner: SegmentTaskRunner, deep = true) {
  const one = await verifyPartition(PartitionLog.open(dir), { deep });
  const par = await verifyPartitionInParallel(PartitionLog.open(dir), { deep, runner, minBytes: 0 });
  expect(par).toEqual(one);
  return one;
}

const batchesOf = (file: string) => [...scanLogFile(file)].flatMap((e) => (e.type === 'batch' ? [e.header] : []));
const tenRecords = (from: number) => Array.from({ length: 10 }, (_, i) => rec(`k${from + i}`, 'x'.repeat(200), 1000 + from + i));

/** Five segments of ten-record batches; damage: a CRC flip in segment 100, zeros inserted in segment 200, an offset gap before 400, a torn tail on the active one. */
function damagedPartition(): string {
  const root = logDir();
  const seg = (from: number, n = 10) => ({ batches: Array.from({ length: n }, (_, b) => ({ baseOffset: BigInt(from + b * 10), records: tenRecords(from + b * 10) })) });
  const dir = buildPartition(root, { segments: [seg(0), seg(100), seg(200), seg(300, 5), { ...seg(400), tail: encodeBatch({ baseOffset: 500n, records: tenRecords(500) }).subarray(0, 90) }] }, { recoveryPoint: 300n, highWatermark: 500n });
  const crc = join(dir, name(100, '.log'));
  const b1 = readFileSync(crc);
  b1[batchesOf(crc)[4]!.position + 120] ^= 0x20;
  writeFileSync(crc, b1);
  const zeros = join(dir, name(200, '.log'));
  const b2 = readFileSync(zeros);
  const at = batchesOf(zeros)[6]!.position;
  writeFileSync(zeros, Buffer.concat([b2.subarray(0, at), Buffer.alloc(64), b2.subarray(at)]));
  return dir;
}

const txn = (base: number, pid: number) => ({ baseOffset: BigInt(base), producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [rec('k', 'v', base)] });
const marker = (base: number, pid: number, type: 'ABORT' | 'COMMIT') => ({ baseOffset: BigInt(base), producerId: BigInt(pid), producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(3), timestamp: BigInt(base) }] });

describe('verifyPartitionInParallel: the one-thread report, exactly', () => {
  it('damage in middle segments, a zero region, an offset gap between segments and a torn tail', async () => {
    const dir = damagedPartition();
    for (const threads of [2, 3, 5]) {
      const runner = inThisThread(threads, threads);
      const one = await same(dir, runner);
      expect(runner.calls).toBe(5); // no segment scanned twice
      expect(one.findings.map((f) => f.code)).toEqual(expect.arrayContaining(['crc-mismatch', 'corrupt-region', 'invalid-tail']));
      expect(one.stats).toMatchObject({ segments: 5, damagedBatches: 1, damagedRecords: 10 });
    }
    await same(dir, inThisThread(2), false);
  });

  it('overlapping segments and offsets going back: those segments are scanned again from the true context', async () => {
    const root = logDir();
    const dir = buildPartition(root, {
      segments: [
        { baseOffset: 0n, batches: [{ baseOffset: 0n, records: [rec('a', '1', 1)] }, { baseOffset: 5n, records: [rec('b', '2', 2)] }, { baseOffset: 3n, records: [rec('c', '3', 3)] }] },
        { baseOffset: 10n, batches: [{ baseOffset: 5n, records: [rec('d', '4', 4)] }, { baseOffset: 12n, records: [rec('e', '5', 5)] }], noIndex: true, noTimeIndex: true },
        { baseOffset: 12n, batches: [{ baseOffset: 12n, records: [rec('f', '6', 6)] }, { baseOffset: 30n, records: [rec('g', '7', 7)] }] },
        { baseOffset: 40n, batches: [{ baseOffset: 40n, records: [rec('h', '8', 8)] }] },
      ],
    });
    const runner = inThisThread(3);
    const one = await same(dir, runner);
    expect(one.findings.filter((f) => f.code === 'segments-overlap').map((f) => f.file.slice(-24))).toEqual([name(10, '.log'), name(12, '.log')]);
    expect(one.findings.some((f) => f.code === 'offset-below-segment-base')).toBe(true);
    expect(runner.calls).toBe(6); // segments 10 and 12 again
  });

  it('transactions open across a roll: first offsets and last stable offsets of the ABORT markers as one thread computes them', async () => {
    const root = logDir();
    // Producer 1 starts at 0 (segment 0), producer 2 at 1; segment 3 aborts 1 (LSO held back by 2's open
    // transaction: 1) and commits 2; producer 1 starts again and aborts in segment 6; producer 3 opens in
    // segment 3 and aborts in segment 8 with producer 1... A wrong and a missing .txnindex entry give findings.
    const dir = buildPartition(root, {
      segments: [
        { batches: [txn(0, 1), txn(1, 2), txn(2, 1)] },
        { batches: [txn(3, 3), marker(4, 1, 'ABORT'), txn(5, 1), marker(6, 2, 'COMMIT')], txnIndex: [{ producerId: 1n, firstOffset: 0n, lastOffset: 4n, lastStableOffset: 1n }] },
        { batches: [txn(7, 2), marker(8, 1, 'ABORT'), marker(9, 3, 'ABORT')], txnIndex: [{ producerId: 1n, firstOffset: 5n, lastOffset: 8n, lastStableOffset: 7n }] },
        { batches: [marker(10, 2, 'ABORT'), txn(11, 1)] },
      ],
    });
    const one = await same(dir, inThisThread(2));
    await same(dir, inThisThread(4, 9));
    // Segment 3's entry is right (first 0: the transaction began a segment earlier; LSO 1: producer 2's), so no finding names it.
    expect(one.findings.filter((f) => f.code.startsWith('txn-index')).map((f) => [f.code, f.file.slice(-29), f.details.markerOffset ?? null])).toEqual([
      ['txn-index-entry-mismatch', name(7, '.txnindex'), 8],
      ['txn-index-missing-entry', name(7, '.txnindex'), 9],
      ['txn-index-missing-entry', name(10, '.txnindex'), 10],
    ]);
  });
});

describeRealData('verifyPartitionInParallel on real broker data', () => {
  it('every partition of every data set with two segments or more: the one-thread report', async () => {
    let checked = 0;
    for (const c of realDataCases()) {
      for (const { log } of allPartitions(openPath(join(REAL_DATA, c)))) {
        if (log.segments.length < 2) continue;
        await same(log.dir, inThisThread(2, checked + 3));
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

describe('verifyPartitionInParallel on the scan pool (worker threads)', () => {
  it('gives the same report, reports progress, and cancels', async () => {
    const dir = damagedPartition();
    const runner = scanRunner();
    expect(runner.threads).toBeGreaterThanOrEqual(1);
    const pool = { ...runner, threads: 2 };
    const seen: number[] = [];
    const one = await verifyPartition(PartitionLog.open(dir));
    const par = await verifyPartitionInParallel(PartitionLog.open(dir), { runner: pool, minBytes: 0, onProgress: (p) => seen.push(p.bytesDone) });
    expect(par).toEqual(one);
    expect(seen.at(-1)).toBe(one.stats.bytes);

    const big = buildPartition(logDir(), { segments: Array.from({ length: 4 }, (_, s) => ({ batches: Array.from({ length: 400 }, (_, b) => ({ baseOffset: BigInt(s * 4000 + b * 10), records: tenRecords(s * 4000 + b * 10) })) })) });
    const ac = new AbortController();
    const run = verifyPartitionInParallel(PartitionLog.open(big), { runner: pool, minBytes: 0, signal: ac.signal, onProgress: () => ac.abort() });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
  }, 60_000);
});
