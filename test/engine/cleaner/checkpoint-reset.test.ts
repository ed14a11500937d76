/**
 * Issue 13, finding 5: a `cleaner-offset-checkpoint` entry beyond the log end (or below the log
 * start) is reset to the log start offset by `LogCleanerManager.cleanableOffsets`, which logs a
 * warning with these words; the plan and the run print it in their notes, and verify ranks it a
 * warning. (Below the log start on a compact,delete topic the broker resets it silently.)
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { planCompaction, runCompaction } from '../../../src-main/engine/cleaner/compaction.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';

const TS = 1_000_000;

function build(cleanerOffset: bigint, logStartOffset = 0n, policy = 'compact'): string {
  const dir = buildPartition(
    tempDir(),
    { topic: 'ck', segments: [{ baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('a', '2', TS), rec('b', '3', TS)) }, { baseOffset: 3n, batches: singles(rec('z', '4', TS)) }] },
    { cleanerOffset, logStartOffset, cleanShutdown: true },
  );
  return dir;
}

describe('cleaner checkpoint out of range: the broker\'s warning', () => {
  it('beyond the log end: plan and run notes carry LogCleanerManager\'s warning; verify ranks it a warning', async () => {
    const dir = build(40n);
    const text = 'WARN The last checkpoint dirty offset for partition ck-0 is 40, which is larger than the log end offset 4. Resetting to the log start offset 0. (cleaner-offset-checkpoint; a broker logs this and cleans from the log start)';
    const cfg = { 'cleanup.policy': ['compact'] as ('compact' | 'delete')[] };
    const plan = planCompaction(dir, { now: TS + 1000, config: cfg });
    expect(plan.notes[0]).toBe(text);
    expect(plan.removed.superseded?.ranges).toEqual([{ first: 0n, last: 0n }]);
    const v = await verifyPartition(PartitionLog.open(dir, { config: cfg }));
    const f = v.findings.find((x) => x.file.endsWith('cleaner-offset-checkpoint'))!;
    expect([f.severity, f.code]).toEqual(['warning', 'checkpoint-beyond-log-end']);
    expect(f.reason).toContain('"The last checkpoint dirty offset for partition ck-0 is 40, which is larger than the log end offset 4. Resetting to the log start offset 0."');
    const run = runCompaction(dir, { now: TS + 1000, config: cfg }, { runId: 'r1', trashDir: join(dir, '..', '.klx-trash') });
    expect(run.notes[0]).toBe(text);
  });

  it('below the log start: the reset warning for compact, silence (info) for compact,delete', async () => {
    const dir = build(0n, 1n);
    const plan = planCompaction(dir, { now: TS + 1000, config: { 'cleanup.policy': ['compact'] } });
    expect(plan.notes[0]).toBe('WARN Resetting first dirty offset of ck-0 to log start offset 1 since the checkpointed offset 0 is invalid. (cleaner-offset-checkpoint; a broker logs this and cleans from the log start)');
    const v = await verifyPartition(PartitionLog.open(dir, { config: { 'cleanup.policy': ['compact'] } }));
    expect(v.findings.filter((x) => x.file.endsWith('cleaner-offset-checkpoint')).map((x) => [x.severity, x.code])).toEqual([['warning', 'checkpoint-below-log-start']]);
    const both = { 'cleanup.policy': ['compact', 'delete'] as ('compact' | 'delete')[] };
    const quiet = planCompaction(dir, { now: TS + 1000, config: both });
    expect(quiet.notes.some((n) => n.startsWith('WARN'))).toBe(false);
    const v2 = await verifyPartition(PartitionLog.open(dir, { config: both }));
    expect(v2.findings.filter((x) => x.file.endsWith('cleaner-offset-checkpoint')).map((x) => [x.severity, x.code])).toEqual([['info', 'checkpoint-below-log-start']]);
  });
});
