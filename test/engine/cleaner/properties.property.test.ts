/**
 * Properties over generated logs (fast-check): for any log and any run,
 * - compaction keeps the latest value of every key (a key whose latest record is a tombstone may
 *   vanish), only removes offsets (every record left is byte-identical in key, value and timestamp),
 *   and its plan announces exactly what its run does;
 * - retention removes only a prefix of the records;
 * - undo restores every byte of the partition and of the checkpoints.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPartition, tempDir, type BatchInput, type SegmentInput } from '../../support/log-builder.ts';
import { planCompaction, runCompaction } from '../../../src-main/engine/cleaner/compaction.ts';
import { runRetention } from '../../../src-main/engine/cleaner/retention.ts';
import { undo } from '../../../src-main/engine/cleaner/cleaner.ts';
import { snapshotFiles, visibleRecords, type Rec } from './support.ts';

const T0 = 1_700_000_000_000;

const recordArb = fc.record({
  key: fc.oneof({ weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e') }, { weight: 1, arbitrary: fc.constant(null) }),
  value: fc.oneof({ weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) }, { weight: 1, arbitrary: fc.constant(null) }),
  dt: fc.integer({ min: 0, max: 5 * 86_400_000 }),
});
const batchArb = fc.record({ records: fc.array(recordArb, { minLength: 1, maxLength: 4 }), codec: fc.constantFrom('none', 'none', 'gzip', 'lz4') });
const logArb = fc.record({
  segments: fc.array(fc.array(batchArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
  active: fc.array(batchArb, { minLength: 0, maxLength: 2 }),
});
type GenLog = typeof logArb extends fc.Arbitrary<infer T> ? T : never;

function build(g: GenLog): string {
  let offset = 0n;
  const seg = (batches: GenLog['active']): SegmentInput => {
    const base = offset;
    const out: BatchInput[] = batches.map((b) => {
      const spec: BatchInput = { baseOffset: offset, compression: b.codec as 'none', records: b.records.map((r) => ({ key: r.key, value: r.value, timestamp: BigInt(T0 + r.dt) })) };
      offset += BigInt(b.records.length);
      return spec;
    });
    return { baseOffset: base, batches: out };
  };
  const segments = [...g.segments.map(seg), seg(g.active)];
  return buildPartition(tempDir(), { segments });
}

function latestByKey(recs: Rec[]): Map<string, Rec> {
  const m = new Map<string, Rec>();
  for (const r of recs) if (r.key !== null) m.set(r.key, r);
  return m;
}

const trash = () => ({ runId: 'p', trashDir: tempDir('klx-trash-') });

describe('cleaner properties', () => {
  it('compaction keeps the latest value of every key, only removes offsets, and its plan equals its run', () => {
    fc.assert(
      fc.property(logArb, fc.integer({ min: 0, max: 10 * 86_400_000 }), fc.constantFrom<'kafka' | 'classic'>('kafka', 'classic'), (g, later, rules) => {
        const dir = build(g);
        const before = visibleRecords(dir);
        const opts = { now: T0 + later, rules, config: { 'delete.retention.ms': 86_400_000n } };
        const plan = planCompaction(dir, opts);
        const r = runCompaction(dir, opts, trash());
        const after = visibleRecords(dir);
        const byOffset = new Map(before.map((x) => [x.offset, x]));
        for (const x of after) expect(byOffset.get(x.offset)).toEqual(x);
        const lb = latestByKey(before);
        const la = latestByKey(after);
        for (const [k, v] of lb) {
          if (la.has(k)) expect(la.get(k)).toEqual(v);
          else expect(v.value, `key ${k} vanished although its latest record is not a tombstone`).toBeNull();
        }
        expect(r.removed).toEqual(plan.removed);
        expect(r.segments.created.map((s) => [s.baseOffset, s.bytes, s.records])).toEqual(plan.segments.created.map((s) => [s.baseOffset, s.bytes, s.records]));
        const removed = Object.values(r.removed).reduce((a, x) => a + x!.records, 0);
        expect(after.length).toBe(before.length - removed);
      }),
      { numRuns: 40 },
    );
  });

  it('retention removes only a prefix of the records', () => {
    fc.assert(
      fc.property(logArb, fc.integer({ min: -1, max: 6 * 86_400_000 }), fc.integer({ min: -1, max: 800 }), (g, retentionMs, retentionBytes) => {
        const dir = build(g);
        const before = visibleRecords(dir);
        runRetention(dir, { now: T0 + 6 * 86_400_000, config: { 'retention.ms': BigInt(retentionMs), 'retention.bytes': BigInt(retentionBytes) } }, trash());
        const after = visibleRecords(dir);
        expect(after).toEqual(before.slice(before.length - after.length));
      }),
      { numRuns: 40 },
    );
  });

  it('undo restores every byte after compaction and retention', () => {
    fc.assert(
      fc.property(logArb, fc.boolean(), (g, compactIt) => {
        const dir = build(g);
        const logDir = join(dir, '..');
        const cps = ['cleaner-offset-checkpoint', 'log-start-offset-checkpoint'].map((n) => join(logDir, n));
        const snap = snapshotFiles(dir, cps);
        const t = trash();
        const r = compactIt ? runCompaction(dir, { now: T0 + 86_400_000 }, t) : runRetention(dir, { now: T0 + 6 * 86_400_000, config: { 'retention.ms': 86_400_000n } }, t);
        if (r.trashEntries?.length) undo(dir, { trashDir: t.trashDir });
        expect(snapshotFiles(dir, cps)).toEqual(snap);
      }),
      { numRuns: 30 },
    );
  });
});
