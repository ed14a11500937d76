/**
 * `verifyPartition` / `quickCheckPartition`: every kind of finding with its file, byte position and
 * severity on hand-made damage, and on the real broker-written data sets: zero errors, only the
 * explained warnings, and exactly the index facts of `EXPECTED-index.json`.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { countFindings, type Finding } from '../../../src-main/engine/log/findings.ts';
import { logDirFindings, quickCheckPartition, tailCheckPartition } from '../../../src-main/engine/log/quick-check.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { planRecovery } from '../../../src-main/engine/log/recovery-plan.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';
import { createRequire } from 'node:module';

const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const dirs: string[] = [];
function logDir(): string {
  const d = tempDir('klx-verify-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

function positions(file: string): { position: number; size: number; baseOffset: bigint; lastOffset: bigint; maxTimestamp: bigint }[] {
  return [...scanLogFile(file)].flatMap((e) => (e.type === 'batch' ? [{ position: e.header.position, size: e.header.size, baseOffset: e.header.baseOffset, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp }] : []));
}

function indexBytes(pairs: [number, number][], size = pairs.length * 8): Buffer {
  const b = Buffer.alloc(size);
  pairs.forEach(([rel, pos], i) => {
    b.writeInt32BE(rel, i * 8);
    b.writeInt32BE(pos, i * 8 + 4);
  });
  return b;
}

function timeIndexBytes(pairs: [number, number][], size = pairs.length * 12): Buffer {
  const b = Buffer.alloc(size);
  pairs.forEach(([ts, rel], i) => {
    b.writeBigInt64BE(BigInt(ts), i * 12);
    b.writeInt32BE(rel, i * 12 + 8);
  });
  return b;
}

const brief = (fs: Finding[]) => fs.map((f) => [f.severity, f.code, f.position]);
const not = (codes: string[]) => (f: Finding) => !codes.includes(f.code);

/** A clean partition after a clean shutdown: 3 segments of 20 ten-record batches with 300-byte values (indexes with real entries). */
function cleanPartition(): { root: string; dir: string } {
  const root = logDir();
  const seg = (from: number) => ({
    batches: Array.from({ length: 20 }, (_, b) => ({ baseOffset: BigInt(from + b * 10), records: Array.from({ length: 10 }, (_, i) => rec(`k${from + b * 10 + i}`, 'x'.repeat(300), 1000 + from + b * 10 + i)) })),
  });
  const dir = buildPartition(root, { segments: [seg(0), seg(200), seg(400)] }, { cleanShutdown: true, recoveryPoint: 600n, highWatermark: 600n });
  return { root, dir };
}

describe('verifyPartition: a clean partition', () => {
  it('reports nothing, counts batches, records and bytes, and reports progress', async () => {
    const { dir } = cleanPartition();
    const progress: number[] = [];
    const report = await verifyPartition(PartitionLog.open(dir), { onProgress: (p) => progress.push(p.bytesDone / p.bytesTotal) });
    expect(report.findings).toEqual([]);
    expect(report.stats).toMatchObject({ segments: 3, batches: 60, records: 600 });
    expect(report.logEndOffset).toBe(600n);
    expect(progress.at(-1)).toBe(1);
    const idx = readFileSync(join(dir, name(200, '.index')));
    expect(idx.length).toBeGreaterThan(8); // real entries are checked below
  });

  it('cancels with KlxError cancelled', async () => {
    const { dir } = cleanPartition();
    const ac = new AbortController();
    ac.abort();
    const err = await verifyPartition(PartitionLog.open(dir), { signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).code).toBe('cancelled');
  });
});

