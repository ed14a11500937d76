/**
 * Crash safety of the partition writer: a crash (the fault hook throws) before every step of an
 * append, of a roll and of a partition creation, and a batch cut short by a crash in the middle of
 * its write. After each crash the folder must open read-only with every acknowledged record, the
 * in-flight batch either whole or absent (never served half), nothing duplicated; the writer must
 * reopen (or, after a torn write, refuse pointing at `klx repair`); recovery (`recovery.ts`) must
 * leave it clean.
 */
import { cpSync, existsSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { parsePartitionDirName } from '../../../src-main/engine/files/file-names.ts';
import { buildTimeIndexEntries, encodeTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { openPath } from '../../../src-main/engine/log/log-dir.ts';
import { applyRecovery, planRecovery } from '../../../src-main/engine/log/recovery.ts';
import { PartitionWriter, type AppendRecord } from '../../../src-main/engine/log/partition-writer.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import type { AtomicWriterStep, WriterStep } from '../../../src-main/engine/log/write-steps.ts';
import type { TopicConfig } from '../../../src-main/engine/log/topic-config.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';

class Crash extends Error {}

const CLOCK = (): bigint => 1_700_000_000_000n;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Rec {
  offset: bigint;
  key: string | null;
  value: string | null;
}

interface Setup {
  dir: string;
  acked: Rec[];
  config?: Partial<TopicConfig>;
}

interface Scenario {
  name: string;
  setup(ld: string): Setup;
  /** The records the crashing operation tries to add (in one batch). */
  inflight: AppendRecord[];
  /** The operation that crashes. */
  op(w: PartitionWriter, inflight: AppendRecord[]): void;
  /** The steps this operation goes through, in order. */
  steps: WriterStep[];
}

const ATOMIC = (s: AtomicWriterStep): WriterStep[] => [s, `${s}/write-tmp`, `${s}/fsync-tmp`, `${s}/rename`, `${s}/fsync-dir`];

/** Appends acknowledged records one batch each (no faults) and returns them with their offsets. */
function ackAppend(dir: string, records: AppendRecord[], config?: Partial<TopicConfig>): Rec[] {
  const w = PartitionWriter.open(dir, { clock: CLOCK, ...(config ? { config } : {}) });
  try {
    return records.map((r) => {
      const res = w.append([r]);
      return { offset: res.baseOffset, key: r.key as string | null, value: r.value as string | null };
    });
  } finally {
    w.close();
  }
}

const r = (i: number, size = 8): AppendRecord => ({ key: `key-${i}`, value: `v${i}-`.padEnd(size, 'x'), timestamp: 1_000_000 + i * 10 });

const SCENARIOS: Scenario[] = [
  {
    name: 'append without an index entry',
    setup(ld) {
      const { dir } = createPartition(ld, 'a', 0, { 'index.interval.bytes': 100 });
      return { dir, acked: ackAppend(dir, [r(0)]) };
    },
    inflight: [r(1)],
    op: (w, recs) => void w.append(recs),
    steps: ['write-log', 'fsync-log', 'write-timeindex', 'fsync-index', ...ATOMIC('checkpoint')],
  },
  {
    name: 'append that adds an offset-index and a time-index entry',
    setup(ld) {
      const { dir } = createPartition(ld, 'b', 0, { 'index.interval.bytes': 100 });
      return { dir, acked: ackAppend(dir, [r(0), r(1)]) };
    },
    inflight: [r(2)],
    op: (w, recs) => void w.append(recs),
    steps: ['write-log', 'fsync-log', 'write-index', 'write-timeindex', 'fsync-index', ...ATOMIC('checkpoint')],
  },
  {
    name: 'append that rolls on segment.bytes',
    setup(ld) {
      const { dir } = createPartition(ld, 'c', 0, { 'segment.bytes': 200 });
      return { dir, acked: ackAppend(dir, [r(0), r(1)]) };
    },
    inflight: [r(2)],
    op: (w, recs) => void w.append(recs),
    steps: ['roll-trim-index', 'roll-create-segment', 'roll-fsync-dir', ...ATOMIC('producer-snapshot'), 'write-log', 'fsync-log', 'write-timeindex', 'fsync-index', ...ATOMIC('checkpoint')],
  },
  {
    name: 'first append to a cleanly shut down broker folder (marker, new leader epoch, high watermark)',
    setup(ld) {
      const dir = buildPartition(ld, { topic: 'd', segments: [{ baseOffset: 0n, batches: singles(rec('k0', 'a', 1_000_000), rec('k1', 'b', 1_000_010)) }] }, { cleanShutdown: true, highWatermark: 2n, recoveryPoint: 2n });
      return { dir, acked: [{ offset: 0n, key: 'k0', value: 'a' }, { offset: 1n, key: 'k1', value: 'b' }] };
    },
    inflight: [r(2)],
    op: (w, recs) => void w.append(recs),
    steps: ['remove-clean-shutdown', ...ATOMIC('leader-epoch'), 'write-log', 'fsync-log', 'write-timeindex', 'fsync-index', ...ATOMIC('checkpoint'), ...ATOMIC('checkpoint-hw')],
  },
  {
    name: 'append into an empty active segment that has no index files',
    setup(ld) {
      const dir = buildPartition(ld, { topic: 'e', segments: [{ baseOffset: 0n, batches: singles(rec('k0', 'a', 1_000_000), rec('k1', 'b', 1_000_010)) }, { baseOffset: 2n, batches: [], noIndex: true, noTimeIndex: true }] }, { recoveryPoint: 2n });
      return { dir, acked: [{ offset: 0n, key: 'k0', value: 'a' }, { offset: 1n, key: 'k1', value: 'b' }] };
    },
    inflight: [r(2)],
    op: (w, recs) => void w.append(recs),
    steps: [...ATOMIC('leader-epoch'), 'create-index-files', 'write-log', 'fsync-log', 'write-timeindex', 'fsync-index', ...ATOMIC('checkpoint')],
  },
  {
    name: 'explicit roll of a segment whose time index lacks the final entry',
    setup(ld) {
      const { dir } = createPartition(ld, 'f', 0, { 'index.interval.bytes': 100 });
      const acked = ackAppend(dir, [r(0), { ...r(1), timestamp: 2_000_000 }, r(2), { ...r(3), timestamp: 3_000_000 }]);
      // As a running broker leaves it: the regular entries only, without the final (3,000,000 → 3).
      const ti = join(dir, '00000000000000000000.timeindex');
      const headers = [...scanLogFile(join(dir, '00000000000000000000.log'))].flatMap((e) => (e.type === 'batch' ? [{ position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp }] : []));
      const mid = buildTimeIndexEntries(0n, headers, { indexIntervalBytes: 100, final: false });
      expect(mid.map((e) => [e.timestamp, e.offset])).toEqual([[2_000_000n, 1n]]);
      writeFileSync(ti, encodeTimeIndex(0n, mid));
      return { dir, acked };
    },
    inflight: [],
    op: (w) => void w.roll(),
    steps: ['roll-trim-index', 'roll-create-segment', 'roll-fsync-dir', ...ATOMIC('producer-snapshot'), 'checkpoint'],
  },
];

function readState(dir: string): { records: Rec[]; damage: { segment: bigint; position: number; type: string; code: string }[] } {
  const log = PartitionLog.open(dir);
  const records: Rec[] = [];
  const damage: { segment: bigint; position: number; type: string; code: string }[] = [];
  for (const seg of log.segments) {
    for (const e of seg.scan({ deep: true })) {
      if (e.type !== 'batch') {
        damage.push({ segment: seg.baseOffset, position: e.position, type: e.type, code: e.code });
        continue;
      }
      expect(e.header.crcValid).toBe(true);
      expect(e.error).toBeUndefined();
      for (const x of e.records!) records.push({ offset: x.offset, key: x.key && Buffer.from(x.key).toString(), value: x.value && Buffer.from(x.value).toString() });
    }
  }
  return { records, damage };
}

function expectRecords(got: Rec[], acked: Rec[], inflight: AppendRecord[], allowInflight: boolean): boolean {
  const offsets = got.map((x) => x.offset);
  expect(new Set(offsets.map(String)).size).toBe(offsets.length); // no duplicates
  for (let i = 1; i < offsets.length; i++) expect(offsets[i]! > offsets[i - 1]!).toBe(true);
  expect(got.slice(0, acked.length)).toEqual(acked); // every acknowledged record, in order
  const extra = got.slice(acked.length);
  if (extra.length === 0) return false;
  expect(allowInflight).toBe(true);
  const next = acked.length ? acked[acked.length - 1]!.offset + 1n : 0n;
  expect(extra).toEqual(inflight.map((x, i) => ({ offset: next + BigInt(i), key: x.key, value: x.value }))); // whole, never half
  return true;
}

/** Runs recovery on a copy of the log dir and checks it ends clean with the same records. */
async function expectRecoveryCleans(ld: string, partition: string, expected: Rec[]): Promise<void> {
  const copy = tempDir('klx-crash-rec-');
  dirs.push(copy);
  cpSync(ld, copy, { recursive: true });
  const dir = join(copy, partition);
  const plan = await planRecovery(dir);
  await applyRecovery(plan);
  const again = await planRecovery(dir);
  expect(again.actions).toEqual([]);
  expect(again.unresolved).toEqual([]);
  const after = readState(dir);
  expect(after.damage).toEqual([]);
  expect(after.records).toEqual(expected);
  const w = PartitionWriter.open(dir, { clock: CLOCK });
  try {
    const res = w.append([{ key: 'after-recovery', value: 'ok', timestamp: 1_000_500 }]);
    expect(res.baseOffset).toBe(expected.length ? expected[expected.length - 1]!.offset + 1n : 0n);
  } finally {
    w.close();
  }
  expect(readState(dir).records.at(-1)).toMatchObject({ key: 'after-recovery' });
}

describe('a crash before any step of a write loses no acknowledged record and serves no half batch', () => {
  for (const sc of SCENARIOS) {
    it(`${sc.name}: steps`, () => {
      const ld = tempDir('klx-crash-');
      dirs.push(ld);
      const { dir, config } = sc.setup(ld);
      const seen: WriterStep[] = [];
      const w = PartitionWriter.open(dir, { clock: CLOCK, fault: (s) => void seen.push(s), ...(config ? { config } : {}) });
      sc.op(w, sc.inflight);
      w.close();
      expect(seen).toEqual(sc.steps);
    });

    it(`${sc.name}: crash at each of its steps`, async () => {
      for (let k = 0; k < sc.steps.length; k++) {
        const ld = tempDir('klx-crash-');
        dirs.push(ld);
        const { dir, acked, config } = sc.setup(ld);
        let calls = 0;
        const w = PartitionWriter.open(dir, {
          clock: CLOCK,
          ...(config ? { config } : {}),
          fault: (s) => {
            if (calls++ === k) throw new Crash(`crash before ${s}`);
          },
        });
        const inflight = sc.inflight;
        let thrown: unknown;
        try {
          sc.op(w, inflight);
        } catch (err) {
          thrown = err;
        }
        // The hook's error reaches the caller unchanged (nothing is cleaned up after a crash).
        expect(thrown, `step ${k} (${sc.steps[k]})`).toBeInstanceOf(Crash);
        expect((thrown as Crash).message).toBe(`crash before ${sc.steps[k]}`);
        // The crashed writer is unusable; closing only releases the lock (a dead process's lock would be taken over).
        expect(() => w.append([r(9)])).toThrow(KlxError);
        w.close();

        const state = readState(dir);
        expect(state.damage).toEqual([]);
        const hasInflight = expectRecords(state.records, acked, inflight, true);
        // Data is fsynced before anything refers to it: the in-flight batch is there from its fsync on.
        const fsyncAt = sc.steps.indexOf('fsync-log');
        if (fsyncAt >= 0) expect(hasInflight).toBe(k > sc.steps.indexOf('write-log'));
        const expected = hasInflight ? state.records : acked;

        await expectRecoveryCleans(ld, dir.split('/').pop()!, expected);

        // The writer reopens as it is and goes on after the last whole batch.
        const w2 = PartitionWriter.open(dir, { clock: CLOCK, ...(config ? { config } : {}) });
        try {
          expect(w2.logEndOffset).toBe(expected.length ? expected[expected.length - 1]!.offset + 1n : 0n);
          w2.append([{ key: 'next', value: 'one', timestamp: 1_000_600 }]);
        } finally {
          w2.close();
        }
        const final = readState(dir);
        expect(final.damage).toEqual([]);
        expect(final.records).toEqual([...expected, { offset: w2.logEndOffset - 1n, key: 'next', value: 'one' }]);
        const problems = PartitionLog.open(dir).problems.filter((p) => p.code !== 'leftover-file' || !p.file.endsWith('.tmp'));
        expect(problems).toEqual([]);
      }
    });
  }

  it('a batch cut short by a crash during its write is an invalid tail, never records; the writer refuses until repair', async () => {
    for (const sc of SCENARIOS.filter((s) => s.steps.includes('fsync-log'))) {
      const ld = tempDir('klx-crash-torn-');
      dirs.push(ld);
      const { dir, acked, config } = sc.setup(ld);
      let logFile = '';
      let cutAt = 0;
      const w = PartitionWriter.open(dir, {
        clock: CLOCK,
        ...(config ? { config } : {}),
        fault: (s, file) => {
          if (s === 'write-log') {
            logFile = file;
            cutAt = statSync(file).size;
          }
          if (s === 'fsync-log') {
            // Only part of the batch reached the disk before the crash.
            const size = statSync(file).size;
            truncateSync(file, cutAt + Math.floor((size - cutAt) / 2));
            throw new Crash('torn write');
          }
        },
      });
      expect(() => sc.op(w, sc.inflight)).toThrow(Crash);
      w.close();
      const state = readState(dir);
      expectRecords(state.records, acked, [], false);
      expect(state.damage).toHaveLength(1);
      expect(state.damage[0]).toMatchObject({ type: 'invalid-tail', position: cutAt, code: 'truncated-batch' });
      let refused: unknown;
      try {
        PartitionWriter.open(dir, { clock: CLOCK });
      } catch (err) {
        refused = err;
      }
      expect(refused, sc.name).toBeInstanceOf(KlxError);
      expect((refused as KlxError).code).toBe('truncated-batch');
      expect((refused as KlxError).file).toBe(logFile);
      expect((refused as KlxError).position).toBe(cutAt);
      expect((refused as KlxError).message).toContain('klx repair');
      await expectRecoveryCleans(ld, dir.split('/').pop()!, acked);
    }
  });
});

describe('createPartition crash safety', () => {
  const STEPS: WriterStep[] = [
    'meta-properties',
    'meta-properties/write-tmp',
    'meta-properties/fsync-tmp',
    'meta-properties/rename',
    'meta-properties/fsync-dir',
    'create-tmp-dir',
    'create-segment',
    'write-metadata',
    'fsync-tmp-dir',
    'rename-dir',
    'fsync-log-dir',
    ...ATOMIC('checkpoint'),
  ];

  it('goes through its steps in order', () => {
    const ld = tempDir('klx-crash-create-');
    dirs.push(ld);
    const seen: WriterStep[] = [];
    createPartition(ld, 'n', 0, {}, { fault: (s) => void seen.push(s) });
    expect(seen).toEqual(STEPS);
  });

  it('a crash at any step leaves no partition or the whole one, and never a folder a broker cannot load', () => {
    for (let k = 0; k < STEPS.length; k++) {
      const ld = tempDir('klx-crash-create-');
      dirs.push(ld);
      let calls = 0;
      expect(() =>
        createPartition(ld, 'n', 0, { 'cleanup.policy': ['compact'] }, {
          fault: (s) => {
            if (calls++ === k) throw new Crash(s);
          },
        }),
      ).toThrow(Crash);
      const dir = join(ld, 'n-0');
      // Leftovers are only `-delete` folders, which a broker loads and then removes.
      for (const n of readdirSync(ld)) {
        if (statSync(join(ld, n)).isDirectory() && n !== 'n-0') expect(parsePartitionDirName(n)?.kind, n).toBe('delete');
      }
      if (existsSync(dir)) {
        const log = PartitionLog.open(dir);
        expect(log.problems.filter((p) => !p.file.endsWith('.tmp'))).toEqual([]);
        expect(log.logEndOffset).toBe(0n);
        expect(log.config.config['cleanup.policy']).toEqual(['compact']);
        expect(readdirSync(dir)).toHaveLength(6);
        const w = PartitionWriter.open(dir, { clock: CLOCK });
        expect(w.append([{ key: 'k', value: 'v', timestamp: 1_000_000 }]).baseOffset).toBe(0n);
        w.close();
        expect(k).toBeGreaterThanOrEqual(STEPS.indexOf('fsync-log-dir'));
      } else {
        expect(k).toBeLessThanOrEqual(STEPS.indexOf('rename-dir'));
        // Nothing is half there: creating again works.
        createPartition(ld, 'n', 0);
        expect(readdirSync(dir)).toHaveLength(6);
      }
      expect(() => openPath(ld)).not.toThrow();
    }
  });
});
