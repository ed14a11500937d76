/**
 * Reading a partition by offset: fetch across compaction holes (B01, B02), log start offset and
 * OffsetOutOfRange (B10), counts vs offset span (B11), oversize batches (B17), cursors both ways
 * (property: paging forward then backward visits exactly the present offsets), budgets, damage.
 */
import { writeFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { encodeBatch, type RecordSpec } from '../../../src-main/engine/format/record-batch.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { countRecords, fetch, readBackward, readForward, recordAt, seek, type FetchedRecord } from '../../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { offsetForTimestamp } from '../../../src-main/engine/log/time-lookup.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput, type SegmentInput } from '../../support/log-builder.ts';

const offsets = (rs: FetchedRecord[]) => rs.map((r) => Number(r.offset));
const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('utf8'));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Single-record batches at explicit offsets. */
function at(...items: [number, string, string | null, number?][]): BatchInput[] {
  return items.map(([offset, key, value, ts]) => ({ baseOffset: BigInt(offset), records: [rec(key, value, ts ?? 1000)] }));
}

async function expectOutOfRange(p: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KlxError);
  expect((err as KlxError).code).toBe('offset-out-of-range');
  expect((err as KlxError).message).toMatch(message);
}

describe('B01: compaction leaves offset holes; the API exposes the real next offset', () => {
  // After compacting seg@0 = k1=a@0, k2=b@1, k2=c@2, k3=d@3: offset 1 is gone, nothing is renumbered.
  const dir = buildPartition(tempDir(), { segments: [{ batches: at([0, 'k1', 'a'], [2, 'k2', 'c'], [3, 'k3', 'd']) }, { batches: at([4, 'k4', 'e']) }] });
  const log = PartitionLog.open(dir);

  it('B01: browsing from offset 1 returns k2=c@2 first; log start 0, LEO 5', async () => {
    expect(log.logStartOffset).toBe(0n);
    expect(log.logEndOffset).toBe(5n);
    const r = await fetch(log, { offset: 1n });
    expect(offsets(r.records)).toEqual([2, 3, 4]);
    expect(text(r.records[0]!.key)).toBe('k2');
    expect(text(r.records[0]!.value)).toBe('c');
    expect(r.nextOffset).toBe(5n);
    expect(r.reachedLimit).toBe(true);
  });

  it('B01: the next offset after record 0 is 2, not 1', async () => {
    const r = await fetch(log, { offset: 0n, maxRecords: 1 });
    expect(offsets(r.records)).toEqual([0]);
    expect(r.nextOffset).toBe(2n);
    expect(await seek(log, 1n)).toBe(2n);
    expect(await recordAt(log, 1n)).toBeNull();
    expect(text((await recordAt(log, 2n))!.value)).toBe('c');
  });

  it('B01: a consumer that pages by nextOffset sees [0, 2, 3, 4] and never stalls', async () => {
    const seen: number[] = [];
    let next = 0n;
    for (let i = 0; i < 10; i++) {
      const r = await fetch(log, { offset: next, maxRecords: 1 });
      seen.push(...offsets(r.records));
      expect(r.nextOffset > next || r.reachedLimit).toBe(true);
      next = r.nextOffset;
      if (r.reachedLimit) break;
    }
    expect(seen).toEqual([0, 2, 3, 4]);
  });
});