describe('verifyPartition: data damage', () => {
  it('a CRC mismatch names the .log, the batch position and offsets', async () => {
    const { dir } = cleanPartition();
    const file = join(dir, name(200, '.log'));
    const batches = positions(file);
    const bytes = readFileSync(file);
    bytes[batches[3]!.position + 100] ^= 1;
    writeFileSync(file, bytes);
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(brief(report.findings)).toEqual([['error', 'crc-mismatch', batches[3]!.position]]);
    expect(report.findings[0]).toMatchObject({ file, details: { baseOffset: 230, lastOffset: 239 } });
  });

  it('a batch with a valid CRC but undecodable records is corrupt-batch (deep only)', async () => {
    const root = logDir();
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('k', 'v', 5)] });
    bad.writeInt32BE(2, 57); // recordsCount 2, one record present
    bad.writeUInt32BE(crc32c(bad.subarray(21)), 17);
    const dir = buildPartition(root, { segments: [{ batches: [...singles(rec('a', 'b', 1)), bad, ...singles(rec('c', 'd', 9))] }] }, { cleanShutdown: true });
    const deep = await verifyPartition(PartitionLog.open(dir));
    expect(brief(deep.findings)).toEqual([['error', 'corrupt-batch', positions(join(dir, name(0, '.log')))[1]!.position]]);
    expect((await verifyPartition(PartitionLog.open(dir), { deep: false })).findings).toEqual([]);
  });

  it('offsets: not increasing, below the segment base, overlapping segments', async () => {
    const root = logDir();
    const dir = buildPartition(
      root,
      {
        segments: [
          { baseOffset: 0n, batches: [{ baseOffset: 0n, records: [rec('a', '1', 1)] }, { baseOffset: 5n, records: [rec('b', '2', 2)] }, { baseOffset: 3n, records: [rec('c', '3', 3)] }], noIndex: true, noTimeIndex: true },
          { baseOffset: 10n, batches: [{ baseOffset: 5n, records: [rec('d', '4', 4)] }], noIndex: true, noTimeIndex: true },
          { baseOffset: 20n, batches: [{ baseOffset: 20n, records: [rec('e', '5', 5)] }] },
        ],
      },
      { cleanShutdown: true },
    );
    const report = await verifyPartition(PartitionLog.open(dir));
    const p0 = positions(join(dir, name(0, '.log')));
    expect(brief(report.findings.filter(not(['missing-index', 'missing-time-index'])))).toEqual([
      ['error', 'offset-not-increasing', p0[2]!.position],
      ['error', 'offset-below-segment-base', 0],
      ['error', 'segments-overlap', 0],
    ]);
    expect(report.findings.find((f) => f.code === 'offset-below-segment-base')!.file).toBe(join(dir, name(10, '.log')));
  });

  it('a partial last batch is an invalid tail (error), zero bytes are a zero tail (warning)', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1), rec('b', '2', 2)), tail: encodeBatch({ baseOffset: 2n, records: [rec('c', '3', 3)] }).subarray(0, 30) }, { batches: singles(rec('d', '4', 4)), tail: Buffer.alloc(100) }] }, { cleanShutdown: true });
    const report = await verifyPartition(PartitionLog.open(dir));
    const p0 = positions(join(dir, name(0, '.log')));
    const p1 = positions(join(dir, name(2, '.log')));
    expect(report.findings.map((f) => [f.severity, f.code, f.file.slice(-24), f.position, f.details.bytes])).toEqual([
      ['error', 'invalid-tail', name(0, '.log'), p0[1]!.position + p0[1]!.size, 30],
      ['warning', 'zero-tail', name(2, '.log'), p1[0]!.size, 100],
    ]);
  });
});

