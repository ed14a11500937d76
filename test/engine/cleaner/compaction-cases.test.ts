/**
 * Compaction behaviour cases (kafka rules unless stated): B01, B04, B05, B07, B15, B16, B19, B21,
 * plus the classic teaching rules on the same logs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { planCompaction, runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { compact } from '../../../src-main/engine/cleaner/cleaner.ts';
import { decideRoll } from '../../../src-main/engine/log/roll-rule.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { readTxnIndex } from '../../../src-main/engine/files/txn-index.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { addSegment, batchesOf, buildB15Partition, offsets, snapshotFiles, visibleRecords } from './support.ts';

const D = 86_400_000n;
const trash = () => ({ runId: 'test', trashDir: tempDir('klx-trash-') });
const run = (dir: string, opts: CompactionOptions) => runCompaction(dir, opts, trash());
const seg0 = (dir: string) => join(dir, '00000000000000000000.log');

describe('compaction cases', () => {
  it('B01: offsets are never renumbered: retained [0,2,3,4], LEO 5, log start 0; reading from 1 gives k2=c@2', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k2', 'b'), rec('k2', 'c'), rec('k3', 'd')) }, { baseOffset: 4n, batches: singles(rec('k4', 'e')) }],
    });
    const plan = planCompaction(dir, { now: 10_000, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': D } });
    expect(plan.removed.superseded).toEqual({ records: 1, ranges: [{ first: 1n, last: 1n }], truncated: false });
    expect(plan.holes).toEqual([{ first: 1n, last: 1n }]);
    const r = run(dir, { now: 10_000, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': D } });
    expect(r.removed).toEqual(plan.removed);
    expect(r.segments.created.map((s) => [s.baseOffset, s.bytes, s.records])).toEqual(plan.segments.created.map((s) => [s.baseOffset, s.bytes, s.records]));
    expect(offsets(dir)).toEqual([0, 2, 3, 4]);
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(5n);
    expect(log.logStartOffset).toBe(0n);
    const fromOne = visibleRecords(dir).filter((x) => x.offset >= 1);
    expect(fromOne[0]).toMatchObject({ offset: 2, key: 'k2', value: 'c' });
    expect(readFileSync(join(logDir, 'cleaner-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 4\n');
  });

  it('B04: (a) a lone active segment is never cleaned: nothing cleanable, [0,1,2]', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k1', 'b'), rec('k1', 'c')) }] });
    const before = snapshotFiles(dir);
    const r = run(dir, { now: 10 ** 13 });
    expect(r.nothingToDo).toBe(true);
    expect(r.notes.join('\n')).toMatch(/nothing cleanable: the only segment is the active segment/);
    expect(snapshotFiles(dir)).toEqual(before);
    expect(offsets(dir)).toEqual([0, 1, 2]);
  });

  it('B04: (b) the map covers only [firstDirty, firstUncleanable) as in Kafka: k1=a@0 is kept although k1=c@2 is in the active segment', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k2', 'b')) }, { baseOffset: 2n, batches: singles(rec('k1', 'c')) }] });
    const r = run(dir, { now: 10 ** 13 });
    expect(offsets(dir)).toEqual([0, 1, 2]);
    expect(r.segments.rewritten).toEqual([]); // byte-identical: left in place
    expect(r.cleanerCheckpoint).toEqual({ before: null, after: 2n });
    const latest = new Map(visibleRecords(dir).map((x) => [x.key, x.value]));
    expect(latest.get('k1')).toBe('c');
  });

  it('B05: the first too-young segment fences every later one (at 10000 nothing changes; at 20000 retained [3,4,5,6])', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [
        { baseOffset: 0n, batches: singles(rec('k1', 'a', 1000), rec('k2', 'b', 1000)) },
        { baseOffset: 2n, batches: singles(rec('k1', 'c', 9000), rec('k2', 'd', 9500)) },
        { baseOffset: 4n, batches: singles(rec('k1', 'e', 2000), rec('k3', 'f', 2000)) },
        { baseOffset: 6n, batches: singles(rec('k4', 'g', 2000)) },
      ],
    });
    const opts = { config: { 'min.compaction.lag.ms': 5000n } };
    const p1 = planCompaction(dir, { ...opts, now: 10_000 });
    expect(p1.cleanable).toMatchObject({ firstDirtyOffset: 0n, firstUncleanableOffset: 2n, uncleanableReason: 'min-compaction-lag' });
    const r1 = run(dir, { ...opts, now: 10_000 });
    expect(r1.removed).toEqual({});
    expect(offsets(dir)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const r2 = run(dir, { ...opts, now: 20_000 });
    expect(r2.cleanable).toMatchObject({ firstDirtyOffset: 2n, firstUncleanableOffset: 6n, uncleanableReason: 'active-segment' });
    expect(offsets(dir)).toEqual([3, 4, 5, 6]);
    expect(r2.removed.superseded?.ranges).toEqual([{ first: 0n, last: 2n }]);
  });

  it('B07: keyless records in the cleanable range are dropped and counted as 2 invalid messages; the active one stays', () => {
    const logDir = tempDir();
    const build = () =>
      buildPartition(tempDir(), {
        segments: [{ baseOffset: 0n, batches: singles(rec(null, 'x'), rec('k1', 'a'), rec(null, 'y'), rec('k1', 'b')) }, { baseOffset: 4n, batches: singles(rec(null, 'z')) }],
      });
    void logDir;
    const dir = build();
    const r = run(dir, { now: 10_000 });
    expect(offsets(dir)).toEqual([3, 4]);
    expect(r.invalidMessages).toBe(2);
    expect(r.removed.keyless).toEqual({ records: 2, ranges: [{ first: 0n, last: 0n }, { first: 2n, last: 2n }], truncated: false });
    // The classic rules keep keyless records.
    const dir2 = build();
    const c = run(dir2, { now: 10_000, rules: 'classic' });
    expect(offsets(dir2)).toEqual([0, 2, 3, 4]);
    expect(c.invalidMessages).toBe(0);
  });

  const b15 = buildB15Partition;

  it('B15: aborted data goes, the markers stay (the empty transaction\'s with a delete horizon), the cleaned .txnindex keeps both entries', () => {
    const dir = b15();
    const T = 1_700_000_000_000;
    const r = run(dir, { now: T, config: { 'delete.retention.ms': D } });
    expect(r.removed.aborted).toEqual({ records: 4, ranges: [{ first: 0n, last: 1n }, { first: 6n, last: 7n }], truncated: false });
    const recs = visibleRecords(dir);
    expect(recs.map((x) => [x.offset, x.control ?? x.key])).toEqual([
      [2, 'ABORT'],
      [3, 'ABORT'],
      [4, 'k3'],
      [5, 'COMMIT'],
      [8, 'ABORT'],
      [9, 'k6'],
    ]);
    const bs = batchesOf(seg0(dir));
    const abort9 = bs.find((b) => b.base === 2)!;
    expect(abort9.attributes).toBe(0x70); // transactional + control + delete horizon
    expect(abort9.bytes.readBigInt64BE(27)).toBe(BigInt(T) + D);
    expect(bs.find((b) => b.base === 3)!.attributes).toBe(0x30);
    const idx = readTxnIndex(join(dir, '00000000000000000000.txnindex'));
    expect(idx.entries.map((e) => [e.producerId, e.firstOffset, e.lastOffset, e.lastStableOffset])).toEqual([
      [5n, 0n, 3n, 4n],
      [6n, 6n, 8n, 9n],
    ]);
    expect(idx.fileSize).toBe(68);
    // read_committed still sees [4, 9].
    expect(recs.filter((x) => !x.control).map((x) => x.offset)).toEqual([4, 9]);

    // A later pass at T + D (new data rolled the active segment): ABORT(9) is past its horizon and goes;
    // ABORT(5) and ABORT(6) now guard no data, so they get a horizon and go in the pass after it.
    addSegment(dir, 10n, [{ records: [rec('k7', 'v7', 1000)] }]);
    run(dir, { now: T + Number(D), config: { 'delete.retention.ms': D } });
    expect(visibleRecords(dir).map((x) => [x.offset, x.control ?? x.key])).toEqual([
      [3, 'ABORT'],
      [4, 'k3'],
      [5, 'COMMIT'],
      [8, 'ABORT'],
      [9, 'k6'],
      [10, 'k7'],
    ]);
    expect(batchesOf(seg0(dir)).find((b) => b.base === 3)!.attributes).toBe(0x70);
    addSegment(dir, 11n, [{ records: [rec('k8', 'v8', 1000)] }]);
    run(dir, { now: T + 3 * Number(D), config: { 'delete.retention.ms': D } });
    expect(visibleRecords(dir).map((x) => [x.offset, x.control ?? x.key])).toEqual([
      [4, 'k3'],
      [5, 'COMMIT'],
      [9, 'k6'],
      [10, 'k7'],
      [11, 'k8'],
    ]);
  });

  it('B15: (c) an open transaction at offset 10 makes the last stable offset 10: nothing at or past it is cleaned', () => {
    const dir = b15();
    addSegment(dir, 10n, [{ isTransactional: true, producerId: 11n, producerEpoch: 0, baseSequence: 0, records: [rec('k7', 'v7', 1000)] }]);
    addSegment(dir, 11n, [{ records: [rec('k7', 'x', 1000)] }]);
    const plan = planCompaction(dir, { now: 1_700_000_000_000 });
    expect(plan.cleanable).toMatchObject({ lastStableOffset: 10n, firstUncleanableOffset: 10n, uncleanableReason: 'last-stable-offset' });
    run(dir, { now: 1_700_000_000_000 });
    expect(offsets(dir).filter((o) => o >= 9)).toEqual([9, 10, 11]);
  });

  it('the high watermark (replication-offset-checkpoint 3, no transaction) bounds the range: the note names the high watermark, not an open transaction', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [
        { baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k1', 'b'), rec('k1', 'c'), rec('k1', 'd'), rec('k1', 'e')) },
        { baseOffset: 5n, batches: singles(rec('k1', 'f')) },
      ],
    }, { highWatermark: 3n });
    const plan = planCompaction(dir, { now: 10_000, config: { 'cleanup.policy': ['compact'] } });
    expect(plan.cleanable).toMatchObject({ lastStableOffset: 3n, firstDirtyOffset: 0n, firstUncleanableOffset: 0n, uncleanableReason: 'last-stable-offset' });
    expect(plan.nothingToDo).toBe(true);
    expect(plan.notes).toContain('nothing cleanable: the high watermark (replication-offset-checkpoint) is 3, inside segment 0; a broker never cleans at or past it (UnifiedLog.lastStableOffset)');
    // With an open transaction the note names it (B15 (c) above is the same bound through a transaction).
    const open = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: [{ isTransactional: true, producerId: 11n, producerEpoch: 0, baseSequence: 0, records: [rec('k1', 'a', 1000)] }, ...singles(rec('k1', 'b', 1000))] },
        { baseOffset: 2n, batches: singles(rec('k1', 'c', 1000)) },
      ],
    });
    const p2 = planCompaction(open, { now: 10_000, config: { 'cleanup.policy': ['compact'] } });
    expect(p2.notes).toContain('nothing cleanable: an open transaction of producer 11 starts at offset 0, the last stable offset; a broker never cleans at or past it (UnifiedLog.lastStableOffset)');
  });

  it('B16: every codec decodes; the lz4 batch is rebuilt as lz4 (base 0, lastOffsetDelta 2, one record), the others are unchanged byte for byte', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [
        {
          baseOffset: 0n,
          batches: [
            { compression: 'lz4', records: [rec('k1', 'a'), rec('k2', 'b'), rec('k1', 'c')] },
            { compression: 'snappy', records: [rec('k3', 'd'), rec('k2', 'e')] },
            { compression: 'zstd', records: [rec('k4', 'f')] },
            { compression: 'gzip', records: [rec('k5', 'g')] },
          ],
        },
        { baseOffset: 7n, batches: singles(rec('k6', 'h')) },
      ],
    });
    expect(visibleRecords(dir)).toHaveLength(8);
    const before = batchesOf(seg0(dir));
    run(dir, { now: 10_000 });
    expect(offsets(dir)).toEqual([2, 3, 4, 5, 6, 7]);
    const after = batchesOf(seg0(dir));
    expect(after[0]).toMatchObject({ base: 0, last: 2, count: 1, attributes: 3 });
    expect(visibleRecords(dir)[0]).toMatchObject({ offset: 2, key: 'k1', value: 'c' });
    for (let i = 1; i < 4; i++) expect(after[i]!.bytes.equals(before[i]!.bytes)).toBe(true);
  });

  it('B16: a batch with codec id 5 stops the clean with an error naming the codec id and the batch base offset', () => {
    const logDir = tempDir();
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('k2', 'b')] });
    bad.writeInt16BE(5, 21);
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: [{ records: [rec('k1', 'a')] }, bad, { records: [rec('k1', 'c')] }] }, { baseOffset: 3n, batches: singles(rec('k3', 'x')) }] });
    const before = snapshotFiles(dir);
    expect(() => run(dir, { now: 10_000 })).toThrow(/unknown compression codec id 5 in the batch at baseOffset 1/);
    expect(snapshotFiles(dir)).toEqual(before);
  });

  it('B19: the active segment keeps its duplicates; a next append rolls only when its timestamp passes segment.ms (or max.compaction.lag.ms)', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [{ baseOffset: 10n, batches: [{ baseOffset: 10n, records: [rec('k1', 'a', 1_000_000)] }, { records: [rec('k1', 'b', 1_015_000)] }, { records: [rec('k1', 'c', 1_030_000)] }] }],
    });
    const cfg = { 'cleanup.policy': ['compact'] as ('compact' | 'delete')[], 'segment.ms': 60_000n };
    const r = run(dir, { now: 10_000_000, config: cfg });
    expect(r.nothingToDo).toBe(true);
    expect(offsets(dir)).toEqual([10, 11, 12]);
    const log = PartitionLog.open(dir, { config: cfg });
    const seg = log.activeSegment!;
    const state = { baseOffset: 10n, size: seg.size, firstBatchMaxTimestamp: 1_000_000n, createdMs: 0n, jitterMs: 0n, offsetIndexEntries: 0, timeIndexEntries: 0 };
    const at = (ts: bigint, config = log.config.config) => decideRoll(state, { size: 70, maxTimestamp: ts, lastOffset: 13n }, config, 10_000_000n);
    expect(at(1_050_000n)).toBeNull();
    expect(at(1_060_001n)).toBe('segment.ms');
    const lag = PartitionLog.open(dir, { config: { ...cfg, 'max.compaction.lag.ms': 30_000n } }).config.config;
    expect(at(1_030_001n, lag)).toBe('max.compaction.lag.ms');
  });

  it('B21: a corrupt segment makes only its partition uncleanable (files unchanged, reason with the byte count); the other is compacted', () => {
    const logDir = tempDir();
    const dirA = buildPartition(logDir, {
      topic: 'a',
      segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k1', 'b')) }, { baseOffset: 3n, batches: [{ baseOffset: 3n, records: [rec('k9', 'z')] }] }],
    });
    // The last batch of seg@0 claims 2,000,000 bytes while 300 remain.
    const tail = Buffer.alloc(300);
    tail.writeBigInt64BE(2n, 0);
    tail.writeInt32BE(2_000_000, 8);
    tail.writeInt8(2, 16);
    writeFileSync(seg0(dirA), Buffer.concat([readFileSync(seg0(dirA)), tail]));
    const dirB = buildPartition(logDir, { topic: 'b', segments: [{ baseOffset: 0n, batches: singles(rec('k1', 'a'), rec('k1', 'b')) }, { baseOffset: 2n, batches: singles(rec('k2', 'z')) }] });
    const beforeA = snapshotFiles(dirA);
    const out = compact(logDir, { now: 10_000, trashDir: tempDir('klx-trash-') });
    const a = out.partitions.find((p) => p.topic === 'a')!;
    const b = out.partitions.find((p) => p.topic === 'b')!;
    expect(a.error?.code).toBe('truncated-batch');
    expect(a.error?.message).toMatch(/log segment may be corrupt: 300 invalid bytes at the end of the file: the batch size \(length field \+ 12-byte header, so 2000012\) exceeds the 300 bytes left in the file/);
    expect(a.error?.file).toBe(seg0(dirA));
    expect(snapshotFiles(dirA)).toEqual(beforeA);
    expect(b.error).toBeUndefined();
    expect(offsets(dirB)).toEqual([1, 2]);
  });
});
