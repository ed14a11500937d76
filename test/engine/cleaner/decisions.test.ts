/**
 * The cleaner's decisions record by record (`decisions.ts`) on the behaviour cases of
 * `../shared/cases/kafka-behaviour-cases.md` (B01, B04, B05, B07, B08, B10, B15) and the
 * empty-batch rule of Kafka's `checkBatchRetention`: each row's verdict, reason and evidence, and
 * that the rows agree with what the plan removes. Expected values come from the cases' text and
 * Kafka's `Cleaner.shouldRetainRecord` / `UnifiedLog.deleteOldSegments`, not from the tool.
 */
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { planCompaction, runCompaction } from '../../../src-main/engine/cleaner/compaction.ts';
import { planRetention } from '../../../src-main/engine/cleaner/retention.ts';
import type { CleanerDecision } from '../../../src-main/engine/cleaner/decisions.ts';
import type { CleanerReport } from '../../../src-main/engine/cleaner/cleaner-plan.ts';
import { DAY, TS, addSegment, buildB15Partition } from './support.ts';

type Row = [number, string, string, string];
const records = (r: CleanerReport): Row[] => r.decisions!.rows.filter((d) => d.subject === 'record').map((d) => [Number(d.offset), d.decision, d.reason, d.evidence]);
const batches = (r: CleanerReport): [number, number, string, string][] => r.decisions!.rows.filter((d) => d.subject === 'batch').map((d) => [Number(d.offset), Number(d.lastOffset), d.decision, d.reason]);
const segments = (r: CleanerReport): Row[] => r.decisions!.rows.filter((d) => d.subject === 'segment').map((d) => [Number(d.offset), d.decision, d.reason, d.evidence]);
/** The offsets the rows remove must be exactly the plan's removed ranges. */
function removedOffsets(r: CleanerReport): number[] {
  return Object.entries(r.removed)
    .filter(([k]) => k !== 'retention')
    .flatMap(([, v]) => v!.ranges.flatMap((x) => Array.from({ length: Number(x.last - x.first) + 1 }, (_, i) => Number(x.first) + i)))
    .sort((a, b) => a - b);
}
const rowRemoved = (r: CleanerReport) => r.decisions!.rows.filter((d: CleanerDecision) => d.subject === 'record' && d.decision === 'remove').map((d) => Number(d.offset));

