/**
 * `scanHolesInParallel` (issue 16): a partition's holes walked segment by segment on several threads
 * are exactly `scanHoles`'s (same ranges, causes, details, order). Generated multi-segment partitions
 * with transactions aborted and committed segments later, a batch compacted inside, a corrupt region,
 * a torn tail in a middle segment and at the end, a missing segment, overlapping segments (walked
 * again from the true cursor), a log start inside a later segment, a batch past the log end in a
 * middle segment (the walk stops there); and every real broker data set with two segments or more.
 * Segments finish out of order on purpose.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { holesSegmentTask, scanHoles, scanHolesInParallel } from '../../../src-main/engine/log/holes.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import type { SegmentTaskRunner } from '../../../src-main/engine/log/segment-tasks.ts';
import { closeScanPool, scanRunner } from '../../../src-main/api/log/scan-pool.ts';
import { inThisThread as inThisThreadRunner } from '../../support/segment-runner.ts';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';

const dirs: string[] = [];
function logDir(): string {
  const d = tempDir('klx-holes-par-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(() => closeScanPool());

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

const inThisThread = (threads: number, seed = 1) => inThisThreadRunner('holesSegment', holesSegmentTask, threads, seed);

async function collect(gen: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

/** Both walks' holes, deep-equal; the one-thread list. */
async function same(dir: string, runner: SegmentTaskRunner) {
  const one = await collect(scanHoles(PartitionLog.open(dir)));
  const par = await collect(scanHolesInParallel(PartitionLog.open(dir), { runner, minBytes: 0 }));
  expect(par).toEqual(one);
  return one as { from: bigint; to: bigint; cause: string }[];
}

const brief = (hs: { from: bigint; to: bigint; cause: string }[]) => hs.map((h) => [Number(h.from), Number(h.to), h.cause]);
const single = (o: number): BatchInput => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, 'v'.repeat(50), 1000 + o)] });
const txn = (o: number, pid: number): BatchInput => ({ baseOffset: BigInt(o), producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [rec('t', 'x', 1000 + o)] });
const marker = (o: number, pid: number, type: 'ABORT' | 'COMMIT'): BatchInput => ({ baseOffset: BigInt(o), producerId: BigInt(pid), producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(0), timestamp: BigInt(1000 + o) }] });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => single(from + i));

describe('scanHolesInParallel: the one-thread holes, exactly', () => {
  it('transactions ended segments later, compaction inside a batch, a corrupt region, torn tails, a missing segment', async () => {
    const root = logDir();
    const dir = buildPartition(root, {
      segments: [
        { batches: [...range(0, 3), txn(3, 1), txn(4, 2), single(5), { baseOffset: 6n, lastOffsetDelta: 5, records: [{ offsetDelta: 2, key: 'k', value: 'v', timestamp: 1000n }] }] },
        { batches: [txn(12, 1), ...range(13, 16), marker(16, 2, 'COMMIT'), txn(17, 3)], tail: encodeBatch({ baseOffset: 18n, records: [rec('a', 'b', 1)] }).subarray(0, 40) },
        { baseOffset: 30n, batches: [...range(30, 36), txn(36, 2), marker(37, 1, 'ABORT'), ...range(38, 45)] },
        { baseOffset: 60n, batches: [...range(60, 70), marker(70, 2, 'ABORT'), txn(71, 4)], tail: encodeBatch({ baseOffset: 72n, records: [rec('c', 'd', 2)] }).subarray(0, 50) },
      ],
    });
    const z = join(dir, name(30, '.log'));
    const bytes = readFileSync(z);
    const b3 = [...scanLogFile(z)].flatMap((e) => (e.type === 'batch' ? [e.header] : []))[3]!;
    bytes.fill(0x55, b3.position, b3.position + b3.size);
    writeFileSync(z, bytes);
    for (const threads of [2, 3, 5]) {
      const runner = inThisThread(threads, threads);
      const one = await same(dir, runner);
      expect(runner.calls).toBe(4);
      expect(brief(one)).toEqual([
        [3, 3, 'aborted-transaction'],
        [6, 7, 'compacted-in-batch'],
        [9, 11, 'compacted-in-batch'],
        [12, 12, 'aborted-transaction'],
        [16, 16, 'control-record'],
        [18, 29, 'truncated-tail'],
        [33, 33, 'corrupt-region'],
        [36, 36, 'aborted-transaction'],
        [37, 37, 'control-record'],
        [45, 59, 'missing-segment'],
        [70, 70, 'control-record'],
        [72, 72, 'truncated-tail'],
      ]);
    }
  });

  it('overlapping segments are walked again from the true cursor; a log start inside a later segment; a batch past the log end stops the walk', async () => {
    const root = logDir();
    const dir = buildPartition(
      root,
      {
        segments: [
          { batches: range(0, 10) },
          { baseOffset: 10n, batches: range(10, 20) },
          { baseOffset: 15n, batches: [...range(15, 18), ...range(22, 25)], noIndex: true, noTimeIndex: true },
          { baseOffset: 25n, batches: range(25, 40) },
        ],
      },
      { logStartOffset: 12n },
    );
    const runner = inThisThread(2);
    const one = await same(dir, runner);
    expect(runner.calls).toBe(4); // segments 10, 15 (again), 25: segment 0 lies below the log start
    expect(brief(one)[0]).toEqual([0, 11, 'below-log-start']);

    const stop = buildPartition(logDir(), { segments: [{ batches: range(0, 10) }, { baseOffset: 10n, batches: [...range(10, 12), single(500)] }, { baseOffset: 20n, batches: range(20, 30) }] });
    await same(stop, inThisThread(3));
  });
});

describeRealData('scanHolesInParallel on real broker data', () => {
  it('every partition with two segments or more: the one-thread holes', async () => {
    let checked = 0;
    for (const c of realDataCases()) {
      for (const { log } of allPartitions(openPath(join(REAL_DATA, c)))) {
        if (log.segments.length < 2) continue;
        await same(log.dir, inThisThread(2, checked + 5));
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

describe('scanHolesInParallel on the scan pool (worker threads)', () => {
  it('gives the same holes and cancels', async () => {
    const dir = buildPartition(logDir(), { segments: [{ batches: [...range(0, 5), txn(5, 1)] }, { batches: [...range(6, 9), marker(9, 1, 'ABORT')] }, { baseOffset: 20n, batches: range(20, 25) }] });
    const pool = { ...scanRunner(), threads: 2 };
    expect(await collect(scanHolesInParallel(PartitionLog.open(dir), { runner: pool, minBytes: 0 }))).toEqual(await collect(scanHoles(PartitionLog.open(dir))));
    const ac = new AbortController();
    ac.abort();
    await expect(collect(scanHolesInParallel(PartitionLog.open(dir), { runner: pool, minBytes: 0, signal: ac.signal }))).rejects.toMatchObject({ code: 'cancelled' });
  }, 60_000);
});
