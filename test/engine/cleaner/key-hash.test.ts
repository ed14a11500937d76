/**
 * The offset map's key digest (`key-hash.ts`): MurmurHash3 x86_128 against an independent
 * implementation's output, the empty key kept by the map, and compaction byte-identical whether the
 * map hashes keys with MurmurHash3 or with MD5 as Kafka's `SkimpyOffsetMap` does.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { keyDigest, MURMUR3_SEED } from '../../../src-main/engine/cleaner/key-hash.ts';
import { SkimpyOffsetMap } from '../../../src-main/engine/cleaner/offset-map.ts';
import { snapshotFiles } from './support.ts';

const TS = 1_700_000_000_000;

/** h1..h4 (each big-endian hex) from murmurhash3js-revisited 3.0.0, `x86.hash128(bytes, 0x6b6c7801)`. */
const MURMUR3_VECTORS: [string, string][] = [
  ['', '7e30638aeeb4f2b7eeb4f2b7eeb4f2b7'],
  ['a', 'b7f029e748c754c548c754c548c754c5'],
  ['key-1', '6d69dd24da375cf57c797c5d7c797c5d'],
  ['abcdefghijklmno', '8a194242e35768fea8accd63c9b8a4b0'],
  ['key-000000123456', '18aa41ca64dd3d53b5746cf56484dea5'],
  ['abcdefghijklmnopq', '8b78d14e426c3406516a4969a597b8b8'],
  ['x'.repeat(31), 'af32fda8c5d2726743693cfa9af50d2b'],
  ['z'.repeat(200), '0bf99e57a17adc57dbe99e8feb02418b'],
];

/** The words h1..h4 of a 16-byte digest, each as 8 hex digits (the reference's print order). */
const wordsHex = (d: Buffer) => [0, 4, 8, 12].map((i) => d.readUInt32LE(i).toString(16).padStart(8, '0')).join('');

describe('key digest', () => {
  it('is MurmurHash3 x86_128 as an independent implementation computes it, for tails of 0 to 15 bytes and several blocks', () => {
    expect(MURMUR3_SEED).toBe(0x6b6c7801);
    for (const [k, want] of MURMUR3_VECTORS) expect([k, wordsHex(keyDigest(Buffer.from(k)))]).toEqual([k, want]);
    expect(wordsHex(keyDigest(Buffer.from(Array.from({ length: 256 }, (_, i) => i))))).toBe('9bbc65285e3400a6c4bf72bc67a081d2');
    // Inside a larger buffer: only the key's bytes count.
    const framed = Buffer.from('##key-000000123456##');
    const w = new Int32Array(4);
    new SkimpyOffsetMap(2400).digestInto(framed, 2, 16, w, 0);
    expect(Buffer.from(w.buffer).equals(keyDigest(Buffer.from('key-000000123456')))).toBe(true);
  });

  it('MD5 when asked, as node:crypto computes it', () => {
    for (const k of ['', 'key-1', 'y'.repeat(56)]) expect(keyDigest(Buffer.from(k), 'md5').toString('hex')).toBe(createHash('md5').update(k).digest('hex'));
  });

  it('keeps the empty key at offset 0 while other keys probe past its slot (an all-zero digest would read as an empty slot)', () => {
    for (const keyHash of ['murmur3-x86-128', 'md5'] as const) {
      const m = new SkimpyOffsetMap(24 * 50, 0.9, keyHash);
      m.put(Buffer.alloc(0), 0);
      for (let i = 1; i <= 40; i++) m.put(Buffer.from(`k${i}`), i);
      expect([keyHash, m.size, m.get(Buffer.alloc(0)), m.get(Buffer.from('k40'))]).toEqual([keyHash, 41, 0, 40]);
    }
  });
});

describe('offset map clear', () => {
  it('empties every region a put wrote to, across region boundaries, and a cleared map is empty', () => {
    const m = new SkimpyOffsetMap(24 * 20_000);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 15_000; i++) m.put(Buffer.from(`r${round}-${i}`), i + 1);
      expect([m.size, m.get(Buffer.from(`r${round}-7`))]).toEqual([15_000, 8]);
      m.clear();
      expect([m.size, m.latestOffset]).toEqual([0, -1]);
      let found = 0;
      for (let i = 0; i < 15_000; i++) if (m.get(Buffer.from(`r${round}-${i}`)) >= 0) found++;
      expect(found).toBe(0);
    }
    // After a clear a key probing through its old cluster finds no stale entry to match.
    m.put(Buffer.from('r2-7'), 99);
    expect([m.size, m.get(Buffer.from('r2-7')), m.get(Buffer.from('r2-8'))]).toEqual([1, 99, -1]);
  });
});

describe('compaction with either digest', () => {
  function build(): string {
    // 40 keys (one empty) written 3 times, some in lz4 batches, plus keyless records and tombstones.
    const recs = Array.from({ length: 120 }, (_, i) => rec(i % 40 === 0 ? '' : `key-${i % 40}`, i % 7 === 3 ? null : `v${i}`, TS + i));
    recs[17] = rec(null, 'keyless', TS + 17);
    return buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: singles(...recs.slice(0, 40)) },
        { baseOffset: 40n, batches: [{ baseOffset: 40n, records: recs.slice(40, 80), compression: 'lz4' }] },
        { baseOffset: 80n, batches: singles(...recs.slice(80, 120)) },
        { baseOffset: 120n, batches: [{ baseOffset: 120n, records: [rec('key-1', 'last', TS + 120)] }] },
      ],
    });
  }

  it.each([[24_000], [480]])('writes the same bytes with MurmurHash3 and with MD5 (dedupe buffer %s)', (dedupeBufferSize) => {
    const files: Map<string, Buffer>[] = [];
    const reports = [];
    for (const keyHash of ['murmur3-x86-128', 'md5'] as const) {
      const dir = build();
      const opts: CompactionOptions = { now: TS + 1000, keyHash, dedupeBufferSize };
      const r = runCompaction(dir, opts, { runId: 't', trashDir: tempDir('klx-trash-') });
      reports.push([r.passes, r.before.records, r.after.records, r.removed]);
      files.push(snapshotFiles(dir));
    }
    expect(reports[0]).toEqual(reports[1]);
    expect(reports[0]![2]).toBeLessThan(reports[0]![1] as number);
    expect([...files[0]!.keys()]).toEqual([...files[1]!.keys()]);
    for (const [name, bytes] of files[0]!) expect([name, bytes.equals(files[1]!.get(name)!)]).toEqual([name, true]);
  });
});
