/**
 * Startup recovery (`planRecovery` / `applyRecovery`): behaviour case B12 in full, leftovers of
 * interrupted cleaner/split operations, tails vs corruption in the middle of a segment, the
 * transaction index, leader epochs and snapshots, the writer lock, and a repair of real
 * broker-written data (copied to a temp dir first).
 */
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { readOffsetIndex } from '../../../src-main/engine/files/offset-index.ts';
import { readTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { readTxnIndex } from '../../../src-main/engine/files/txn-index.ts';
import { readLeaderEpochCheckpoint } from '../../../src-main/engine/files/checkpoint.ts';
import { WRITER_LOCK_FILE } from '../../../src-main/engine/log/log-lock.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { applyRecovery, planRecovery, type RecoveryAction } from '../../../src-main/engine/log/recovery.ts';
import { quickCheckPartition } from '../../../src-main/engine/log/quick-check.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { fetch } from '../../../src-main/engine/log/fetch.ts';
import { batchOfSize, buildPartition, rec, singles, tempDir, type SegmentInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { createRequire } from 'node:module';

/** kafkajs' CRC-32C (shares no code with the engine's). */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const dirs: string[] = [];
function logDir(): string {
  const d = tempDir('klx-recovery-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});


/** Every record of a partition folder as `offset:key=value`, plus damage seen (reads all .log files). */
function readAll(dir: string): { records: string[]; damage: number; badCrc: number } {
  const records: string[] = [];
  let damage = 0;
  let badCrc = 0;
  const logs = readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort();
  for (const n of logs) {
    for (const e of scanLogFile(join(dir, n), { deep: true })) {
      if (e.type !== 'batch') {
        damage++;
        continue;
      }
      if (e.header.crcValid === false) {
        badCrc++;
        continue;
      }
      for (const r of e.records ?? []) {
        const s = (b: Uint8Array | null) => (b === null ? 'null' : Buffer.from(b).toString('utf8'));
        records.push(`${r.offset}:${s(r.key)}=${s(r.value)}`);
      }
    }
  }
  return { records, damage, badCrc };
}

/** Ten-record batches over [from, to), with explicit base offsets. */
function tens(from: number, to: number, ts = 1000): { baseOffset: bigint; records: ReturnType<typeof rec>[] }[] {
  const out = [];
  for (let b = from; b < to; b += 10) out.push({ baseOffset: BigInt(b), records: Array.from({ length: 10 }, (_, i) => rec(`k${b + i}`, `v${b + i}`, ts + b + i)) });
  return out;
}

function entryBytes(pairs: [number, number][], size: number): Buffer {
  const b = Buffer.alloc(size);
  pairs.forEach(([rel, pos], i) => {
    b.writeInt32BE(rel, i * 8);
    b.writeInt32BE(pos, i * 8 + 4);
  });
  return b;
}

function timeEntryBytes(pairs: [number, number][], size: number): Buffer {
  const b = Buffer.alloc(size);
  pairs.forEach(([ts, rel], i) => {
    b.writeBigInt64BE(BigInt(ts), i * 12);
    b.writeInt32BE(rel, i * 12 + 8);
  });
  return b;
}

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const types = (actions: RecoveryAction[]) => actions.map((a) => (a.type === 'delete-file' ? `delete-file:${a.why}` : a.type));

/** B12's folder: seg@0 intact, seg@100 with three 5000-byte batches, a 1200-byte partial fourth, preallocated indexes, an orphan index. */
function buildB12(opts: { laterSegment?: boolean } = {}): { root: string; dir: string } {
  const root = logDir();
  const segs: SegmentInput[] = [
    { batches: tens(0, 100) },
    {
      baseOffset: 100n,
      batches: [batchOfSize(100n, 10, 5000, 1100), batchOfSize(110n, 10, 5000, 1110), batchOfSize(120n, 10, 5000, 1120)],
      tail: batchOfSize(130n, 10, 5000, 1130).subarray(0, 1200),
      noIndex: true,
      noTimeIndex: true,
    },
  ];
  if (opts.laterSegment) segs.push({ baseOffset: 140n, batches: tens(140, 150) });
  const dir = buildPartition(root, { topic: 'orders', segments: segs }, { recoveryPoint: 100n });
  // Never trimmed: 10 MiB with two real entries, then zeros (what a crashed broker leaves).
  writeFileSync(join(dir, name(100, '.index')), entryBytes([[19, 5000], [29, 10000]], 10_485_760));
  writeFileSync(join(dir, name(100, '.timeindex')), timeEntryBytes([[1119, 19], [1129, 29]], 10_485_756));
  writeFileSync(join(dir, name(200, '.index')), Buffer.alloc(8));
  return { root, dir };
}

describe('B12: Unclean shutdown: rebuild preallocated or corrupt indexes and cut off a partial tail batch', () => {
  it('B12: the partial tail is cut (15000 B, LEO 130), indexes rebuilt trimmed, the orphan index deleted', async () => {
    const { dir } = buildB12();
    expect(statSync(join(dir, name(100, '.log'))).size).toBe(16200);
    const before = readAll(dir);
    expect(before.records.length).toBe(130);
    expect(before.damage).toBe(1);

    // The quick check sees the preallocated indexes and the orphan without reading any .log.
    const quick = quickCheckPartition(PartitionLog.open(dir));
    expect(quick.filter((f) => f.code === 'orphan-index').map((f) => f.file)).toEqual([join(dir, name(200, '.index'))]);
    expect(quick.filter((f) => f.code === 'untrimmed-index').map((f) => [f.severity, f.details.zeroSlots])).toEqual([
      ['info', 1_310_718],
      ['info', 873_811],
    ]);
    expect(quick.filter((f) => f.code === 'corrupt-index')).toEqual([]);
    expect(quick.find((f) => f.code === 'recovery-needed')?.details).toEqual({ recoveryPoint: 100, segments: 1 });

    // Verify: the tail is an error with its position and size; the log ends at 130.
    const report = await verifyPartition(PartitionLog.open(dir));
    const tail = report.findings.find((f) => f.code === 'invalid-tail')!;
    expect(tail).toMatchObject({ severity: 'error', file: join(dir, name(100, '.log')), position: 15000, details: { bytes: 1200 } });
    expect(report.logEndOffset).toBe(130n);

    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['delete-file:orphan-index', 'rebuild-indexes', 'truncate-log']);
    expect(plan.cleanShutdown).toBe(false);
    expect(plan.recoveryPoint).toBe(100n);
    expect(plan.logEndOffsetAfter).toBe(130n);
    const rebuild = plan.actions[1]!;
    if (rebuild.type !== 'rebuild-indexes') throw new Error('unexpected');
    expect(rebuild.baseOffset).toBe(100n);
    expect(rebuild.index!.entries.map((e) => [e.relativeOffset, e.position])).toEqual([
      [19, 5000],
      [29, 10000],
    ]);
    expect(rebuild.timeindex!.entries.map((e) => [e.timestamp, e.relativeOffset])).toEqual([
      [1119n, 19],
      [1129n, 29],
    ]);
    expect(plan.actions[2]).toMatchObject({ type: 'truncate-log', fromBytes: 16200, toBytes: 15000, kind: 'invalid-tail', droppedBatches: 0, nextOffset: 130n });
    // seg@0 lies below the recovery point: a broker leaves it alone, and so does the plan.
    expect(plan.actions.some((a) => 'baseOffset' in a && a.baseOffset === 0n)).toBe(false);
    expect(plan.unresolved).toEqual([]);

    await applyRecovery(plan);
    expect(statSync(join(dir, name(100, '.log'))).size).toBe(15000);
    expect([...readFileSync(join(dir, name(100, '.index')))]).toEqual([0, 0, 0, 19, 0, 0, 0x13, 0x88, 0, 0, 0, 29, 0, 0, 0x27, 0x10]);
    const ti = readTimeIndex(join(dir, name(100, '.timeindex')));
    expect(ti.fileSize).toBe(24);
    expect(ti.entries.map((e) => [e.timestamp, e.offset])).toEqual([
      [1119n, 119n],
      [1129n, 129n],
    ]);
    expect(existsSync(join(dir, name(200, '.index')))).toBe(false);
    expect(existsSync(join(dir, WRITER_LOCK_FILE))).toBe(false);
    const after = readAll(dir);
    expect(after.records).toEqual(before.records);
    expect(after.damage).toBe(0);
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(130n);
    const verified = await verifyPartition(log);
    expect(verified.counts).toMatchObject({ error: 0, warning: 0 });
    // Idempotent: nothing left to do.
    expect((await planRecovery(dir)).actions).toEqual([]);
  });

  it('B12: with a later (unflushed) segment the default cuts nothing (no offset gap a broker would not leave); truncateAtCorruption cuts and deletes it, as a broker does (issue 13 finding 3)', async () => {
    const a = buildB12({ laterSegment: true });
    const plan = await planRecovery(a.dir);
    expect(types(plan.actions)).toEqual(['delete-file:orphan-index', 'rebuild-indexes']);
    expect(plan.notes).toEqual([]);
    expect(plan.unresolved).toEqual([
      {
        kind: 'needs-truncate-flag',
        file: join(a.dir, name(100, '.log')),
        position: 15000,
        reason: expect.stringMatching(/; nothing valid follows it: left in place \(klx keeps the later segments and leaves no offset gap\)\. A broker would cut the segment at byte 15000 \(LogSegment\.recover\) and delete the 1 later segment \(LogLoader\.recoverLog\); ask for the cut and the deletion of every later segment with --truncate-at-corruption$/),
      },
    ]);
    await applyRecovery(plan);
    const kept = readAll(a.dir).records;
    expect(kept.length).toBe(140);
    expect(kept.at(-1)).toBe('149:k149=v149');

    const b = buildB12({ laterSegment: true });
    const broker = await planRecovery(b.dir, { truncateAtCorruption: true });
    expect(types(broker.actions)).toEqual(['delete-file:orphan-index', 'delete-segment', 'rebuild-indexes', 'truncate-log']);
    expect(broker.actions[1]).toMatchObject({ type: 'delete-segment', baseOffset: 140n, batches: 1, records: 10 });
    expect(broker.logEndOffsetAfter).toBe(130n);
    await applyRecovery(broker);
    expect(readAll(b.dir).records.length).toBe(130);
    expect(readdirSync(b.dir).filter((n) => n.startsWith(name(140, '')))).toEqual([]);
    expect((await verifyPartition(PartitionLog.open(b.dir))).counts).toMatchObject({ error: 0, warning: 0 });
  });

  it('B12: a one-entry index (rel 0, pos 0) after a clean shutdown is valid (KAFKA-7076); sizes not a multiple of 8 / 12 are corrupt', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`, 1000 + i))) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.index')), Buffer.alloc(8));
    const log = PartitionLog.open(dir);
    expect(readOffsetIndex(join(dir, name(0, '.index'))).entries).toEqual([{ offset: 0n, relativeOffset: 0, position: 0 }]);
    expect(quickCheckPartition(log)).toEqual([]);
    const report = await verifyPartition(log);
    expect(report.findings).toEqual([]);
    expect((await planRecovery(dir)).actions).toEqual([]);

    writeFileSync(join(dir, name(0, '.index')), Buffer.alloc(9));
    writeFileSync(join(dir, name(0, '.timeindex')), Buffer.alloc(13));
    const quick = quickCheckPartition(PartitionLog.open(dir));
    expect(quick.filter((f) => f.code === 'corrupt-index').map((f) => [basename(f.file), f.position, f.details.kind, f.details.kafkaRebuild])).toEqual([
      // Kafka checks only the .txnindex at startup (LogSegment.sanityCheck); a corrupt .index or
      // .timeindex is rebuilt only when the segment is recovered, never after a clean shutdown.
      [name(0, '.index'), 8, 'size-not-multiple', false],
      [name(0, '.timeindex'), 12, 'size-not-multiple', false],
    ]);
    expect(quick.find((f) => f.code === 'corrupt-index')!.reason).toContain("a broker does not run it at startup (LogSegment.sanityCheck skips it)");
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['rebuild-indexes']);
    await applyRecovery(plan);
    expect(statSync(join(dir, name(0, '.index'))).size).toBe(0);
    expect(readTimeIndex(join(dir, name(0, '.timeindex'))).entries.map((e) => [e.timestamp, e.offset])).toEqual([[1009n, 9n]]);
    expect((await verifyPartition(PartitionLog.open(dir))).findings).toEqual([]);
  });
});

describe('leftovers of interrupted operations (spec §10.3, LogLoader passes 1–2)', () => {
  it('deletes .deleted files and stale .tmp files, and nothing else', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 20) }, { batches: tens(20, 30) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.log.deleted')), 'old');
    writeFileSync(join(dir, name(0, '.index.deleted')), '');
    writeFileSync(join(dir, name(20, '.index.tmp')), 'half');
    writeFileSync(join(dir, 'leader-epoch-checkpoint.tmp'), '0\n');
    const before = readAll(dir).records;
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['delete-file:temp', 'delete-file:temp', 'delete-file:deleted', 'delete-file:deleted']);
    await applyRecovery(plan);
    expect(readdirSync(dir).sort()).toEqual([name(0, '.index'), name(0, '.log'), name(0, '.timeindex'), name(20, '.index'), name(20, '.log'), name(20, '.timeindex')]);
    expect(readAll(dir).records).toEqual(before);
  });

  it('an incomplete split: the .swap at or above the smallest .cleaned base and the .cleaned go; the original stays', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 20) }, { batches: tens(20, 30) }] }, { cleanShutdown: true });
    // Split of seg@0 into [0..9] and [10..19]: .cleaned → .swap renames run in descending order, so a
    // crash leaves the upper part as .swap and the lower still .cleaned.
    const log0 = readFileSync(join(dir, name(0, '.log')));
    const firstHalf = [...scanLogFile(join(dir, name(0, '.log')))].filter((e) => e.type === 'batch')[0]!;
    writeFileSync(join(dir, name(0, '.log.cleaned')), log0.subarray(0, (firstHalf as { header: { size: number } }).header.size));
    writeFileSync(join(dir, name(10, '.log.swap')), log0.subarray((firstHalf as { header: { size: number } }).header.size));
    writeFileSync(join(dir, name(10, '.index.swap')), '');
    const before = readAll(dir).records;
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['delete-file:incomplete-swap', 'delete-file:incomplete-swap', 'delete-file:cleaned']);
    await applyRecovery(plan);
    expect(readAll(dir).records).toEqual(before);
    expect(readdirSync(dir).some((n) => /\.(swap|cleaned)$/.test(n))).toBe(false);
    expect((await verifyPartition(PartitionLog.open(dir))).counts).toMatchObject({ error: 0, warning: 0 });
  });

  it('a complete swap: old segments in [min swap base, max swap end) are deleted, the swap renamed, its indexes rebuilt', async () => {
    const root = logDir();
    // seg@0 (0–9) and seg@10 (10–19) hold k0..k4 twice; seg@20 is active.
    const dup = (from: number) => singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i % 5}`, `v${from + i}`, 1000 + from + i)));
    const dir = buildPartition(root, { segments: [{ batches: dup(0) }, { batches: dup(10) }, { batches: tens(20, 30) }] }, { cleanShutdown: true });
    // Cleaner output for seg@0+seg@10: the last value of each key (offsets 15..19), in one segment based at 0.
    const cleaned = Buffer.concat([15, 16, 17, 18, 19].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o % 5}`, `v${o}`, 1000 + o)] })));
    writeFileSync(join(dir, name(0, '.log.swap')), cleaned);
    writeFileSync(join(dir, name(0, '.index.swap')), Buffer.alloc(0));
    writeFileSync(join(dir, name(0, '.timeindex.swap')), Buffer.alloc(12));
    // The crash came while renaming old segments to .deleted: seg@0's .log already went.
    rmSync(join(dir, name(0, '.log')));
    writeFileSync(join(dir, name(0, '.log.deleted')), 'x');
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual([
      'delete-file:deleted',
      'delete-file:replaced-by-swap',
      'delete-file:replaced-by-swap',
      'delete-file:replaced-by-swap',
      'delete-file:replaced-by-swap',
      'delete-file:replaced-by-swap',
      'delete-file:swap-index',
      'delete-file:swap-index',
      'rename',
      'rebuild-indexes',
    ]);
    expect(plan.actions.filter((a) => a.type === 'delete-file' && a.why === 'replaced-by-swap').map((a) => basename((a as { file: string }).file))).toEqual([
      name(0, '.index'),
      name(0, '.timeindex'),
      name(10, '.index'),
      name(10, '.log'),
      name(10, '.timeindex'),
    ]);
    await applyRecovery(plan);
    expect(readAll(dir).records).toEqual(['15:k0=v15', '16:k1=v16', '17:k2=v17', '18:k3=v18', '19:k4=v19', ...Array.from({ length: 10 }, (_, i) => `${20 + i}:k${20 + i}=v${20 + i}`)]);
    expect(readdirSync(dir).sort()).toEqual([name(0, '.index'), name(0, '.log'), name(0, '.timeindex'), name(20, '.index'), name(20, '.log'), name(20, '.timeindex')]);
    expect((await verifyPartition(PartitionLog.open(dir))).counts).toMatchObject({ error: 0, warning: 0 });
    expect((await planRecovery(dir)).actions).toEqual([]);
  });
});

describe('an empty .swap', () => {
  it('replaces nothing: it is deleted and the segment with the data is kept (Kafka would rename it over the data)', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 20) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.log.swap')), Buffer.alloc(0));
    const before = readAll(dir).records;
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['delete-file:incomplete-swap']);
    await applyRecovery(plan);
    expect(readAll(dir).records).toEqual(before);
    expect(before.length).toBe(20);
  });
});

describe('damage in the middle of a segment', () => {
  /** seg@0: ten single-record batches, the 5th (offset 4) with a flipped record byte; seg@10 active. */
  function buildCrcDamage(): { dir: string; badPosition: number } {
    const root = logDir();
    const one = (o: number) => rec(`k${o}`, `v${o}`, 1000 + o);
    const dir = buildPartition(root, { segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)) }, { batches: [{ records: [10, 11, 12, 13, 14].map(one) }] }] }, { recoveryPoint: 0n });
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const batches = [...scanLogFile(file)].filter((e) => e.type === 'batch') as { header: { position: number; size: number } }[];
    const bad = batches[4]!.header;
    bytes[bad.position + bad.size - 2] ^= 0xff; // inside the value: framing intact, CRC broken
    writeFileSync(file, bytes);
    return { dir, badPosition: bad.position };
  }

  it('by default a CRC failure with valid batches after it is reported and left in place (no valid record dropped)', async () => {
    const { dir, badPosition } = buildCrcDamage();
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.filter((f) => f.severity === 'error').map((f) => [f.code, f.position])).toEqual([['crc-mismatch', badPosition]]);
    const plan = await planRecovery(dir);
    expect(plan.actions.filter((a) => a.type === 'truncate-log' || a.type === 'delete-segment')).toEqual([]);
    expect(plan.unresolved).toHaveLength(1);
    expect(plan.unresolved[0]).toMatchObject({ kind: 'needs-truncate-flag', position: badPosition });
    expect(plan.unresolved[0]!.reason).toContain('5 valid batches (5 records) follow it');
    const before = readAll(dir);
    await applyRecovery(plan);
    const after = readAll(dir);
    expect(after.records).toEqual(before.records);
    expect(after.records.length).toBe(14);
    expect(after.badCrc).toBe(1);
  });

  it('with truncateAtCorruption the segment is cut at the bad batch and later segments deleted, counting what is dropped', async () => {
    const { dir, badPosition } = buildCrcDamage();
    const plan = await planRecovery(dir, { truncateAtCorruption: true });
    expect(types(plan.actions)).toEqual(['delete-segment', 'rebuild-indexes', 'truncate-log']);
    expect(plan.actions[0]).toMatchObject({ baseOffset: 10n, records: 5 });
    expect(plan.actions[2]).toMatchObject({ kind: 'corruption', toBytes: badPosition, droppedBatches: 5, droppedRecords: 5, nextOffset: 4n });
    expect(plan.unresolved).toEqual([]);
    await applyRecovery(plan);
    expect(readAll(dir).records).toEqual(['0:k0=v0', '1:k1=v1', '2:k2=v2', '3:k3=v3']);
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(4n);
    expect((await verifyPartition(log)).counts).toMatchObject({ error: 0, warning: 0 });
  });

  it('garbage bytes inserted between batches are a corrupt region: left alone by default, cut with the flag', async () => {
    const root = logDir();
    const good = singles(...Array.from({ length: 6 }, (_, i) => rec(`k${i}`, `v${i}`, 1000 + i)));
    const dir = buildPartition(root, { segments: [{ batches: good }] });
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const third = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[3] as { header: { position: number } }).header.position;
    const garbage = Buffer.from('not a batch at all, just 37 bytes!!!!');
    expect(garbage.length).toBe(37);
    writeFileSync(file, Buffer.concat([bytes.subarray(0, third), garbage, bytes.subarray(third)]));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.filter((f) => f.severity === 'error').map((f) => [f.code, f.position, f.details.bytes])).toEqual([['corrupt-region', third, 37]]);
    const plan = await planRecovery(dir);
    expect(plan.unresolved.map((n) => [n.kind, n.position])).toEqual([['needs-truncate-flag', third]]);
    expect(plan.actions.some((a) => a.type === 'truncate-log')).toBe(false);
    const flagged = await planRecovery(dir, { truncateAtCorruption: true });
    expect(flagged.actions.find((a) => a.type === 'truncate-log')).toMatchObject({ toBytes: third, droppedBatches: 3, droppedRecords: 3 });
    await applyRecovery(flagged);
    expect(readAll(dir).records).toEqual(['0:k0=v0', '1:k1=v1', '2:k2=v2']);
  });

  it('a zero-filled tail (preallocated .log after a crash) is cut: only zeros go', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 20), tail: Buffer.alloc(4096) }] });
    const size = statSync(join(dir, name(0, '.log'))).size;
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position])).toEqual([['warning', 'zero-tail', size - 4096]]);
    const plan = await planRecovery(dir);
    expect(plan.actions.find((a) => a.type === 'truncate-log')).toMatchObject({ fromBytes: size, toBytes: size - 4096, kind: 'invalid-tail' });
    await applyRecovery(plan);
    expect(readAll(dir).records.length).toBe(20);
    expect(statSync(join(dir, name(0, '.log'))).size).toBe(size - 4096);
  });
});

describe('what a broker recovers at startup: from the recovery point, nothing after a clean shutdown (issue 13 finding 3)', () => {
  const one = (o: number) => rec(`k${o}`, `v${o}`, 1000 + o);
  /** seg@0 (0..9, the batch at offset 4 failing its CRC), seg@10 (10..14 in one batch), with the given checkpoints. */
  function crcDamageWith(cp: { recoveryPoint?: bigint; cleanShutdown?: boolean }): { dir: string; badPosition: number } {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)) }, { batches: [{ records: [10, 11, 12, 13, 14].map(one) }] }] }, cp);
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const bad = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[4] as { header: { position: number; size: number } }).header;
    bytes[bad.position + bad.size - 2] ^= 0x01;
    writeFileSync(file, bytes);
    return { dir, badPosition: bad.position };
  }

  it('a CRC failure below the recovery point: nothing planned, and the plan says a broker would not notice it and where consumers fail', async () => {
    const { dir, badPosition } = crcDamageWith({ recoveryPoint: 10n });
    const plan = await planRecovery(dir);
    expect(plan.actions.filter((a) => a.type === 'truncate-log' || a.type === 'delete-segment')).toEqual([]);
    expect(plan.unresolved).toHaveLength(1);
    const n = plan.unresolved[0]!;
    expect(n).toMatchObject({ kind: 'not-recovered-by-broker', file: join(dir, name(0, '.log')), position: badPosition });
    expect(n.reason).toContain('5 valid batches (5 records) follow it: left in place. A broker would not notice it at startup: the segment lies below the recovery point 10 (recovery-point-offset-checkpoint), and a broker recovers only the segments from the one holding it on (LogLoader.recoverLog); a consumer with check.crcs=true (the default) stops at offset 4 (Kafka CompletedFetch). Cutting the segment here is your choice (--truncate-at-corruption), not the broker\'s');
    expect(n.reason).not.toContain('A broker would cut');
    const cut = await planRecovery(dir, { truncateAtCorruption: true });
    const t = cut.actions.find((a) => a.type === 'truncate-log')!;
    expect(t).toMatchObject({ kind: 'corruption', toBytes: badPosition, droppedBatches: 5, droppedRecords: 5 });
    expect(t.reason).toMatch(/\(your choice: a broker would not recover this segment at startup, LogLoader\.recoverLog\)$/);
    expect(cut.actions.find((a) => a.type === 'delete-segment')).toMatchObject({ baseOffset: 10n, records: 5 });
  });

  it('a segment recovered alone for its missing .index, with no later segment: the plan names no later segments and no offset gap (fresh tester, finding 8)', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)), noIndex: true }] }, { cleanShutdown: true });
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const bad = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[4] as { header: { position: number; size: number } }).header;
    bytes[bad.position + bad.size - 2] ^= 0x01;
    writeFileSync(file, bytes);
    const plan = await planRecovery(dir);
    const u = plan.unresolved.find((x) => x.kind === 'needs-truncate-flag')!;
    expect(u.reason).toContain(`Its .index is missing, so a broker would recover this segment alone and cut it at byte ${bad.position} (LogLoader.loadSegmentFiles, LogSegment.recover); ask for the cut with --truncate-at-corruption`);
    expect(u.reason).not.toMatch(/later segment|offset gap/);
  });

  it('the KRaft metadata log is recovered from offset 0 at every start, whatever .kafka_cleanshutdown and the recovery point say (KafkaRaftLog.createLog)', async () => {
    // Same damage, same checkpoints (clean shutdown, recovery point 10), in __cluster_metadata-0.
    const root = logDir();
    const dir = buildPartition(root, { topic: '__cluster_metadata', segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)) }, { batches: [{ records: [10, 11, 12, 13, 14].map(one) }] }] }, { recoveryPoint: 10n, cleanShutdown: true });
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const bad = ([...scanLogFile(file)].filter((e) => e.type === 'batch')[4] as { header: { position: number; size: number } }).header;
    bytes[bad.position + bad.size - 2] ^= 0x01;
    writeFileSync(file, bytes);
    const log = PartitionLog.open(dir);
    expect(log.checkpoints.cleanShutdown).toBe(true);
    expect(log.recoveryPoint).toBe(10n);
    expect(log.startupCleanShutdown).toBe(false);
    expect(log.startupRecoveryPoint).toBe(0n);
    const plan = await planRecovery(dir);
    expect(plan.cleanShutdown).toBe(false);
    // As for any recovered segment: by default no valid record is dropped, and the plan says what a broker does.
    expect(plan.unresolved).toHaveLength(1);
    expect(plan.unresolved[0]).toMatchObject({ kind: 'needs-truncate-flag', position: bad.position });
    expect(plan.unresolved[0]!.reason).toContain(`A broker would cut the segment at byte ${bad.position} (LogSegment.recover) and delete the 1 later segment (LogLoader.recoverLog)`);
    const cut = await planRecovery(dir, { truncateAtCorruption: true });
    expect(cut.actions.find((a) => a.type === 'truncate-log')).toMatchObject({ kind: 'corruption', toBytes: bad.position, droppedBatches: 5, droppedRecords: 5 });
    expect(cut.actions.find((a) => a.type === 'delete-segment')).toMatchObject({ baseOffset: 10n, records: 5 });
    const note = quickCheckPartition(log).find((f) => f.code === 'recovery-needed')!;
    expect(note.reason).toContain('a KRaft node re-validates all 2 segments of __cluster_metadata-0 from offset 0 at every start');
    const v = await verifyPartition(log);
    const vText = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));
    expect(vText).not.toContain('recovers no segment');
    // only KRaft voters and observers fetch __cluster_metadata: the CRC finding says what they do, not what a consumer does (KafkaRaftClient)
    expect(vText).not.toContain('check.crcs');
    const crc = v.findings.find((f) => f.code === 'crc-mismatch')!;
    expect(crc.reason).toContain(
      'no consumer reads __cluster_metadata (only KRaft voters and observers fetch it: KafkaRaftClient); a KRaft node refuses the batch at offset 4 when it reads it for its listeners (RecordsIterator.readBatch: CorruptRecordException); ' +
        'the quorum leader serves the batch as it is (fetches do not check CRCs) and a voter or observer refuses to append it (KafkaMetadataLog.appendAsFollower: UnifiedLog.analyzeAndValidateRecords)',
    );
    await expect(fetch(log, { offset: 4n, onCorrupt: 'stop' })).rejects.toThrow(/: no consumer reads __cluster_metadata \(only KRaft voters and observers fetch it: KafkaRaftClient\); a KRaft node refuses the batch at offset 4 /);
  });

  it('after a clean shutdown a zero-filled tail stops a broker loading the log, and a garbage head that fits sets its log end offset (LogSegment.readNextOffset, FileLogInputStream.nextBatch)', async () => {
    const zeros = buildPartition(logDir(), { segments: [{ batches: singles(one(0), one(1), one(2)), tail: Buffer.alloc(64) }] }, { cleanShutdown: true, recoveryPoint: 0n });
    const zSize = statSync(join(zeros, name(0, '.log'))).size;
    const z = await planRecovery(zeros);
    expect(z.actions).toEqual([]);
    expect(z.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', zSize - 64]]);
    expect(z.unresolved[0]!.reason).toContain(`(LogLoader.recoverLog); a broker does not start: loading this log, LogSegment.readNextOffset reads the bytes at ${zSize - 64} as a size field of 0, below the 14-byte minimum (FileLogInputStream.nextBatch throws CorruptRecordException), which LogManager.loadLogs does not catch. Cutting`);
    // 61 bytes of 'A' with the head of a batch: baseOffset 500, size 49 (fits the file), magic 5, lastOffsetDelta 3.
    const g = Buffer.alloc(61, 0x41);
    g.writeBigInt64BE(500n, 0);
    g.writeInt32BE(49, 8);
    g.writeInt8(5, 16);
    g.writeInt32BE(3, 23);
    const garbage = buildPartition(logDir(), { segments: [{ batches: singles(one(0), one(1), one(2)), tail: g }] }, { cleanShutdown: true, recoveryPoint: 0n });
    const gSize = statSync(join(garbage, name(0, '.log'))).size;
    const r = await planRecovery(garbage);
    expect(r.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', gSize - 61]]);
    expect(r.unresolved[0]!.reason).toContain(`a broker takes the bytes at byte ${gSize - 61} for the last batch and sets the log end offset to 504 instead of 3 (LogSegment.readNextOffset reads only their size field and header); a consumer fails on its magic byte 5 at offset 3 whatever check.crcs (ByteBufferLogInputStream.nextBatchSize: CorruptRecordException "Invalid magic found in record"`);
  });

  it('after a clean shutdown even a partial tail of the active segment is left: a broker recovers no segment', async () => {
    const root = logDir();
    const partial = encodeBatch({ baseOffset: 10n, records: [one(10)] }).subarray(0, 40);
    const dir = buildPartition(root, { segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)), tail: partial }] }, { cleanShutdown: true, recoveryPoint: 0n });
    const size = statSync(join(dir, name(0, '.log'))).size;
    const plan = await planRecovery(dir);
    expect(plan.actions).toEqual([]);
    expect(plan.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', size - 40]]);
    expect(plan.unresolved[0]!.reason).toContain(`nothing valid follows it: left in place. A broker would not notice it at startup: the log directory had a clean shutdown (.kafka_cleanshutdown), so a broker recovers no segment at startup (LogLoader.recoverLog); a broker opens the segment with all its ${size} bytes (FileRecords.open: the write position is the file's size) and sets the log end offset to 10 (LogSegment.readNextOffset reads only complete batches), so no read reaches these 40 bytes until the next append; that append is written after them, at byte ${size}, with base offset 10`);
    // The rest of the sequence (the frame a read makes after that append, the cut at the next start after a crash): unrecovered-tail.test.ts.
    expect(plan.unresolved[0]!.reason).toContain(`LogSegment.recover cuts it at byte ${size - 40}: every batch appended after these bytes is lost. Cutting`);
    // The same folder with its .index missing: a broker recovers that segment alone (LogLoader.loadSegmentFiles) and cuts the tail.
    rmSync(join(dir, name(0, '.index')));
    const alone = await planRecovery(dir);
    expect(alone.unresolved).toEqual([]);
    const t = alone.actions.find((a) => a.type === 'truncate-log')!;
    expect(t).toMatchObject({ fromBytes: size, toBytes: size - 40, kind: 'invalid-tail', nextOffset: 10n });
    expect(t.reason).toMatch(/\(a broker does the same: its \.index is missing, LogLoader\.loadSegmentFiles\)$/);
  });

  it('a complete batch of magic 3 with a valid CRC-32C at the end of the active segment is not cut: LogSegment.recover keeps it', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(one)) }] }, { recoveryPoint: 0n });
    const file = join(dir, name(0, '.log'));
    const bytes = readFileSync(file);
    const last = ([...scanLogFile(file)].filter((e) => e.type === 'batch').at(-1) as { header: { position: number; size: number } }).header;
    bytes[last.position + 16] = 3; // the magic byte lies outside the CRC-32C
    writeFileSync(file, bytes);
    expect(kjsCrc32C(bytes.subarray(last.position + 21, last.position + last.size)) >>> 0).toBe(bytes.readUInt32BE(last.position + 17));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.filter((f) => f.severity === 'error').map((f) => [f.code, f.position])).toContainEqual(['invalid-tail', last.position]);
    const plan = await planRecovery(dir);
    expect(plan.actions.filter((a) => a.type === 'truncate-log')).toEqual([]);
    expect(plan.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', last.position]]);
    expect(plan.unresolved[0]!.reason).toContain(`It is a complete batch of magic 3 (${last.size} bytes) whose CRC-32C is valid, so a broker's recovery keeps it (LogSegment.recover: RecordBatch.ensureValid checks only the size and the CRC); a consumer (whatever check.crcs: ByteBufferLogInputStream.nextBatchSize refuses a magic byte other than 0, 1 or 2) stops at offset 9 (Kafka CompletedFetch)`);
    expect((await planRecovery(dir, { truncateAtCorruption: true })).actions.find((a) => a.type === 'truncate-log')).toMatchObject({ toBytes: last.position });
  });
});

