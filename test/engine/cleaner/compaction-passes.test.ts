/**
 * The offset map in a fixed budget (Kafka's SkimpyOffsetMap): 128-bit key digests, local probes then Kafka's probe sequence, full at
 * slots × 0.9; several cleaning passes when the keys exceed it, ending where one big map ends; plans
 * of multi-pass runs equal the runs. The classic teaching rules beside Kafka's on the same log.
 * Undo of a compaction restores every byte.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { planCompaction, runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { compact, undo } from '../../../src-main/engine/cleaner/cleaner.ts';
import { md5 } from '../../../src-main/engine/cleaner/key-hash.ts';
import { SkimpyOffsetMap } from '../../../src-main/engine/cleaner/offset-map.ts';
import { addSegment, batchesOf, offsets, snapshotFiles, visibleRecords } from './support.ts';

const TS = 1_700_000_000_000;
const run = (dir: string, opts: CompactionOptions) => runCompaction(dir, opts, { runId: 't', trashDir: tempDir('klx-trash-') });

describe('offset map', () => {
  it("MD5 as node:crypto computes it (Kafka's key digest); the map holds floor(memory / 24) slots and is full at 90 %", () => {
    for (const k of ['', 'a', 'key-1', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(200)]) {
      expect(md5(Buffer.from(k)).toString('hex')).toBe(createHash('md5').update(k).digest('hex'));
    }
    const m = new SkimpyOffsetMap(24 * 100);
    expect([m.slots, m.maxEntries]).toEqual([100, 90]);
    for (let i = 0; i < 90; i++) m.put(Buffer.from(`k${i}`), i);
    expect(m.full).toBe(true);
    m.put(Buffer.from('k5'), 500);
    expect([m.size, m.get(Buffer.from('k5')), m.get(Buffer.from('k6')), m.get(Buffer.from('nope')), m.latestOffset]).toEqual([90, 500, 6, -1, 500]);
    m.clear();
    expect([m.size, m.get(Buffer.from('k5')), m.latestOffset]).toEqual([0, -1, -1]);
    expect(() => new SkimpyOffsetMap(24)).toThrow(/too small/);
  });
});

describe('multi-pass compaction', () => {
  function build(): string {
    // 30 keys written 3 times over 4 segments, then an active segment.
    const recs = Array.from({ length: 90 }, (_, i) => rec(`key-${String(i % 30).padStart(2, '0')}`, `v${i}`, TS + i));
    return buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: singles(...recs.slice(0, 25)) },
        { baseOffset: 25n, batches: [{ baseOffset: 25n, records: recs.slice(25, 35) }, ...singles(...recs.slice(35, 50))] },
        { baseOffset: 50n, batches: singles(...recs.slice(50, 70)) },
        { baseOffset: 70n, batches: [{ baseOffset: 70n, records: recs.slice(70, 80), compression: 'lz4' }, ...singles(...recs.slice(80, 90))] },
        { baseOffset: 90n, batches: [{ baseOffset: 90n, records: [rec('key-00', 'last', TS + 90)] }] },
      ],
    });
  }

  it('with a map of 9 keys the run takes several passes and ends with the same records as one big map', () => {
    const big = build();
    run(big, { now: TS });
    const small = build();
    const plan = planCompaction(small, { now: TS, dedupeBufferSize: 240 });
    const r = run(small, { now: TS, dedupeBufferSize: 240 });
    expect(r.passes).toBeGreaterThan(3);
    expect(r.notes[0]).toMatch(/pass 1: the offset map filled up at 9 keys; cleaned up to offset/);
    expect(offsets(small)).toEqual(offsets(big));
    expect(offsets(small)).toEqual([...Array.from({ length: 30 }, (_, i) => 60 + i), 90]);
    expect(visibleRecords(small)).toEqual(visibleRecords(big));
    // The plan (run on a clone of links) says exactly what the run did.
    expect(plan.dryRun).toBe(true);
    expect(plan.passes).toBe(r.passes);
    expect(plan.segments.created.map((s) => [s.baseOffset, s.bytes, s.records])).toEqual(r.segments.created.map((s) => [s.baseOffset, s.bytes, s.records]));
    expect(plan.segments.rewritten.map((s) => s.baseOffset)).toEqual(r.segments.rewritten.map((s) => s.baseOffset));
    expect(plan.removed).toEqual(r.removed);
    expect(plan.retained).toEqual(r.retained);
    expect(plan.holes).toEqual([{ first: 0n, last: 59n }]);
    expect(plan.cleanerCheckpoint).toEqual(r.cleanerCheckpoint);
  });

  it('undo of a multi-pass run restores every byte of the partition and the cleaner checkpoint', () => {
    const dir = build();
    const logDir = join(dir, '..');
    const trashDir = tempDir('klx-trash-');
    const before = snapshotFiles(dir, [join(logDir, 'cleaner-offset-checkpoint')]);
    const out = compact(dir, { now: TS, dedupeBufferSize: 240, trashDir });
    expect(out.partitions[0]!.report!.passes).toBeGreaterThan(1);
    expect(snapshotFiles(dir, [join(logDir, 'cleaner-offset-checkpoint')])).not.toEqual(before);
    const u = undo(dir, { trashDir });
    expect(u.entries.length).toBe(out.partitions[0]!.report!.trashEntries!.length);
    expect(snapshotFiles(dir, [join(logDir, 'cleaner-offset-checkpoint')])).toEqual(before);
  });
});

describe('like the broker: dirty ratio and max.compaction.lag.ms', () => {
  function build(): string {
    return buildPartition(
      tempDir(),
      {
        segments: [
          { baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('b', '2', TS), rec('c', '3', TS)) },
          { baseOffset: 3n, batches: [{ baseOffset: 3n, records: [rec('a', '4', TS)] }, ...singles(rec('b', '5', TS))] },
          { baseOffset: 5n, batches: [{ baseOffset: 5n, records: [rec('z', '6', TS)] }] },
        ],
      },
      { cleanerOffset: 3n },
    );
  }

  it('a dirty ratio of 0.4 is below min.cleanable.dirty.ratio 0.5: a broker would not clean (the one-click run does)', () => {
    const dir = build();
    const p = planCompaction(dir, { now: TS + 1000, likeBroker: true });
    expect(p.cleanable).toMatchObject({ firstDirtyOffset: 3n, firstUncleanableOffset: 5n, cleanBytes: 210, cleanableBytes: 140, dirtyRatio: 0.4, mustCleanNow: false, brokerWouldClean: false });
    expect(p.nothingToDo).toBe(true);
    expect(p.notes.join('\n')).toMatch(/a broker would not clean it now: dirty ratio 0\.400 is not above min\.cleanable\.dirty\.ratio 0\.5/);
    const q = planCompaction(dir, { now: TS + 1000 });
    expect(q.removed.superseded?.ranges).toEqual([{ first: 0n, last: 1n }]);
  });

  it('past max.compaction.lag.ms the broker cleans whatever the ratio, and says by how much it is overdue', () => {
    const dir = build();
    const p = planCompaction(dir, { now: TS + 10_000, likeBroker: true, config: { 'max.compaction.lag.ms': 1000n } });
    expect(p.cleanable).toMatchObject({ dirtyRatio: 0.4, mustCleanNow: true, maxCompactionDelayMs: 9000, brokerWouldClean: true });
    expect(p.removed.superseded?.ranges).toEqual([{ first: 0n, last: 1n }]);
  });
});

describe('compact,delete', () => {
  it('retention follows compaction in the same run; its plan (on a clone of links) equals the run; undo reverses both', () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('a', '2', TS), rec('b', '3', TS)) },
        { baseOffset: 3n, batches: [{ baseOffset: 3n, records: [rec('a', '4', TS + 5 * 86_400_000)] }, ...singles(rec('c', '5', TS + 5 * 86_400_000))] },
        { baseOffset: 5n, batches: [{ baseOffset: 5n, records: [rec('d', '6', TS + 5 * 86_400_000)] }] },
      ],
    });
    const logDir = join(dir, '..');
    const cps = ['cleaner-offset-checkpoint', 'log-start-offset-checkpoint'].map((n) => join(logDir, n));
    const before = snapshotFiles(dir, cps);
    const opts = { now: TS + 5 * 86_400_000, config: { 'cleanup.policy': ['compact', 'delete'] as ('compact' | 'delete')[], 'retention.ms': 172_800_000n, 'segment.bytes': 150 } };
    const plan = planCompaction(dir, opts);
    expect(snapshotFiles(dir, cps)).toEqual(before);
    const trashDir = tempDir('klx-trash-');
    const out = compact(dir, { ...opts, trashDir });
    const r = out.partitions[0]!.report!;
    // seg@0 is cleaned (a@0, a@1 superseded), then its cleaned copy expires: net, seg@0 is replaced by nothing.
    expect(r.segments.rewritten.map((x) => x.baseOffset)).toEqual([0n]);
    expect(r.segments.created).toEqual([]);
    expect(r.removed.superseded?.ranges).toEqual([{ first: 0n, last: 1n }]);
    expect(r.removed.retention?.ranges).toEqual([{ first: 2n, last: 2n }]);
    expect(r.log.logStartOffsetAfter).toBe(3n);
    expect(offsets(dir)).toEqual([3, 4, 5]);
    expect(plan.segments).toEqual(r.segments);
    expect(plan.removed).toEqual(r.removed);
    expect(plan.log.logStartOffsetAfter).toBe(3n);
    expect(r.trashEntries).toHaveLength(2);
    undo(dir, { trashDir });
    expect(snapshotFiles(dir, cps)).toEqual(before);
  });
});

describe('classic rules beside kafka rules', () => {
  const D = 86_400_000n;
  function build(): string {
    return buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: singles(rec('k1', 'a', TS), rec('k1', null, TS + 1), rec('k2', 'b', TS + 2), rec('k2', null, TS + 3 * 86_400_000)) },
        { baseOffset: 4n, batches: [{ baseOffset: 4n, records: [rec('k3', 'c', TS)] }] },
      ],
    });
  }
  const now = TS + 2 * 86_400_000;

  it('classic: an old tombstone goes in one pass (no horizon written); a young one stays byte for byte', () => {
    const dir = build();
    const before = batchesOf(join(dir, '00000000000000000000.log'));
    const r = run(dir, { now, rules: 'classic', config: { 'delete.retention.ms': D } });
    expect(offsets(dir)).toEqual([3, 4]);
    expect(r.removed.tombstone?.ranges).toEqual([{ first: 1n, last: 1n }]);
    expect(r.removed.superseded?.ranges).toEqual([
      { first: 0n, last: 0n },
      { first: 2n, last: 2n },
    ]);
    const after = batchesOf(join(dir, '00000000000000000000.log'));
    expect(after[0]!.bytes.equals(before[3]!.bytes)).toBe(true);
  });

  it('kafka: the same tombstones are kept with a delete horizon on the first pass and go on a pass at or after it', () => {
    const dir = build();
    run(dir, { now, config: { 'delete.retention.ms': D } });
    expect(offsets(dir)).toEqual([1, 3, 4]);
    const bs = batchesOf(join(dir, '00000000000000000000.log'));
    expect(bs.map((b) => [b.base, b.attributes, b.bytes.readBigInt64BE(27)])).toEqual([
      [1, 0x40, BigInt(now) + D],
      [3, 0x40, BigInt(now) + D],
    ]);
    addSegment(dir, 5n, [{ records: [rec('k4', 'd', TS)] }]);
    run(dir, { now: now + Number(D) - 1, config: { 'delete.retention.ms': D } });
    expect(offsets(dir)).toEqual([1, 3, 4, 5]);
    addSegment(dir, 6n, [{ records: [rec('k5', 'e', TS)] }]);
    const r = run(dir, { now: now + Number(D), config: { 'delete.retention.ms': D } });
    expect(offsets(dir)).toEqual([4, 5, 6]);
    expect(r.removed.tombstone?.records).toBe(2);
  });
});