describe('verifyPartition: offset and time index entries', () => {
  it('entries not at a batch start, past the end of the .log, below the batch, older-broker style, and stale slots', async () => {
    const { dir } = cleanPartition();
    const log = join(dir, name(200, '.log'));
    const b = positions(log);
    const size = b.at(-1)!.position + b.at(-1)!.size;
    const rel = (o: bigint) => Number(o - 200n);
    writeFileSync(
      join(dir, name(200, '.index')),
      indexBytes([
        [rel(b[2]!.baseOffset), b[2]!.position], // first offset of the batch: older brokers
        [rel(b[4]!.lastOffset), b[4]!.position + 1], // not a batch start
        [rel(b[5]!.lastOffset), b[6]!.position], // names an offset of the previous batch: a lookup of it starts past it
        [rel(b[8]!.lastOffset), b[8]!.position], // fine
        [rel(b[19]!.lastOffset) + 10, size + 100], // past the end
        [3, 50], // stale: breaks the ordering
      ]),
    );
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position, f.file.endsWith('.index')])).toEqual([
      ['error', 'index-slot-out-of-order', 40, true], // the last slot of a trimmed index of a cleanly closed segment: corruption, not a crash leftover
      ['info', 'index-entry-older-broker', 0, true],
      ['error', 'index-entry-not-batch-start', 8, true],
      ['error', 'index-entry-below-batch', 16, true],
      ['error', 'index-entry-past-end', 32, true],
    ]);
    expect(report.findings[4]!.details).toMatchObject({ logPosition: size + 100, logSize: size });
  });

  it('an entry naming the last offset of a multi-batch append at its first batch (what brokers before KAFKA-806 wrote, LogSegment.append) is info and no repair; one past the segment stays a warning', async () => {
    const { dir } = cleanPartition();
    const log = join(dir, name(200, '.log'));
    const b = positions(log);
    const rel = (o: bigint) => Number(o - 200n);
    const appendEntries: [number, number][] = [
      [rel(b[4]!.lastOffset), b[2]!.position], // batches 2..4 appended at once (a follower's fetch): offset 249 at batch 2 (220..229)
      [rel(b[9]!.lastOffset), b[8]!.position], // batches 8..9 appended at once
    ];
    writeFileSync(join(dir, name(200, '.index')), indexBytes(appendEntries));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position])).toEqual([
      ['info', 'index-entry-older-broker', 0],
      ['info', 'index-entry-older-broker', 8],
    ]);
    expect(report.findings[0]!.reason).toBe(`entry 0 names offset 249, above the batch 220..229 at position ${b[2]!.position} but inside this segment: brokers before KAFKA-806 (Kafka 4.0) indexed an append of several batches (a follower's fetch) with its last offset at the position of its first batch (LogSegment.append); harmless for lookups`);
    const plan = await planRecovery(dir);
    expect(plan.actions).toEqual([]);
    // An offset past the segment's last offset (399) is no append a broker wrote.
    writeFileSync(join(dir, name(200, '.index')), indexBytes([[rel(b[4]!.lastOffset), b[2]!.position], [rel(500n), b[8]!.position]]));
    const again = await verifyPartition(PartitionLog.open(dir));
    expect(again.findings.map((f) => [f.severity, f.code, f.position])).toEqual([
      ['info', 'index-entry-older-broker', 0],
      ['warning', 'index-entry-above-batch', 8],
    ]);
  });

  it('time index: timestamp mismatch, offset in a hole, past the end, missing final entry; any offset inside the batch is accepted', async () => {
    const root = logDir();
    // seg@0 (closed): batches 0..2 (ts 1000..1002), a hole, 10..12 (ts 2000..2002); seg@20 active.
    const dir = buildPartition(
      root,
      { segments: [{ batches: [{ baseOffset: 0n, records: [0, 1, 2].map((i) => rec(`a${i}`, 'x', 1000 + i)) }, { baseOffset: 10n, records: [0, 1, 2].map((i) => rec(`b${i}`, 'x', 2000 + i)) }] }, { batches: [{ baseOffset: 20n, records: [rec('c', 'x', 3000)] }] }] },
      { cleanShutdown: true },
    );
    const tix = join(dir, name(0, '.timeindex'));
    // Real brokers up to 3.x wrote the offset of the record with the max timestamp (1, inside 0..2): fine.
    writeFileSync(tix, timeIndexBytes([[1002, 1], [1500, 5], [2001, 11]]));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position])).toEqual([
      ['warning', 'time-index-entry-in-hole', 12],
      ['error', 'time-index-timestamp-mismatch', 24],
      ['warning', 'time-index-missing-final-entry', 24],
    ]);
    expect(report.findings[1]!.details).toMatchObject({ timestamp: 2001, batchMaxTimestamp: 2002 });
    writeFileSync(tix, timeIndexBytes([[1002, 1], [2002, 12], [2005, 30]]));
    const again = await verifyPartition(PartitionLog.open(dir));
    expect(again.findings.map((f) => [f.severity, f.code, f.position])).toEqual([['error', 'time-index-entry-past-end', 24]]);
  });

  it('one .index slot out of order in the middle is named with its neighbours and what a broker does with it; repair rebuilds the index', async () => {
    const { dir } = cleanPartition();
    // The broker-style index of segment 200: (29, 6382) (49, 12764) ... (189, 57438), 9 slots; slot 4 was (109, 31910).
    const idx = readFileSync(join(dir, name(200, '.index')));
    expect([idx.length, idx.readInt32BE(32), idx.readInt32BE(36)]).toEqual([72, 109, 31910]);
    idx.writeInt32BE(9, 32);
    idx.writeInt32BE(3191, 36);
    writeFileSync(join(dir, name(200, '.index')), idx);
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(brief(report.findings)).toEqual([['error', 'index-slot-out-of-order', 32]]);
    const f = report.findings[0]!;
    expect(f.reason).toBe(
      'slot 4 (byte 32: relative offset 9, position 3191) is out of order between slot 3 (relative offset 89, position 25528) and slot 5 (relative offset 129, position 38292); the 4 entries after it are in order again. ' +
        "A broker loads the index as it is: OffsetIndex.sanityCheck looks only at the last slot's offset (not below the base offset) and the file length, and LogSegment.sanityCheck skips even that at startup; " +
        'offset lookups binary-search all slots (AbstractIndex.largestLowerBoundSlotFor, OffsetIndex.lookup), so a lookup that lands on this slot starts reading the .log at its position instead of the right one. ' +
        'It rebuilds the index from the .log only when it recovers the segment (LogSegment.recover, for segments at or after the recovery point after an unclean shutdown: LogLoader.recoverLog). klx repair rebuilds it from the .log (every entry, trimmed)',
    );
    expect(f.details).toEqual({ segment: 200, slot: 4, where: 'middle', slotEntry: { relativeOffset: 9, position: 3191 }, before: { relativeOffset: 89, position: 25528 }, after: { relativeOffset: 129, position: 38292 }, inOrderAfter: 4 });
    const plan = await planRecovery(dir);
    expect(plan.actions.map((a) => (a.type === 'rebuild-indexes' ? [a.type, a.baseOffset, a.index?.entries.map((e) => [e.relativeOffset, e.position]), a.timeindex, a.byBroker] : [a.type]))).toEqual([
      ['rebuild-indexes', 200n, [[29, 6382], [49, 12764], [69, 19146], [89, 25528], [109, 31910], [129, 38292], [149, 44674], [169, 51056], [189, 57438]], undefined, false],
    ]);
  });

  it('a bad last .timeindex slot of a closed segment names the retention consequence; a bad first .index slot is the first', async () => {
    const { dir } = cleanPartition();
    // Segment 200's time index: (1229, 29) ... (1389, 189), (1399, 199); the last slot becomes (1250, 199).
    const tix = readFileSync(join(dir, name(200, '.timeindex')));
    expect([tix.length, tix.readBigInt64BE(108), tix.readInt32BE(116)]).toEqual([120, 1399n, 199]);
    tix.writeBigInt64BE(1250n, 108);
    writeFileSync(join(dir, name(200, '.timeindex')), tix);
    // Segment 400's index: slot 0 (29, 6382) becomes (150, 47000).
    const idx = readFileSync(join(dir, name(400, '.index')));
    idx.writeInt32BE(150, 0);
    idx.writeInt32BE(47000, 4);
    writeFileSync(join(dir, name(400, '.index')), idx);
    const report = await verifyPartition(PartitionLog.open(dir));
    const mine = report.findings.filter((x) => x.code === 'index-slot-out-of-order');
    expect(mine.map((x) => [x.severity, basename(x.file), x.position, x.details['where']])).toEqual([
      ['error', name(200, '.timeindex'), 108, 'last'],
      ['error', name(400, '.index'), 0, 'first'],
    ]);
    expect(mine[0]!.reason).toBe(
      'the last slot 9 (byte 108: timestamp 1250, relative offset 199) does not come after slot 8 (timestamp 1389, relative offset 189); the 9 entries before it are in order. ' +
        "A broker loads the index as it is: TimeIndex.sanityCheck looks only at the last slot (timestamp not below the first slot's, offset not below the base offset) and the file length, and LogSegment.sanityCheck skips even that at startup; " +
        "timestamp lookups binary-search all slots (AbstractIndex.largestLowerBoundSlotFor, TimeIndex.lookup), so a lookup that lands on this slot starts from its offset instead of the right one, and the segment's largest timestamp, which time retention uses, is read from this last slot (TimeIndex.lastEntry, LogSegment.readMaxTimestampAndOffsetSoFar). " +
        'It rebuilds the index from the .log only when it recovers the segment (LogSegment.recover, for segments at or after the recovery point after an unclean shutdown: LogLoader.recoverLog). klx repair rebuilds it from the .log (every entry, trimmed)',
    );
    expect(mine[1]!.reason.split('. ')[0]).toBe('the first slot 0 (byte 0: relative offset 150, position 47000) does not come before slot 1 (relative offset 49, position 12764); the 8 entries after it are in order');
  });

  it('stale slots after the entries of a preallocated index are a crash leftover (warning)', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: Array.from({ length: 30 }, (_, i) => ({ baseOffset: BigInt(i), records: [rec(`k${i}`, 'x'.repeat(300), i)] })) }] });
    const b = positions(join(dir, name(0, '.log')));
    // After a truncation to offset 20 the broker moved the write position back; the slots after it keep old data.
    writeFileSync(join(dir, name(0, '.index')), indexBytes([[Number(b[13]!.lastOffset), b[13]!.position], [5, 999]], 80));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position])).toEqual([
      ['warning', 'stale-index-entries', 8],
      ['info', 'untrimmed-index', 16],
    ]);
  });

  it('an untrimmed index on a closed segment is a warning; on the active segment after an unclean stop, info', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1)) }, { batches: singles(rec('b', '2', 2)) }] });
    writeFileSync(join(dir, name(0, '.index')), Buffer.alloc(80));
    writeFileSync(join(dir, name(1, '.timeindex')), timeIndexBytes([[2, 0]], 120));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, basename(f.file), f.position])).toEqual([
      ['warning', 'untrimmed-index', name(0, '.index'), 0],
      ['info', 'untrimmed-index', name(1, '.timeindex'), 12],
    ]);
  });
});

