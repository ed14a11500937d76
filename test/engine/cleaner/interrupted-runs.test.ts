/**
 * Undo after a crash (issue 17, defect 6): a compaction or retention run killed at any file step is
 * followed by startup recovery (the engine's `recovery.ts`) and `undo`. A crash past the commit point
 * leaves a `prepared` trash entry; recovery must finish it so that undo puts back, byte for byte,
 * the segments the run replaced (before the fix undo refused for good: "did not finish (state
 * prepared)"). A crash before the commit point leaves the folder as it was and its entry is removed.
 * The crash is the cleaner's crash-injection hook (a throw before the n-th file step, no clean-up:
 * the files are exactly as a process killed at that instant leaves them); `klx repair` + `klx undo`
 * are run as child processes once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { klx } from '../../support/klx-cli.ts';
import { runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { runRetention, type RetentionOptions } from '../../../src-main/engine/cleaner/retention.ts';
import { undo } from '../../../src-main/engine/cleaner/cleaner.ts';
import { SimulatedCrash, type CleanerFaultHook } from '../../../src-main/engine/cleaner/file-steps.ts';
import { finishInterruptedRuns } from '../../../src-main/engine/cleaner/interrupted-runs.ts';
import { listTrash } from '../../../src-main/engine/cleaner/trash.ts';
import { readCheckpointEntry } from '../../../src-main/engine/cleaner/checkpoint-entries.ts';
import { writeFileSync } from 'node:fs';
import { faultAt, marker, recordingHook, recover, snapshotFiles, visibleRecords } from './support.ts';

const TS = 1_700_000_000_000;

function buildCompactable(): string {
  const txn = (recs: ReturnType<typeof rec>[]): BatchInput => ({ isTransactional: true, producerId: 7n, producerEpoch: 0, baseSequence: 0, records: recs });
  return buildPartition(tempDir(), {
    segments: [
      { baseOffset: 0n, batches: singles(rec('a', '1', TS), rec('b', '2', TS), rec('a', '3', TS), rec('c', null, TS)) },
      { baseOffset: 4n, batches: [{ baseOffset: 4n, records: [rec('b', '4', TS), rec('d', '5', TS)], compression: 'gzip' }, txn([rec('e', 'x', TS)]), marker('ABORT', 7n, TS)], txnIndex: [{ producerId: 7n, firstOffset: 6n, lastOffset: 7n, lastStableOffset: 8n }] },
      { baseOffset: 8n, batches: [{ baseOffset: 8n, records: [rec('a', '6', TS)] }, ...singles(rec('f', '7', TS), rec('d', '8', TS))] },
      { baseOffset: 11n, batches: [{ baseOffset: 11n, records: [rec('g', '9', TS)] }] },
    ],
  });
}
// A 1 MiB offset map (the 128 MiB default takes seconds to allocate on a loaded machine).
const compactOpts: CompactionOptions = { now: TS + 1000, dedupeBufferSize: 1 << 20, config: { 'segment.bytes': 700, 'cleanup.policy': ['compact'] } };

function buildRetention(): string {
  const recs = (base: number, n: number, ts: number): BatchInput[] => Array.from({ length: n }, (_, i) => ({ baseOffset: BigInt(base + i), records: [rec(`k${base + i}`, `v${base + i}`, ts)] }));
  const dir = buildPartition(tempDir(), {
    segments: [
      { baseOffset: 0n, batches: recs(0, 20, 1000) },
      { baseOffset: 20n, batches: recs(20, 20, 2000) },
      { baseOffset: 40n, batches: recs(40, 5, 99_900) },
    ],
  });
  writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n1 30\n');
  writeFileSync(join(dir, '00000000000000000020.snapshot'), Buffer.alloc(10));
  return dir;
}
const retentionOpts: RetentionOptions = { now: 100_000, config: { 'retention.ms': 1000n } };

/** The segment files and metadata of a partition (bytes by name), what undo must put back exactly. */
function partitionBytes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, bytes] of snapshotFiles(dir)) if (/\.(log|index|timeindex|txnindex|snapshot)$|^leader-epoch-checkpoint$/.test(name)) out[name] = bytes.toString('hex');
  return out;
}

