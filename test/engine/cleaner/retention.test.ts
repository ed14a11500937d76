/**
 * Retention (spec §12): time, size and log-start-offset rules with the prefix rule and the high
 * watermark bound; plan = run; undo restores every byte. Cases B08, B10, B19(c).
 */
import { appendFileSync, existsSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { planRetention, runRetention } from '../../../src-main/engine/cleaner/retention.ts';
import { retention, undo } from '../../../src-main/engine/cleaner/cleaner.ts';
import { listTrash } from '../../../src-main/engine/cleaner/trash.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { DAY, TS, offsets, snapshotFiles } from './support.ts';

/** `n` single-record batches from `base`, timestamps from `ts(i)`. */
function singleRecords(base: number, n: number, ts: (i: number) => number): BatchInput[] {
  return Array.from({ length: n }, (_, i) => ({ baseOffset: BigInt(base + i), records: [rec(`k${String(base + i).padStart(4, '0')}`, `v${String(base + i).padStart(4, '0')}`, ts(i))] }));
}

const ctx = () => ({ runId: 'test-run', trashDir: tempDir('klx-trash-') });

describe('retention', () => {
  function b08(noTimeIndexFor100 = false) {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [
        { baseOffset: 0n, batches: singleRecords(0, 100, () => TS - 10 * DAY) },
        { baseOffset: 100n, batches: singleRecords(100, 100, (i) => (i === 50 ? TS + 365 * DAY : TS - 9 * DAY)) },
        { baseOffset: 200n, batches: singleRecords(200, 100, () => TS - 8 * DAY) },
        { baseOffset: 300n, batches: singleRecords(300, 5, () => TS - 3_600_000) },
      ],
    });
    if (noTimeIndexFor100) unlinkSync(join(dir, '00000000000000000100.timeindex'));
    return { logDir, dir };
  }

  it('B08: a future timestamp blocks its segment and every later one; only seg@0 goes and the log start becomes 100', () => {
    const { logDir, dir } = b08();
    const opts = { now: TS, config: { 'retention.ms': 86_400_000n } };
    const plan = planRetention(dir, opts);
    expect(plan.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(plan.log.logStartOffsetAfter).toBe(100n);
    expect(plan.notes.join('\n')).toMatch(/segment 100: its largest timestamp 1731536000000 is 365.00 days in the future/);
    const run = runRetention(dir, opts, ctx());
    expect(run.segments.deleted.map((s) => [s.baseOffset, s.records, s.bytes])).toEqual(plan.segments.deleted.map((s) => [s.baseOffset, s.records, s.bytes]));
    expect(run.log.logStartOffsetAfter).toBe(100n);
    expect(existsSync(join(dir, '00000000000000000000.log'))).toBe(false);
    expect(existsSync(join(dir, '00000000000000000200.log'))).toBe(true);
    expect(readFileSync(join(logDir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 100\n');
    expect(offsets(dir)[0]).toBe(100);
    expect(offsets(dir)).toHaveLength(205);
  });

  it('B08: without seg@100.timeindex the largest timestamp is recomputed from the .log (not the file mtime)', () => {
    const { dir } = b08(true);
    // An old mtime would make seg@100 look expired if the mtime were used.
    utimesSync(join(dir, '00000000000000000100.log'), new Date(TS - 30 * DAY), new Date(TS - 30 * DAY));
    const plan = planRetention(dir, { now: TS, config: { 'retention.ms': 86_400_000n } });
    expect(plan.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(plan.notes.join('\n')).toMatch(/segment 100: its largest timestamp 1731536000000 \(read from the \.log\) is 365\.00 days in the future/);
  });

  function b10(cp: { highWatermark?: bigint; logStartOffset?: bigint } = {}) {
    const logDir = tempDir();
    const dir = buildPartition(
      logDir,
      {
        segments: [
          { baseOffset: 0n, batches: singleRecords(0, 100, () => 1000) },
          { baseOffset: 100n, batches: singleRecords(100, 100, () => 2000) },
          { baseOffset: 200n, batches: singleRecords(200, 11, () => 99_900) },
        ],
      },
      cp,
    );
    return { logDir, dir };
  }

  it('B10: time retention deletes seg@0 and seg@100, the log start becomes 200 (checkpoint written), offset 50 is out of range', () => {
    const { logDir, dir } = b10();
    const r = runRetention(dir, { now: 100_000, config: { 'retention.ms': 1000n } }, ctx());
    expect(r.segments.deleted.map((s) => s.baseOffset)).toEqual([0n, 100n]);
    expect(r.removed.retention).toEqual({ records: 200, ranges: [{ first: 0n, last: 199n }], truncated: false });
    expect(readFileSync(join(logDir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 200\n');
    const log = PartitionLog.open(dir);
    expect(log.logStartOffset).toBe(200n);
    expect(log.logEndOffset).toBe(211n);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([200n]);
    expect(50n < log.logStartOffset).toBe(true); // a fetch at 50 is below the log start: OffsetOutOfRange
    expect(offsets(dir)).toEqual(Array.from({ length: 11 }, (_, i) => 200 + i));
  });

  it('B10: with a high watermark of 150, seg@100 (upper bound 200) is kept and the log start is 100', () => {
    const { dir } = b10({ highWatermark: 150n });
    const r = runRetention(dir, { now: 100_000, config: { 'retention.ms': 1000n } }, ctx());
    expect(r.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(r.log.logStartOffsetAfter).toBe(100n);
    expect(r.notes.join('\n')).toMatch(/segment 100: its records run to offset 199, at or beyond the high watermark 150/);
  });

  it('B10: DeleteRecords (log start 150) under cleanup.policy=compact deletes seg@0 only and hides 100–149', () => {
    const { logDir, dir } = b10({ logStartOffset: 150n });
    const r = runRetention(dir, { now: 100_000, config: { 'cleanup.policy': ['compact'], 'retention.ms': 1000n } }, ctx());
    expect(r.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(r.log.logStartOffsetAfter).toBe(150n);
    expect(r.notes.join('\n')).toMatch(/only the log-start-offset rule applies/);
    expect(offsets(dir)[0]).toBe(150);
    expect(existsSync(join(dir, '00000000000000000100.log'))).toBe(true);
    expect(readFileSync(join(logDir, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\ntest 0 150\n');
  });

  it('DeleteRecords on a compact-only topic is refused as a broker refuses it (Partition.deleteRecordsOnLeader: PolicyViolationException); compact,delete accepts it', () => {
    const { dir } = b10();
    expect(() => planRetention(dir, { now: 100_000, config: { 'cleanup.policy': ['compact'] }, deleteBeforeOffset: 150n })).toThrow(
      'Records of partition test-0 can not be deleted due to the configured policy (cleanup.policy=compact): a broker refuses DeleteRecords unless the policy includes delete (Partition.deleteRecordsOnLeader)',
    );
    const plan = planRetention(dir, { now: 100_000, config: { 'cleanup.policy': ['compact', 'delete'], 'retention.ms': -1n }, deleteBeforeOffset: 150n });
    expect(plan.log.logStartOffsetAfter).toBe(150n);
  });

  it('B10: --delete-before-offset 150 raises the log start, deletes seg@0 and reports the hidden records; above the HW it is refused', () => {
    const { dir } = b10();
    const plan = planRetention(dir, { now: 100_000, config: { 'retention.ms': -1n }, deleteBeforeOffset: 150n });
    expect(plan.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(plan.log.logStartOffsetAfter).toBe(150n);
    expect(plan.removed.retention?.records).toBe(150);
    expect(plan.removed.retention?.ranges).toEqual([{ first: 0n, last: 149n }]);
    const r = runRetention(dir, { now: 100_000, config: { 'retention.ms': -1n }, deleteBeforeOffset: 150n }, ctx());
    expect(r.log.logStartOffsetAfter).toBe(150n);
    expect(offsets(dir)[0]).toBe(150);
    const { dir: dir2 } = b10({ highWatermark: 150n });
    expect(() => planRetention(dir2, { now: 100_000, deleteBeforeOffset: 151n })).toThrow(/Cannot increment the log start offset to 151 of partition test-0 since it is larger than the high watermark 150/);
  });

  it('B19: time retention deletes a non-empty active segment after rolling an empty seg@10; the log start becomes 10', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singleRecords(0, 10, () => 1000) }] });
    const r = runRetention(dir, { now: 10_000_000, config: { 'retention.ms': 1000n } }, ctx());
    expect(r.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(r.segments.created.map((s) => [s.baseOffset, s.bytes])).toEqual([[10n, 0]]);
    const log = PartitionLog.open(dir);
    expect(log.segments.map((s) => [s.baseOffset, s.size])).toEqual([[10n, 0]]);
    expect(log.logStartOffset).toBe(10n);
    expect(log.logEndOffset).toBe(10n);
    // The empty last segment is never deleted: a second run changes nothing.
    const again = runRetention(dir, { now: 20_000_000, config: { 'retention.ms': 1000n } }, ctx());
    expect(again.nothingToDo).toBe(true);
  });

  it('size rule: excess = size − retention.bytes, whole segments oldest first while excess − size ≥ 0', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, {
      segments: [0, 10, 20, 30].map((b) => ({ baseOffset: BigInt(b), batches: singleRecords(b, 10, () => TS) })),
    });
    const log = PartitionLog.open(dir);
    const sizes = log.segments.map((s) => s.size);
    expect(new Set(sizes).size).toBe(1); // 4 equal segments of s bytes
    const s = sizes[0]!;
    // size 4s; limit 2s − 1 → excess 2s + 1: two segments go (excess left 1), a third would overshoot.
    const plan = planRetention(dir, { now: TS, config: { 'retention.bytes': BigInt(2 * s - 1), 'retention.ms': -1n } });
    expect(plan.segments.deleted.map((x) => x.baseOffset)).toEqual([0n, 10n]);
    expect(plan.log.bytesAfter).toBe(2 * s);
    // Below the limit nothing happens.
    expect(planRetention(dir, { now: TS, config: { 'retention.bytes': BigInt(4 * s + 1), 'retention.ms': -1n } }).nothingToDo).toBe(true);
    // Exactly at the limit the rule runs with excess 0: nothing goes.
    expect(planRetention(dir, { now: TS, config: { 'retention.bytes': BigInt(4 * s), 'retention.ms': -1n } }).segments.deleted).toEqual([]);
  });

  it('time rule is strict (now − largest > retention.ms) and the empty active segment is never deleted', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singleRecords(0, 3, () => 1000) }, { baseOffset: 3n, batches: [] }] });
    expect(planRetention(dir, { now: 2000, config: { 'retention.ms': 1000n } }).segments.deleted).toEqual([]);
    const p = planRetention(dir, { now: 2001, config: { 'retention.ms': 1000n } });
    expect(p.segments.deleted.map((s) => s.baseOffset)).toEqual([0n]);
    expect(p.segments.created).toEqual([]);
    expect(p.log.logStartOffsetAfter).toBe(3n);
  });

  it('plan touches nothing; undo restores every byte of the partition and its checkpoints', () => {
    const { logDir, dir } = b10();
    const epochs = join(dir, 'leader-epoch-checkpoint');
    writeFileSync(epochs, '0\n2\n0 0\n3 150\n');
    const cps = ['log-start-offset-checkpoint', 'replication-offset-checkpoint'].map((n) => join(logDir, n));
    const before = snapshotFiles(dir, cps);
    planRetention(dir, { now: 100_000, config: { 'retention.ms': 1000n } });
    expect(snapshotFiles(dir, cps)).toEqual(before);
    const trashDir = tempDir('klx-trash-');
    const out = retention(dir, { now: 100_000, config: { 'retention.ms': 1000n }, trashDir });
    expect(out.partitions[0]!.error).toBeUndefined();
    expect(readFileSync(epochs, 'utf8')).toBe('0\n1\n3 200\n');
    expect(listTrash(trashDir)).toHaveLength(1);
    const u = undo(dir, { trashDir });
    expect(u.entries).toHaveLength(1);
    expect(snapshotFiles(dir, cps)).toEqual(before);
    expect(listTrash(trashDir)).toHaveLength(0);
  });

  it('undo is refused, touching nothing, when the partition changed after the run', () => {
    const logDir = tempDir();
    const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singleRecords(0, 10, () => 1000) }] });
    const trashDir = tempDir('klx-trash-');
    retention(dir, { now: 10_000_000, config: { 'retention.ms': 1000n }, trashDir });
    // A broker appended to the rolled segment afterwards.
    appendFileSync(join(dir, '00000000000000000010.log'), Buffer.alloc(10, 1));
    const before = snapshotFiles(dir);
    expect(() => undo(dir, { trashDir })).toThrow(/00000000000000000010\.log, written by the run, changed size/);
    expect(snapshotFiles(dir)).toEqual(before);
    rmSync(trashDir, { recursive: true });
  });
});
