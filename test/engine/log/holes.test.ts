/**
 * Offset holes: each cause on a built partition (compaction between and inside batches, control
 * records, aborted transactions, empty batches, below the log start offset, missing segments,
 * damage in the middle and at the tail), streaming with progress and cancellation, and every real
 * data set: the holes are exactly the offsets in [logStartOffset, LEO) that EXPECTED.jsonl lists no
 * data record for (computed here independently from EXPECTED.jsonl, file names and checkpoints).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { findHoles, scanHoles, type OffsetHole } from '../../../src-main/engine/log/holes.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput, type SegmentInput } from '../../support/log-builder.ts';
import { describeRealData, expectedBatches, REAL_DATA, realDataCases } from '../../support/real-data.ts';

/** Holes as `[from, to, cause]` tuples (numbers). */
const brief = (hs: OffsetHole[]) => hs.map((h) => [Number(h.from), Number(h.to), h.cause]);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const singleAt = (o: number, key = `k${o}`): BatchInput => ({ baseOffset: BigInt(o), records: [rec(key, `v${o}`)] });

function txn(pid: number, baseOffset: number, n: number): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: range(1, n).map((i) => rec(`t${i}`, 'x')) };
}
function marker(pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput {
  return { baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(0), timestamp: 1000n }] };
}