describe('transaction index, leader epochs, snapshots, empty folder', () => {
  const txn = (base: bigint, pid: bigint, keys: string[]) => ({ baseOffset: base, producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: keys.map((k, i) => rec(k, 'x', 1000 + i)) });
  const marker = (base: bigint, pid: bigint, type: 0 | 1) => ({ baseOffset: base, producerId: pid, producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type), value: encodeEndTxnMarkerValue(0), timestamp: 2000n }] });

  it('rebuilds a missing .txnindex from the ABORT markers (empty transactions are not indexed)', async () => {
    const root = logDir();
    // B15's segment: [pid5 k1,k2]@0, ABORT(9)@2 (empty txn), ABORT(5)@3, [pid5 k3]@4, COMMIT(5)@5, [pid6 k4,k5]@6, ABORT(6)@8.
    const batches = [txn(0n, 5n, ['k1', 'k2']), marker(2n, 9n, 0), marker(3n, 5n, 0), txn(4n, 5n, ['k3']), marker(5n, 5n, 1), txn(6n, 6n, ['k4', 'k5']), marker(8n, 6n, 0)];
    const dir = buildPartition(root, { segments: [{ batches }, { batches: singles(rec('k6', 'x', 3000)) }] }, { cleanShutdown: true });
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.filter((f) => f.code === 'txn-index-missing-entry').map((f) => [f.details.producerId, f.details.markerOffset])).toEqual([
      [5, 3],
      [6, 8],
    ]);
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['rebuild-indexes']);
    await applyRecovery(plan);
    expect(readTxnIndex(join(dir, name(0, '.txnindex'))).entries).toEqual([
      { version: 0, producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
      { version: 0, producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
    ]);
    expect((await verifyPartition(PartitionLog.open(dir))).counts).toMatchObject({ error: 0, warning: 0 });
  });

  it('an entry with no ABORT marker behind it is an error and is removed by the rebuild', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 10), txnIndex: [{ producerId: 7n, firstOffset: 1n, lastOffset: 5n, lastStableOffset: 6n }] }] }, { cleanShutdown: true });
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.code, f.position])).toEqual([['txn-index-unexpected-entry', 0]]);
    await applyRecovery(await planRecovery(dir));
    expect(statSync(join(dir, name(0, '.txnindex'))).size).toBe(0);
    expect((await verifyPartition(PartitionLog.open(dir))).findings).toEqual([]);
  });

  it('drops leader epochs and producer snapshots beyond the new log end after a truncation', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: tens(0, 20), tail: Buffer.from(encodeBatch({ baseOffset: 20n, records: [rec('k', 'v', 1)] }).subarray(0, 40)) }] });
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n3\n0 0\n1 10\n2 20\n');
    writeFileSync(join(dir, name(20, '.snapshot')), Buffer.alloc(10));
    writeFileSync(join(dir, name(21, '.snapshot')), Buffer.alloc(10));
    const plan = await planRecovery(dir);
    // The indexes on disk already describe exactly the batches that stay: no rebuild needed.
    expect(types(plan.actions)).toEqual(['truncate-log', 'delete-file:stale-snapshot']);
    // Epoch 2 starts at 20 = the log end: normal (a leader elected after the last append), kept.
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n3\n0 0\n1 10\n2 25\n');
    const plan2 = await planRecovery(dir);
    expect(types(plan2.actions)).toEqual(['truncate-log', 'write-leader-epochs', 'delete-file:stale-snapshot']);
    await applyRecovery(plan2);
    expect(readLeaderEpochCheckpoint(join(dir, 'leader-epoch-checkpoint'))).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 1, startOffset: 10n },
    ]);
    expect(existsSync(join(dir, name(20, '.snapshot')))).toBe(true);
    expect(existsSync(join(dir, name(21, '.snapshot')))).toBe(false);
  });

  it('creates an empty active segment at the log start offset when none is left', async () => {
    const root = logDir();
    const dir = buildPartition(root, { topic: 'empty', segments: [] }, { logStartOffset: 5n });
    writeFileSync(join(dir, name(0, '.index')), '');
    const plan = await planRecovery(dir);
    expect(types(plan.actions)).toEqual(['delete-file:orphan-index', 'create-segment']);
    expect(plan.logEndOffsetAfter).toBe(5n);
    await applyRecovery(plan);
    expect(readdirSync(dir).sort()).toEqual([name(5, '.index'), name(5, '.log'), name(5, '.timeindex')]);
    const log = PartitionLog.open(dir);
    expect(log.logEndOffset).toBe(5n);
    expect((await verifyPartition(log)).counts).toMatchObject({ error: 0, warning: 0 });
  });
});