type Run = (dir: string, trashDir: string, fault?: CleanerFaultHook) => void;

async function everyCrash(build: () => string, run: Run, checkpointFile: string, from: string): Promise<string[]> {
  const ref = build();
  const rh = recordingHook();
  run(ref, tempDir('klx-trash-'), rh.hook);
  const outcomes: string[] = [];
  // Two steps before the first `from` step (before the commit point), then the first and the last
  // crash point of every kind of step from there on (the bounds of each phase after the commit).
  const start = Math.max(0, rh.steps.findIndex((s) => s.step === from) - 2);
  const picked = new Set<number>([start, start + 1]);
  for (let i = start; i < rh.steps.length; i++) {
    const kind = rh.steps[i]!.step;
    if (rh.steps.findIndex((s, j) => j >= start && s.step === kind) === i || rh.steps.findLastIndex((s) => s.step === kind) === i) picked.add(i);
  }
  for (const i of [...picked].sort((a, b) => a - b)) {
    const dir = build();
    const logDir = join(dir, '..');
    const oldRecords = visibleRecords(dir);
    const oldBytes = partitionBytes(dir);
    const oldCheckpoint = readCheckpointEntry(logDir, checkpointFile, 'test', 0);
    const trashDir = tempDir('klx-trash-');
    const where = `crash before step ${i} (${rh.steps[i]!.step})`;
    expect(() => run(dir, trashDir, faultAt(i)), where).toThrow(SimulatedCrash);
    await recover(dir);
    const finished = finishInterruptedRuns(dir, trashDir);
    expect(finished.length, where).toBeLessThanOrEqual(1);
    // No prepared entry: the crash came after the commit manifest's rename (the run was done).
    const outcome = finished[0]?.outcome ?? (listTrash(trashDir).some((e) => e.manifest?.state === 'committed') ? 'committed' : 'none');
    outcomes.push(outcome);
    expect(outcome, `${where}: ${finished[0]?.reason}`).not.toBe('left');
    if (outcome === 'committed') {
      expect(visibleRecords(dir), where).not.toEqual(oldRecords);
      expect(listTrash(trashDir).map((e) => e.manifest!.state), where).toEqual(['committed']);
      undo(dir, { trashDir });
    } else {
      // Before the commit point: the folder holds the old records and the trash nothing.
      // (a crash before the first manifest write leaves an empty entry folder without one, which holds nothing)
      expect(listTrash(trashDir).filter((e) => e.manifest !== null || e.bytes > 0), where).toEqual([]);
    }
    expect(visibleRecords(dir), where).toEqual(oldRecords);
    expect(partitionBytes(dir), where).toEqual(oldBytes);
    expect(readCheckpointEntry(logDir, checkpointFile, 'test', 0), where).toBe(oldCheckpoint);
  }
  return outcomes;
}

