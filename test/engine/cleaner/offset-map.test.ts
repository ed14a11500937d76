/**
 * The offset map's deferred puts (`SkimpyOffsetMap.putAll`): a table large enough to defer puts into
 * buckets answers exactly as a plain key → latest offset map fed one put at a time and stopped at
 * Kafka's `full` check (SkimpyOffsetMap.put guarded by Cleaner.buildOffsetMapForSegment's
 * `map.size >= maxDesiredMapSize`): the same number of puts, the same size, latest offset, offset
 * per key and superseded offsets. Digests are drawn from a seeded generator (the map stores
 * digests, not keys), so the test also crafts keys sharing their first digest word.
 */
import { describe, expect, it } from 'vitest';
import { MIN_BUCKETED_BYTES, SkimpyOffsetMap } from '../../../src-main/engine/cleaner/offset-map.ts';
import { SupersededOffsets } from '../../../src-main/engine/cleaner/superseded-offsets.ts';

/** xorshift32 from `seed`: int32 words. */
function words(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x | 0;
  };
}

/** `puts` digests over `distinct` keys (four words each), every third one a repeat of an earlier key. */
function digestsOf(puts: number, distinct: number, seed: number, sameFirstWord = false): { digests: Int32Array; keyOf: Int32Array; keys: Int32Array } {
  const next = words(seed);
  const keys = new Int32Array(distinct * 4);
  for (let i = 0; i < keys.length; i++) keys[i] = next();
  if (sameFirstWord) for (let k = 0; k < distinct; k++) keys[k * 4] = 0x12345678;
  const digests = new Int32Array(puts * 4);
  const keyOf = new Int32Array(puts);
  let fresh = 0;
  for (let j = 0; j < puts; j++) {
    const k = fresh < distinct && (j % 3 !== 2 || fresh === 0) ? fresh++ : (next() >>> 0) % fresh;
    digests.set(keys.subarray(k * 4, k * 4 + 4), j * 4);
    keyOf[j] = k;
  }
  return { digests, keyOf, keys };
}

/** The answer of a plain map fed one put at a time, stopping when `maxEntries` keys are in it. */
function reference(keyOf: Int32Array, offsets: Float64Array, maxEntries: number) {
  const latest = new Map<number, number>();
  const superseded: number[] = [];
  let made = 0;
  for (let j = 0; j < offsets.length; j++) {
    if (latest.size >= maxEntries) break;
    const k = keyOf[j]!;
    const prev = latest.get(k);
    if (prev !== undefined) superseded.push(prev);
    latest.set(k, offsets[j]!);
    made++;
  }
  return { latest, superseded: superseded.sort((a, b) => a - b), made };
}

function supersededList(s: SupersededOffsets, n: number): number[] {
  const out: number[] = [];
  for (let o = 0; o < n; o++) if (s.isSuperseded(o)) out.push(o);
  return out;
}

/** Feeds `digests` to `map.putAll` in batches of 1..200 puts, stopping where putAll stops. */
function feed(map: SkimpyOffsetMap, digests: Int32Array, offsets: Float64Array, sup: SupersededOffsets, seed: number): number {
  const next = words(seed);
  let done = 0;
  while (done < offsets.length) {
    const n = Math.min(offsets.length - done, 1 + ((next() >>> 0) % 200));
    const made = map.putAll(digests.subarray(done * 4), offsets.subarray(done), n, sup);
    done += made;
    if (made < n) break;
  }
  map.flushDeferred();
  return done;
}