describe('cleaner decisions', () => {
  it('B01: k1=a@0 kept (latest for k1), k2=b@1 superseded by offset 2, k2=c@2 and k3=d@3 kept; the active segment is not touched', () => {
    const dir = buildPartition(tempDir(), {
      segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k2', 'b'), rec('k2', 'c'), rec('k3', 'd')) }, { baseOffset: 4n, batches: singles(rec('k4', 'e')) }],
    });
    const plan = planCompaction(dir, { now: 10_000, explain: {}, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': BigInt(DAY) } });
    expect(records(plan)).toEqual([
      [0, 'keep', 'latest-for-key', 'kept: latest for key k1'],
      [1, 'remove', 'superseded', 'superseded by offset 2 (key k2)'],
      [2, 'keep', 'latest-for-key', 'kept: latest for key k2'],
      [3, 'keep', 'latest-for-key', 'kept: latest for key k3'],
    ]);
    expect(batches(plan)).toEqual([
      [0, 0, 'keep', 'batch-copied'],
      [1, 1, 'remove', 'batch-dropped'],
      [2, 2, 'keep', 'batch-copied'],
      [3, 3, 'keep', 'batch-copied'],
    ]);
    expect(rowRemoved(plan)).toEqual(removedOffsets(plan));
    expect(plan.decisions!.total).toBe(8);
    expect(plan.decisions!.rows.every((d) => d.pass === 1)).toBe(true);
  });

  it('B04: k1=a@0 is "latest for key k1" although k1=c@2 sits in the active segment (the map covers only [0, 2))', () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k2', 'b')) }, { baseOffset: 2n, batches: singles(rec('k1', 'c')) }] });
    const plan = planCompaction(dir, { now: 10 ** 13, explain: {} });
    expect(records(plan)).toEqual([
      [0, 'keep', 'latest-for-key', 'kept: latest for key k1'],
      [1, 'keep', 'latest-for-key', 'kept: latest for key k2'],
    ]);
  });

  it('B05: at 20000 the map covers [2, 6): k1@0, k2@1, k1@2 superseded by 4, 3, 4; k2@3, k1@4, k3@5 kept', () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: singles(rec('k1', 'a', 1000), rec('k2', 'b', 1000)) },
        { baseOffset: 2n, batches: singles(rec('k1', 'c', 9000), rec('k2', 'd', 9500)) },
        { baseOffset: 4n, batches: singles(rec('k1', 'e', 2000), rec('k3', 'f', 2000)) },
        { baseOffset: 6n, batches: singles(rec('k4', 'g', 2000)) },
      ],
    }, { cleanerOffset: 2n });
    const plan = planCompaction(dir, { now: 20_000, explain: {}, config: { 'min.compaction.lag.ms': 5000n } });
    expect(records(plan)).toEqual([
      [0, 'remove', 'superseded', 'superseded by offset 4 (key k1)'],
      [1, 'remove', 'superseded', 'superseded by offset 3 (key k2)'],
      [2, 'remove', 'superseded', 'superseded by offset 4 (key k1)'],
      [3, 'keep', 'latest-for-key', 'kept: latest for key k2'],
      [4, 'keep', 'latest-for-key', 'kept: latest for key k1'],
      [5, 'keep', 'latest-for-key', 'kept: latest for key k3'],
    ]);
    expect(rowRemoved(plan)).toEqual(removedOffsets(plan));
  });

  it('B07: keyless records: dropped (kafka rules) at 0 and 2, kept (classic rules); the one in the active segment is not touched', () => {
    const build = () => buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(rec(null, 'x'), rec('k1', 'a'), rec(null, 'y'), rec('k1', 'b')) }, { baseOffset: 4n, batches: singles(rec(null, 'z')) }] });
    const k = planCompaction(build(), { now: 10_000, explain: {} });
    expect(records(k)).toEqual([
      [0, 'remove', 'keyless', 'keyless: dropped (kafka rules; counted as an invalid message)'],
      [1, 'remove', 'superseded', 'superseded by offset 3 (key k1)'],
      [2, 'remove', 'keyless', 'keyless: dropped (kafka rules; counted as an invalid message)'],
      [3, 'keep', 'latest-for-key', 'kept: latest for key k1'],
    ]);
    const c = planCompaction(build(), { now: 10_000, rules: 'classic', explain: {} });
    expect(records(c)).toEqual([
      [0, 'keep', 'keyless', 'keyless: kept (classic rules)'],
      [1, 'remove', 'superseded', 'superseded by offset 3 (key k1)'],
      [2, 'keep', 'keyless', 'keyless: kept (classic rules)'],
      [3, 'keep', 'latest-for-key', 'kept: latest for key k1'],
    ]);
    expect(c.decisions!.rows.find((d) => d.offset === 0n)).toMatchObject({ key: null, value: 'x', timestamp: 1000n });
  });

  it('B15: aborted data of producers 5 and 6 goes; ABORT(9) guards no data and keeps a new horizon; the other markers guard data', () => {
    const dir = buildB15Partition();

    const T = 1_700_000_000_000; // 2023-11-14 22:13:20 UTC
    const plan = planCompaction(dir, { now: T, explain: {}, config: { 'delete.retention.ms': BigInt(DAY) } });
    expect(records(plan)).toEqual([
      [0, 'remove', 'aborted', 'aborted transaction of producer 5'],
      [1, 'remove', 'aborted', 'aborted transaction of producer 5'],
      [2, 'keep', 'marker-until-horizon', 'control marker kept until its horizon 2023-11-15 22:13:20.000 (written now: now + delete.retention.ms): its transaction has no data left'],
      [3, 'keep', 'marker-guards-data', "control marker kept: this round read data of producer 5's aborted transaction (removed now); a later round that finds none left starts the marker's delete horizon"],
      [4, 'keep', 'latest-for-key', 'kept: latest for key k3'],
      [5, 'keep', 'marker-guards-data', "control marker kept: this round read data of producer 5's transaction"],
      [6, 'remove', 'aborted', 'aborted transaction of producer 6'],
      [7, 'remove', 'aborted', 'aborted transaction of producer 6'],
      [8, 'keep', 'marker-guards-data', "control marker kept: this round read data of producer 6's aborted transaction (removed now); a later round that finds none left starts the marker's delete horizon"],
    ]);
    expect(batches(plan)).toEqual([
      [0, 1, 'remove', 'batch-dropped'],
      [2, 2, 'keep', 'batch-rebuilt'],
      [3, 3, 'keep', 'batch-copied'],
      [4, 4, 'keep', 'batch-copied'],
      [5, 5, 'keep', 'batch-copied'],
      [6, 7, 'remove', 'batch-dropped'],
      [8, 8, 'keep', 'batch-copied'],
    ]);
    expect(plan.decisions!.rows.find((d) => d.subject === 'batch' && d.offset === 2n)!.evidence).toBe('batch rebuilt: 1 of 1 records kept, same baseOffset 2 and lastOffsetDelta 0, delete horizon 2023-11-15 22:13:20.000 written');
    expect(rowRemoved(plan)).toEqual(removedOffsets(plan));
  });

  it('the last batch of a still-active producer is kept as an empty batch (Kafka checkBatchRetention RETAIN_EMPTY)', () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        {
          baseOffset: 0n,
          batches: [
            { producerId: 7n, producerEpoch: 0, baseSequence: 0, records: [rec('k1', 'a')] },
            { producerId: 7n, producerEpoch: 0, baseSequence: 1, records: [rec('k2', 'x'), rec('k1', 'b')] },
            { records: [rec('k1', 'c'), rec('k2', 'y')] },
          ],
        },
        { baseOffset: 5n, batches: singles(rec('k9', 'z')) },
      ],
    });
    const plan = planCompaction(dir, { now: 10_000, explain: {} });
    expect(records(plan).map((r) => r.slice(0, 3))).toEqual([
      [0, 'remove', 'superseded'],
      [1, 'remove', 'superseded'],
      [2, 'remove', 'superseded'],
      [3, 'keep', 'latest-for-key'],
      [4, 'keep', 'latest-for-key'],
    ]);
    const empty = plan.decisions!.rows.find((d) => d.subject === 'batch' && d.offset === 1n)!;
    expect(empty).toMatchObject({ lastOffset: 2n, decision: 'keep', reason: 'empty-batch-kept', evidence: "empty batch kept: last batch of producer 7 (sequence 2), so the producer's state survives" });
    expect(batches(plan)[0]).toEqual([0, 0, 'remove', 'batch-dropped']);
  });

  it('tombstones (kafka rules): kept with a new horizon in the first pass, kept before it, removed once it has passed', () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', 0), rec('a', null, 100)) }, { baseOffset: 2n, batches: singles(rec('z', 'z', 100)) }] });
    const opts = { explain: {}, config: { 'delete.retention.ms': 1000n } };
    const r1 = runCompaction(dir, { ...opts, now: 500 }, { runId: 't', trashDir: tempDir('klx-trash-') });
    expect(records(r1)).toEqual([
      [0, 'remove', 'superseded', 'superseded by offset 1 (key a)'],
      [1, 'keep', 'tombstone-until-horizon', 'tombstone kept until its delete horizon t=1500 ms (first cleaned now at t=500 ms, delete.retention.ms 1000: the horizon is written into its batch)'],
    ]);
    // New data rolls the active segment: segment 2 becomes dirty and the clean section is read again.
    addSegment(dir, 3n, [{ records: [rec('y', 'y', 200)] }]);
    const p2 = planCompaction(dir, { ...opts, now: 1200 });
    expect(records(p2)).toEqual([
      [1, 'keep', 'tombstone-until-horizon', 'tombstone kept until its delete horizon t=1500 ms (first cleaned at t=500 ms, delete.retention.ms 1000; 300 ms to go)'],
      [2, 'keep', 'latest-for-key', 'kept: latest for key z'],
    ]);
    const p3 = planCompaction(dir, { ...opts, now: 1500 });
    expect(records(p3)[0]).toEqual([1, 'remove', 'tombstone-horizon-passed', 'tombstone removed: horizon passed (delete horizon t=1500 ms ≤ now t=1500 ms)']);
    // The classic rules on the first state would have removed it in one pass at 1200 (now − 100 > 1000).
  });

  it('B08: retention segment by segment: seg@0 deleted, the prefix stops at seg@100 (future timestamp), seg@200 expired but after the prefix', () => {
    const seg = (base: number, n: number, ts: (i: number) => number): BatchInput[] => Array.from({ length: n }, (_, i) => ({ baseOffset: BigInt(base + i), records: [rec(`k${base + i}`, 'v', ts(i))] }));
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: seg(0, 100, () => TS - 10 * DAY) },
        { baseOffset: 100n, batches: seg(100, 100, (i) => (i === 50 ? TS + 365 * DAY : TS - 9 * DAY)) },
        { baseOffset: 200n, batches: seg(200, 100, () => TS - 8 * DAY) },
        { baseOffset: 300n, batches: seg(300, 5, () => TS - 3_600_000) },
      ],
    });
    const plan = planRetention(dir, { now: TS, explain: {}, config: { 'retention.ms': 86_400_000n } });
    expect(segments(plan)).toEqual([
      [0, 'remove', 'retention-time', 'segment deleted: max timestamp 2023-11-04 22:13:20.000 is 10.00 days old > retention.ms 86400000 (24.00 h)? yes'],
      [100, 'keep', 'prefix-stop', 'prefix stops at segment 100: time retention: max timestamp 2024-11-13 22:13:20.000 is −365.00 days old > retention.ms 86400000 (24.00 h)? no'],
      [200, 'keep', 'after-prefix', 'kept: after segment 100, where the prefix stops (only a prefix of segments is ever deleted); max timestamp 2023-11-06 22:13:20.000 is 8.00 days old > retention.ms 86400000 (24.00 h)? yes'],
      [300, 'keep', 'after-prefix', 'kept: after segment 100, where the prefix stops (only a prefix of segments is ever deleted); max timestamp 2023-11-14 21:13:20.000 is 60.00 min old > retention.ms 86400000 (24.00 h)? no'],
    ]);
    expect(plan.decisions!.rows.map((d) => [Number(d.offset), Number(d.lastOffset)])).toEqual([[0, 99], [100, 199], [200, 299], [300, 304]]);
  });

  it('B10 (HW variant): seg@0 goes; seg@100 qualifies but its upper bound 200 is above the high watermark 150, so the prefix stops there', () => {
    const seg = (base: number, n: number, ts: number): BatchInput[] => Array.from({ length: n }, (_, i) => ({ baseOffset: BigInt(base + i), records: [rec(`k${base + i}`, 'v', ts)] }));
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: seg(0, 100, 1000) },
        { baseOffset: 100n, batches: seg(100, 100, 2000) },
        { baseOffset: 200n, batches: seg(200, 11, 99_900) },
      ],
    }, { highWatermark: 150n });
    const plan = planRetention(dir, { now: 100_000, explain: {}, config: { 'retention.ms': 1000n } });
    expect(segments(plan).map((r) => r.slice(0, 3))).toEqual([
      [0, 'remove', 'retention-time'],
      [100, 'keep', 'prefix-stop'],
      [200, 'keep', 'after-prefix'],
    ]);
    expect(segments(plan)[1]![3]).toBe('prefix stops at segment 100: time retention: max timestamp t=2000 ms is 98 s old > retention.ms 1000 (1000 ms)? yes, but its records run to offset 199, at or beyond the high watermark 150');
  });

  it('caps the detailed rows and summarises the rest per segment and reason, with exact counts', () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(...Array.from({ length: 30 }, (_, i) => rec(`k${i % 3}`, `v${i}`))) }, { baseOffset: 30n, batches: singles(rec('k9', 'z')) }] });
    const streamed: CleanerDecision[] = [];
    const plan = planCompaction(dir, { now: 10_000, explain: { limit: 5, onRow: (r) => streamed.push(r) } });
    const d = plan.decisions!;
    expect(d.total).toBe(60); // 30 records + 30 batches
    expect(d.summarized).toBe(true);
    const ranges = d.rows.filter((r) => r.subject === 'range');
    expect(ranges.map((r) => [Number(r.offset), Number(r.lastOffset), r.count, r.decision, r.reason])).toEqual([
      [3, 26, 24, 'remove', 'superseded'],
      [27, 29, 3, 'keep', 'latest-for-key'],
    ]);
    expect(d.rows.filter((r) => r.subject !== 'range')).toHaveLength(5);
    expect(streamed).toEqual(d.rows);
  });
});
