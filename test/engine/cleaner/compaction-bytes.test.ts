/**
 * Byte-level checks of compaction where Kafka's result is known (spec §13.6, §13.8, §15.2–§15.3,
 * §15.6): the delete-horizon rebuild of a tombstone batch (the spec's 72-byte vector), single-record
 * batches copied byte for byte, rebuilt batches keeping baseOffset / lastOffsetDelta / producer
 * fields / codec, LogAppendTime deltas, RETAIN_EMPTY headers, the per-chunk index rule, grouping.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { readOffsetIndex } from '../../../src-main/engine/files/offset-index.ts';
import { readTimeIndex } from '../../../src-main/engine/files/time-index.ts';
import { decodeV2Records, encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanLogBuffer } from '../../../src-main/engine/format/log-reader.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { batchesOf, offsets, visibleRecords } from './support.ts';
import { V15_2, V15_3 } from '../../support/spec-vectors.ts';

const TS = 1_700_000_000_000n;
const run = (dir: string, opts: CompactionOptions) => runCompaction(dir, opts, { runId: 't', trashDir: tempDir('klx-trash-') });
const seg0 = (dir: string) => join(dir, '00000000000000000000.log');

describe('compaction, byte level', () => {
  it('a tombstone batch gets the delete horizon exactly as spec §15.3: 69 → 72 bytes (the 4-byte varlong delta −86 999 993 replaces 00), CRC 0x6FE53F28', () => {
    const tomb = encodeBatch({ baseOffset: 5n, partitionLeaderEpoch: 3, records: [{ key: 'k', value: null, timestamp: TS + 7n }] });
    expect(tomb.equals(V15_2)).toBe(true);
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: [...singles(rec('a', '1', TS), rec('b', '2', TS), rec('c', '3', TS), rec('d', '4', TS), rec('e', '5', TS)), tomb] },
        { baseOffset: 6n, batches: [{ baseOffset: 6n, records: [rec('f', '6', TS)] }] },
      ],
    });
    const before = batchesOf(seg0(dir));
    run(dir, { now: 1_700_000_600_000, config: { 'delete.retention.ms': 86_400_000n } });
    const after = batchesOf(seg0(dir));
    expect(after).toHaveLength(6);
    for (let i = 0; i < 5; i++) expect(after[i]!.bytes.equals(before[i]!.bytes)).toBe(true);
    expect(after[5]!.bytes.toString('hex')).toBe(V15_3.toString('hex'));
    expect(after[5]!.bytes.length - V15_2.length).toBe(3);
    expect(after[5]!.bytes.readUInt32BE(17)).toBe(0x6fe53f28);
    // The record still reads as its own timestamp; a pass at the horizon removes it.
    expect(visibleRecords(dir)[5]).toMatchObject({ offset: 5, key: 'k', value: null, ts: Number(TS + 7n) });
  });

  it('a compacted segment of single-record batches keeps every surviving batch byte for byte (offsets not renumbered)', () => {
    const recs = Array.from({ length: 40 }, (_, i) => rec(`key-${i % 7}`, `value ${i}`, Number(TS) + i));
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(...recs) }, { baseOffset: 40n, batches: [{ baseOffset: 40n, records: [rec('z', 'z', TS)] }] }] });
    const before = new Map(batchesOf(seg0(dir)).map((b) => [b.base, b.bytes]));
    run(dir, { now: Number(TS) + 1000 });
    const after = batchesOf(seg0(dir));
    expect(after.map((b) => b.base)).toEqual([33, 34, 35, 36, 37, 38, 39]);
    for (const b of after) expect(b.bytes.equals(before.get(b.base)!)).toBe(true);
  });

  it('a rebuilt batch keeps baseOffset, lastOffsetDelta, producer fields, epoch and codec; survivors keep their offsets and timestamps', () => {
    const batch = { partitionLeaderEpoch: 7, compression: 'gzip' as const, producerId: 4242n, producerEpoch: 3, baseSequence: 100, records: [rec('a', '1', TS), rec('b', '2', TS + 5n), rec('a', '3', TS + 9n), rec('c', '4', TS + 2n)] };
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: [batch, { records: [rec('b', 'new', TS + 20n)] }] }, { baseOffset: 5n, batches: [{ baseOffset: 5n, records: [rec('z', 'z', TS)] }] }] });
    run(dir, { now: Number(TS) + 3 * 86_400_000, producerIdExpirationMs: 1 });
    const [b] = batchesOf(seg0(dir));
    const [entry] = [...scanLogBuffer(b!.bytes)];
    if (entry?.type !== 'batch') throw new Error('no batch');
    const h = entry.header;
    expect([h.baseOffset, h.lastOffsetDelta, h.recordCount, h.compression, h.producerId, h.producerEpoch, h.baseSequence, h.partitionLeaderEpoch]).toEqual([0n, 3, 2, 'gzip', 4242n, 3, 100, 7]);
    expect(h.baseTimestamp).toBe(TS + 9n); // first survivor
    expect(h.maxTimestamp).toBe(TS + 9n);
    expect(h.crcValid).toBe(true);
    const rs = decodeV2Records(h, b!.bytes);
    expect(rs.map((r) => [r.offset, r.timestamp, Buffer.from(r.key!).toString()])).toEqual([
      [2n, TS + 9n, 'a'],
      [3n, TS + 2n, 'c'],
    ]);
    expect(rs.map((r) => r.timestampDelta)).toEqual([0n, -7n]);
  });

  it('survivors of every size are re-encoded byte for byte as an independent encoder writes them (copies of 7 to 392 bytes after the timestamp delta, both sides of the 48-byte loop/Buffer.copy switch)', () => {
    const sizes = [0, 1, 30, 40, 41, 42, 43, 44, 45, 50, 90, 250, 380];
    // Each size twice: the first copy of a key is superseded, so the batch is rebuilt with the second ones.
    const records = [...sizes, ...sizes].map((n, i) => rec(`k${String(i % sizes.length).padStart(2, '0')}`, 'v'.repeat(n), TS + 100n - BigInt(i), i % 3 === 0 ? [{ key: 'h', value: Buffer.from([i]) }] : undefined));
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: [{ records }] }, { baseOffset: 26n, batches: [{ baseOffset: 26n, records: [rec('z', 'z', TS)] }] }] });
    run(dir, { now: Number(TS) + 3 * 86_400_000 });
    const [b] = batchesOf(seg0(dir));
    const survivors = records.slice(sizes.length).map((r, j) => ({ ...r, offsetDelta: sizes.length + j }));
    const expected = encodeBatch({ baseOffset: 0n, lastOffsetDelta: 25, records: survivors });
    expect(b!.count).toBe(sizes.length);
    expect(b!.bytes.toString('hex')).toBe(expected.toString('hex'));
  });

  it('timestamp deltas on both sides of the 31-bit zigzag fast path, and base/max timestamps of −1 and beyond 2^53, are rebuilt as an independent encoder writes them', () => {
    const deltas = [0, 5, -5, 63, 64, -64, -65, 2 ** 30 - 1, 2 ** 30, -(2 ** 30), -(2 ** 30) - 1, 2 ** 31, -(2 ** 31) - 5, 2 ** 40, -(2 ** 40)];
    const base = TS + 3n;
    /** A batch whose first copy of each key is superseded by the second, which survives with `ts[i]`. */
    const batchOf = (baseOffset: bigint, ts: bigint[], oldTs = TS) => {
      const keys = ts.map((_, i) => `k${baseOffset}-${String(i).padStart(2, '0')}`);
      const records = [...keys.map((k) => rec(k, 'old', oldTs)), ...keys.map((k, i) => rec(k, `v${i}`, ts[i]!))];
      const survivors = records.slice(keys.length).map((r, j) => ({ ...r, offsetDelta: keys.length + j }));
      return { input: { baseOffset, records }, expected: encodeBatch({ baseOffset, lastOffsetDelta: records.length - 1, records: survivors }) };
    };
    const batches = [
      batchOf(0n, deltas.map((d) => base + BigInt(d))),
      batchOf(30n, [-1n, -1n, -1n]), // no timestamps (Kafka's NO_TIMESTAMP): baseTimestamp and maxTimestamp −1
      batchOf(36n, [2n ** 60n + 1n, 2n ** 60n + 8n], 2n ** 60n), // beyond 2^53 (small deltas): written through BigInt
    ];
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: batches.map((b) => b.input) }, { baseOffset: 40n, batches: [{ baseOffset: 40n, records: [rec('z', 'z', TS)] }] }] });
    run(dir, { now: Number(TS) + 3 * 86_400_000 });
    const after = batchesOf(seg0(dir));
    expect(after.map((b) => [b.base, b.count])).toEqual([
      [0, 15],
      [30, 3],
      [36, 2],
    ]);
    after.forEach((b, i) => expect(b.bytes.toString('hex')).toBe(batches[i]!.expected.toString('hex')));
    expect(after[1]!.bytes.readBigInt64BE(27)).toBe(-1n);
    expect(after[1]!.bytes.readBigInt64BE(35)).toBe(-1n);
    expect([after[2]!.bytes.readBigInt64BE(27), after[2]!.bytes.readBigInt64BE(35)]).toEqual([2n ** 60n + 1n, 2n ** 60n + 8n]);
  });

  it('superseded records of a segment the map build walked are dropped from their offset alone: survivors, keyless records and headers around them come out as an independent encoder writes them', () => {
    const h = (v: string) => [{ key: 'h', value: Buffer.from(v) }];
    // Offsets 0..9 in one batch: superseded ones (by the next segment) between survivors, a keyless
    // record, headers on both kinds, values of 0 to 300 bytes.
    const records = [
      rec('a', 'a0', TS, h('1')), // 0 superseded
      rec('b', 'b'.repeat(300), TS + 1n), // 1 superseded
      rec('c', 'c0', TS + 2n, h('22')), // 2 kept
      rec(null, 'keyless', TS + 3n), // 3 keyless: dropped
      rec('a', '', TS + 4n), // 4 superseded
      rec('d', 'd'.repeat(200), TS + 5n), // 5 kept
      rec('b', 'b1', TS + 6n, h('333')), // 6 superseded
      rec('e', 'e0', TS + 7n), // 7 kept
      rec('f', 'f0', TS + 8n), // 8 superseded
      rec('g', 'g0', TS + 9n, h('4444')), // 9 kept
    ];
    const newer = [rec('a', 'a2', TS + 20n), rec('b', 'b2', TS + 21n), rec('f', 'f2', TS + 22n)];
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: [{ records }] },
        { baseOffset: 10n, batches: [{ baseOffset: 10n, records: newer }] },
        { baseOffset: 13n, batches: [{ baseOffset: 13n, records: [rec('z', 'z', TS)] }] },
      ],
    });
    const before = batchesOf(join(dir, '00000000000000000010.log'));
    const report = run(dir, { now: Number(TS) + 3 * 86_400_000 });
    const kept = [2, 5, 7, 9];
    const expected = encodeBatch({ baseOffset: 0n, lastOffsetDelta: 9, records: kept.map((o) => ({ ...records[o]!, offsetDelta: o })) });
    const after = batchesOf(seg0(dir));
    expect(after.map((b) => [b.base, b.last, b.count])).toEqual([
      [0, 9, 4],
      [10, 12, 3],
    ]);
    expect(after[0]!.bytes.toString('hex')).toBe(expected.toString('hex'));
    expect(after[1]!.bytes.equals(before[0]!.bytes)).toBe(true);
    expect(report.removed.superseded?.records).toBe(5);
    expect(report.removed.superseded?.ranges.map((r) => [Number(r.first), Number(r.last)])).toEqual([
      [0, 1],
      [4, 4],
      [6, 6],
      [8, 8],
    ]);
    expect(report.removed.keyless?.records).toBe(1);
    expect(offsets(dir)).toEqual([2, 5, 7, 9, 10, 11, 12, 13]);
  });

  it('a 30,000-record tombstone batch (~440 KB) grows when its records get the delete horizon, and is rebuilt as an independent encoder writes it', () => {
    const records = Array.from({ length: 30_000 }, (_, i) => rec(`k${i}`, null, TS + BigInt(i % 50)));
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: [{ records }] }, { baseOffset: 30_000n, batches: [{ baseOffset: 30_000n, records: [rec('z', 'z', TS)] }] }] });
    const before = batchesOf(seg0(dir))[0]!;
    const now = Number(TS) + 1000;
    run(dir, { now, config: { 'delete.retention.ms': 86_400_000n } });
    const [b] = batchesOf(seg0(dir));
    const expected = encodeBatch({ baseOffset: 0n, records, deleteHorizon: BigInt(now) + 86_400_000n });
    expect(b!.count).toBe(30_000);
    expect(b!.size - before.size).toBe(30_000 * 3); // each delta: 1 byte → 4 bytes
    expect(b!.bytes.toString('hex')).toBe(expected.toString('hex'));
  });

  it('LogAppendTime: a rebuilt batch reads every survivor as the original maxTimestamp, with all deltas 0', () => {
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: [{ timestampType: 'LogAppendTime', maxTimestamp: TS + 500n, records: [rec('a', '1', TS), rec('b', '2', TS + 1n), rec('a', '3', TS + 2n)] }] },
        { baseOffset: 3n, batches: [{ baseOffset: 3n, records: [rec('z', 'z', TS)] }] },
      ],
    });
    run(dir, { now: Number(TS) });
    const [b] = batchesOf(seg0(dir));
    const [entry] = [...scanLogBuffer(b!.bytes)];
    if (entry?.type !== 'batch') throw new Error('no batch');
    expect([entry.header.baseTimestamp, entry.header.maxTimestamp, entry.header.lastOffsetDelta]).toEqual([TS + 500n, TS + 500n, 2]);
    expect(decodeV2Records(entry.header, b!.bytes).map((r) => [r.offset, r.timestampDelta, r.timestamp])).toEqual([
      [1n, 0n, TS + 500n],
      [2n, 0n, TS + 500n],
    ]);
  });

  it('RETAIN_EMPTY: the last batch of an active producer and the batch ending at the first uncleanable offset keep a 61-byte header', () => {
    const now = Number(TS) + 1000;
    const dir = buildPartition(tempDir(), {
      segments: [
        {
          baseOffset: 0n,
          batches: [
            { producerId: 1000n, producerEpoch: 0, baseSequence: 7, partitionLeaderEpoch: 2, records: [rec('a', '1', TS)] },
            { records: [rec('a', '2', TS + 1n)] },
            { records: [rec(null, 'keyless', TS + 50n), rec(null, 'keyless', TS + 51n)] },
          ],
        },
        { baseOffset: 4n, batches: [{ baseOffset: 4n, records: [rec('z', 'z', TS)] }] },
      ],
    });
    run(dir, { now });
    const bs = batchesOf(seg0(dir));
    expect(bs.map((b) => [b.base, b.last, b.count, b.size])).toEqual([
      [0, 0, 0, 61],
      [1, 1, 1, 70],
      [2, 3, 0, 61],
    ]);
    const expected0 = encodeBatch({ baseOffset: 0n, records: [], producerId: 1000n, producerEpoch: 0, baseSequence: 7, partitionLeaderEpoch: 2, lastOffsetDelta: 0, baseTimestamp: -1n, maxTimestamp: TS });
    expect(bs[0]!.bytes.equals(expected0)).toBe(true);
    const expected2 = encodeBatch({ baseOffset: 2n, records: [], lastOffsetDelta: 1, baseTimestamp: -1n, maxTimestamp: TS + 51n });
    expect(bs[2]!.bytes.equals(expected2)).toBe(true);
    expect(PartitionLog.open(dir).segments[0]!.nextOffset()).toBe(4n);
    expect(offsets(dir)).toEqual([1, 4]);
  });

  it('the cleaned segment indexes follow the per-chunk rule (one entry per chunk, keyed by its largest offset), not the per-batch rebuild rule', () => {
    const keys = 'abcdefghij'.split('');
    const recs = keys.map((k, i) => rec(k, 'v', Number(TS) + i));
    recs[9] = rec('a', 'v', Number(TS) + 9); // supersedes offset 0
    const dir = buildPartition(tempDir(), { segments: [{ baseOffset: 0n, batches: singles(...recs) }, { baseOffset: 10n, batches: [{ baseOffset: 10n, records: [rec('z', 'v', TS)] }] }] });
    expect(batchesOf(seg0(dir)).every((b) => b.size === 70)).toBe(true);
    run(dir, { now: Number(TS), ioBufferSize: 280, config: { 'index.interval.bytes': 200 } });
    // Source chunks [0..3] [4..7] [8..9] → output chunks at 0 (210 B), 210 (280 B), 490 (140 B).
    const oi = readOffsetIndex(join(dir, '00000000000000000000.index'));
    expect(oi.entries.map((e) => [e.offset, e.position])).toEqual([
      [7n, 210],
      [9n, 490],
    ]);
    expect(oi.fileSize).toBe(16);
    const ti = readTimeIndex(join(dir, '00000000000000000000.timeindex'));
    expect(ti.entries.map((e) => [e.timestamp - TS, e.offset])).toEqual([
      [7n, 7n],
      [9n, 9n],
    ]);
  });

  it('segments are regrouped into new segments up to segment.bytes, each named after its first segment', () => {
    const segs = [0, 10, 20, 30, 40].map((b) => ({ baseOffset: BigInt(b), batches: [{ baseOffset: BigInt(b), records: [rec(`k${String(b).padStart(2, '0')}`, 'v', TS)] }, ...singles(...Array.from({ length: 9 }, (_, i) => rec(`k${String(b).padStart(2, '0')}`, `v${i}`, TS)))] }));
    const dir = buildPartition(tempDir(), { segments: [...segs, { baseOffset: 50n, batches: [{ baseOffset: 50n, records: [rec('z', 'z', TS)] }] }] });
    const size = PartitionLog.open(dir).segments[0]!.size;
    const r = run(dir, { now: Number(TS), config: { 'segment.bytes': 2 * size } });
    expect(PartitionLog.open(dir).segments.map((s) => s.baseOffset)).toEqual([0n, 20n, 40n, 50n]);
    expect(r.segments.rewritten.map((s) => s.baseOffset)).toEqual([0n, 10n, 20n, 30n, 40n]);
    expect(r.segments.created.map((s) => [s.baseOffset, s.records])).toEqual([
      [0n, 2],
      [20n, 2],
      [40n, 1],
    ]);
    expect(offsets(dir)).toEqual([9, 19, 29, 39, 49, 50]);
  });
});
