/**
 * Crash safety of retention: a crash injected before every file step of a run (trash links,
 * manifest, roll, each checkpoint sub-step, each rename to .deleted, each delete, the folder fsync)
 * leaves, after a broker-style recovery, either exactly the old visible records or exactly the new
 * ones (recovery: the engine's `recovery.ts`). A full disk and a read-only file before the commit point leave the folder as it was; after
 * it, the run is completed as far as possible and the records are the new ones.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { runRetention, type RetentionOptions } from '../../../src-main/engine/cleaner/retention.ts';
import { SimulatedCrash } from '../../../src-main/engine/cleaner/file-steps.ts';
import { listTrash } from '../../../src-main/engine/cleaner/trash.ts';
import { faultAt, osError, recordingHook, recover, snapshotFiles, visibleRecords, type Rec } from './support.ts';

function singleRecords(base: number, n: number, ts: number): BatchInput[] {
  return Array.from({ length: n }, (_, i) => ({ baseOffset: BigInt(base + i), records: [rec(`k${base + i}`, `v${base + i}`, ts)] }));
}

interface Scenario {
  name: string;
  build(): { logDir: string; dir: string };
  opts: RetentionOptions;
}

const scenarios: Scenario[] = [
  {
    name: 'two expired segments with snapshots and a leader-epoch-checkpoint',
    build() {
      const logDir = tempDir();
      const dir = buildPartition(logDir, {
        segments: [
          { baseOffset: 0n, batches: singleRecords(0, 20, 1000) },
          { baseOffset: 20n, batches: singleRecords(20, 20, 2000) },
          { baseOffset: 40n, batches: singleRecords(40, 5, 99_900) },
        ],
      });
      writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n1 30\n');
      writeFileSync(join(dir, '00000000000000000020.snapshot'), Buffer.alloc(10));
      return { logDir, dir };
    },
    opts: { now: 100_000, config: { 'retention.ms': 1000n } },
  },
  {
    name: 'the active segment rolled then deleted',
    build() {
      const logDir = tempDir();
      const dir = buildPartition(logDir, { segments: [{ baseOffset: 0n, batches: singleRecords(0, 10, 1000) }] });
      return { logDir, dir };
    },
    opts: { now: 10_000_000, config: { 'retention.ms': 1000n } },
  },
];

function expected(s: Scenario): { old: Rec[]; fresh: Rec[]; steps: number } {
  const { dir } = s.build();
  const old = visibleRecords(dir);
  const rh = recordingHook();
  runRetention(dir, s.opts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: rh.hook });
  return { old, fresh: visibleRecords(dir), steps: rh.steps.length };
}

describe('retention crash safety', () => {
  for (const s of scenarios) {
    it(`${s.name}: a crash before each file step, then recovery, leaves the whole old or the whole new records`, async () => {
      const { old, fresh, steps } = expected(s);
      expect(fresh.length).toBeLessThan(old.length);
      expect(steps).toBeGreaterThan(8);
      const outcomes: string[] = [];
      for (let i = 0; i < steps; i++) {
        const { dir } = s.build();
        const trashDir = tempDir('klx-trash-');
        expect(() => runRetention(dir, s.opts, { runId: 'r', trashDir, fault: faultAt(i) })).toThrow(SimulatedCrash);
        await recover(dir);
        const got = visibleRecords(dir);
        const which = JSON.stringify(got) === JSON.stringify(old) ? 'old' : JSON.stringify(got) === JSON.stringify(fresh) ? 'new' : 'MIXED';
        outcomes.push(which);
        expect(which, `crash at step ${i}`).not.toBe('MIXED');
      }
      // The commit point splits the steps: old before it, new after it, never back.
      const firstNew = outcomes.indexOf('new');
      expect(firstNew).toBeGreaterThan(0);
      expect(outcomes.slice(firstNew).every((o) => o === 'new')).toBe(true);
    });
  }

  it('a full disk while rolling the active segment: io-error, folder and trash as they were', () => {
    const s = scenarios[1]!;
    const { logDir, dir } = s.build();
    const before = snapshotFiles(dir, [join(logDir, 'log-start-offset-checkpoint')]);
    const trashDir = tempDir('klx-trash-');
    const disk = (step: string) => {
      if (step === 'roll-segment') throw osError('ENOSPC');
    };
    expect(() => runRetention(dir, s.opts, { runId: 'r', trashDir, fault: disk })).toThrow(/the disk is full \(ENOSPC\)/);
    expect(snapshotFiles(dir, [join(logDir, 'log-start-offset-checkpoint')])).toEqual(before);
    expect(listTrash(trashDir)).toEqual([]);
  });

  it('a read-only checkpoint file (EROFS at the commit): io-error, nothing changed', () => {
    const s = scenarios[0]!;
    const { logDir, dir } = s.build();
    const old = visibleRecords(dir);
    const before = snapshotFiles(dir);
    const trashDir = tempDir('klx-trash-');
    const ro = (step: string) => {
      if (step === 'write-checkpoint') throw osError('EROFS');
    };
    expect(() => runRetention(dir, s.opts, { runId: 'r', trashDir, fault: ro })).toThrow(/read-only/);
    expect(snapshotFiles(dir)).toEqual(before);
    expect(visibleRecords(dir)).toEqual(old);
    expect(existsSync(join(logDir, 'log-start-offset-checkpoint.tmp'))).toBe(false);
    expect(listTrash(trashDir)).toEqual([]);
  });

  it('a read-only segment file after the commit (EACCES renaming it): the run says so and the records are the new ones', () => {
    const s = scenarios[0]!;
    const { fresh } = expected(s);
    const { dir } = s.build();
    const trashDir = tempDir('klx-trash-');
    const ro = (step: string, path: string) => {
      if (step === 'rename-to-deleted' && path.endsWith('00000000000000000000.log')) throw osError('EACCES');
    };
    expect(() => runRetention(dir, s.opts, { runId: 'r', trashDir, fault: ro })).toThrow(/retention committed \(log start offset 40\) but could not finish: deleting segment 0/);
    expect(visibleRecords(dir)).toEqual(fresh);
  });
});
