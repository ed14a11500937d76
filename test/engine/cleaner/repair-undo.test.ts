/**
 * Repair kept in the trash (issue 14): `klx repair` then undo gives back every file of the log
 * directory byte for byte (before, `klx undo` after `klx repair` said there was no run to undo).
 * And crash safety: a crash (the fault hooks, a throw with no clean-up: files as a killed process
 * leaves them) before every trash step and every recovery step, then the next repair (which finishes
 * the interrupted entry first) and undo until the trash holds no run: every file is back as before.
 * Also the rewrite of an unparsable log-directory checkpoint, and its undo.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { WRITER_LOCK_FILE } from '../../../src-main/engine/log/log-lock.ts';
import { acquirePartitionLock, planRecovery, type PlanRecoveryOptions } from '../../../src-main/engine/log/recovery.ts';
import { openLogDirectory } from '../../../src-main/engine/log/log-dir.ts';
import { planCheckpointRewrites } from '../../../src-main/engine/log/checkpoint-repair.ts';
import { finishInterruptedRuns } from '../../../src-main/engine/cleaner/interrupted-runs.ts';
import { applyRepairWithTrash, rewriteCheckpointsWithTrash } from '../../../src-main/engine/cleaner/repair-trash.ts';
import { listTrash, newRunId } from '../../../src-main/engine/cleaner/trash.ts';
import { undoLastRun } from '../../../src-main/engine/cleaner/undo.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { batchOfSize, buildPartition, rec, tempDir } from '../../support/log-builder.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fresh(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const batchAt = (o: number, keys = 1) => ({ baseOffset: BigInt(o), records: range(o, o + keys).map((x) => rec(`k${x}`, `v${x}`, 1000 + x)) });

/** Every file under `root` (log directory), by relative path: its size and SHA-256. */
function bytesOf(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const b = readFileSync(p);
        out[relative(root, p)] = `${b.length}:${createHash('sha256').update(b).digest('hex')}`;
      }
    }
  };
  walk(root);
  return out;
}

interface Scenario {
  name: string;
  /** Builds the damaged log directory; returns the partition folder. */
  build: (root: string) => string;
  options?: PlanRecoveryOptions;
  /** Action types the plan must hold. */
  actions: string[];
}

const scenarios: Scenario[] = [
  {
    name: 'partial tail, untrimmed indexes, orphan index, epochs and a snapshot beyond the end; later segment deleted (truncate at corruption)',
    build: (root) => {
      const dir = buildPartition(
        root,
        {
          topic: 'orders',
          segments: [
            { batches: range(0, 10).map((b) => batchAt(b * 10, 10)) },
            { baseOffset: 100n, batches: [batchOfSize(100n, 10, 5000, 1100), batchOfSize(110n, 10, 5000, 1110)], tail: batchOfSize(120n, 10, 5000, 1120).subarray(0, 1200), noIndex: true, noTimeIndex: true },
            { baseOffset: 140n, batches: [batchAt(140, 10)] },
          ],
        },
        { recoveryPoint: 100n },
      );
      const idx = Buffer.alloc(65_536);
      idx.writeInt32BE(19, 0);
      idx.writeInt32BE(5000, 4);
      writeFileSync(join(dir, name(100, '.index')), idx);
      writeFileSync(join(dir, name(100, '.timeindex')), Buffer.alloc(65_532));
      writeFileSync(join(dir, name(200, '.index')), Buffer.alloc(8));
      writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n1 145\n');
      writeFileSync(join(dir, name(150, '.snapshot')), Buffer.alloc(10));
      return dir;
    },
    options: { truncateAtCorruption: true },
    actions: ['delete-file', 'delete-segment', 'rebuild-indexes', 'truncate-log', 'write-leader-epochs'],
  },
  {
    name: 'a complete swap of a cleaned segment, with .deleted, a stale .tmp and swap indexes',
    build: (root) => {
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
    actions: ['delete-file', 'rename', 'rebuild-indexes'],
  },
  {
    name: 'a CRC failure mid-segment with valid batches after it (truncate at corruption), later segments deleted',
    build: (root) => {
      const dir = buildPartition(root, { segments: [{ batches: range(0, 10).map((o) => batchAt(o)) }, { batches: [batchAt(10, 5)] }] }, { recoveryPoint: 0n });
      const file = join(dir, name(0, '.log'));
      const bytes = readFileSync(file);
      const bad = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[6] as { header: { position: number; size: number } }).header;
      bytes[bad.position + bad.size - 2] ^= 0xff;
      writeFileSync(file, bytes);
      return dir;
    },
    options: { truncateAtCorruption: true },
    actions: ['delete-segment', 'rebuild-indexes', 'truncate-log'],
  },
  {
    name: 'no segment left: an empty segment is created',
    build: (root) => {
      const dir = buildPartition(root, { topic: 'gone', segments: [] }, { logStartOffset: 42n });
      writeFileSync(join(dir, name(0, '.timeindex')), Buffer.alloc(12));
      writeFileSync(join(dir, name(40, '.log.deleted')), 'x');
      return dir;
    },
    actions: ['delete-file', 'create-segment'],
  },
];

