/**
 * Crash tests of `applyRecovery`: for each scenario, a fault (a throw) is injected before every
 * primitive step in turn (unlink, rename, fsync of the folder, truncate, fsync of the file, and each
 * step of the atomic index writes). After each crash the folder is re-opened, planned and recovered
 * again (taking over the writer lock the "dead" process left), and the set of valid records
 * (offset, key, value) must equal what an uninterrupted recovery gives: none lost, none duplicated,
 * no damaged bytes served, a clean verification, and nothing left to do.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { WRITER_LOCK_FILE } from '../../../src-main/engine/log/log-lock.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { applyRecovery, planRecovery, type PlanRecoveryOptions, type RecoveryStep } from '../../../src-main/engine/log/recovery.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { batchOfSize, buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function logDir(): string {
  const d = tempDir('klx-crash-');
  dirs.push(d);
  return d;
}

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

class Crash extends Error {}


const one = (o: number) => rec(`k${o}`, `v${o}`, 1000 + o);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const batchAt = (o: number, keys = 1) => ({ baseOffset: BigInt(o), records: range(o, o + keys).map(one) });

/** Every record served from the `.log` files, as `offset:key=value`, with damage counts. */
function readAll(dir: string): { records: string[]; damage: number; badCrc: number } {
  const records: string[] = [];
  let damage = 0;
  let badCrc = 0;
  for (const n of readdirSync(dir).filter((x) => /^\d{20}\.log$/.test(x)).sort()) {
    for (const e of scanLogFile(join(dir, n), { deep: true })) {
      if (e.type !== 'batch') damage++;
      else if (e.header.crcValid === false) badCrc++;
      else for (const r of e.records ?? []) records.push(`${r.offset}:${Buffer.from(r.key ?? []).toString()}=${r.value === null ? 'null' : Buffer.from(r.value).toString()}`);
    }
  }
  return { records, damage, badCrc };
}

function offsetsOf(records: string[]): bigint[] {
  return records.map((r) => BigInt(r.slice(0, r.indexOf(':'))));
}

interface Scenario {
  name: string;
  /** Builds the damaged folder in a fresh log dir; returns the partition folder. */
  build: () => string;
  options?: PlanRecoveryOptions;
  /** The offsets an uninterrupted recovery must leave. */
  offsets: number[];
  /** When given, the exact records (`offset:key=value`) it must leave. */
  records?: string[];
  /** When given, the exact file names the partition folder must hold afterwards. */
  files?: string[];
}

function b12(later: boolean): () => string {
  return () => {
    const root = logDir();
    const segs: Parameters<typeof buildPartition>[1]['segments'] = [
      { batches: range(0, 10).map((b) => batchAt(b * 10, 10)) },
      { baseOffset: 100n, batches: [batchOfSize(100n, 10, 5000, 1100), batchOfSize(110n, 10, 5000, 1110), batchOfSize(120n, 10, 5000, 1120)], tail: batchOfSize(130n, 10, 5000, 1130).subarray(0, 1200), noIndex: true, noTimeIndex: true },
    ];
    if (later) segs.push({ baseOffset: 140n, batches: [batchAt(140, 10)] });
    const dir = buildPartition(root, { topic: 'orders', segments: segs }, { recoveryPoint: 100n });
    const idx = Buffer.alloc(10_485_760);
    idx.writeInt32BE(19, 0);
    idx.writeInt32BE(5000, 4);
    idx.writeInt32BE(29, 8);
    idx.writeInt32BE(10000, 12);
    writeFileSync(join(dir, name(100, '.index')), idx);
    writeFileSync(join(dir, name(100, '.timeindex')), Buffer.alloc(10_485_756));
    writeFileSync(join(dir, name(200, '.index')), Buffer.alloc(8));
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), `0\n2\n0 0\n1 ${later ? 145 : 135}\n`);
    writeFileSync(join(dir, name(150, '.snapshot')), Buffer.alloc(10));
    return dir;
  };
}