describe('verifyPartition: transactions, folder and checkpoints', () => {
  it('txn index entries against the ABORT markers', async () => {
    const root = logDir();
    const t = (base: bigint, pid: bigint) => ({ baseOffset: base, producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [rec('k', 'v', 1)] });
    const abort = (base: bigint, pid: bigint) => ({ baseOffset: base, producerId: pid, producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(0), value: encodeEndTxnMarkerValue(3), timestamp: 2n }] });
    const dir = buildPartition(root, { segments: [{ batches: [t(0n, 1n), t(1n, 2n), abort(2n, 1n), abort(3n, 2n)], txnIndex: [{ producerId: 1n, firstOffset: 0n, lastOffset: 2n, lastStableOffset: 1n }, { producerId: 9n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n }] }] }, { cleanShutdown: true });
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, f.position])).toEqual([['error', 'txn-index-entry-mismatch', 34]]);
    expect(report.findings[0]!.reason).toContain('producer 9');
  });

  it('leftovers, orphans, temp and lock files; checkpoints and epochs beyond the log end', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1), rec('b', '2', 2)) }] }, { cleanShutdown: true, highWatermark: 7n, recoveryPoint: 9n, logStartOffset: 0n, cleanerOffset: 1n });
    writeFileSync(join(dir, name(0, '.log.deleted')), '');
    writeFileSync(join(dir, name(0, '.log.cleaned')), '');
    writeFileSync(join(dir, name(5, '.log.swap')), '');
    writeFileSync(join(dir, name(9, '.index')), '');
    writeFileSync(join(dir, 'partition.metadata.tmp'), '');
    writeFileSync(join(dir, 'klx-writer.lock'), '{}');
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n2\n0 0\n1 8\n');
    writeFileSync(join(dir, name(4, '.snapshot')), Buffer.alloc(10));
    const report = await verifyPartition(PartitionLog.open(dir));
    expect(report.findings.map((f) => [f.severity, f.code, relative(root, f.file)])).toEqual([
      ['warning', 'leftover-file', `test-0/${name(0, '.log.cleaned')}`],
      ['warning', 'leftover-file', `test-0/${name(0, '.log.deleted')}`],
      ['warning', 'leftover-file', `test-0/${name(5, '.log.swap')}`],
      ['info', 'temp-file', 'test-0/partition.metadata.tmp'],
      ['warning', 'orphan-index', `test-0/${name(9, '.index')}`],
      ['info', 'klx-lock', 'test-0/klx-writer.lock'],
      ['warning', 'checkpoint-beyond-log-end', 'recovery-point-offset-checkpoint'],
      ['warning', 'checkpoint-beyond-log-end', 'replication-offset-checkpoint'],
      ['warning', 'leader-epoch-beyond-log-end', 'test-0/leader-epoch-checkpoint'],
      ['warning', 'snapshot-beyond-log-end', `test-0/${name(4, '.snapshot')}`],
    ]);
    expect(countFindings(report.findings)).toEqual({ error: 0, warning: 8, info: 2 });
    // Issue 13 finding 4: the .swap at 5 is at or above the smallest .cleaned base (0): LogLoader deletes it.
    const swap = report.findings.find((f) => f.file.endsWith('.log.swap'))!;
    expect(swap.reason).toBe(
      'leftover .swap file: part of an incomplete split (base offset ≥ 0, the smallest .cleaned base offset): a broker deletes it at startup (LogLoader.removeTempFilesAndCollectSwapFiles, KAFKA-6264), and so does repair; the original segment stays',
    );
  });

  it('a .swap below every .cleaned base (or with none) is complete output that a broker swaps in (issue 13 finding 4)', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1), rec('b', '2', 2)) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.log.swap')), encodeBatch({ baseOffset: 1n, records: [rec('b', '2', 2)] }));
    writeFileSync(join(dir, name(0, '.index.swap')), '');
    const reasons = (await verifyPartition(PartitionLog.open(dir))).findings.filter((f) => f.code === 'leftover-file').map((f) => [basename(f.file), f.reason]);
    expect(reasons).toEqual([
      // LogLoader.load's third pass (Kafka 3.0+, KAFKA-12520) renames every remaining .swap, index ones too.
      [name(0, '.index.swap'), 'leftover .swap file: the index of a swapped-in segment: a broker renames it to its final name at startup (LogLoader.load, Kafka 3.0+; older brokers deleted it); repair deletes it and writes the index again from the .log'],
      [name(0, '.log.swap'), 'leftover .swap file: complete cleaner or split output: a broker completes the swap at startup (deletes the segments it replaces and renames it to .log; LogLoader), and so does repair. Until then the data shown is the pre-swap segments'],
    ]);
  });

  it('an empty .swap: a broker renames it over the segment of its name (LogLoader.load), repair keeps the segment', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1), rec('b', '2', 2)) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, name(0, '.log.swap')), Buffer.alloc(0));
    const reasons = (await verifyPartition(PartitionLog.open(dir))).findings.filter((f) => f.code === 'leftover-file').map((f) => f.reason);
    expect(reasons).toEqual(['leftover .swap file: swap output holding no batch: a broker renames it over the segment of its name at startup (LogLoader.load), leaving that segment empty; repair deletes it and keeps the segment']);
  });

  it('a log start offset above the log end is an error (a broker would delete every segment); unreadable checkpoints are reported once per log dir', async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1)) }] }, { cleanShutdown: true, logStartOffset: 50n });
    writeFileSync(join(root, 'replication-offset-checkpoint'), '0\n2\ntest 0 1\n');
    const report = await verifyPartition(PartitionLog.open(dir), { logDirFindings: false });
    expect(report.findings.map((f) => [f.severity, f.code])).toEqual([['error', 'checkpoint-beyond-log-end']]);
    const d = openPath(root).logDirs[0]!;
    expect(logDirFindings(d).map((f) => [f.severity, f.code, relative(root, f.file), f.position])).toEqual([['error', 'corrupt-checkpoint', 'replication-offset-checkpoint', 2]]);
  });

  it('an unparsable recovery-point-offset-checkpoint is an error: a broker takes the log directory offline (CheckpointFileWithFailureHandler.read), it does not just recover from 0', () => {
    const root = logDir();
    buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1)) }] }, { cleanShutdown: true });
    // Two fields where OffsetCheckpointFile.Formatter wants three: Optional.empty(), an IOException in CheckpointReadBuffer.read.
    writeFileSync(join(root, 'recovery-point-offset-checkpoint'), '0\n1\ntest 0\n');
    const d = openPath(root).logDirs[0]!;
    const fs = logDirFindings(d);
    expect(fs.map((f) => [f.severity, f.code, relative(root, f.file), f.position])).toEqual([['error', 'corrupt-checkpoint', 'recovery-point-offset-checkpoint', 4]]);
    expect(fs[0]!.reason).toBe("malformed line 'test 0' (a broker that reads it takes this log directory offline: CheckpointFileWithFailureHandler.read reports it to LogDirFailureChannel, every partition in the directory stops being served, and the broker shuts down when no log directory is left online; LogManager.loadLogs alone would recover from recovery point 0; `klx repair` on the log directory rewrites it from the partitions, your choice, keeping the old file in the trash)");
  });

  it('a checkpoint entry whose number does not parse is a NumberFormatException in Kafka, not an IOException: the log directory stays online and LogManager.loadLogs falls back', () => {
    const root = logDir();
    buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1)) }] }, { cleanShutdown: true });
    // Three fields, so OffsetCheckpointFile.Formatter.fromString calls Long.parseLong("x"), which throws.
    writeFileSync(join(root, 'recovery-point-offset-checkpoint'), '0\n1\ntest 0 x\n');
    writeFileSync(join(root, 'cleaner-offset-checkpoint'), '0\n1\ntest y 1\n');
    const fs = logDirFindings(openPath(root).logDirs[0]!);
    expect(fs.map((f) => [f.severity, f.code, relative(root, f.file), f.position, f.details.kind])).toEqual([
      ['error', 'corrupt-checkpoint', 'recovery-point-offset-checkpoint', 4, undefined],
      ['error', 'corrupt-checkpoint', 'cleaner-offset-checkpoint', 4, undefined],
    ]);
    expect(fs[0]!.reason).toBe("malformed line 'test 0 x' (a number that does not parse) (a broker reading it throws a NumberFormatException, not an IOException, so CheckpointFileWithFailureHandler does not take the log directory offline: LogManager.loadLogs catches it and recovers from recovery point 0; `klx repair` on the log directory rewrites it from the partitions, your choice, keeping the old file in the trash)");
    expect(fs[1]!.reason).toContain('the log cleaner thread stops on it (LogCleanerManager.allCleanerCheckpoints catches only KafkaStorageException');
    expect(fs.map((f) => f.reason).join(' ')).not.toContain('takes this log directory offline');
  });

  it("an unreadable leader-epoch-checkpoint says what a broker does: malformed takes the log directory offline (LeaderEpochCheckpointFile's handler), a bad number stops the broker's start", async () => {
    const root = logDir();
    const dir = buildPartition(root, { segments: [{ batches: singles(rec('a', '1', 1)) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n1\n0\n');
    let f = (await verifyPartition(PartitionLog.open(dir))).findings.filter((x) => x.code === 'corrupt-checkpoint');
    expect(f.map((x) => [x.severity, basename(x.file), x.position])).toEqual([['error', 'leader-epoch-checkpoint', 4]]);
    expect(f[0]!.reason).toBe("malformed line '0' (a broker that reads it takes this log directory offline: CheckpointFileWithFailureHandler.read reports it to LogDirFailureChannel, every partition in the directory stops being served, and the broker shuts down when no log directory is left online; LeaderEpochCheckpointFile reads it through the same handler when UnifiedLog loads the partition)");
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), '0\n1\n0 zero\n');
    f = (await verifyPartition(PartitionLog.open(dir))).findings.filter((x) => x.code === 'corrupt-checkpoint');
    expect(f[0]!.reason).toBe("malformed line '0 zero' (a number that does not parse) (a broker reading it throws a NumberFormatException, not an IOException, so CheckpointFileWithFailureHandler does not take the log directory offline: it escapes the log-loading thread and LogManager.loadLogs rethrows it: the broker fails to start)");
  });
});

