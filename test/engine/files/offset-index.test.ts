import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertKafkaSane } from '../../../src-main/engine/files/index-file.ts';
import {
  buildOffsetIndexEntries,
  DEFAULT_SEGMENT_INDEX_BYTES,
  encodeOffsetIndex,
  lookupOffset,
  parseOffsetIndex,
  readOffsetIndex,
  upperBoundEntry,
  writeOffsetIndex,
  type IndexableBatch,
} from '../../../src-main/engine/files/offset-index.ts';

/** Raw 8-byte slots (relativeOffset, position). */
function slots(...pairs: [number, number][]): Buffer {
  const b = Buffer.alloc(pairs.length * 8);
  pairs.forEach(([r, p], i) => {
    b.writeInt32BE(r, i * 8);
    b.writeInt32BE(p, i * 8 + 4);
  });
  return b;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klx-oi-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('offset index entry layout (spec §15.10)', () => {
  it('segment base 100, offset 150 at position 4242 encodes as 00 00 00 32 00 00 10 92', () => {
    const buf = encodeOffsetIndex(100n, [{ offset: 150n, position: 4242 }]);
    expect(buf.toString('hex')).toBe('0000003200001092');
    const idx = parseOffsetIndex(Buffer.from('0000003200001092', 'hex'), 100n);
    expect(idx.entries).toEqual([{ offset: 150n, relativeOffset: 50, position: 4242 }]);
    expect(idx).toMatchObject({ fileSize: 8, trailingZeroEntries: 0, trailingBytes: 0, staleEntries: 0, problems: [] });
  });
});

describe('reading an offset index', () => {
  it('an empty file has no entries and no problems', () => {
    expect(parseOffsetIndex(new Uint8Array(0), 0n)).toEqual({ baseOffset: 0n, entries: [], fileSize: 0, staleEntries: 0, trailingZeroEntries: 0, trailingBytes: 0, problems: [] });
  });

  it('B12: a one-entry index (rel 0, pos 0) is valid (KAFKA-7076: last offset == base is fine)', () => {
    const idx = parseOffsetIndex(slots([0, 0]), 0n, { file: '00000000000000000000.index' });
    expect(idx.entries).toEqual([{ offset: 0n, relativeOffset: 0, position: 0 }]);
    expect(idx.problems).toEqual([]);
    expect(() => assertKafkaSane(idx)).not.toThrow();
    expect(lookupOffset(idx, 0n)).toEqual({ offset: 0n, position: 0 });
  });

  it('B12: a size that is not a multiple of 8 is corrupt; the problem names the file and byte position', () => {
    const buf = Buffer.concat([slots([19, 5000]), Buffer.from([0, 0, 0, 1])]);
    const idx = parseOffsetIndex(buf, 100n, { file: 'seg.index' });
    expect(idx.entries).toEqual([{ offset: 119n, relativeOffset: 19, position: 5000 }]);
    expect(idx.trailingBytes).toBe(4);
    expect(idx.problems).toEqual([{ kind: 'size-not-multiple', file: 'seg.index', position: 8, reason: 'index file is 12 bytes, not a multiple of 8', kafkaCorrupt: true }]);
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', file: 'seg.index', position: 8 }));
  });

  it('B12: a 10,485,760-byte preallocated index with 2 real entries then zeros reads as 2 entries', () => {
    const buf = Buffer.alloc(DEFAULT_SEGMENT_INDEX_BYTES);
    slots([19, 5000], [29, 10000]).copy(buf);
    const idx = parseOffsetIndex(buf, 100n);
    expect(buf.length).toBe(10_485_760);
    expect(idx.entries).toEqual([
      { offset: 119n, relativeOffset: 19, position: 5000 },
      { offset: 129n, relativeOffset: 29, position: 10000 },
    ]);
    expect(idx.trailingZeroEntries).toBe(1_310_718);
    expect(idx.staleEntries).toBe(0);
    // Kafka's own check passes too: its last slot (0, 0) gives offset 100, not below the base.
    expect(idx.problems).toEqual([]);
  });

  it('an all-zero preallocated index reads as zero entries', () => {
    const idx = parseOffsetIndex(Buffer.alloc(DEFAULT_SEGMENT_INDEX_BYTES), 0n);
    expect(idx.entries).toEqual([]);
    expect(idx.trailingZeroEntries).toBe(1_310_720);
    expect(idx.problems).toEqual([]);
  });

  it('a (0, 0) first slot followed by a valid entry is a real entry', () => {
    const idx = parseOffsetIndex(Buffer.concat([slots([0, 0], [10, 4200]), Buffer.alloc(16)]), 0n);
    expect(idx.entries.map((e) => [e.offset, e.position])).toEqual([
      [0n, 0],
      [10n, 4200],
    ]);
    expect(idx.trailingZeroEntries).toBe(2);
  });

  it('stops at stale entries after a crash and reports them separately from the zero tail', () => {
    // After a truncation the slots past the write position keep older entries: neither in order with the real ones nor resuming them.
    const buf = Buffer.concat([slots([10, 5000], [20, 9000], [15, 7000], [17, 8000]), Buffer.alloc(24)]);
    const idx = parseOffsetIndex(buf, 1000n, { file: 'a.index' });
    expect(idx.entries.map((e) => e.offset)).toEqual([1010n, 1020n]);
    expect(idx.staleEntries).toBe(2);
    expect(idx.trailingZeroEntries).toBe(3);
    expect(idx.problems).toEqual([
      { kind: 'stale-entries', file: 'a.index', position: 16, reason: '2 entries after the 2 valid ones break the ordering (stale data after a crash?)', kafkaCorrupt: false },
    ]);
    expect(() => assertKafkaSane(idx)).not.toThrow();
  });

  it('one slot out of order in the middle, with the slots after it in order again, is named as one slot, not as a stale tail', () => {
    const buf = Buffer.concat([slots([10, 5000], [20, 9000], [15, 7000], [25, 12000], [30, 15000]), Buffer.alloc(24)]);
    const idx = parseOffsetIndex(buf, 1000n, { file: 'a.index' });
    // The real entries stay the prefix before the bad slot; the slot and what follows are reported.
    expect(idx.entries.map((e) => e.offset)).toEqual([1010n, 1020n]);
    expect(idx.staleEntries).toBe(3);
    expect(idx.problems).toEqual([
      {
        kind: 'out-of-order-slot',
        file: 'a.index',
        position: 16,
        reason: 'slot 2 (byte 16: relative offset 15, position 7000) is out of order between slot 1 (relative offset 20, position 9000) and slot 3 (relative offset 25, position 12000); the 2 entries after it are in order again',
        kafkaCorrupt: false,
        details: { slot: 2, where: 'middle', slotEntry: { relativeOffset: 15, position: 7000 }, before: { relativeOffset: 20, position: 9000 }, after: { relativeOffset: 25, position: 12000 }, inOrderAfter: 2 },
      },
    ]);
  });

  it('a bad first slot and a bad last slot of a trimmed file are named as such', () => {
    const first = parseOffsetIndex(slots([90, 40000], [10, 5000], [20, 9000], [30, 15000]), 0n, { file: 'b.index' });
    expect(first.problems.map((p) => [p.kind, p.position, p.reason, p.details?.['where'], p.details?.['inOrderAfter']])).toEqual([
      ['out-of-order-slot', 0, 'the first slot 0 (byte 0: relative offset 90, position 40000) does not come before slot 1 (relative offset 10, position 5000); the 3 entries after it are in order', 'first', 3],
    ]);
    const last = parseOffsetIndex(slots([10, 5000], [20, 9000], [30, 15000], [5, 100]), 0n, { file: 'c.index' });
    expect(last.entries).toHaveLength(3);
    expect(last.problems.map((p) => [p.kind, p.position, p.reason, p.details?.['where']])).toEqual([
      ['out-of-order-slot', 24, 'the last slot 3 (byte 24: relative offset 5, position 100) does not come after slot 2 (relative offset 30, position 15000); the 3 entries before it are in order', 'last'],
    ]);
    // The same last slot in a preallocated file (zeros after it) may be a crash's stale slot: stale wording.
    const preallocated = parseOffsetIndex(Buffer.concat([slots([10, 5000], [20, 9000], [30, 15000], [5, 100]), Buffer.alloc(16)]), 0n, { file: 'd.index' });
    expect(preallocated.problems.map((p) => [p.kind, p.reason])).toEqual([['stale-entries', '1 entry after the 3 valid ones breaks the ordering (stale data after a crash?)']]);
  });

  it('an entry whose position does not increase, or is 0 after the first, ends the valid entries', () => {
    expect(parseOffsetIndex(slots([10, 5000], [20, 5000]), 0n).entries).toHaveLength(1);
    expect(parseOffsetIndex(slots([10, 5000], [20, 0]), 0n).entries).toHaveLength(1);
    expect(parseOffsetIndex(slots([10, 5000], [10, 9000]), 0n).entries).toHaveLength(1);
  });

  it('with the log size, entries pointing at or past the end of the .log are not real', () => {
    const buf = slots([10, 5000], [20, 9000]);
    expect(parseOffsetIndex(buf, 0n, { logSize: 9000 }).entries).toHaveLength(1);
    expect(parseOffsetIndex(buf, 0n, { logSize: 9001 }).entries).toHaveLength(2);
  });

  it("Kafka's rule: a last slot whose offset is below the base is corrupt", () => {
    const idx = parseOffsetIndex(slots([10, 5000], [-3, 9000]), 50n, { file: 'b.index' });
    expect(idx.entries).toHaveLength(1);
    expect(idx.problems).toContainEqual({
      kind: 'last-offset-below-base',
      file: 'b.index',
      position: 8,
      reason: 'last offset 47 (slot 1) is less than the base offset 50',
      kafkaCorrupt: true,
    });
    expect(() => assertKafkaSane(idx)).toThrow(expect.objectContaining({ code: 'corrupt-index', position: 8 }));
  });

  it('reads a file and takes the base offset from its name', () => {
    const p = join(dir, '00000000000000368769.index');
    writeFileSync(p, slots([50, 4242]));
    const idx = readOffsetIndex(p);
    expect(idx.baseOffset).toBe(368769n);
    expect(idx.entries).toEqual([{ offset: 368819n, relativeOffset: 50, position: 4242 }]);
    expect(readOffsetIndex(p, { baseOffset: 0n }).entries[0]!.offset).toBe(50n);
  });

  it('a missing file is not-found', () => {
    expect(() => readOffsetIndex(join(dir, '00000000000000000000.index'))).toThrow(expect.objectContaining({ code: 'not-found' }));
  });
});

describe('lookupOffset (Kafka OffsetIndex.lookup)', () => {
  const idx = { baseOffset: 100n, entries: parseOffsetIndex(slots([19, 5000], [29, 10000], [57, 16000]), 100n).entries };
  it('returns the last entry with offset <= target, or the segment start', () => {
    expect(lookupOffset(idx, 100n)).toEqual({ offset: 100n, position: 0 });
    expect(lookupOffset(idx, 118n)).toEqual({ offset: 100n, position: 0 });
    expect(lookupOffset(idx, 119n)).toEqual({ offset: 119n, position: 5000 });
    expect(lookupOffset(idx, 128n)).toEqual({ offset: 119n, position: 5000 });
    expect(lookupOffset(idx, 129n)).toEqual({ offset: 129n, position: 10000 });
    expect(lookupOffset(idx, 157n)).toEqual({ offset: 157n, position: 16000 });
    expect(lookupOffset(idx, 10n ** 15n)).toEqual({ offset: 157n, position: 16000 });
    expect(lookupOffset({ baseOffset: 7n, entries: [] }, 99n)).toEqual({ offset: 7n, position: 0 });
  });
  it('upperBoundEntry finds the first entry at or after position + size', () => {
    expect(upperBoundEntry(idx, 0, 5000)?.offset).toBe(119n);
    expect(upperBoundEntry(idx, 5000, 1)?.offset).toBe(129n);
    expect(upperBoundEntry(idx, 16000, 1)).toBeUndefined();
  });
});

describe('building an offset index (spec §9.1 rebuild rule)', () => {
  const batch = (position: number, size: number, lastOffset: bigint): IndexableBatch => ({ position, size, lastOffset, maxTimestamp: -1n });

  it('B12: three 5000-byte batches at 0, 5000, 10000 give [(19 -> 5000), (29 -> 10000)]', () => {
    const entries = buildOffsetIndexEntries(100n, [batch(0, 5000, 109n), batch(5000, 5000, 119n), batch(10000, 5000, 129n)]);
    expect(entries).toEqual([
      { offset: 119n, relativeOffset: 19, position: 5000 },
      { offset: 129n, relativeOffset: 29, position: 10000 },
    ]);
    expect(encodeOffsetIndex(100n, entries).toString('hex')).toBe('00000013000013880000001d00002710');
    expect(encodeOffsetIndex(100n, entries)).toHaveLength(16);
  });

  it('adds an entry only when strictly more than index.interval.bytes were written since the last one', () => {
    const bs = [batch(0, 4096, 0n), batch(4096, 1, 1n), batch(4097, 4097, 2n), batch(8194, 10, 3n), batch(8204, 10, 4n)];
    // 4096 - 0 is not > 4096; 4097 - 0 is; 8194 - 4097 = 4097 is; 8204 - 8194 is not.
    expect(buildOffsetIndexEntries(0n, bs).map((e) => [e.offset, e.position])).toEqual([
      [2n, 4097],
      [3n, 8194],
    ]);
    expect(buildOffsetIndexEntries(0n, bs, 0).map((e) => e.position)).toEqual([4096, 4097, 8194, 8204]);
  });

  it('never indexes the first batch, and keys each entry by the batch last offset', () => {
    const bs = Array.from({ length: 5 }, (_, i) => batch(i * 5000, 5000, BigInt(i * 10 + 9)));
    const e = buildOffsetIndexEntries(0n, bs);
    expect(e.map((x) => [x.offset, x.position])).toEqual([
      [19n, 5000],
      [29n, 10000],
      [39n, 15000],
      [49n, 20000],
    ]);
  });

  it('refuses offsets that do not fit the segment', () => {
    expect(() => buildOffsetIndexEntries(100n, [batch(0, 10, 99n)])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => buildOffsetIndexEntries(0n, [batch(0, 10, 2147483648n)])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});

describe('writing an offset index', () => {
  it('round-trips a trimmed index', () => {
    const p = join(dir, '00000000000000000100.index');
    const entries = [
      { offset: 119n, position: 5000 },
      { offset: 129n, position: 10000 },
      { offset: 2147483747n, position: 2147483647 },
    ];
    writeOffsetIndex(p, 100n, entries);
    expect(statSync(p).size).toBe(24);
    expect(existsSync(`${p}.tmp`)).toBe(false);
    const idx = readOffsetIndex(p);
    expect(idx.entries.map((e) => ({ offset: e.offset, position: e.position }))).toEqual(entries);
    expect(idx.entries[2]!.relativeOffset).toBe(2147483647);
    expect(idx.problems).toEqual([]);
  });

  it('preallocates to whole entries, zero-filled, and reads back the same entries', () => {
    const p = join(dir, '00000000000000000000.index');
    writeOffsetIndex(p, 0n, [{ offset: 10n, position: 4200 }], { preallocateBytes: 10_485_763 });
    expect(statSync(p).size).toBe(10_485_760);
    const idx = readOffsetIndex(p);
    expect(idx.entries).toEqual([{ offset: 10n, relativeOffset: 10, position: 4200 }]);
    expect(idx.trailingZeroEntries).toBe(1_310_719);
    const raw = readFileSync(p);
    expect(raw.subarray(8).every((b) => b === 0)).toBe(true);
  });

  it('passes the fault hook through: a crash before the rename leaves the old index intact', () => {
    const p = join(dir, '00000000000000000000.index');
    writeOffsetIndex(p, 0n, [{ offset: 5n, position: 4100 }]);
    expect(() =>
      writeOffsetIndex(p, 0n, [], {
        fault: (s) => {
          if (s === 'rename') throw new Error('crash');
        },
      }),
    ).toThrow('crash');
    expect(readOffsetIndex(p).entries).toHaveLength(1);
  });

  it('refuses entries that break the format', () => {
    expect(() => encodeOffsetIndex(0n, [{ offset: 5n, position: 1 }, { offset: 5n, position: 2 }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeOffsetIndex(10n, [{ offset: 5n, position: 1 }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeOffsetIndex(0n, [{ offset: 5n, position: -1 }])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => encodeOffsetIndex(0n, [{ offset: 5n, position: 1 }, { offset: 6n, position: 2 }], 15)).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
  });
});