const scenarios: Scenario[] = [
  {
    name: 'B12: partial tail of the last segment, untrimmed indexes, orphan index (default)',
    build: b12(false),
    offsets: range(0, 130),
  },
  {
    name: 'B12 with truncateAtCorruption: the later segment is deleted, epochs and snapshots beyond the end dropped',
    build: b12(true),
    options: { truncateAtCorruption: true },
    offsets: range(0, 130),
    files: ['leader-epoch-checkpoint', ...['.index', '.log', '.timeindex'].map((x) => name(0, x)), ...['.index', '.log', '.timeindex'].map((x) => name(100, x))],
  },
  {
    name: 'complete swap of a cleaned segment, with .deleted, stale .tmp and swap indexes',
    build: () => {
      const root = logDir();
      const dup = (from: number) => range(from, from + 10).map((o) => ({ baseOffset: BigInt(o), records: [rec(`k${o % 5}`, `v${o}`, 1000 + o)] }));
      const dir = buildPartition(root, { segments: [{ batches: dup(0) }, { batches: dup(10) }, { batches: [batchAt(20, 5)] }] }, { cleanShutdown: true });
      const cleaned = Buffer.concat(range(15, 20).map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o % 5}`, `v${o}`, 1000 + o)] })));
      writeFileSync(join(dir, name(0, '.log.swap')), cleaned);
      writeFileSync(join(dir, name(0, '.index.swap')), Buffer.alloc(0));
      writeFileSync(join(dir, name(0, '.timeindex.swap')), Buffer.alloc(12));
      writeFileSync(join(dir, name(10, '.log.deleted')), readFileSync(join(dir, name(10, '.log'))));
      rmSync(join(dir, name(10, '.log')));
      writeFileSync(join(dir, name(20, '.index.tmp')), 'half-written');
      return dir;
    },
    offsets: range(15, 25),
    records: [...range(15, 20).map((o) => `${o}:k${o % 5}=v${o}`), ...range(20, 25).map((o) => `${o}:k${o}=v${o}`)],
  },
  {
    name: 'a split into two .swap segments (renamed in descending order), originals still present',
    build: () => {
      const root = logDir();
      const dir = buildPartition(root, { segments: [{ batches: range(0, 20).map((o) => batchAt(o)) }, { batches: [batchAt(20, 3)] }] });
      const log0 = readFileSync(join(dir, name(0, '.log')));
      const cut = ([...scanLogFile(join(dir, name(0, '.log')))].filter((e) => e.type === 'batch')[10] as { header: { position: number } }).header.position;
      writeFileSync(join(dir, name(0, '.log.swap')), log0.subarray(0, cut));
      writeFileSync(join(dir, name(10, '.log.swap')), log0.subarray(cut));
      return dir;
    },
    offsets: range(0, 23),
    records: range(0, 23).map((o) => `${o}:k${o}=v${o}`),
  },
  {
    name: 'an incomplete split (.cleaned below a .swap): both go, the original stays',
    build: () => {
      const root = logDir();
      const dir = buildPartition(root, { segments: [{ batches: range(0, 20).map((o) => batchAt(o)) }, { batches: [batchAt(20, 3)] }] }, { cleanShutdown: true });
      const log0 = readFileSync(join(dir, name(0, '.log')));
      writeFileSync(join(dir, name(0, '.log.cleaned')), log0.subarray(0, 500));
      writeFileSync(join(dir, name(10, '.log.swap')), log0.subarray(500));
      writeFileSync(join(dir, name(10, '.timeindex.swap')), Buffer.alloc(0));
      return dir;
    },
    offsets: range(0, 23),
    records: range(0, 23).map((o) => `${o}:k${o}=v${o}`),
  },
  {
    name: 'a CRC failure mid-segment with truncateAtCorruption: later segments deleted newest first, then the cut',
    build: () => {
      const root = logDir();
      const dir = buildPartition(root, { segments: [{ batches: range(0, 10).map((o) => batchAt(o)) }, { batches: [batchAt(10, 5)] }, { batches: [batchAt(15, 5)] }] }, { recoveryPoint: 0n });
      const file = join(dir, name(0, '.log'));
      const bytes = readFileSync(file);
      const bad = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[6] as { header: { position: number; size: number } }).header;
      bytes[bad.position + bad.size - 2] ^= 0xff;
      writeFileSync(file, bytes);
      return dir;
    },
    options: { truncateAtCorruption: true },
    offsets: range(0, 6),
    records: range(0, 6).map((o) => `${o}:k${o}=v${o}`),
    files: ['.index', '.log', '.timeindex'].map((x) => name(0, x)),
  },
  {
    name: 'a missing .txnindex and a zero-filled tail in an aborted-transaction segment',
    build: () => {
      const root = logDir();
      const t = (o: number, pid: bigint) => ({ baseOffset: BigInt(o), producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [one(o)] });
      const m = (o: number, pid: bigint, type: 0 | 1) => ({ baseOffset: BigInt(o), producerId: pid, producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type), value: encodeEndTxnMarkerValue(0), timestamp: 5000n }] });
      return buildPartition(root, { segments: [{ batches: [t(0, 3n), t(1, 4n), m(2, 3n, 0), m(3, 4n, 1), batchAt(4)], tail: Buffer.alloc(300) }] });
    },
    offsets: [0, 1, 2, 3, 4],
    files: ['.index', '.log', '.timeindex', '.txnindex'].map((x) => name(0, x)),
  },
  {
    name: 'no segment left: an empty active segment is created at the log start offset',
    build: () => {
      const root = logDir();
      const dir = buildPartition(root, { topic: 'gone', segments: [] }, { logStartOffset: 42n });
      writeFileSync(join(dir, name(0, '.timeindex')), Buffer.alloc(12));
      writeFileSync(join(dir, name(40, '.log.deleted')), 'x');
      return dir;
    },
    offsets: [],
    files: ['.index', '.log', '.timeindex'].map((x) => name(42, x)),
  },
];

/** Runs recovery to the end (plan + apply), as the next start after a crash would. */
async function recover(dir: string, options?: PlanRecoveryOptions): Promise<void> {
  const plan = await planRecovery(dir, options);
  expect(plan.unresolved).toEqual([]);
  await applyRecovery(plan);
}

describe('recovery is crash-safe at every step', () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      // Reference: an uninterrupted run, and the list of fault points it passes.
      const refDir = s.build();
      const steps: { step: RecoveryStep; action: number; file: string }[] = [];
      const plan = await planRecovery(refDir, s.options);
      expect(plan.unresolved).toEqual([]);
      await applyRecovery(plan, { faultHook: (step, info) => void steps.push({ step, action: info.action, file: info.file }) });
      const reference = readAll(refDir);
      expect(reference.damage).toBe(0);
      expect(reference.badCrc).toBe(0);
      expect(offsetsOf(reference.records)).toEqual(s.offsets.map(BigInt));
      if (s.records) expect(reference.records).toEqual(s.records);
      if (s.files) expect(readdirSync(refDir).sort()).toEqual([...s.files].sort());
      // With the broker's behaviour the log ends at 130: epoch 1 (start 145) and the snapshot at 150 go.
      if (s.options?.truncateAtCorruption && s.name.startsWith('B12')) expect(readFileSync(join(refDir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n1\n0 0\n');
      expect(steps.length).toBeGreaterThan(3);
      // Every kind of primitive step the plan uses is exercised.
      const kinds = new Set(steps.map((x) => x.step));
      expect(kinds.has('fsync-dir')).toBe(true);

      for (let i = 0; i < steps.length; i++) {
        const dir = s.build();
        const crashPlan = await planRecovery(dir, s.options);
        let calls = 0;
        const err = await applyRecovery(crashPlan, {
          faultHook: () => {
            if (calls++ === i) throw new Crash(`crash before step ${i} (${steps[i]!.step} ${steps[i]!.file})`);
          },
        }).catch((e: unknown) => e);
        expect(err, `step ${i}`).toBeInstanceOf(Crash);
        // What a crashed process leaves: its writer lock, naming a process that is gone.
        writeFileSync(join(dir, WRITER_LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 4242, hostname: hostname(), createdAt: '', purpose: 'klx repair', nonce: 'crashed' }) + '\n');
        // The crashed folder opens, and never serves a record twice.
        const mid = readAll(dir);
        const midOffsets = offsetsOf(mid.records);
        expect(new Set(midOffsets.map(String)).size, `step ${i}: duplicates after the crash`).toBe(midOffsets.length);
        await verifyPartition(PartitionLog.open(dir));
        // The next start completes the job.
        await recover(dir, s.options);
        const after = readAll(dir);
        expect(after.records, `step ${i} (${steps[i]!.step} ${steps[i]!.file})`).toEqual(reference.records);
        expect(after.damage).toBe(0);
        expect(after.badCrc).toBe(0);
        const report = await verifyPartition(PartitionLog.open(dir));
        expect(report.findings.filter((f) => f.severity !== 'info'), `step ${i}`).toEqual([]);
        expect((await planRecovery(dir, s.options)).actions, `step ${i}: nothing left to do`).toEqual([]);
        expect(readdirSync(dir).sort(), `step ${i}: same files as an uninterrupted run`).toEqual(readdirSync(refDir).sort());
      }
      // One recovery, verify and comparison per fault point (B12 has the most): 60 s was too short at load 20.
    }, 240_000);
  }
});

describe('fault points', () => {
  it('the B12 plan exercises unlink, fsync-dir, every atomic-write step, truncate and fsync-file', async () => {
    const dir = b12(true)();
    const steps = new Set<RecoveryStep>();
    await applyRecovery(await planRecovery(dir, { truncateAtCorruption: true }), { faultHook: (step) => void steps.add(step) });
    expect([...steps].sort()).toEqual(['fsync-dir', 'fsync-file', 'fsync-tmp', 'rename', 'truncate', 'unlink', 'write-tmp']);
  });

  it('a swap completion exercises the plain rename step', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(one(0), one(1)) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.log.swap')), readFileSync(join(dir, name(0, '.log'))));
    const seen: [RecoveryStep, string][] = [];
    await applyRecovery(await planRecovery(dir), { faultHook: (step, info) => void seen.push([step, info.type]) });
    expect(seen.filter(([, t]) => t === 'rename')).toEqual([
      ['rename', 'rename'],
      ['fsync-dir', 'rename'],
    ]);
  });
});