describe('quickCheckPartition', () => {
  it('reads index files and names only: a damaged .log goes unnoticed, Kafka-corrupt indexes do not', () => {
    const { dir } = cleanPartition();
    writeFileSync(join(dir, name(200, '.log')), Buffer.alloc(100, 7));
    writeFileSync(join(dir, name(400, '.index')), Buffer.alloc(12));
    writeFileSync(join(dir, name(400, '.txnindex')), Buffer.concat([Buffer.alloc(18), Buffer.from([0, 0, 0, 0, 0, 0, 0, 5]), Buffer.alloc(8)]));
    const quick = quickCheckPartition(PartitionLog.open(dir));
    expect(quick.map((f) => [f.severity, f.code, f.details.kind, f.details.kafkaRebuild])).toEqual([
      // Only the .txnindex check runs at startup and makes a broker recover the segment (LogSegment.sanityCheck).
      ['error', 'corrupt-index', 'size-not-multiple', false],
      ['error', 'corrupt-index', 'txn-last-offset-below-base', true],
    ]);
  });
});

describe('tailCheckPartition (the health badge before a verify, issue 13 finding 11)', () => {
  it('reads only the end of each segment from its last index entry and reports a cut tail and a CRC failure as verify does', async () => {
    const { dir } = cleanPartition();
    const f200 = join(dir, name(200, '.log'));
    const f400 = join(dir, name(400, '.log'));
    const last200 = positions(f200).at(-1)!;
    const last400 = positions(f400).at(-1)!;
    const b200 = readFileSync(f200);
    writeFileSync(f200, b200.subarray(0, b200.length - 100)); // the last batch cut short
    const b400 = readFileSync(f400);
    b400[last400.position + last400.size - 5] ^= 0x01; // a value byte of the last batch
    writeFileSync(f400, b400);
    const stored = b400.readUInt32BE(last400.position + 17);
    const computed = kjsCrc32C(b400.subarray(last400.position + 21, last400.position + last400.size)) >>> 0; // kafkajs: no code in common with the engine
    const log = PartitionLog.open(dir);
    const tail = tailCheckPartition(log);
    expect(tail.map((f) => [f.severity, f.code, basename(f.file), f.position])).toEqual([
      ['error', 'invalid-tail', name(200, '.log'), last200.position],
      ['error', 'crc-mismatch', name(400, '.log'), last400.position],
    ]);
    expect(tail[1]!.details).toMatchObject({ crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' });
    // The full verify says the same about the same bytes.
    const report = await verifyPartition(PartitionLog.open(dir));
    for (const f of tail) expect(report.findings.some((v) => v.code === f.code && v.file === f.file && v.position === f.position && v.severity === f.severity)).toBe(true);
    // The file-name-only quick check does not read .log files.
    expect(quickCheckPartition(log).filter((f) => f.file.endsWith('.log'))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Real data

/** `.index` files the source repository itself never had (only the preallocated .timeindex was committed). */
const MISSING_IN_SOURCE = new Set(['kafka-2.7.1-compacted-offsets/myTopic-0/00000000000000000038.index', 'kafka-2.7.1-compacted-offsets/test_topic_0603-0/00000000000000000009.index']);

function absentFiles(c: string): Set<string> {
  try {
    const lines = readFileSync(join(REAL_DATA, c, 'ABSENT-FILES.tsv'), 'utf8').split('\n').slice(1).filter(Boolean);
    return new Set(lines.map((l) => l.split('\t')[0]!));
  } catch {
    return new Set();
  }
}

describeRealData('verify on real broker-written data: no false alarms, exactly the index facts of EXPECTED-index.json', () => {
  for (const c of realDataCases()) {
    it(c, async () => {
      const root = join(REAL_DATA, c);
      const opened = openPath(root);
      const findings: Finding[] = opened.logDirs.flatMap((d) => logDirFindings(d));
      const facts = [];
      for (const { log } of allPartitions(opened)) {
        const r = await verifyPartition(log, { indexFacts: true, logDirFindings: false });
        findings.push(...r.findings);
        facts.push(...(r.indexFacts ?? []));
      }
      const rel = (f: Finding) => relative(root, f.file);
      // 1. Zero errors: every batch, CRC, offset and index entry of these broker-written dirs is sound.
      expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
      // 2. The only warnings are index files that were not carried over (ABSENT-FILES.tsv: the 10 MiB
      //    preallocated indexes of active segments) or that the source never had: "missing index",
      //    which a broker rebuilds at startup. Likewise the only infos are the missing .timeindex files.
      const absent = absentFiles(c);
      const warnings = findings.filter((f) => f.severity === 'warning');
      for (const f of warnings) {
        expect(f.code, `${rel(f)}: ${f.reason}`).toBe('missing-index');
        expect(absent.has(rel(f)) || MISSING_IN_SOURCE.has(`${c}/${rel(f)}`), rel(f)).toBe(true);
      }
      const infos = findings.filter((f) => f.severity === 'info');
      for (const f of infos) {
        expect(f.code, `${rel(f)}: ${f.reason}`).toBe('missing-time-index');
        expect(absent.has(rel(f)), rel(f)).toBe(true);
      }
      // Every absent index file is reported, as "missing index" (.index) or "missing time index" (.timeindex).
      const reported = new Set([...warnings, ...infos].map(rel));
      for (const a of absent) expect(reported.has(a), a).toBe(true);
      // 3. Exactly the index facts of the independent decoder: entries, sizes, zero tails, and for
      //    every entry the batch it resolves to (offset index: a batch start, whose LAST offset it
      //    names; time index: the batch holding its offset, whose max timestamp it carries).
      const expected = (JSON.parse(readFileSync(join(root, 'EXPECTED-index.json'), 'utf8')) as { indexes: Record<string, unknown>[] }).indexes;
      const mine = facts.map((f) => ({ ...f, file: relative(root, f.file) })).sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
      const want = [...expected].sort((a, b) => ((a.file as string) < (b.file as string) ? -1 : 1));
      expect(mine.map((f) => f.file)).toEqual(want.map((f) => f.file));
      for (let i = 0; i < want.length; i++) expect(mine[i], want[i]!.file as string).toEqual(want[i]);
    });
  }
});
