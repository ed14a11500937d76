/**
 * Crash safety of compaction: a crash before every file step of a run (writing and flushing the
 * `.cleaned` segments and their indexes, linking the old files into the trash, each manifest write,
 * each `.cleaned → .swap` rename, each rename to `.deleted` and delete, each `.swap → final` rename,
 * the folder fsyncs, every sub-step of the cleaner checkpoint) is followed by the engine's startup
 * recovery (`recovery.ts`); the partition then holds exactly the old records or exactly the new ones,
 * never a mix, and the old state holds until the commit point, the new one after it. A full disk,
 * a read-only file and a cancellation before the commit leave the folder byte for byte as it was.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { SimulatedCrash, type CleanerStep } from '../../../src-main/engine/cleaner/file-steps.ts';
import { listTrash } from '../../../src-main/engine/cleaner/trash.ts';
import { faultAt, marker, osError, recordingHook, recover, snapshotFiles, visibleRecords, type Rec } from './support.ts';

const TS = 1_700_000_000_000;

function build(): string {
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
// Groups of at most two segments: {0, 4} and {8}.
// A 1 MiB offset map: the 128 MiB default takes seconds to allocate per run on a loaded machine, and this test runs ~60.
const opts: CompactionOptions = { now: TS + 1000, dedupeBufferSize: 1 << 20, config: { 'segment.bytes': 700, 'cleanup.policy': ['compact'] } };

function reference(): { old: Rec[]; fresh: Rec[]; steps: { step: CleanerStep; path: string }[] } {
  const dir = build();
  const old = visibleRecords(dir);
  const rh = recordingHook();
  runCompaction(dir, opts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: rh.hook });
  return { old, fresh: visibleRecords(dir), steps: rh.steps };
}

describe('compaction crash safety', () => {
  it('the reference run replaces two groups in one commit and changes the records', () => {
    const { old, fresh, steps } = reference();
    expect(old.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(fresh.map((r) => r.offset)).toEqual([3, 4, 7, 8, 9, 10, 11]);
    const kinds = new Set(steps.map((s) => s.step));
    for (const k of ['write-cleaned', 'flush-cleaned', 'write-cleaned-index', 'link-trash', 'write-manifest', 'rename-cleaned-to-swap', 'rename-to-deleted', 'delete-file', 'rename-swap-to-final', 'fsync-dir', 'write-checkpoint'] as CleanerStep[]) {
      expect(kinds.has(k), k).toBe(true);
    }
  });

  it('a crash before each file step, then recovery: the whole old or the whole new records, old until the commit point', async () => {
    const { old, fresh, steps } = reference();
    const outcomes: string[] = [];
    for (let i = 0; i < steps.length; i++) {
      const dir = build();
      expect(() => runCompaction(dir, opts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: faultAt(i) }), `step ${i} ${steps[i]!.step}`).toThrow(SimulatedCrash);
      await recover(dir);
      const got = JSON.stringify(visibleRecords(dir));
      const which = got === JSON.stringify(old) ? 'old' : got === JSON.stringify(fresh) ? 'new' : 'MIXED';
      outcomes.push(`${steps[i]!.step}:${which}`);
      expect(which, `crash before step ${i} (${steps[i]!.step} ${steps[i]!.path})`).not.toBe('MIXED');
    }
    const firstNew = outcomes.findIndex((o) => o.endsWith(':new'));
    expect(firstNew).toBeGreaterThan(0);
    expect(outcomes.slice(firstNew).every((o) => o.endsWith(':new'))).toBe(true);
    // The commit point is the last .cleaned → .swap rename.
    const lastCleanedRename = steps.map((s) => s.step).lastIndexOf('rename-cleaned-to-swap');
    expect(firstNew).toBe(lastCleanedRename + 1);
  });

  it('after a crash and recovery the partition can be compacted again to the same records', async () => {
    const { fresh, steps } = reference();
    const mid = steps.findIndex((s) => s.step === 'rename-to-deleted');
    const dir = build();
    expect(() => runCompaction(dir, opts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: faultAt(mid) })).toThrow(SimulatedCrash);
    await recover(dir);
    runCompaction(dir, { ...opts, now: (opts.now as number) + 1 }, { runId: 'r2', trashDir: tempDir('klx-trash-') });
    expect(visibleRecords(dir)).toEqual(fresh);
  });

  it('a full disk while writing a cleaned segment: io-error, the folder and the trash as they were', () => {
    const dir = build();
    const before = snapshotFiles(dir, [join(dir, '..', 'cleaner-offset-checkpoint')]);
    const trashDir = tempDir('klx-trash-');
    let n = 0;
    const disk = (step: CleanerStep) => {
      if (step === 'write-cleaned' && ++n === 3) throw osError('ENOSPC');
    };
    expect(() => runCompaction(dir, opts, { runId: 'r', trashDir, fault: disk })).toThrow(/the disk is full \(ENOSPC\)/);
    expect(snapshotFiles(dir, [join(dir, '..', 'cleaner-offset-checkpoint')])).toEqual(before);
    expect(listTrash(trashDir)).toEqual([]);
  });

  it('a read-only file at the first .cleaned → .swap rename: io-error, nothing changed', () => {
    const dir = build();
    const before = snapshotFiles(dir);
    const trashDir = tempDir('klx-trash-');
    const ro = (step: CleanerStep) => {
      if (step === 'rename-cleaned-to-swap') throw osError('EROFS');
    };
    expect(() => runCompaction(dir, opts, { runId: 'r', trashDir, fault: ro })).toThrow(/read-only/);
    expect(snapshotFiles(dir)).toEqual(before);
    expect(listTrash(trashDir)).toEqual([]);
  });

  it('a read-only old segment after the commit: the run says recovery completes it, and after recovery the records are the new ones', async () => {
    const { fresh } = reference();
    const dir = build();
    const ro = (step: CleanerStep) => {
      if (step === 'rename-to-deleted') throw osError('EACCES');
    };
    expect(() => runCompaction(dir, opts, { runId: 'r', trashDir: tempDir('klx-trash-'), fault: ro })).toThrow(/compaction committed but could not finish replacing the segments.*recovery/);
    await recover(dir);
    expect(visibleRecords(dir)).toEqual(fresh);
  });

  it('cancelled while cleaning: the folder is left byte for byte as it was (the .cleaned files removed)', () => {
    const dir = build();
    const before = snapshotFiles(dir);
    const ac = new AbortController();
    const trashDir = tempDir('klx-trash-');
    expect(() =>
      runCompaction(dir, opts, {
        runId: 'r',
        trashDir,
        signal: ac.signal,
        onProgress: (p) => {
          if (p.phase === 'clean') ac.abort();
        },
      }),
    ).toThrow(/cancelled/);
    expect(snapshotFiles(dir)).toEqual(before);
    expect(listTrash(trashDir)).toEqual([]);
  });
});
