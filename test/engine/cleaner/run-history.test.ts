/**
 * Run history kept with the trash (`run-history.ts`) and delete horizons (`delete-horizons.ts`):
 * a compaction's holes keep their run and reason ("removed by the compaction of … (superseded by
 * offset 1 (key a))"), an undo takes the run out, a no-op run records nothing; the tombstone's
 * batch shows its horizon (now + delete.retention.ms, KIP-534) and the "just after" clock removes it.
 */
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { compact, retention, undo } from '../../../src-main/engine/cleaner/cleaner.ts';
import { holeCause, readRunHistory } from '../../../src-main/engine/cleaner/run-history.ts';
import { deleteHorizons, horizonView, justAfterEarliestHorizon } from '../../../src-main/engine/cleaner/delete-horizons.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { addSegment, offsets } from './support.ts';

describe('run history and delete horizons', () => {
  it('a compaction run keeps its holes\' reason and run; undo takes the run out of the hole map; a no-op run records nothing', () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', 0), rec('a', null, 100)) }, { baseOffset: 2n, batches: singles(rec('z', 'z', 100)) }] });
    const trashDir = tempDir('klx-trash-');
    const config = { 'delete.retention.ms': 1000n };
    const out = compact(dir, { now: 500, config, trashDir, explain: {} });
    expect(offsets(dir)).toEqual([1, 2]);
    const { runs, notes } = readRunHistory(trashDir, dir);
    expect(notes).toEqual([]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ runId: out.runId, operation: 'compaction', rules: 'kafka', now: 500, removed: [{ reason: 'superseded', first: '0', last: '0' }], evidence: [{ offset: '0', evidence: 'superseded by offset 1 (key a)' }] });
    const cause = holeCause(runs, 0n)!;
    expect(cause.text).toMatch(/^removed by the compaction of \d{4}-\d\d-\d\d \d\d:\d\d UTC \(superseded by offset 1 \(key a\)\)$/);
    expect(holeCause(runs, 1n)).toBeNull();

    // The tombstone's batch carries the horizon 500 + 1000.
    const log = PartitionLog.open(dir);
    const h = deleteHorizons(log);
    expect(h.batches.map((b) => [Number(b.baseOffset), Number(b.horizon)])).toEqual([[1, 1500]]);
    expect(justAfterEarliestHorizon(log)).toBe(1501);
    expect(horizonView(1500n, 1000n).text).toBe('t=1500 ms (in 500 ms)');
    expect(horizonView(1500n, 1500n)).toMatchObject({ passed: true, text: 't=1500 ms (passes now)' });

    // A run that changes nothing leaves no line.
    compact(dir, { now: 600, config, trashDir });
    expect(readRunHistory(trashDir, dir).runs).toHaveLength(1);

    undo(dir, { trashDir });
    expect(offsets(dir)).toEqual([0, 1, 2]);
    const after = readRunHistory(trashDir, dir).runs;
    expect(after[0]!.undone).toBe(true);
    expect(holeCause(after, 0n)).toBeNull();
  });

  it('the tombstone goes in a clean at "just after the earliest delete horizon", and the history names that run; retention runs are recorded too', () => {
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', 0), rec('a', null, 100)) }, { baseOffset: 2n, batches: singles(rec('z', 'z', 100)) }] });
    const trashDir = tempDir('klx-trash-');
    const config = { 'delete.retention.ms': 1000n };
    compact(dir, { now: 500, config, trashDir });
    addSegment(dir, 3n, [{ records: [rec('y', 'y', 200)] }]);
    const at = justAfterEarliestHorizon(PartitionLog.open(dir))!;
    compact(dir, { now: at, config, trashDir, explain: {} });
    expect(offsets(dir)).toEqual([2, 3]);
    const runs = readRunHistory(trashDir, dir).runs;
    expect(runs.map((r) => r.now)).toEqual([500, 1501]);
    expect(holeCause(runs, 1n)!.text).toMatch(/\(tombstone removed: horizon passed \(delete horizon t=1500 ms ≤ now t=1501 ms\)\)$/);
    expect(holeCause(runs, 0n)!.text).toMatch(/\(superseded\)$/); // the first run collected no decisions: the reason only
    const ret = retention(dir, { now: 10_000, config: { 'cleanup.policy': ['delete'], 'retention.ms': 1000n }, trashDir });
    expect(ret.partitions[0]!.report!.log.logStartOffsetAfter).toBe(4n); // every segment is older than 1000 ms at 10000: an empty one is rolled at 4
    const all = readRunHistory(trashDir, dir).runs;
    expect(all.map((r) => r.operation)).toEqual(['compaction', 'compaction', 'retention']);
    expect(all[2]!.logStartOffsetAfter).toBe('4');
    expect(holeCause(all, 2n)!.text).toMatch(/^removed by the retention of .* \(retention\)$/);
  });
});