describe('undo after a crash past the commit point', () => {
  it('compaction: a crash at each step, recovery, then undo gives back the old segments byte for byte', async () => {
    const outcomes = await everyCrash(buildCompactable, (dir, trashDir, fault) => void runCompaction(dir, compactOpts, { runId: 'r', trashDir, ...(fault ? { fault } : {}) }), 'cleaner-offset-checkpoint', 'rename-cleaned-to-swap');
    const first = outcomes.indexOf('committed');
    // Crashes from the last .cleaned → .swap rename on are past the commit point; every one of them is undoable.
    expect(first).toBeGreaterThan(2);
    expect(outcomes.slice(first).every((o) => o === 'committed')).toBe(true);
    expect(outcomes.length - first).toBeGreaterThanOrEqual(8);
  }, 60_000);

  it('retention: a crash at each step, recovery, then undo gives back the deleted segments, the snapshot and the leader epochs', async () => {
    const outcomes = await everyCrash(buildRetention, (dir, trashDir, fault) => void runRetention(dir, retentionOpts, { runId: 'r', trashDir, ...(fault ? { fault } : {}) }), 'log-start-offset-checkpoint', 'write-checkpoint');
    const first = outcomes.indexOf('committed');
    expect(first).toBeGreaterThan(2);
    expect(outcomes.slice(first).every((o) => o === 'committed')).toBe(true);
    expect(outcomes.length - first).toBeGreaterThanOrEqual(6);
  }, 60_000);

  it('undo on its own finishes an interrupted run once the folder is recovered (what the app calls)', async () => {
    const dir = buildCompactable();
    const old = partitionBytes(dir);
    const trashDir = tempDir('klx-trash-');
    const rh = recordingHook();
    runCompaction(buildCompactable(), compactOpts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: rh.hook });
    const crashAt = rh.steps.findIndex((s) => s.step === 'rename-to-deleted');
    expect(() => runCompaction(dir, compactOpts, { runId: 'r', trashDir, fault: faultAt(crashAt) })).toThrow(SimulatedCrash);
    // Unrecovered (.swap files in the folder): undo refuses and touches nothing.
    expect(() => undo(dir, { trashDir })).toThrow(/did not finish \(state prepared\)/);
    await recover(dir);
    const r = undo(dir, { trashDir });
    expect(r.entries.map((e) => e.operation)).toEqual(['compaction']);
    expect(partitionBytes(dir)).toEqual(old);
  });

  it('a run interrupted before its commit point: undo says there is nothing to undo and removes its entry', async () => {
    const dir = buildCompactable();
    const trashDir = tempDir('klx-trash-');
    const rh = recordingHook();
    runCompaction(buildCompactable(), compactOpts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: rh.hook });
    const crashAt = rh.steps.findIndex((s) => s.step === 'rename-cleaned-to-swap');
    expect(() => runCompaction(dir, compactOpts, { runId: 'r', trashDir, fault: faultAt(crashAt) })).toThrow(SimulatedCrash);
    await recover(dir);
    expect(listTrash(trashDir).map((e) => e.manifest!.state)).toEqual(['prepared']);
    expect(() => undo(dir, { trashDir })).toThrow(/nothing to undo: the latest run \(r\) was interrupted before its commit point/);
    expect(listTrash(trashDir)).toEqual([]);
  });

  it('klx repair finishes the entry and klx undo then restores the old bytes', () => {
    const dir = buildCompactable();
    const old = partitionBytes(dir);
    const trashDir = tempDir('klx-trash-');
    const rh = recordingHook();
    runCompaction(buildCompactable(), compactOpts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: rh.hook });
    const crashAt = rh.steps.findIndex((s) => s.step === 'rename-swap-to-final');
    expect(() => runCompaction(dir, compactOpts, { runId: 'r', trashDir, fault: faultAt(crashAt) })).toThrow(SimulatedCrash);
    const before = klx('undo', dir, '--trash-dir', trashDir);
    expect(before.status).toBe(1);
    expect(before.stderr).toMatch(/did not finish/);
    const repair = klx('repair', dir, '--trash-dir', trashDir);
    expect(repair.stderr).toBe('');
    expect(repair.status).toBe(0);
    expect(repair.stdout).toMatch(/interrupted compaction run \(trash entry .*\): the compaction had passed its commit point/);
    const manifest = JSON.parse(readFileSync(join(listTrash(trashDir)[0]!.path, 'manifest.json'), 'utf8'));
    expect(manifest.state).toBe('committed');
    expect(manifest.finishedByRecovery).toMatch(/finished by recovery/);
    const u = klx('undo', dir, '--trash-dir', trashDir);
    expect(u.stderr).toBe('');
    expect(u.status).toBe(0);
    expect(partitionBytes(dir)).toEqual(old);
  });
});