/** One `klx repair` of the partition as the CLI does it: finish an interrupted repair, plan, apply with the trash. */
async function repair(dir: string, trashDir: string, options?: PlanRecoveryOptions, hooks: { fault?: () => void } = {}): Promise<string[]> {
  finishInterruptedRuns(dir, trashDir, { operations: ['repair'], ...(hooks.fault ? { fault: hooks.fault } : {}) });
  // The CLI's order: the writer lock (a dead holder's is taken over), plan, apply, release.
  const lock = acquirePartitionLock(dir);
  let crashed = false;
  try {
    const plan = await planRecovery(dir, options);
    expect(plan.unresolved).toEqual([]);
    await applyRepairWithTrash(plan, { trashDir, runId: newRunId(), logDir: resolve(dir, '..'), ...(hooks.fault ? { fault: hooks.fault, faultHook: hooks.fault } : {}) }).catch((err: unknown) => {
      crashed = true;
      throw err;
    });
    return plan.actions.map((a) => a.type);
  } finally {
    // A crashed process releases nothing.
    if (!crashed) lock.release();
  }
}

/** Undoes every run in the trash for `dir`, newest first; returns how many. */
function undoAll(dir: string, trashDir: string): number {
  let n = 0;
  for (;;) {
    try {
      undoLastRun(dir, { trashDir });
      n++;
    } catch (err) {
      if (err instanceof KlxError && err.code === 'not-found') return n;
      throw err;
    }
  }
}

class Crash extends Error {}

describe('repair keeps what it replaces in the trash; undo puts every byte back', () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      const root = fresh('klx-repair-undo-');
      const trash = fresh('klx-repair-trash-');
      const dir = s.build(root);
      const before = bytesOf(root);
      const types = await repair(dir, trash, s.options);
      for (const t of s.actions) expect(types).toContain(t);
      expect(bytesOf(root)).not.toEqual(before);
      expect((await planRecovery(dir, s.options)).actions).toEqual([]);
      const entries = listTrash(trash);
      expect(entries.map((e) => [e.manifest!.operation, e.manifest!.state])).toEqual([['repair', 'committed']]);
      const res = undoLastRun(root, { trashDir: trash });
      expect(res.entries.map((e) => e.operation)).toEqual(['repair']);
      expect(bytesOf(root)).toEqual(before);
      expect(listTrash(trash)).toEqual([]);
    });
  }

  it('refuses an undo once a repaired file changed (nothing touched)', async () => {
    const root = fresh('klx-repair-undo-');
    const trash = fresh('klx-repair-trash-');
    const dir = scenarios[2]!.build(root);
    await repair(dir, trash, scenarios[2]!.options);
    const after = bytesOf(root);
    writeFileSync(join(dir, name(0, '.log')), Buffer.concat([readFileSync(join(dir, name(0, '.log'))), encodeBatch({ baseOffset: 6n, records: [rec('x', 'y', 5)] })]));
    const changed = bytesOf(root);
    expect(() => undoLastRun(root, { trashDir: trash })).toThrow(/cannot undo repair of test-0 .*: 00000000000000000000\.log, cut to \d+ bytes by the repair, is \d+ bytes now/);
    expect(bytesOf(root)).toEqual(changed);
    expect(changed).not.toEqual(after);
  });
});

