import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertKafkaSane } from '../../../src-main/engine/files/index-file.ts';
import { buildOffsetIndexEntries, type IndexableBatch } from '../../../src-main/engine/files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex, lookupTimestamp, parseTimeIndex, readTimeIndex, writeTimeIndex } from '../../../src-main/engine/files/time-index.ts';

const TS = 1700000000000n; // spec §15: 0x0000018BCFE56800

/** Raw 12-byte slots (timestamp, relativeOffset). */
function slots(...pairs: [bigint, number][]): Buffer {
  const b = Buffer.alloc(pairs.length * 12);
  pairs.forEach(([t, r], i) => {
    b.writeBigInt64BE(t, i * 12);
    b.writeInt32BE(r, i * 12 + 8);
  });
  return b;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-ti-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('time index entry layout (spec §15.10)', () => {
  it('timestamp TS, offset base+50 encodes as 00 00 01 8b cf e5 68 00 00 00 00 32', () => {
    expect(encodeTimeIndex(1000n, [{ timestamp: TS, offset: 1050n }]).toString('hex')).toBe('0000018bcfe5680000000032');
    const idx = parseTimeIndex(Buffer.from('0000018bcfe5680000000032', 'hex'), 1000n);
    expect(idx.entries).toEqual([{ timestamp: TS, offset: 1050n, relativeOffset: 50 }]);
    expect(idx).toMatchObject({ fileSize: 12, trailingZeroEntries: 0, trailingBytes: 0, staleEntries: 0, problems: [] });
  });
});

describe('reading a time index', () => {
  it('an empty file has no entries and no problems', () => {
    expect(parseTimeIndex(new Uint8Array(0), 5n)).toEqual({ baseOffset: 5n, entries: [], fileSize: 0, staleEntries: 0, trailingZeroEntries: 0, trailingBytes: 0, problems: [] });
  });

  it('a 12-byte time index with one entry at the base offset is valid (cleaned segments in the real data)', () => {
    const idx = parseTimeIndex(slots([1670071252901n, 0]), 0n);
    expect(idx.entries).toEqual([{ timestamp: 1670071252901n, offset: 0n, relativeOffset: 0 }]);
    expect(idx.problems).toEqual([]);
  });

  it('B12: a size that is not a multiple of 12 is corrupt', () => {
    const idx = parseTimeIndex(Buffer.concat([slots([TS, 3]), Buffer.alloc(8)]), 0n, { file: 't.timeindex' });
    expect(idx.entries).toHaveLength(1);
    expect(idx.trailingBytes).toBe(8);
    expect(idx.problems).toEqual([{ kind: 'size-not-multiple', file: 't.timeindex', position: 12, reason: 'time index file is 20 bytes, not a multiple of 12', kafkaCorrupt: true }]);
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', file: 't.timeindex', position: 12 }));
  });

  it('B12: a 10,485,756-byte preallocated time index with 2 entries reads as 2 entries; Kafka would call it corrupt', () => {
    const buf = Buffer.alloc(10_485_756);
    slots([TS, 19], [TS + 5n, 29]).copy(buf);
    const idx = parseTimeIndex(buf, 100n, { file: 'x.timeindex' });
    expect(idx.entries).toEqual([
      { timestamp: TS, offset: 119n, relativeOffset: 19 },
      { timestamp: TS + 5n, offset: 129n, relativeOffset: 29 },
    ]);
    expect(idx.trailingZeroEntries).toBe(873_811);
    expect(idx.staleEntries).toBe(0);
    // Kafka takes length/12 slots as entries: its last slot reads (0, base), below the first timestamp.
    expect(idx.problems).toEqual([
      { kind: 'last-timestamp-below-first', file: 'x.timeindex', position: 10_485_744, reason: `last timestamp 0 (slot 873812) is less than the first timestamp ${TS}`, kafkaCorrupt: true },
    ]);
  });

  it('an all-zero preallocated time index reads as zero entries, and passes Kafka\'s check', () => {
    const idx = parseTimeIndex(Buffer.alloc(10_485_756), 0n);
    expect(idx.entries).toEqual([]);
    expect(idx.trailingZeroEntries).toBe(873_813);
    expect(idx.problems).toEqual([]);
  });

  it('requires strictly increasing timestamps and non-decreasing offsets; the rest is stale', () => {
    const idx = parseTimeIndex(Buffer.concat([slots([TS, 5], [TS + 1n, 5], [TS + 9n, 7], [TS + 9n, 8], [TS + 20n, 2]), Buffer.alloc(12)]), 0n, { file: 's' });
    expect(idx.entries.map((e) => [e.timestamp - TS, e.offset])).toEqual([
      [0n, 5n],
      [1n, 5n],
      [9n, 7n],
    ]);
    expect(idx.staleEntries).toBe(2);
    expect(idx.trailingZeroEntries).toBe(1);
    expect(idx.problems.map((p) => [p.kind, p.position, p.kafkaCorrupt])).toEqual([
      ['last-timestamp-below-first', 60, true],
      ['stale-entries', 36, false],
    ]);
  });

  it('one slot out of order (middle, first, last of a trimmed file) is named with its neighbours', () => {
    const t = (n: bigint) => Number(TS + n);
    const middle = parseTimeIndex(slots([TS, 5], [TS + 10n, 20], [TS + 5n, 30], [TS + 20n, 40], [TS + 30n, 50]), 0n, { file: 'm.timeindex' });
    expect(middle.problems).toEqual([
      {
        kind: 'out-of-order-slot',
        file: 'm.timeindex',
        position: 24,
        reason: `slot 2 (byte 24: timestamp ${t(5n)}, relative offset 30) is out of order between slot 1 (timestamp ${t(10n)}, relative offset 20) and slot 3 (timestamp ${t(20n)}, relative offset 40); the 2 entries after it are in order again`,
        kafkaCorrupt: false,
        details: { slot: 2, where: 'middle', slotEntry: { timestamp: t(5n), relativeOffset: 30 }, before: { timestamp: t(10n), relativeOffset: 20 }, after: { timestamp: t(20n), relativeOffset: 40 }, inOrderAfter: 2 },
      },
    ]);
    const first = parseTimeIndex(slots([TS + 99n, 5], [TS, 10], [TS + 1n, 20]), 0n, { file: 'f.timeindex' });
    // Its last timestamp is below the first slot's: Kafka's own TimeIndex.sanityCheck fails too.
    expect(first.problems.map((p) => [p.kind, p.position, p.reason])).toEqual([
      ['last-timestamp-below-first', 24, `last timestamp ${t(1n)} (slot 2) is less than the first timestamp ${t(99n)}`],
      ['out-of-order-slot', 0, `the first slot 0 (byte 0: timestamp ${t(99n)}, relative offset 5) does not come before slot 1 (timestamp ${t(0n)}, relative offset 10); the 2 entries after it are in order`],
    ]);
    const last = parseTimeIndex(slots([TS, 5], [TS + 1n, 10], [TS + 2n, 3]), 0n, { file: 'l.timeindex' });
    expect(last.problems.map((p) => [p.kind, p.position, p.reason])).toEqual([
      ['out-of-order-slot', 24, `the last slot 2 (byte 24: timestamp ${t(2n)}, relative offset 3) does not come after slot 1 (timestamp ${t(1n)}, relative offset 10); the 2 entries before it are in order`],
    ]);
  });

  it('a negative timestamp is never a real entry', () => {
    expect(parseTimeIndex(slots([-1n, 0]), 0n).entries).toEqual([]);
  });

  it("Kafka's rule: a last slot whose offset is below the base is corrupt", () => {
    const idx = parseTimeIndex(slots([TS, 1], [TS + 1n, -1]), 10n);
    expect(idx.problems).toContainEqual(expect.objectContaining({ kind: 'last-offset-below-base', position: 12, kafkaCorrupt: true }));
  });

  it('reads a file and takes the base offset from its name', () => {
    const p = join(dir, '00000000000000014667.timeindex');
    writeFileSync(p, slots([1750533141517n, 53]));
    expect(readTimeIndex(p).entries).toEqual([{ timestamp: 1750533141517n, offset: 14720n, relativeOffset: 53 }]);
  });
});

describe('lookupTimestamp (Kafka TimeIndex.lookup)', () => {
  const idx = { baseOffset: 100n, entries: parseTimeIndex(slots([1000n, 9], [2000n, 19], [3000n, 29]), 100n).entries };
  it('returns the last entry with timestamp <= t, else (-1, base)', () => {
    expect(lookupTimestamp(idx, 999n)).toEqual({ timestamp: -1n, offset: 100n });
    expect(lookupTimestamp(idx, 1000n)).toEqual({ timestamp: 1000n, offset: 109n });
    expect(lookupTimestamp(idx, 2999n)).toEqual({ timestamp: 2000n, offset: 119n });
    expect(lookupTimestamp(idx, 3000n)).toEqual({ timestamp: 3000n, offset: 129n });
    expect(lookupTimestamp(idx, 9_000_000_000_000n)).toEqual({ timestamp: 3000n, offset: 129n });
    expect(lookupTimestamp({ baseOffset: 4n, entries: [] }, 0n)).toEqual({ timestamp: -1n, offset: 4n });
  });
});

describe('building a time index (spec §9.2)', () => {
  const b = (position: number, lastOffset: bigint, maxTimestamp: bigint, size = 5000): IndexableBatch => ({ position, size, lastOffset, maxTimestamp });

  it('writes (maxTimestampSoFar, offset of its batch) with each offset-index entry, plus the final entry', () => {
    const batches = [b(0, 9n, 1000n), b(5000, 19n, 2000n), b(10000, 29n, 3000n), b(15000, 30n, 3500n, 100)];
    expect(buildOffsetIndexEntries(0n, batches).map((e) => e.position)).toEqual([5000, 10000, 15000]);
    expect(buildTimeIndexEntries(0n, batches)).toEqual([
      { timestamp: 2000n, offset: 19n, relativeOffset: 19 }, // the batch being indexed counts already
      { timestamp: 3000n, offset: 29n, relativeOffset: 29 },
      { timestamp: 3500n, offset: 30n, relativeOffset: 30 },
    ]);
  });

  it('skips entries whose max timestamp is not greater than the last entry (out-of-order timestamps, B20)', () => {
    const batches = [b(0, 9n, 1000n), b(5000, 19n, 3000n), b(10000, 29n, 2000n), b(15000, 39n, 2500n), b(20000, 49n, 2900n, 10)];
    expect(buildTimeIndexEntries(0n, batches)).toEqual([{ timestamp: 3000n, offset: 19n, relativeOffset: 19 }]);
  });

  it('the final entry carries the largest timestamp even when it came after the last offset-index entry', () => {
    const batches = [b(0, 9n, 1000n), b(5000, 19n, 2000n, 10), b(5010, 29n, 9000n, 10), b(5020, 35n, 4000n, 10)];
    expect(buildOffsetIndexEntries(0n, batches).map((e) => e.position)).toEqual([5000]);
    expect(buildTimeIndexEntries(0n, batches)).toEqual([
      { timestamp: 2000n, offset: 19n, relativeOffset: 19 },
      { timestamp: 9000n, offset: 29n, relativeOffset: 29 },
    ]);
    expect(buildTimeIndexEntries(0n, batches, { final: false })).toEqual([{ timestamp: 2000n, offset: 19n, relativeOffset: 19 }]);
  });

  it('a tie keeps the earlier batch as holder of the max', () => {
    const batches = [b(0, 9n, 5000n), b(5000, 19n, 5000n)];
    expect(buildTimeIndexEntries(0n, batches)).toEqual([{ timestamp: 5000n, offset: 9n, relativeOffset: 9 }]);
  });

  it('stays empty when no batch has a timestamp >= 0 (e.g. magic 0)', () => {
    expect(buildTimeIndexEntries(0n, [b(0, 0n, -1n), b(5000, 1n, -1n), b(10000, 2n, -1n)])).toEqual([]);
  });

  it('honours index.interval.bytes', () => {
    const batches = [b(0, 0n, 10n, 100), b(100, 1n, 20n, 100), b(200, 2n, 30n, 100)];
    expect(buildTimeIndexEntries(0n, batches, { indexIntervalBytes: 50 }).map((e) => e.timestamp)).toEqual([20n, 30n]);
    expect(buildTimeIndexEntries(0n, batches, { indexIntervalBytes: 50, final: false }).map((e) => e.timestamp)).toEqual([20n, 30n]);
    expect(buildTimeIndexEntries(0n, batches, { final: false })).toEqual([]);
  });
});

describe('writing a time index', () => {
  it('round-trips trimmed and preallocated files', () => {
    const p = join(dir, '00000000000000000100.timeindex');
    const entries = [
      { timestamp: TS, offset: 119n },
      { timestamp: TS + 1n, offset: 119n },
      { timestamp: 9223372036854775807n, offset: 129n },
    ];
    writeTimeIndex(p, 100n, entries);
    expect(statSync(p).size).toBe(36);
    expect(readTimeIndex(p).entries.map((e) => ({ timestamp: e.timestamp, offset: e.offset }))).toEqual(entries);
    writeTimeIndex(p, 100n, entries, { preallocateBytes: 10 * 1024 * 1024 });
    expect(statSync(p).size).toBe(10_485_756);
    const idx = readTimeIndex(p);
    expect(idx.entries).toHaveLength(3);
    expect(idx.trailingZeroEntries).toBe(873_810);
  });

  it('refuses entries that break the ordering', () => {
    expect(() => encodeTimeIndex(0n, [{ timestamp: 5n, offset: 1n }, { timestamp: 5n, offset: 2n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeTimeIndex(0n, [{ timestamp: 5n, offset: 2n }, { timestamp: 6n, offset: 1n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeTimeIndex(0n, [{ timestamp: -1n, offset: 0n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeTimeIndex(10n, [{ timestamp: 1n, offset: 9n }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});
