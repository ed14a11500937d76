/**
 * Offset by timestamp (B20): out-of-order timestamps, a target beyond a segment's maximum, a target
 * beyond every timestamp, and the log start offset; EARLIEST / LATEST; how a segment's largest
 * timestamp is found (time index, batches, mtime) and the real data sets.
 */
import { rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets, offsetForTimestamp, segmentLargestTimestamp } from '../../../src-main/engine/log/time-lookup.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, expectedBatches, REAL_DATA } from '../../support/real-data.ts';

/** B20: closed seg@0 = o0 ts 1000, o1 ts 5000, o2 ts 2000; active seg@3 = o3 ts 6000, o4 ts 5500. */
function b20(logStartOffset?: bigint): string {
  return buildPartition(
    tempDir(),
    { segments: [{ batches: singles(rec('o0', 'a', 1000), rec('o1', 'b', 5000), rec('o2', 'c', 2000)) }, { batches: singles(rec('o3', 'd', 6000), rec('o4', 'e', 5500)) }] },
    logStartOffset === undefined ? {} : { logStartOffset },
  );
}

const lookup = async (log: PartitionLog, t: bigint) => {
  const r = await offsetForTimestamp(log, t);
  return r === null ? null : [Number(r.offset), Number(r.timestamp)];
};