describe('writer lock', () => {
  it('applyRecovery refuses a partition whose writer lock a live process holds, and takes over a dead one', async () => {
    const { dir } = buildB12();
    const plan = await planRecovery(dir);
    const lock = join(dir, WRITER_LOCK_FILE);
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, hostname: hostname(), createdAt: new Date().toISOString(), purpose: 'klx append', nonce: 'abc' }) + '\n');
    const err = await applyRecovery(plan).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).code).toBe('locked');
    expect(statSync(join(dir, name(100, '.log'))).size).toBe(16200);
    // A holder that no longer exists is taken over.
    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 + 12345, hostname: hostname(), createdAt: '', purpose: 'klx repair', nonce: 'dead' }) + '\n');
    await applyRecovery(plan);
    expect(statSync(join(dir, name(100, '.log'))).size).toBe(15000);
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses a plan that no longer matches the folder', async () => {
    const { dir } = buildB12();
    const plan = await planRecovery(dir);
    writeFileSync(join(dir, name(100, '.log')), Buffer.concat([readFileSync(join(dir, name(100, '.log'))), Buffer.alloc(5)]));
    const err = (await applyRecovery(plan).catch((e: unknown) => e)) as KlxError;
    expect(err.code).toBe('invalid-argument');
    expect(err.message).toContain('plan again');
  });
});

