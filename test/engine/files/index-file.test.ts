// The scaffolding the offset index and the time index share (files/index-file.ts): the order in
// which each kind reports several problems of one file, the shared messages, the binary search and
// the encoders' buffer sizing.
import { describe, expect, it } from 'vitest';
import { allocIndexBuffer, assertKafkaSane, lastEntryAtOrBelow } from '../../../src-main/engine/files/index-file.ts';
import { encodeOffsetIndex, parseOffsetIndex } from '../../../src-main/engine/files/offset-index.ts';
import { encodeTimeIndex, parseTimeIndex } from '../../../src-main/engine/files/time-index.ts';

/** Raw slots of `size` bytes: [int32 at 0, int32 at 4] (offset index) or [int64 at 0, int32 at 8] (time index). */
function slots(size: 8 | 12, ...pairs: [number, number][]): Buffer {
  const b = Buffer.alloc(pairs.length * size);
  pairs.forEach(([a, r], i) => {
    if (size === 8) {
      b.writeInt32BE(a, i * 8);
      b.writeInt32BE(r, i * 8 + 4);
    } else {
      b.writeBigInt64BE(BigInt(a), i * 12);
      b.writeInt32BE(r, i * 12 + 8);
    }
  });
  return b;
}

describe('problems of one file, in each kind’s order', () => {
  it('offset index: size, then last offset below the base, then stale entries; assertKafkaSane throws the first', () => {
    // slot 0 valid, slot 1 stale (offset goes back), slot 2 below the base; 3 stray bytes.
    const buf = Buffer.concat([slots(8, [10, 100], [5, 200], [-2, 300]), Buffer.from([1, 2, 3])]);
    const idx = parseOffsetIndex(buf, 50n, { file: 'o.index' });
    expect(idx.problems.map((p) => [p.kind, p.position, p.kafkaCorrupt])).toEqual([
      ['size-not-multiple', 24, true],
      ['last-offset-below-base', 16, true],
      ['stale-entries', 8, false],
    ]);
    expect(idx.problems[1]!.reason).toBe('last offset 48 (slot 2) is less than the base offset 50');
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', file: 'o.index', position: 24, reason: 'index file is 27 bytes, not a multiple of 8' }));
  });

  it('time index: last timestamp below the first, last offset below the base, size, then stale entries', () => {
    const buf = Buffer.concat([slots(12, [1000, 3], [2000, 1], [500, -1]), Buffer.from([9])]);
    const idx = parseTimeIndex(buf, 7n, { file: 't.timeindex' });
    expect(idx.problems.map((p) => [p.kind, p.position, p.kafkaCorrupt])).toEqual([
      ['last-timestamp-below-first', 24, true],
      ['last-offset-below-base', 24, true],
      ['size-not-multiple', 36, true],
      ['stale-entries', 12, false],
    ]);
    expect(idx.problems.map((p) => p.reason)).toEqual([
      'last timestamp 500 (slot 2) is less than the first timestamp 1000',
      'last offset 6 (slot 2) is less than the base offset 7',
      'time index file is 37 bytes, not a multiple of 12',
      '2 entries after the 1 valid one break the ordering (stale data after a crash?)',
    ]);
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', position: 24, details: { kind: 'last-timestamp-below-first' } }));
  });

  it('a file shorter than one slot reports only its size', () => {
    expect(parseOffsetIndex(Buffer.alloc(5), 0n).problems.map((p) => p.kind)).toEqual(['size-not-multiple']);
    expect(parseTimeIndex(Buffer.alloc(11), 0n).problems.map((p) => p.kind)).toEqual(['size-not-multiple']);
  });
});

describe('lastEntryAtOrBelow', () => {
  const keys = [10n, 20n, 30n];
  const at = (t: bigint) => lastEntryAtOrBelow(keys, t, (k) => k);
  it('finds the last key ≤ the target, −1 below the first', () => {
    expect([at(5n), at(10n), at(15n), at(20n), at(29n), at(30n), at(1000n)]).toEqual([-1, 0, 0, 1, 1, 2, 2]);
    expect(lastEntryAtOrBelow([], 0n, (k: bigint) => k)).toBe(-1);
  });
});

describe('allocIndexBuffer (the encoders)', () => {
  it('trims to the entries by default, preallocates whole slots zero-filled, and refuses a size too small', () => {
    expect(allocIndexBuffer('index', 8, 2, undefined).length).toBe(16);
    const pre = allocIndexBuffer('time index', 12, 1, 40);
    expect(pre.length).toBe(36);
    expect(pre.every((b) => b === 0)).toBe(true);
    expect(() => encodeOffsetIndex(0n, [{ offset: 1n, position: 10 }], 7)).toThrow('index size 7 cannot hold 1 entries (8 bytes)');
    expect(() => encodeTimeIndex(0n, [{ timestamp: 5n, offset: 1n }], 11)).toThrow('time index size 11 cannot hold 1 entries (12 bytes)');
  });
});