describe('B02: a compacted batch keeps base and last offset; readers jump to base+lastOffsetDelta+1', () => {
  const keys = ['k0', 'k1', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'];
  const batchA: BatchInput = { baseOffset: 0n, lastOffsetDelta: 9, records: [{ offsetDelta: 2, key: 'k2', value: 'v2', timestamp: 1000n }], compression: 'lz4' };
  const batchB: BatchInput = { baseOffset: 10n, records: keys.map((k, i) => ({ offsetDelta: i, key: k, value: `w${i}`, timestamp: 2000n + BigInt(i) })) };
  const dir = buildPartition(tempDir(), { segments: [{ batches: [batchA, batchB] }, { batches: at([19, 'kz', 'z']) }] });
  const log = PartitionLog.open(dir);

  it('B02: browsing from 3 lands in batch A (0..9), finds nothing ≥ 3 there and continues at 10 with k0@10', async () => {
    const r = await fetch(log, { offset: 3n, maxRecords: 1 });
    expect(offsets(r.records)).toEqual([10]);
    expect(text(r.records[0]!.key)).toBe('k0');
    expect(r.records[0]!.batchBaseOffset).toBe(10n);
    expect(r.nextOffset).toBe(11n);
  });

  it('B02: with a budget that fits one batch, the fetch at 3 returns no record but moves to 10 (never loops at 3, never skips to the HW)', async () => {
    const r1 = await fetch(log, { offset: 3n, maxBytes: 1 });
    expect(r1.records).toEqual([]);
    expect(r1.batchesRead).toBe(1);
    expect(r1.nextOffset).toBe(10n);
    const r2 = await fetch(log, { offset: r1.nextOffset, maxBytes: 1 });
    expect(offsets(r2.records)).toEqual(range(10, 18));
    expect(r2.nextOffset).toBe(19n);
    const r3 = await fetch(log, { offset: r2.nextOffset, maxBytes: 1 });
    expect(offsets(r3.records)).toEqual([19]);
    expect(r3.nextOffset).toBe(20n);
    expect(r3.reachedLimit).toBe(true);
  });

  it('B02: from 0 the lz4 batch A yields k2@2 only; the record fields carry the batch facts', async () => {
    const r = await fetch(log, { offset: 0n, maxRecords: 2 });
    expect(offsets(r.records)).toEqual([2, 10]);
    expect(r.records[0]).toMatchObject({ batchBaseOffset: 0n, batchLastOffset: 9n, position: 0, segmentBaseOffset: 0n, compression: 'lz4', isControl: false, isTransactional: false, crcValid: true, timestamp: 1000n });
    expect(r.nextOffset).toBe(11n);
  });
});

describe('B10: log start offset and OffsetOutOfRange (read parts)', () => {
  const segAt = (from: number, to: number, ts: number): SegmentInput => ({ batches: range(from, to).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`, ts)] })) });

  it('B10: after retention deleted seg@0 and seg@100, offset 50 is out of range ("only have log segments starting from offset 200"); earliest 200, latest 211', async () => {
    const dir = buildPartition(tempDir(), { segments: [segAt(200, 210, 99900)] }, { logStartOffset: 200n });
    const log = PartitionLog.open(dir);
    await expectOutOfRange(fetch(log, { offset: 50n }), /Received request for offset 50 for partition test-0, but we only have log segments starting from offset: 200\./);
    await expectOutOfRange(fetch(log, { offset: 212n }), /but we only have log segments upto 211\./);
    expect((await fetch(log, { offset: 211n })).records).toEqual([]);
    expect((await offsetForTimestamp(log, -2n))!.offset).toBe(200n);
    expect((await offsetForTimestamp(log, -1n))!.offset).toBe(211n);
    expect(offsets((await fetch(log, { offset: 200n, maxRecords: 3 })).records)).toEqual([200, 201, 202]);
  });

  describe('B10: DeleteRecords variant: log-start-offset-checkpoint 150, cleanup.policy compact', () => {
    const dir = buildPartition(tempDir(), { segments: [segAt(0, 99, 1000), segAt(100, 199, 2000), segAt(200, 210, 99900)] }, { logStartOffset: 150n });
    const log = PartitionLog.open(dir, { config: { 'cleanup.policy': ['compact'] } });

    it('B10: browsing 120 gives OffsetOutOfRange', async () => {
      expect(log.logStartOffset).toBe(150n);
      await expectOutOfRange(fetch(log, { offset: 120n }), /only have log segments starting from offset: 150/);
      await expectOutOfRange(readForward(log, 149n, 5), /starting from offset: 150/);
    });

    it('B10: browsing 150 returns offset 150 and hides 100–149 of seg@100', async () => {
      const r = await fetch(log, { offset: 150n, maxRecords: 3 });
      expect(offsets(r.records)).toEqual([150, 151, 152]);
      const back = await readBackward(log, 160n, 50);
      expect(offsets(back.records)).toEqual(range(150, 159));
      expect(back.atStart).toBe(true);
      const counts = await countRecords(log);
      expect(counts).toMatchObject({ records: 61, offsetSpan: 61n, logStartOffset: 150n, logEndOffset: 211n });
    });
  });

  it('B10: reading up to the high watermark stops there (HW 150)', async () => {
    const dir = buildPartition(tempDir(), { segments: [segAt(0, 99, 1000), segAt(100, 199, 2000), segAt(200, 210, 99900)] }, { highWatermark: 150n });
    const log = PartitionLog.open(dir);
    const r = await fetch(log, { offset: 140n, readUpTo: 'high-watermark' });
    expect(offsets(r.records)).toEqual(range(140, 149));
    expect(r).toMatchObject({ nextOffset: 150n, readLimit: 150n, reachedLimit: true, highWatermark: 150n });
    expect(offsets((await fetch(log, { offset: 140n })).records)).toEqual(range(140, 210));
  });
});

describe('B11: compaction does not move the log start offset; record count is not the offset span', () => {
  const cleaned: SegmentInput = { baseOffset: 0n, batches: range(265, 300).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`)] })) };
  const active: SegmentInput = { batches: range(301, 310).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`)] })) };
  const dir = buildPartition(tempDir(), { segments: [cleaned, active] }, { logStartOffset: 0n });
  const log = PartitionLog.open(dir, { config: { 'cleanup.policy': ['compact'] } });

  it('B11: earliest is 0, reading from 0 returns 265 first, 46 records over a span of 311', async () => {
    expect((await offsetForTimestamp(log, -2n))!.offset).toBe(0n);
    const r = await fetch(log, { offset: 0n, maxRecords: 1 });
    expect(offsets(r.records)).toEqual([265]);
    const counts = await countRecords(log);
    expect(counts).toMatchObject({ records: 46, controlRecords: 0, batches: 46, emptyBatches: 0, offsetSpan: 311n, logStartOffset: 0n, logEndOffset: 311n });
  });

  it('B11: counting from inside a compacted batch decodes only that batch', async () => {
    const dir2 = buildPartition(tempDir(), { segments: [{ batches: [{ baseOffset: 0n, lastOffsetDelta: 9, records: [0, 4, 7, 9].map((d) => ({ offsetDelta: d, key: `k${d}`, value: 'v', timestamp: 1000n })) }, ...singles(rec('a', 'b'))] }] });
    const log2 = PartitionLog.open(dir2);
    expect((await countRecords(log2, { fromOffset: 5n })).records).toBe(3); // 7, 9, 10
    expect((await countRecords(log2, { fromOffset: 0n })).records).toBe(5);
  });
});

describe('B17: a batch larger than the fetch budget is returned whole', () => {
  const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
  const dir = buildPartition(tempDir(), { segments: [{ batches: [{ records: [{ key: 'k1', value: big, timestamp: 1000n }] }, ...singles(rec('k2', 'b'), rec('k1', 'c'))] }, { baseOffset: 3n, batches: [] }] });
  const log = PartitionLog.open(dir);

  it('B17: fetch from 0 with a 1 MiB budget returns the whole 3 MiB batch, then continues at 1', async () => {
    const r = await fetch(log, { offset: 0n, maxBytes: 1024 * 1024 });
    expect(offsets(r.records)).toEqual([0]);
    expect(r.records[0]!.value!.length).toBe(3 * 1024 * 1024);
    expect(Buffer.from(r.records[0]!.value!).equals(big)).toBe(true);
    expect(r.batchesRead).toBe(1);
    expect(r.bytesRead).toBe(r.records[0]!.batchSize);
    expect(r.bytesRead).toBeGreaterThan(3 * 1024 * 1024);
    expect(r.nextOffset).toBe(1n);
    const r2 = await fetch(log, { offset: r.nextOffset, maxBytes: 1024 * 1024 });
    expect(offsets(r2.records)).toEqual([1, 2]);
    expect(r2.nextOffset).toBe(3n);
    expect(r2.reachedLimit).toBe(true);
  });
});

describe('fetch budgets, arguments and damage', () => {
  const dir = buildPartition(tempDir(), { indexIntervalBytes: 200, segments: [{ batches: range(0, 59).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `value-${o}`.padEnd(40, '.'))] })) }] });
  const log = PartitionLog.open(dir);

  it('maxRecords cuts inside a batch at the next record', async () => {
    const d2 = buildPartition(tempDir(), { segments: [{ batches: [{ records: range(0, 9).map((i) => rec(`k${i}`, 'v')) }] }] });
    const r = await fetch(PartitionLog.open(d2), { offset: 2n, maxRecords: 3 });
    expect(offsets(r.records)).toEqual([2, 3, 4]);
    expect(r.nextOffset).toBe(5n);
    expect(r.reachedLimit).toBe(false);
  });

  it('starts from the offset index position: reading offset 50 does not read the first batches', async () => {
    expect(log.segments[0]!.offsetIndex().entries.length).toBeGreaterThan(5);
    const r = await fetch(log, { offset: 50n, maxRecords: 2 });
    expect(offsets(r.records)).toEqual([50, 51]);
    expect(r.records[0]!.position).toBeGreaterThan(0);
    expect(r.batchesRead).toBe(2);
  });

  it('rejects bad arguments with invalid-argument', async () => {
    await expect(fetch(log, { offset: 0n, maxRecords: 0 })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(fetch(log, { offset: 0n, maxBytes: -1 })).rejects.toMatchObject({ code: 'invalid-argument' });
    await expect(fetch(log, { offset: 0n, isolation: 'serializable' as never })).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('a cut batch in the middle is reported with file and position; the batches after it are still read', async () => {
    const bs = range(0, 4).map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, 'v')] }));
    const cut = bs[2]!.subarray(0, 30);
    const d3 = buildPartition(tempDir(), { segments: [{ batches: [bs[0]!, bs[1]!, cut, bs[3]!, bs[4]!] }, { batches: at([5, 'k5', 'v']) }] });
    const r = await fetch(PartitionLog.open(d3), { offset: 0n });
    expect(offsets(r.records)).toEqual([0, 1, 3, 4, 5]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ code: 'crc-mismatch', position: bs[0]!.length + bs[1]!.length, size: 30, file: join(d3, '00000000000000000000.log') });
    expect(r.problems[0]!.reason).toMatch(/not a valid batch/);
  });

  it('a stale index entry pointing inside a batch falls back to reading the segment from its start', async () => {
    const d4 = buildPartition(tempDir(), { segments: [{ batches: range(0, 9).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, 'v'.repeat(50))] })), noIndex: true }] });
    const idx = Buffer.alloc(8);
    idx.writeInt32BE(5, 0);
    idx.writeInt32BE(7, 4); // position 7 is inside the first batch
    writeFileSync(join(d4, '00000000000000000000.index'), idx);
    const r = await fetch(PartitionLog.open(d4), { offset: 6n, maxRecords: 2 });
    expect(offsets(r.records)).toEqual([6, 7]);
    expect(r.problems).toEqual([]);
  });

  it('a cancelled signal stops a read with code cancelled', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(fetch(log, { offset: 0n, signal: ac.signal })).rejects.toMatchObject({ code: 'cancelled' });
    await expect(countRecords(log, { signal: ac.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('countRecords reports progress in bytes of .log', async () => {
    const seen: number[] = [];
    const c = await countRecords(log, { onProgress: (p) => seen.push(p.done) });
    expect(c.records).toBe(60);
    expect(seen[seen.length - 1]).toBe(log.logSize);
  });

  it('a truncated active segment: LEO is after the last whole batch, the cut tail is reported', async () => {
    const d5 = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')) }] });
    const file = join(d5, '00000000000000000000.log');
    const whole = encodeBatch({ baseOffset: 0n, records: [rec('a', '1')] }).length;
    truncateSync(file, whole * 3 - 10);
    const log5 = PartitionLog.open(d5);
    expect(log5.logEndOffset).toBe(2n);
    const r = await fetch(log5, { offset: 0n });
    expect(offsets(r.records)).toEqual([0, 1]);
    expect(r.nextOffset).toBe(2n);
    expect(r.problems).toEqual([expect.objectContaining({ code: 'truncated-batch', position: whole * 2, size: whole - 10 })]);
  });
});

describe('control records and cursors', () => {
  it('control records are skipped (or flagged with includeControl) and the position moves past them', async () => {
    const marker = { isControl: true, isTransactional: true, producerId: 7n, producerEpoch: 0, records: [{ key: encodeControlKey(1), value: encodeEndTxnMarkerValue(0), timestamp: 1000n }] };
    const dir = buildPartition(tempDir(), { segments: [{ batches: [{ isTransactional: true, producerId: 7n, producerEpoch: 0, baseSequence: 0, records: [rec('k1', 'a'), rec('k2', 'b')] }, marker, ...singles(rec('k3', 'c'))] }] });
    const log = PartitionLog.open(dir);
    const r = await fetch(log, { offset: 0n, includeControl: true });
    expect(offsets(r.records)).toEqual([0, 1, 2, 3]);
    expect(r.records[2]).toMatchObject({ isControl: true, control: { type: 'COMMIT' } });
    const back = await readBackward(log, 4n, 2);
    expect(offsets(back.records)).toEqual([1, 3]);
    expect(back.prevOffset).toBe(1n);
  });

  it('readBackward jumps back by index entries and doubles the jump; forward and backward pages agree', async () => {
    const dir = buildPartition(tempDir(), {
      indexIntervalBytes: 300,
      segments: [
        { batches: range(0, 199).filter((o) => o % 7 !== 3).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`.repeat(5))] })) },
        { baseOffset: 200n, batches: range(205, 400).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`)] })) },
      ],
    });
    const log = PartitionLog.open(dir);
    const expected = [...range(0, 199).filter((o) => o % 7 !== 3), ...range(205, 400)];
    const page = await readBackward(log, 210n, 30);
    expect(offsets(page.records)).toEqual(expected.filter((o) => o < 210).slice(-30));
    expect(page.nextOffset).toBe(210n);
    expect(page.atStart).toBe(false);
    const fwd = await readForward(log, page.prevOffset, 30);
    expect(offsets(fwd.records)).toEqual(offsets(page.records));
    const all = await readBackward(log, log.logEndOffset, 10000);
    expect(offsets(all.records)).toEqual(expected);
    expect(all.atStart).toBe(true);
    expect(all.prevOffset).toBe(0n);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: paging forward, then backward, visits exactly the present offsets in order.

interface BatchModel {
  gap: number;
  span: number;
  kept: boolean[];
  codec: 'none' | 'gzip';
  control: boolean;
}

const batchModel = fc.record({
  gap: fc.integer({ min: 0, max: 3 }),
  span: fc.integer({ min: 1, max: 5 }),
  kept: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  codec: fc.constantFrom<'none' | 'gzip'>('none', 'gzip'),
  control: fc.integer({ min: 0, max: 9 }).map((x) => x < 2),
});
const partitionModel = fc.record({
  segments: fc.array(fc.array(batchModel, { minLength: 0, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
  logStartShift: fc.integer({ min: 0, max: 6 }),
  interval: fc.constantFrom(0, 80, 200, 4096),
});

function buildModel(m: { segments: BatchModel[][]; logStartShift: number; interval: number }): { dir: string; present: number[]; logStart: bigint } {
  let next = 0;
  const present: number[] = [];
  const segments: SegmentInput[] = [];
  for (const seg of m.segments) {
    const base = next;
    const batches: BatchInput[] = [];
    for (const b of seg) {
      const start = next + b.gap;
      if (b.control) {
        batches.push({ baseOffset: BigInt(start), isControl: true, isTransactional: true, producerId: 1n, producerEpoch: 0, records: [{ key: encodeControlKey(1), value: encodeEndTxnMarkerValue(0), timestamp: 1000n }] });
        next = start + 1;
        continue;
      }
      const deltas = b.kept.slice(0, b.span).flatMap((k, i) => (k ? [i] : []));
      const records: RecordSpec[] = deltas.map((d) => ({ offsetDelta: d, key: `k${start + d}`, value: `v${start + d}`, timestamp: BigInt(1000 + start + d) }));
      batches.push({ baseOffset: BigInt(start), lastOffsetDelta: b.span - 1, records, compression: records.length ? b.codec : 'none', maxTimestamp: 5000n });
      for (const d of deltas) present.push(start + d);
      next = start + b.span;
    }
    segments.push({ baseOffset: BigInt(base), batches });
    next += 1; // a gap between segments now and then shows up as a segment with a higher base
  }
  const firstBatchEnd = present.length ? present[0]! : 0;
  const logStart = BigInt(Math.min(m.logStartShift, firstBatchEnd));
  const dir = buildPartition(tempDir('klx-prop-'), { segments, indexIntervalBytes: m.interval || 1 }, { logStartOffset: logStart });
  return { dir, present: present.filter((o) => BigInt(o) >= logStart), logStart };
}

describe('cursors (property)', () => {
  it('paging forward then backward visits exactly the present offsets in order', async () => {
    await fc.assert(
      fc.asyncProperty(partitionModel, fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 7 }), async (m, nf, nb) => {
        const { dir, present, logStart } = buildModel(m);
        const log = PartitionLog.open(dir);
        expect(log.logStartOffset).toBe(logStart);
        const forward: number[] = [];
        let cursor = logStart;
        for (let i = 0; i < 500; i++) {
          const page = await readForward(log, cursor, nf);
          forward.push(...offsets(page.records));
          expect(page.records.length === nf || page.atEnd).toBe(true);
          cursor = page.nextOffset;
          if (page.atEnd) break;
        }
        expect(forward).toEqual(present);
        expect(cursor).toBe(log.logEndOffset);
        const backward: number[][] = [];
        cursor = log.logEndOffset;
        for (let i = 0; i < 500; i++) {
          const page = await readBackward(log, cursor, nb);
          backward.unshift(offsets(page.records));
          expect(page.records.length === nb || page.atStart).toBe(true);
          cursor = page.prevOffset;
          if (page.atStart) break;
        }
        expect(backward.flat()).toEqual(present);
        // The same through fetch with a tiny byte budget (one batch per call).
        const viaFetch: number[] = [];
        cursor = logStart;
        for (let i = 0; i < 500; i++) {
          const r = await fetch(log, { offset: cursor, maxBytes: 1 });
          viaFetch.push(...offsets(r.records));
          expect(r.nextOffset > cursor || r.reachedLimit).toBe(true);
          cursor = r.nextOffset;
          if (r.reachedLimit) break;
        }
        expect(viaFetch).toEqual(present);
      }),
      { numRuns: 60 },
    );
  });
});