describeRealData('recovery of real broker-written data (copied to a temp dir)', () => {
  for (const c of ['multisegment-rolled', 'kafka-2.7.1-compacted-offsets', 'gzip-mixed-bitnami', 'retention-log-start']) {
    it(`${c}: repair keeps every record, fixes the missing indexes, and a second plan is empty`, async () => {
      const root = logDir();
      cpSync(join(REAL_DATA, c), root, { recursive: true });
      const makeWritable = (p: string) => {
        chmodSync(p, statSync(p).isDirectory() ? 0o755 : 0o644);
        if (statSync(p).isDirectory()) for (const n of readdirSync(p)) makeWritable(join(p, n));
      };
      makeWritable(root);
      const parts = allPartitions(openPath(root));
      const before = parts.map(({ log }) => readAll(log.dir).records);
      for (const { log } of parts) {
        const plan = await planRecovery(log.dir);
        expect(plan.unresolved).toEqual([]);
        // Intact data: nothing is truncated or deleted except what a broker deletes.
        expect(plan.actions.filter((a) => a.type === 'truncate-log' || a.type === 'delete-segment')).toEqual([]);
        await applyRecovery(plan);
      }
      const after = allPartitions(openPath(root));
      expect(after.map(({ log }) => readAll(log.dir).records)).toEqual(before);
      for (const { log } of after) {
        const report = await verifyPartition(log, { deep: false });
        expect(report.findings.filter((f) => f.severity !== 'info'), log.dir).toEqual([]);
        expect((await planRecovery(log.dir)).actions, log.dir).toEqual([]);
      }
    });
  }
});