describe('offset map deferred puts', () => {
  it('a bucketed table answers as one put at a time, and stops at the same put when it fills up', () => {
    const memory = MIN_BUCKETED_BYTES + 1024; // 174,805 slots, full at 157,324 keys; 64 buckets
    for (const [puts, distinct] of [
      [150_000, 100_000], // never full
      [260_000, 200_000], // full part way
    ] as const) {
      const { digests, keyOf, keys } = digestsOf(puts, distinct, puts);
      const offsets = Float64Array.from({ length: puts }, (_, j) => j);
      const map = new SkimpyOffsetMap(memory);
      const sup = new SupersededOffsets(0, puts);
      const made = feed(map, digests, offsets, sup, 7);
      const ref = reference(keyOf, offsets, map.maxEntries);
      expect([made, map.size, map.full, map.latestOffset]).toEqual([ref.made, ref.latest.size, ref.latest.size >= map.maxEntries, ref.made - 1]);
      expect(supersededList(sup, puts)).toEqual(ref.superseded);
      let wrong = 0;
      for (const [k, off] of ref.latest) if (map.getHashed(keys, k * 4) !== off) wrong++;
      expect(wrong).toBe(0);
      expect(map.getHashed(Int32Array.of(1, 2, 3, 4))).toBe(-1);
    }
  });

  it('keys all in one bucket (a bucket applied every 512 puts, right up to the full map) stop at the same put as one put at a time', () => {
    const memory = MIN_BUCKETED_BYTES + 1024; // 64 buckets (first digest word's top 6 bits)
    const puts = 170_000;
    // Every put a new key (random words), its first word's top 6 bits 0: bucket 0.
    const next = words(11);
    const digests = Int32Array.from({ length: puts * 4 }, (_, i) => (i % 4 === 0 ? next() & 0x03ffffff : next()));
    const keys = digests;
    const keyOf = Int32Array.from({ length: puts }, (_, j) => j);
    const offsets = Float64Array.from({ length: puts }, (_, j) => j);
    const map = new SkimpyOffsetMap(memory);
    const sup = new SupersededOffsets(0, puts);
    // One putAll call per 4096 puts: the deferred puts run into the map's fill-up mid-call, 140 puts after a bucket is applied.
    let made = 0;
    while (made < puts) {
      const n = Math.min(4096, puts - made);
      const m = map.putAll(digests.subarray(made * 4), offsets.subarray(made), n, sup);
      made += m;
      if (m < n) break;
    }
    map.flushDeferred();
    const ref = reference(keyOf, offsets, map.maxEntries);
    expect(map.maxEntries % 512).toBe(140);
    expect([made, map.size, map.full, map.latestOffset]).toEqual([ref.made, map.maxEntries, true, ref.made - 1]);
    expect(ref.made).toBe(157_324);
    let wrong = 0;
    for (const [k, off] of ref.latest) if (map.getHashed(keys, k * 4) !== off) wrong++;
    expect(wrong).toBe(0);
  });

  it('keys sharing their first digest word all go in (past the local probes) and are found', () => {
    const puts = 6_000;
    const { digests, keyOf, keys } = digestsOf(puts, 4_000, 99, true);
    const offsets = Float64Array.from({ length: puts }, (_, j) => j);
    const map = new SkimpyOffsetMap(MIN_BUCKETED_BYTES + 1024);
    const sup = new SupersededOffsets(0, puts);
    expect(feed(map, digests, offsets, sup, 3)).toBe(puts);
    const ref = reference(keyOf, offsets, map.maxEntries);
    expect(map.size).toBe(4_000);
    expect(supersededList(sup, puts)).toEqual(ref.superseded);
    let wrong = 0;
    for (const [k, off] of ref.latest) if (map.getHashed(keys, k * 4) !== off) wrong++;
    expect(wrong).toBe(0);
  });

  it('clear drops deferred puts', () => {
    const { digests } = digestsOf(1_000, 1_000, 5);
    const map = new SkimpyOffsetMap(MIN_BUCKETED_BYTES + 1024);
    expect(map.putAll(digests, Float64Array.from({ length: 1_000 }, (_, j) => j + 1), 1_000)).toBe(1_000);
    map.clear();
    expect([map.size, map.latestOffset, map.getHashed(digests.subarray(0, 4))]).toEqual([0, -1, -1]);
  });
});