describe('a crash at any step of a repair keeps undo working', () => {
  for (const s of [scenarios[0]!, scenarios[1]!, scenarios[2]!]) {
    it(s.name, async () => {
      // Count the fault points (trash steps and recovery steps) of an uninterrupted repair.
      const refRoot = fresh('klx-repair-ref-');
      const refTrash = fresh('klx-repair-trash-');
      const refDir = s.build(refRoot);
      let points = 0;
      await repair(refDir, refTrash, s.options, { fault: () => void points++ });
      const repaired = bytesOf(refRoot);
      expect(points).toBeGreaterThan(10);
      for (let i = 0; i < points; i++) {
        const root = fresh('klx-repair-crash-');
        const trash = fresh('klx-repair-trash-');
        const dir = s.build(root);
        const before = bytesOf(root);
        let calls = 0;
        const err = await repair(dir, trash, s.options, {
          fault: () => {
            if (calls++ === i) throw new Crash(`crash before fault point ${i}`);
          },
        }).catch((e: unknown) => e);
        expect(String(err), `point ${i}`).toMatch(/crash before fault point|SimulatedCrash/);
        // What a killed process leaves: its writer lock, naming a process that is gone.
        writeFileSync(join(dir, WRITER_LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 4242, hostname: hostname(), createdAt: '', purpose: 'klx repair', nonce: 'crashed' }) + '\n');
        rmSync(join(root, '.klx-checkpoints.lock'), { force: true });
        // The next repair finishes the interrupted entry, then repairs the rest.
        await repair(dir, trash, s.options);
        expect(bytesOf(root), `point ${i}: the second repair ends where an uninterrupted one does`).toEqual(repaired);
        // (a crash before the first manifest write leaves an entry folder without a manifest: listed, never undone)
        expect(listTrash(trash).filter((e) => e.manifest).every((e) => e.manifest!.state === 'committed'), `point ${i}`).toBe(true);
        undoAll(root, trash);
        expect(bytesOf(root), `point ${i}: undo gives back every byte`).toEqual(before);
      }
    }, 120_000);
  }
});

describe('an unparsable log-directory checkpoint', () => {
  it('is rewritten from the partitions (first segment base offsets), the old file kept for undo', () => {
    const root = fresh('klx-repair-cp-');
    const trash = fresh('klx-repair-trash-');
    buildPartition(root, { topic: 'a', segments: [{ baseOffset: 30n, batches: [batchAt(30, 3)] }] });
    buildPartition(root, { topic: 'b', partition: 2, segments: [{ batches: [batchAt(0, 2)] }] });
    writeFileSync(join(root, 'recovery-point-offset-checkpoint'), '0\n2\na 0 30\nb 2 zz\n');
    writeFileSync(join(root, 'cleaner-offset-checkpoint'), 'garbage');
    writeFileSync(join(root, 'log-start-offset-checkpoint'), '0\n1\na 0 30\n');
    const before = bytesOf(root);
    const rewrites = planCheckpointRewrites(openLogDirectory(root));
    expect(rewrites.map((r) => [r.name, r.text])).toEqual([
      ['recovery-point-offset-checkpoint', '0\n2\na 0 30\nb 2 0\n'],
      ['cleaner-offset-checkpoint', '0\n0\n'],
    ]);
    // 'b 2 zz': a number that does not parse (NumberFormatException); 'garbage': a malformed file (the directory goes offline).
    // A broker goes on with recovery point 0 and its next periodic checkpoint writes the file anew (LogManager.checkpointLogRecoveryOffsets).
    expect(rewrites[0]!.reason).toContain("Your choice, not a broker's: a broker does not rewrite it at startup (a number that does not parse is a NumberFormatException, which CheckpointFileWithFailureHandler does not catch, so the directory stays online: LogManager.loadLogs recovers from recovery point 0, then LogManager.checkpointLogRecoveryOffsets writes the file anew from what it loaded, every log.flush.offset.checkpoint.interval.ms (60 s by default))");
    expect(rewrites[1]!.reason).toContain("Your choice, not a broker's: a broker never rewrites it (on a malformed file it takes the log directory offline: CheckpointFileWithFailureHandler.read, LogDirFailureChannel)");
    const id = rewriteCheckpointsWithTrash(root, rewrites, { trashDir: trash, runId: newRunId() });
    expect(id).not.toBeNull();
    expect(readFileSync(join(root, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n2\na 0 30\nb 2 0\n');
    expect(readFileSync(join(root, 'cleaner-offset-checkpoint'), 'utf8')).toBe('0\n0\n');
    expect(openLogDirectory(root).checkpoints.problems).toEqual([]);
    expect(planCheckpointRewrites(openLogDirectory(root))).toEqual([]);
    undoLastRun(root, { trashDir: trash });
    expect(bytesOf(root)).toEqual(before);
  });
});
