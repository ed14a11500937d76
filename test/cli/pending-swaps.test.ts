/**
 * Pending swaps (issue 13 finding 4): a folder left by an interrupted cleaner holds a `.log.swap`
 * beside the segments it replaces. A broker completes the swap at startup (Kafka's `LogLoader.load`,
 * 3.0+: `.swap` files at or above the smallest `.cleaned` base are deleted, then the files of every
 * segment in [min swap base, max swap next offset) are deleted and the swaps renamed). Until then a
 * reader of the folder sees the pre-swap segments: `pendingSwapsOf` says what a broker does, and
 * `klx fetch` and `klx query` print it (text, and a JSON `notice` line for fetch) instead of silently
 * showing the old segments.
 *
 * The layout: seg@0 holds k0..k4 at offsets 0..9, seg@10 the same keys at 10..19, seg@20 (active)
 * 20..29. The cleaner's output for seg@0+seg@10 keeps the last value of each key, offsets 15..19,
 * in one segment based at 0: its next offset is 20, so a broker deletes segments 0 and 10.
 */
import { rmSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, singles, tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const roots: string[] = [];
afterAll(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

/** orders-0 as described in the module comment, with `0.log.swap` (offsets 15..19) written beside it. */
function interruptedCleaner(): string {
  const root = tempDir('klx-swap-');
  roots.push(root);
  const dup = (from: number) => singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i % 5}`, `v${from + i}`, 1000 + from + i)));
  const tens = singles(...Array.from({ length: 10 }, (_, i) => rec(`k${20 + i}`, `v${20 + i}`, 1020 + i)));
  const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: dup(0) }, { batches: dup(10) }, { batches: tens }] }, { cleanShutdown: true, recoveryPoint: 30n });
  const cleaned = Buffer.concat([15, 16, 17, 18, 19].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o % 5}`, `v${o}`, 1000 + o)] })));
  writeFileSync(join(dir, name(0, '.log.swap')), cleaned);
  return dir;
}

describe('pendingSwapsOf: what LogLoader.load does with the leftovers', () => {
  it('a complete swap: range [0, 20), segments 0 and 10 replaced, the pre-swap segments shown', () => {
    const dir = interruptedCleaner();
    const p = PartitionLog.open(dir).pendingSwaps!;
    expect(p.swaps.map((s) => [s.name, s.baseOffset, s.firstOffset, s.nextOffset])).toEqual([[name(0, '.log.swap'), 0n, 15n, 20n]]);
    expect(p.range).toEqual({ from: 0n, to: 20n });
    expect(p.replacedSegments).toEqual([0n, 10n]);
    expect(p.overwrittenSegments).toEqual([]);
    expect(p.notice).toBe(
      `Pending swap of an interrupted cleaner or segment split: ${name(0, '.log.swap')} (offsets 15..19). At startup a broker completes it (LogLoader.load): it deletes the files of the segments with base offsets in [0, 20) (${name(0, '.log')}, ${name(10, '.log')}) and renames the .swap file to its final name. Until then the records shown here are those of the pre-swap segments, not the swap's; klx repair completes the swap as the broker does.`,
    );
  });

  it('after the old seg@0 went to .deleted: only seg@10 is replaced, and the .deleted file is named', () => {
    const dir = interruptedCleaner();
    renameSync(join(dir, name(0, '.log')), join(dir, name(0, '.log.deleted')));
    const p = PartitionLog.open(dir).pendingSwaps!;
    expect(p.replacedSegments).toEqual([10n]);
    expect(p.deleted.map((f) => f.name)).toEqual([name(0, '.log.deleted')]);
    expect(p.notice).toContain(`Leftover 1 .deleted (already removed from the log by the cleaner or retention): ${name(0, '.log.deleted')}. A broker deletes it at startup (LogLoader.removeTempFilesAndCollectSwapFiles)`);
  });

  it('an incomplete split: the .swap at or above the smallest .cleaned base is deleted, not swapped in', () => {
    const dir = interruptedCleaner();
    rmSync(join(dir, name(0, '.log.swap')));
    writeFileSync(join(dir, name(0, '.log.cleaned')), Buffer.alloc(0));
    writeFileSync(join(dir, name(10, '.log.swap')), encodeBatch({ baseOffset: 19n, records: [rec('k4', 'v19', 1019)] }));
    const p = PartitionLog.open(dir).pendingSwaps!;
    expect(p.swaps).toEqual([]);
    expect(p.range).toBeNull();
    expect(p.incompleteSplit.map((f) => f.name)).toEqual([name(10, '.log.swap')]);
    expect(p.minCleaned).toBe(0n);
    expect(p.notice).toContain(`${name(10, '.log.swap')} is part of an incomplete split (base offset ≥ 0, the smallest .cleaned base offset): a broker deletes it at startup (LogLoader.removeTempFilesAndCollectSwapFiles, KAFKA-6264)`);
  });

  it('a .swap with no batch: its next offset is its base, nothing is in range, and a broker renames it over seg@0', () => {
    const dir = interruptedCleaner();
    writeFileSync(join(dir, name(0, '.log.swap')), Buffer.alloc(0));
    const p = PartitionLog.open(dir).pendingSwaps!;
    expect(p.swaps.map((s) => s.nextOffset)).toEqual([0n]);
    expect(p.replacedSegments).toEqual([]);
    expect(p.overwrittenSegments).toEqual([0n]);
    expect(p.notice).toContain(`a .swap holding no batch is renamed over ${name(0, '.log')}, which then holds nothing (klx repair keeps that segment instead)`);
  });

  it('none without leftovers', () => {
    const dir = interruptedCleaner();
    rmSync(join(dir, name(0, '.log.swap')));
    expect(PartitionLog.open(dir).pendingSwaps).toBeNull();
  });
});

describe('klx fetch and klx query say what is pending', () => {
  const dir = interruptedCleaner();
  const notice = PartitionLog.open(dir).pendingSwaps!.notice;

  it('klx fetch: the notice is the first line, then the pre-swap records (offset 0 = k0 v0)', () => {
    const r = klx('fetch', dir, '--offset', '0', '--max', '2');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`-- note: ${notice}`);
    expect(lines[1]).toMatch(/^offset 0 ts 1000 .*key: "k0" value: "v0"/);
    expect(lines[2]).toMatch(/^offset 1 /);
  });

  it('klx fetch --json: a {"type":"notice"} line first, with the facts', () => {
    const r = klx('fetch', dir, '--offset', '15', '--max', '1', '--json');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ type: 'notice', code: 'pending-swaps', message: notice, swapFiles: [name(0, '.log.swap')], replacedSegments: [0, 10], range: { from: 0, to: 20 } });
    expect(lines[1]).toMatchObject({ type: 'record', offset: 15 });
    expect(lines[2]).toMatchObject({ type: 'end' });
  });

  it('klx query: after the rows (text), on stderr (--json), naming the partition', () => {
    const r = klx('query', dir, 'SELECT count(*) AS n FROM records', '--no-cache');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').slice(0, 4)).toEqual([' n', '--', '30', '(1 row)']);
    expect(r.stdout).toContain(`(note: orders-0: ${notice})`);
    const j = klx('query', dir, 'SELECT count(*) AS n FROM records', '--no-cache', '--json');
    expect(j.status).toBe(0);
    expect(j.stdout).toBe('{"n":30}\n');
    expect(j.stderr).toBe(`klx: note: orders-0: ${notice}\n`);
  });
});