describe('B20: time-to-offset lookups', () => {
  const dir = b20();
  const log = PartitionLog.open(dir);

  it('B20: seg@0.timeindex holds the single increasing entry (5000 → rel 1)', () => {
    const ti = readTimeIndex(join(dir, '00000000000000000000.timeindex'));
    expect(ti.entries.map((e) => [Number(e.timestamp), e.relativeOffset])).toEqual([[5000, 1]]);
    expect(ti.fileSize).toBe(12);
  });

  it('B20: t=500 → o0', async () => {
    expect(await lookup(log, 500n)).toEqual([0, 1000]);
  });

  it('B20: t=2000 → o1, the first record in offset order with ts ≥ target, not o2', async () => {
    expect(await lookup(log, 2000n)).toEqual([1, 5000]);
  });

  it('B20: t=5000 → o1', async () => {
    expect(await lookup(log, 5000n)).toEqual([1, 5000]);
  });

  it('B20: t=5200 → o3, because seg@0’s largest timestamp 5000 is below it', async () => {
    expect(await lookup(log, 5200n)).toEqual([3, 6000]);
    expect(await segmentLargestTimestamp(log.segments[0]!, false)).toEqual({ timestamp: 5000n, source: 'time-index' });
    expect(await segmentLargestTimestamp(log.segments[1]!, true)).toEqual({ timestamp: 6000n, source: 'batches' });
  });

  it('B20: t=6001 → not found (offset −1, timestamp −1)', async () => {
    expect(await offsetForTimestamp(log, 6001n)).toBeNull();
  });

  it('B20: with log start 1, t=500 → o1', async () => {
    const log1 = PartitionLog.open(b20(1n));
    expect(log1.logStartOffset).toBe(1n);
    expect(await lookup(log1, 500n)).toEqual([1, 5000]);
    expect(await lookup(log1, 2000n)).toEqual([1, 5000]);
    expect((await offsetForTimestamp(log1, EARLIEST_TIMESTAMP))!.offset).toBe(1n);
  });

  it('EARLIEST (−2) is the log start offset and LATEST (−1) the log end offset, with timestamp −1', async () => {
    expect(await offsetForTimestamp(log, EARLIEST_TIMESTAMP)).toEqual({ offset: 0n, timestamp: -1n, leaderEpoch: null, segmentBaseOffset: null });
    expect(await offsetForTimestamp(log, LATEST_TIMESTAMP)).toEqual({ offset: 5n, timestamp: -1n, leaderEpoch: null, segmentBaseOffset: null });
    await expect(offsetForTimestamp(log, -3n)).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it('the answer carries the batch leader epoch and the segment', async () => {
    expect(await offsetForTimestamp(log, 5200n)).toEqual({ offset: 3n, timestamp: 6000n, leaderEpoch: 0, segmentBaseOffset: 3n });
  });
});

describe('largest timestamp of a segment', () => {
  it('without a .timeindex it is read from the batches (B08 variant rule)', async () => {
    const dir = b20();
    rmSync(join(dir, '00000000000000000000.timeindex'));
    const log = PartitionLog.open(dir);
    expect(await segmentLargestTimestamp(log.segments[0]!, false)).toEqual({ timestamp: 5000n, source: 'batches' });
    expect((await offsetForTimestamp(log, 2000n))!.offset).toBe(1n);
  });

  it('with no timestamps at all the .log mtime is used, and the lookup stops in that segment as Kafka does', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1', -1), rec('b', '2', -1)), noTimeIndex: true }, { batches: singles(rec('c', '3', 7000)) }] });
    const mtime = 1_700_000_000; // seconds
    utimesSync(join(dir, '00000000000000000000.log'), mtime, mtime);
    const log = PartitionLog.open(dir);
    expect(await segmentLargestTimestamp(log.segments[0]!, false)).toEqual({ timestamp: BigInt(mtime) * 1000n, source: 'mtime' });
    // The first segment "qualifies" by its mtime but holds no timestamp ≥ 5000: Kafka answers none.
    expect(await offsetForTimestamp(log, 5000n)).toBeNull();
  });

  it('an index-interval log: the time index narrows the search; the answer is the same as a full scan', async () => {
    const dir = buildPartition(tempDir(), { indexIntervalBytes: 150, segments: [{ batches: Array.from({ length: 80 }, (_, i) => ({ records: [rec(`k${i}`, 'x'.repeat(40), 1000 + i * 10 - (i % 5 === 0 ? 25 : 0))] })) }] });
    const log = PartitionLog.open(dir);
    expect(log.segments[0]!.timeIndex().entries.length).toBeGreaterThan(5);
    for (const t of [1000, 1234, 1500, 1600, 1785, 1790]) {
      const expected = Array.from({ length: 80 }, (_, i) => 1000 + i * 10 - (i % 5 === 0 ? 25 : 0)).findIndex((ts) => ts >= t);
      const r = await offsetForTimestamp(log, BigInt(t));
      expect(r === null ? -1 : Number(r.offset)).toBe(expected);
    }
  });
});

describeRealData('offsetForTimestamp on real data: the first record in offset order with ts ≥ target (EXPECTED.jsonl)', () => {
  for (const c of ['kafka-2.7.1-compacted-offsets', 'multisegment-rolled', 'cp-5.1-lz4-connect']) {
    it(c, async () => {
      const byPartition = new Map<string, { offset: number; timestamp: number }[]>();
      for (const b of expectedBatches(c)) {
        const part = String(b.file).split('/').slice(0, -1).join('/');
        const list = byPartition.get(part) ?? [];
        for (const r of b.records as { offset: number; timestamp: number }[]) list.push({ offset: r.offset, timestamp: r.timestamp });
        byPartition.set(part, list);
      }
      let checked = 0;
      for (const { rel, log } of allPartitions(openPath(join(REAL_DATA, c)))) {
        const recs = (byPartition.get(rel) ?? []).filter((r) => BigInt(r.offset) >= log.logStartOffset);
        if (recs.length === 0) continue;
        const stamps = [...new Set(recs.map((r) => r.timestamp))].sort((a, b) => a - b);
        const targets = [stamps[0]! - 1, stamps[Math.floor(stamps.length / 2)]!, stamps[stamps.length - 1]!, stamps[stamps.length - 1]! + 1];
        for (const t of targets) {
          // Independent answer: first segment whose max ≥ t, then first record in it with ts ≥ t.
          const want = recs.find((r) => r.timestamp >= t);
          const got = await offsetForTimestamp(log, BigInt(t));
          expect(got === null ? null : Number(got.offset), `${rel} t=${t}`).toBe(want ? want.offset : null);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(0);
    });
  }
});

describe('ListOffsets as a consumer asks it (Partition.fetchOffsetForTimestamp: lastFetchableOffset = HW, LSO under read_committed)', () => {
  // B20's offsets 0..4 (ts 1000, 5000, 2000, 6000, 5500) with a checkpointed high watermark of 3.
  const hwLog = PartitionLog.open(buildPartition(tempDir(), { segments: [{ batches: singles(rec('o0', 'a', 1000), rec('o1', 'b', 5000), rec('o2', 'c', 2000)) }, { batches: singles(rec('o3', 'd', 6000), rec('o4', 'e', 5500)) }] }, { highWatermark: 3n }));

  it('LATEST is the high watermark 3 for read_uncommitted, the log end offset 5 only as a replica asks (no isolation level)', async () => {
    const uncommitted = await listOffsets(hwLog, LATEST_TIMESTAMP, 'read_uncommitted');
    expect(uncommitted.answer).toEqual({ offset: 3n, timestamp: -1n, leaderEpoch: null, segmentBaseOffset: null });
    expect(uncommitted.limit).toEqual({ offset: 3n, kind: 'high-watermark', note: null });
    expect((await listOffsets(hwLog, LATEST_TIMESTAMP, 'none')).answer!.offset).toBe(5n);
    expect((await offsetForTimestamp(hwLog, LATEST_TIMESTAMP, { isolation: 'read_uncommitted' }))!.offset).toBe(3n);
  });

  it('a timestamp whose first record is at or past the high watermark gets no answer (ReplicaManager: offset ≥ lastFetchableOffset → −1), and says which record it was', async () => {
    const r = await listOffsets(hwLog, 5200n, 'read_uncommitted');
    expect(r.answer).toBeNull();
    expect(r.pastLimit).toEqual({ offset: 3n, timestamp: 6000n, leaderEpoch: 0, segmentBaseOffset: 3n });
    expect((await listOffsets(hwLog, 2000n, 'read_uncommitted')).answer).toMatchObject({ offset: 1n, timestamp: 5000n });
    expect((await listOffsets(hwLog, 5200n, 'none')).answer).toMatchObject({ offset: 3n });
  });

  it('a checkpointed high watermark above the log end or below the log start is clamped as UnifiedLog.updateHighWatermark does', async () => {
    const above = PartitionLog.open(buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2')) }] }, { highWatermark: 9n }));
    expect((await listOffsets(above, LATEST_TIMESTAMP, 'read_uncommitted')).limit).toEqual({ offset: 2n, kind: 'high-watermark', note: 'replication-offset-checkpoint says 9, above the log end offset 2: a broker lowers it to the log end (UnifiedLog.updateHighWatermark)' });
    const below = PartitionLog.open(buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')) }] }, { highWatermark: 0n, logStartOffset: 1n }));
    expect((await listOffsets(below, LATEST_TIMESTAMP, 'read_uncommitted')).limit.offset).toBe(1n);
  });

  it('without a checkpointed high watermark the log end offset is used, with a note saying so', async () => {
    const r = await listOffsets(PartitionLog.open(b20()), LATEST_TIMESTAMP, 'read_uncommitted');
    expect(r.answer!.offset).toBe(5n);
    expect(r.limit.kind).toBe('log-end');
    expect(r.limit.note).toMatch(/^no high watermark for test-0 in replication-offset-checkpoint: the log end offset 5 is used/);
  });

  it('read_committed: LATEST is the last stable offset (first offset of the open transaction at 2)', async () => {
    const txn = (pid: number, baseOffset: number, ...keys: string[]): BatchInput => ({ baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: keys.map((k) => rec(k, 'v', 1000)) });
    const commit = (pid: number, offset: number): BatchInput => ({ baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(1), value: encodeEndTxnMarkerValue(0), timestamp: 1100n }] });
    // o0-o1 producer 5 committed at o2; producer 6's transaction opens at o3 (o3, o4), never ended: the LSO is 3.
    const dir = buildPartition(tempDir(), { segments: [{ batches: [txn(5, 0, 'a', 'b'), commit(5, 2), txn(6, 3, 'c', 'd')] }] }, { highWatermark: 5n });
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(5n);
    const r = await listOffsets(log, LATEST_TIMESTAMP, 'read_committed');
    expect(r.limit).toEqual({ offset: 3n, kind: 'last-stable-offset', note: null });
    expect(r.answer!.offset).toBe(3n);
    expect((await listOffsets(log, LATEST_TIMESTAMP, 'read_uncommitted')).answer!.offset).toBe(5n);
  });
});