describe('hole causes', () => {
  it('B01: compaction removed batch 1 of seg@0: one hole [1,1] compacted-between-batches', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: [singleAt(0), singleAt(2), singleAt(3)] }, { batches: [singleAt(4)] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([[1, 1, 'compacted-between-batches']]);
    expect(r.missingOffsets).toBe(1n);
    expect(r.offsetSpan).toBe(5n);
  });

  it('B02: a rewritten batch (0..9 keeping 2) gives compacted-in-batch holes [0,1] and [3,9]; the dense batch B is not decoded', async () => {
    const a: BatchInput = { baseOffset: 0n, lastOffsetDelta: 9, compression: 'gzip', records: [{ offsetDelta: 2, key: 'k2', value: 'v', timestamp: 1000n }] };
    const b: BatchInput = { baseOffset: 10n, records: range(0, 8).map((i) => ({ offsetDelta: i, key: `k${i}`, value: 'w', timestamp: 1000n })) };
    const dir = buildPartition(tempDir(), { segments: [{ batches: [a, b] }, { batches: [singleAt(19)] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([
      [0, 1, 'compacted-in-batch'],
      [3, 9, 'compacted-in-batch'],
    ]);
    expect(r.holes[1]!.detail).toMatch(/inside batch 0\.\.9 at position 0: compaction kept 1 of its 10 offsets/);
    expect(r.holes[1]).toMatchObject({ count: 7n, segmentBaseOffset: 0n, position: 0 });
  });

  it('B11: the cleaned first segment starts at 265: [0,264] compacted-between-batches; log start stays 0', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: range(265, 300).map((o) => singleAt(o)) }, { batches: range(301, 310).map((o) => singleAt(o)) }] }, { logStartOffset: 0n });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([[0, 264, 'compacted-between-batches']]);
    expect(r.holes[0]!.detail).toMatch(/between the base offset of segment 0 and its first batch 265/);
    expect(r).toMatchObject({ missingOffsets: 265n, offsetSpan: 311n, logStartOffset: 0n, logEndOffset: 311n });
  });

  it('B14/B15: control records, aborted transactions (from the markers), the empty aborted transaction', async () => {
    const segments: SegmentInput[] = [
      { batches: [txn(5, 0, 2), marker(9, 'ABORT', 2), marker(5, 'ABORT', 3), txn(5, 4, 1), marker(5, 'COMMIT', 5), txn(6, 6, 2), marker(6, 'ABORT', 8)] },
      { batches: [singleAt(9), txn(11, 10, 1)] },
    ];
    for (const withIndex of [true, false]) {
      if (withIndex) segments[0]!.txnIndex = [{ producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n }, { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n }];
      else delete segments[0]!.txnIndex;
      const dir = buildPartition(tempDir(), { segments });
      const r = await findHoles(PartitionLog.open(dir));
      expect(brief(r.holes)).toEqual([
        [0, 1, 'aborted-transaction'],
        [2, 3, 'control-record'],
        [5, 5, 'control-record'],
        [6, 7, 'aborted-transaction'],
        [8, 8, 'control-record'],
      ]);
      expect(r.holes[1]!.detail).toMatch(/ABORT marker of producer 9 .*and 1 more adjacent/);
      expect(r.holes[0]!.detail).toMatch(/aborted transaction of producer 5/);
      expect(r.totals['control-record']).toEqual({ ranges: 3, offsets: 4n });
      expect(r.totals['aborted-transaction']).toEqual({ ranges: 2, offsets: 4n });
      expect(r.missingOffsets).toBe(8n); // 11 offsets; 4, 9 and the open transaction's 10 hold data
    }
  });

  it('a retained empty batch: empty-batch hole over its span (spec §15.6)', async () => {
    const empty: BatchInput = { baseOffset: 100n, lastOffsetDelta: 4, records: [], isTransactional: true, producerId: 1000n, producerEpoch: 0, baseSequence: 7, maxTimestamp: 1700000000050n, partitionLeaderEpoch: 2 };
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 100n, batches: [empty, singleAt(105)] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([[100, 104, 'empty-batch']]);
    expect(r.holes[0]!.detail).toMatch(/retained empty batch 100\.\.104 at position 0 \(recordsCount 0\), transactional, producer 1000/);
  });

  it('B10: DeleteRecords to 150 with seg@0 still on disk: below-log-start [0,149]', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: range(0, 99).map((o) => singleAt(o)) }, { batches: range(100, 199).map((o) => singleAt(o)) }, { batches: range(200, 210).map((o) => singleAt(o)) }] }, { logStartOffset: 150n });
    const r = await findHoles(PartitionLog.open(dir, { config: { 'cleanup.policy': ['compact'] } }));
    expect(brief(r.holes)).toEqual([[0, 149, 'below-log-start']]);
    expect(r.missingOffsets).toBe(0n); // below the log start: outside [logStartOffset, LEO)
  });

  it('a deleted middle segment: missing-segment on a delete topic, compacted-between-batches on a compacted one', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: range(0, 9).map((o) => singleAt(o)) }, { baseOffset: 20n, batches: range(20, 29).map((o) => singleAt(o)) }] });
    const del = await findHoles(PartitionLog.open(dir));
    expect(brief(del.holes)).toEqual([[10, 19, 'missing-segment']]);
    expect(del.holes[0]).toMatchObject({ segmentBaseOffset: 0n });
    expect(del.holes[0]!.detail).toMatch(/between segment 0 \(ends at 10\) and segment 20/);
    const cmp = await findHoles(PartitionLog.open(dir, { config: { 'cleanup.policy': ['compact', 'delete'] } }));
    expect(brief(cmp.holes)).toEqual([[10, 19, 'compacted-between-batches']]);
  });

  it('damage in the middle of a closed segment: corrupt-region over the offsets it swallowed', async () => {
    const bs = range(0, 5).map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, 'value')] }));
    const dir = buildPartition(tempDir(), { segments: [{ batches: [bs[0]!, bs[1]!, bs[2]!.subarray(0, 40), bs[3]!.subarray(0, 50), bs[4]!, bs[5]!] }, { batches: [singleAt(6)] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([[2, 3, 'corrupt-region']]);
    expect(r.holes[0]).toMatchObject({ position: bs[0]!.length + bs[1]!.length, segmentBaseOffset: 0n });
    expect(r.holes[0]!.detail).toMatch(/90 bytes at position \d+ of .*00000000000000000000\.log are not batches/);
  });

  it('a cut batch at the end of the active segment: truncated-tail with the offsets its header claims, past the LEO', async () => {
    const last = encodeBatch({ baseOffset: 3n, records: range(0, 4).map((i) => rec(`k${i}`, 'v')) });
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')), tail: last.subarray(0, 70) }] });
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(3n);
    const r = await findHoles(log);
    expect(brief(r.holes)).toEqual([[3, 7, 'truncated-tail']]);
    expect(r.holes[0]!.detail).toMatch(/70 bytes at position \d+ .* the cut batch claims offsets 3\.\.7, past the log end offset 3/);
    expect(r.missingOffsets).toBe(0n);
  });

  it('a zero-filled tail (preallocated or crashed) is reported with no offsets', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1')), tail: Buffer.alloc(4096) }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(r.holes).toHaveLength(1);
    expect(r.holes[0]).toMatchObject({ from: 1n, to: 0n, count: 0n, cause: 'truncated-tail', position: 70 });
    expect(r.holes[0]!.detail).toMatch(/4096 bytes .*all zero bytes/);
  });

  it('the damaged tail of a closed segment explains the gap to the next segment', async () => {
    const cut = encodeBatch({ baseOffset: 2n, records: [rec('x', 'y'), rec('z', 'w')] }).subarray(0, 40);
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2')), tail: cut }, { baseOffset: 4n, batches: [singleAt(4)] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(brief(r.holes)).toEqual([[2, 3, 'truncated-tail']]);
  });

  it('streams holes in order with progress, and stops with code cancelled', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: range(0, 999).filter((o) => o % 3 === 0).map((o) => singleAt(o)) }] });
    const log = PartitionLog.open(dir);
    const progress: number[] = [];
    const seen: OffsetHole[] = [];
    for await (const h of scanHoles(log, { onProgress: (p) => progress.push(p.done) })) seen.push(h);
    expect(seen).toHaveLength(333);
    expect(seen.every((h, i) => i === 0 || h.from > seen[i - 1]!.to)).toBe(true);
    expect(progress[progress.length - 1]).toBe(log.logSize);
    const ac = new AbortController();
    ac.abort();
    await expect(findHoles(log, { signal: ac.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('an empty partition folder (one 0-byte segment) has no holes', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 16n, batches: [] }] });
    const r = await findHoles(PartitionLog.open(dir));
    expect(r).toMatchObject({ holes: [], missingOffsets: 0n, logStartOffset: 16n, logEndOffset: 16n });
  });
});

// ---------------------------------------------------------------------------------------------
// Real data: holes = [logStartOffset, LEO) minus the data record offsets of EXPECTED.jsonl.

/** logStartOffset from the log dir's checkpoint file and the segment file names (spec §10.4), read here without the engine. */
function independentLogStart(partitionDir: string, bases: bigint[]): bigint {
  const name = basename(partitionDir);
  const cut = name.lastIndexOf('-');
  const topic = name.slice(0, cut);
  const partition = name.slice(cut + 1);
  const file = join(dirname(partitionDir), 'log-start-offset-checkpoint');
  let cp = -1n;
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(2)) {
      const f = line.trim().split(/\s+/);
      if (f.length === 3 && f[0] === topic && f[1] === partition) cp = BigInt(f[2]!);
    }
  }
  return cp > bases[0]! ? cp : bases[0]!;
}

describeRealData('holes of every real data set equal [logStartOffset, LEO) minus the data records of EXPECTED.jsonl', () => {
  for (const c of realDataCases()) {
    it(c, async () => {
      const batchesByFile = new Map<string, Record<string, unknown>[]>();
      for (const b of expectedBatches(c)) {
        const list = batchesByFile.get(String(b.file)) ?? [];
        list.push(b);
        batchesByFile.set(String(b.file), list);
      }
      let partitions = 0;
      let holesSeen = 0;
      for (const { rel, log } of allPartitions(openPath(join(REAL_DATA, c)))) {
        const pdir = join(REAL_DATA, c, rel);
        const logs = readdirSync(pdir).filter((n) => /^\d{20}\.log$/.test(n)).sort();
        if (logs.length === 0) continue;
        const bases = logs.map((n) => BigInt(n.slice(0, 20)));
        const data = new Set<number>();
        let leo = bases[bases.length - 1]!;
        for (const n of logs) {
          for (const b of batchesByFile.get(`${rel}/${n}`) ?? []) {
            if (!b.isControl) for (const r of b.records as { offset: number }[]) data.add(r.offset);
            if (n === logs[logs.length - 1]) leo = BigInt(b.lastOffset as number) + 1n;
          }
        }
        const logStart = independentLogStart(pdir, bases);
        expect([log.logStartOffset, log.logEndOffset], rel).toEqual([logStart, leo]);
        const expected: [number, number][] = [];
        for (let o = Number(logStart); o < Number(leo); o++) {
          if (data.has(o)) continue;
          const last = expected[expected.length - 1];
          if (last && last[1] === o - 1) last[1] = o;
          else expected.push([o, o]);
        }
        const report = await findHoles(log);
        const got: [number, number][] = [];
        for (const h of report.holes) {
          const lo = Math.max(Number(h.from), Number(logStart));
          const hi = Math.min(Number(h.to), Number(leo) - 1);
          if (hi < lo) continue;
          const last = got[got.length - 1];
          if (last && last[1] === lo - 1) last[1] = hi;
          else got.push([lo, hi]);
          expect(['compacted-between-batches', 'compacted-in-batch', 'control-record'], `${rel} ${h.from}..${h.to}`).toContain(h.cause);
        }
        expect(got, rel).toEqual(expected);
        expect(report.missingOffsets, rel).toBe(BigInt(expected.reduce((s, [a, b]) => s + b - a + 1, 0)));
        partitions++;
        holesSeen += report.holes.length;
      }
      expect(partitions).toBeGreaterThan(0);
      if (c === 'kafka-2.7.1-compacted-offsets') expect(holesSeen).toBe(3);
    });
  }

  it('kafka-2.7.1-compacted-offsets __consumer_offsets-39: holes [0,3] and [5,15] between batches of the cleaned segment', async () => {
    const log = PartitionLog.open(join(REAL_DATA, 'kafka-2.7.1-compacted-offsets', '__consumer_offsets-39'));
    const r = await findHoles(log);
    expect(brief(r.holes)).toEqual([
      [0, 3, 'compacted-between-batches'],
      [5, 15, 'compacted-between-batches'],
    ]);
    expect(r).toMatchObject({ missingOffsets: 15n, logStartOffset: 0n, logEndOffset: 20n });
  });

  it('kraft-metadata-small: the LEADER_CHANGE control record at 0 is a control-record hole', async () => {
    const log = PartitionLog.open(join(REAL_DATA, 'kraft-metadata-small', '__cluster_metadata-0'));
    const r = await findHoles(log);
    expect(brief(r.holes)).toEqual([[0, 0, 'control-record']]);
    expect(r.holes[0]!.detail).toMatch(/LEADER_CHANGE/);
  });
});
