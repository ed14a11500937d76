/**
 * The cleaner's key → latest offset map in a fixed memory budget (spec §13.3; Kafka's
 * `SkimpyOffsetMap`): an open-addressing hash table in one `ArrayBuffer`, never a map of strings.
 *
 * Layout: `slots = floor(memory / 24)` entries of 24 bytes — the 16-byte digest of the key
 * (`key-hash.ts`: MurmurHash3 x86_128 by default, MD5 as Kafka when asked; Kafka's entry is the same
 * 16-byte MD5 digest + 8-byte offset) and the offset (stored as a float64, exact up to 2^53). An
 * all-zero entry is empty. At the default load factor a full map costs 24 / 0.9 ≈ 26.7 bytes per key.
 * There are no deletes. The map counts as full at `floor(slots × loadFactor)` entries
 * (`log.cleaner.io.buffer.load.factor`, 0.9): the caller stops adding keys there and cleans up to
 * where it got, then runs another pass (several rounds on a broker).
 *
 * Probing differs from Kafka's, which never changes what the map answers (a table without deletes
 * finds every key it holds whatever the probe order; fullness counts entries, not slots): a key
 * first tries {@link LOCAL_PROBES} consecutive slots from the slot its first digest word scales to
 * (`floor(word × slots / 2^32)`, so slot order follows digest order), then Kafka's sequence
 * (`SkimpyOffsetMap.positionOf`: attempt `i` at slot `|readIntBE(digest, min(i, 12)) + max(0, i − 12)|
 * mod slots`, Java int arithmetic), which ends at a free slot whatever the keys. Keys crafted to
 * share their first digest word only lengthen the first, local probes.
 *
 * That order lets {@link SkimpyOffsetMap.putAll} defer puts into buckets by the digest's top bits
 * and apply a bucket at a time into its own region of the table (an L2-sized slice), instead of
 * one cache and TLB miss per key across the whole table: about 3× cheaper per put on a 32 MB map;
 * a full bucket's region is first read in address order (streamed into the caches) before its
 * puts probe it, which about halves that again.
 * A put is deferred only while the map cannot become full before it (entries + deferred puts <
 * maxEntries), so the map stops at the same record as with puts one at a time; every read
 * (`get`, `size`, `full`) applies the deferred puts first. The buckets take at most
 * {@link MAX_DEFERRED_BYTES} beside the table (none for tables under {@link MIN_BUCKETED_BYTES}).
 *
 * `latestOffset` is the last offset put (or set with {@link SkimpyOffsetMap.updateLatestOffset}):
 * the end of the range the map covers.
 */
import { KlxError } from '../errors.ts';
import { DEFAULT_KEY_HASH, keyDigestFn, type KeyDigestFn, type KeyHashAlgorithm } from './key-hash.ts';
import type { SupersededOffsets } from './superseded-offsets.ts';

/** Largest offset map: Kafka's `LogCleaner` gives each cleaner thread min(dedupe buffer / threads, Int.MaxValue) bytes. */
export const MAX_DEDUPE_BUFFER_SIZE = 2147483647;

/** Bytes per entry: 16-byte digest + 8-byte offset. */
export const BYTES_PER_ENTRY = 24;
/** Kafka's `log.cleaner.dedupe.buffer.size` default: 128 MiB. */
export const DEFAULT_DEDUPE_BUFFER_SIZE = 134_217_728;
/** Slots per region of the table that {@link SkimpyOffsetMap.clear} zeroes or skips as a whole (2730 × 24 B ≈ 64 KiB). */
const REGION_SLOTS = 2730;
/** Kafka's `log.cleaner.io.buffer.load.factor` default. */
export const DEFAULT_LOAD_FACTOR = 0.9;
/** Consecutive slots a key tries before the probe sequence of Kafka's SkimpyOffsetMap.positionOf (see the module comment). */
export const LOCAL_PROBES = 8;
/** Tables smaller than this (bytes) take every put at once: they sit in the CPU caches anyway. */
export const MIN_BUCKETED_BYTES = 4 << 20;
/** Table bytes per bucket of deferred puts (about an L2 cache's share). */
const BUCKET_REGION_BYTES = 64 << 10;
/** Deferred puts per bucket. */
const BUCKET_PUTS = 512;
/** Deferred puts of a bucket from which its table region is read in first ({@link SkimpyOffsetMap.streamRegion}): for a few puts, reading a whole region costs more than their own misses. */
const MIN_STREAMED_PUTS = 64;
/** Most buckets (so at most 2048 × 512 × 24 B = 24 MiB of deferred puts, for tables of 128 MiB and more). */
const MAX_BUCKET_BITS = 11;
/** Bytes the deferred puts may take beside the table. */
export const MAX_DEFERRED_BYTES = (1 << MAX_BUCKET_BITS) * BUCKET_PUTS * BYTES_PER_ENTRY;

/** A SkimpyOffsetMap (see the module comment). Offsets are numbers (safe integers). */
export class SkimpyOffsetMap {
  /** Number of entries the table can hold. */
  readonly slots: number;
  /** Entries at which the cleaner considers the map full. */
  readonly maxEntries: number;
  private readonly words: Int32Array;
  private readonly offsets: Float64Array;
  private readonly h = new Int32Array(4);
  /** slots / 2^32: scales a digest word to its first slot. */
  private readonly scale: number;
  private entries = 0;
  /**
   * Which {@link REGION_SLOTS}-slot regions of the table hold an entry, so that {@link clear} zeroes
   * only those: a fresh table is all zeros and is not touched (its pages are never faulted in when a
   * small partition puts a few keys in a 128 MiB map). 1 byte per 64 KiB or so of table.
   */
  private readonly written: Uint8Array;
  private lastOffset = -1;
  /** Deferred puts: 0 bits when the table is too small to defer; bucket = first digest word >>> (32 − bits). */
  private readonly bucketBits: number;
  private deferredDigests = new Int32Array(0);
  private deferredOffsets = new Float64Array(0);
  private deferredCount = new Int32Array(0);
  private deferred = 0;
  /** Where the deferred puts report the offsets they supersede. */
  private sink: SupersededOffsets | undefined;
  /**
   * Writes the key digest of `src[start, start + length)` as four words into `out[at, at + 4)`
   * (the map's {@link KeyHashAlgorithm}; for batch hashing before {@link putAll}).
   */
  readonly digestInto: KeyDigestFn;
  /** Lookups and probes, for the collision rate. */
  lookups = 0;
  probes = 0;
  /** What {@link streamRegion} read (only so that its reads are not optimised away). */
  private streamed = 0;

  /**
   * @param memory bytes for the table (Kafka: `log.cleaner.dedupe.buffer.size / threads`).
   * @param loadFactor Kafka's `log.cleaner.io.buffer.load.factor`.
   * @param keyHash the key digest (`key-hash.ts`; Kafka: MD5).
   * @throws KlxError `invalid-config` when fewer than 2 keys would fit (Kafka's `Cleaner` asserts more than 1 slot; a broker refuses any
   *   log.cleaner.dedupe.buffer.size under 1 MiB per cleaner thread at startup: KafkaConfig validation, so the tiny maps a lesson uses exist only here).
   */
  constructor(
    readonly memory: number = DEFAULT_DEDUPE_BUFFER_SIZE,
    readonly loadFactor: number = DEFAULT_LOAD_FACTOR,
    readonly keyHash: KeyHashAlgorithm = DEFAULT_KEY_HASH,
  ) {
    this.digestInto = keyDigestFn(keyHash);
    this.slots = Math.floor(memory / BYTES_PER_ENTRY);
    this.maxEntries = Math.floor(this.slots * loadFactor);
    if (!(memory <= MAX_DEDUPE_BUFFER_SIZE)) throw new KlxError('invalid-config', `offset map of ${memory} bytes is above ${MAX_DEDUPE_BUFFER_SIZE}, the cap Kafka's LogCleaner puts on one cleaner thread's map (Int.MaxValue)`, { details: { dedupeBufferSize: memory, max: MAX_DEDUPE_BUFFER_SIZE } });
    if (this.maxEntries < 2) throw new KlxError('invalid-config', `offset map of ${memory} bytes is too small to fit even a single key (24 bytes per entry at load factor ${loadFactor})`);
    const buf = new ArrayBuffer(this.slots * BYTES_PER_ENTRY);
    this.words = new Int32Array(buf);
    this.offsets = new Float64Array(buf);
    this.written = new Uint8Array(Math.ceil(this.slots / REGION_SLOTS));
    this.scale = this.slots / 4294967296;
    const tableBytes = this.slots * BYTES_PER_ENTRY;
    this.bucketBits = tableBytes < MIN_BUCKETED_BYTES ? 0 : Math.min(MAX_BUCKET_BITS, Math.round(Math.log2(tableBytes / BUCKET_REGION_BYTES)));
  }

  /** Distinct keys put. */
  get size(): number {
    this.flushDeferred();
    return this.entries;
  }

  /** True when no more distinct keys may be added. */
  get full(): boolean {
    this.flushDeferred();
    return this.entries >= this.maxEntries;
  }

  /** The last offset put (or set), −1 when none. */
  get latestOffset(): number {
    return this.lastOffset;
  }

  /** Fraction of the slots in use. */
  get utilization(): number {
    return this.size / this.slots;
  }

  /** Empties the map (deferred puts included). */
  clear(): void {
    const written = this.written;
    for (let r = 0; r < written.length; r++) {
      if (written[r] === 0) continue;
      this.words.fill(0, r * REGION_SLOTS * 6, Math.min(this.slots, (r + 1) * REGION_SLOTS) * 6);
      written[r] = 0;
    }
    this.deferredCount.fill(0);
    this.deferred = 0;
    this.sink = undefined;
    this.entries = 0;
    this.lastOffset = -1;
    this.lookups = 0;
    this.probes = 0;
  }

  /** Sets the end of the range the map covers (Kafka's `OffsetMap.updateLatestOffset`). */
  updateLatestOffset(offset: number): void {
    this.lastOffset = offset;
  }

  /** Hashes `key[start, start + length)` into the map's scratch digest (for {@link putHashed} / {@link getHashed}). */
  hash(key: Uint8Array, start: number, length: number): Int32Array {
    this.digestInto(key, start, length, this.h, 0);
    return this.h;
  }

  /** The first slot of a key whose first digest word is `h0`. */
  private firstSlot(h0: number): number {
    const s = Math.floor((h0 >>> 0) * this.scale);
    return s < this.slots ? s : this.slots - 1;
  }

  /** Slot of Kafka's probe `attempt` (`SkimpyOffsetMap.positionOf`) for the digest words h0..h3. */
  private kafkaSlot(h0: number, h1: number, h2: number, h3: number, attempt: number): number {
    let probe: number;
    if (attempt === 0) probe = bswap(h0);
    else {
      const at = Math.min(attempt, 12);
      // Big-endian int32 of digest bytes [at, at + 4).
      probe = (byteOf(h0, h1, h2, h3, at) << 24) | (byteOf(h0, h1, h2, h3, at + 1) << 16) | (byteOf(h0, h1, h2, h3, at + 2) << 8) | byteOf(h0, h1, h2, h3, at + 3);
      probe = (probe + Math.max(0, attempt - 12)) | 0;
    }
    const abs = probe === -2147483648 ? 0 : probe < 0 ? -probe : probe;
    return abs % this.slots;
  }

  /** Slot of probe `attempt` (see the module comment). */
  private slotOf(h0: number, h1: number, h2: number, h3: number, attempt: number): number {
    this.probes++;
    if (attempt < LOCAL_PROBES) {
      const s = this.firstSlot(h0) + attempt;
      return s < this.slots ? s : s - this.slots;
    }
    return this.kafkaSlot(h0, h1, h2, h3, attempt - LOCAL_PROBES);
  }

  /** The slot of the key whose digest is `h` (four words from index `at`), or −1 when absent. */
  findSlot(h: Int32Array, at = 0): number {
    this.flushDeferred();
    this.lookups++;
    const w = this.words;
    const h0 = h[at]!;
    const h1 = h[at + 1]!;
    const h2 = h[at + 2]!;
    const h3 = h[at + 3]!;
    const maxAttempts = this.slots + 12 + LOCAL_PROBES;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const slot = this.slotOf(h0, h1, h2, h3, attempt);
      const p = slot * 6;
      const a = w[p]!;
      const b = w[p + 1]!;
      const c = w[p + 2]!;
      const d = w[p + 3]!;
      if (a === h0 && b === h1 && c === h2 && d === h3) return slot;
      if (a === 0 && b === 0 && c === 0 && d === 0 && this.offsets[slot * 3 + 2] === 0) return -1;
    }
    return -1;
  }

  /** The offset stored in `slot`. */
  offsetAt(slot: number): number {
    return this.offsets[slot * 3 + 2]!;
  }

  /**
   * Kafka `put`: sets the key's offset (adding the key when new) and `latestOffset`.
   * @param h the digest, four words from index `at`.
   * @returns the offset the key had before, or −1 when it is new.
   * @throws KlxError `internal` when the table has no free slot (the caller must stop at {@link full}).
   */
  putHashed(h: Int32Array, offset: number, at = 0): number {
    this.flushDeferred();
    const prev = this.insert(h[at]!, h[at + 1]!, h[at + 2]!, h[at + 3]!, offset);
    this.lastOffset = offset;
    return prev;
  }

  /**
   * `n` puts in order — digest j is the four words from `digests[4j]`, its offset `offsets[j]` —
   * as `n` calls of {@link putHashed} guarded by {@link full}: stops before the first put that finds
   * the map full. Puts may be deferred (see the module comment); each offset a put supersedes is
   * marked in `superseded` (when given; the same for every call until {@link clear}).
   * @returns the number of puts made (`n` unless the map became full).
   */
  putAll(digests: Int32Array, offsets: Float64Array, n: number, superseded?: SupersededOffsets): number {
    this.sink = superseded;
    if (n === 0) return 0;
    const bits = this.bucketBits;
    let j = 0;
    while (j < n) {
      // Puts that may be deferred: while entries + deferred stay below maxEntries. Applying a bucket
      // turns deferred puts into at most as many entries, so `room` only grows back after one.
      let room = bits === 0 ? 0 : this.maxEntries - this.entries - this.deferred;
      if (room <= 0) {
        // Near full (or a small table): one put at a time, exactly as putHashed under `full`.
        this.flushDeferred();
        if (this.entries >= this.maxEntries) return j;
        const prev = this.insert(digests[j * 4]!, digests[j * 4 + 1]!, digests[j * 4 + 2]!, digests[j * 4 + 3]!, offsets[j]!);
        if (prev >= 0 && superseded) superseded.mark(prev);
        this.lastOffset = offsets[j]!;
        j++;
        continue;
      }
      if (this.deferredCount.length === 0) this.allocateBuckets();
      const dd = this.deferredDigests;
      const doff = this.deferredOffsets;
      const count = this.deferredCount;
      const shift = 32 - bits;
      let deferred = this.deferred;
      for (; j < n && room > 0; j++, room--) {
        const p = j * 4;
        const h0 = digests[p]!;
        const b = h0 >>> shift;
        const c = count[b]!;
        const k = b * BUCKET_PUTS + c;
        const q = k * 4;
        dd[q] = h0;
        dd[q + 1] = digests[p + 1]!;
        dd[q + 2] = digests[p + 2]!;
        dd[q + 3] = digests[p + 3]!;
        doff[k] = offsets[j]!;
        deferred++;
        count[b] = c + 1;
        if (c + 1 === BUCKET_PUTS) {
          this.deferred = deferred;
          this.applyBucket(b);
          deferred = this.deferred;
          room = this.maxEntries - this.entries - deferred + 1; // + 1: the loop's room-- follows
        }
      }
      this.deferred = deferred;
      this.lastOffset = offsets[j - 1]!;
    }
    return n;
  }

  private allocateBuckets(): void {
    const buckets = 1 << this.bucketBits;
    this.deferredDigests = new Int32Array(buckets * BUCKET_PUTS * 4);
    this.deferredOffsets = new Float64Array(buckets * BUCKET_PUTS);
    this.deferredCount = new Int32Array(buckets);
  }

  /** Applies the deferred puts of bucket `b`, in the order they were made. */
  private applyBucket(b: number): void {
    const n = this.deferredCount[b]!;
    const dd = this.deferredDigests;
    const sink = this.sink;
    let k = b * BUCKET_PUTS;
    if (n >= MIN_STREAMED_PUTS) this.streamRegion(b);
    for (let j = 0; j < n; j++, k++) {
      const q = k * 4;
      const prev = this.insert(dd[q]!, dd[q + 1]!, dd[q + 2]!, dd[q + 3]!, this.deferredOffsets[k]!);
      if (prev >= 0 && sink) sink.mark(prev);
    }
    this.deferredCount[b] = 0;
    this.deferred -= n;
  }

  /**
   * Reads the table region that bucket `b`'s puts land in (their first slots and the local probes
   * after them) one word per 64-byte cache line, in address order, before the puts probe it. A
   * sequential read is streamed in by the hardware prefetcher, with many lines in flight; the puts'
   * own probes come in a data-dependent order behind branches, so each would wait for its line from
   * memory one after another. Measured on the compaction bench's 2.56 M puts into a 32 MB table:
   * ~265 → ~150 ms CPU. Reads only: the table is not changed.
   */
  private streamRegion(b: number): void {
    const w = this.words;
    const span = 2 ** (32 - this.bucketBits);
    const from = Math.floor(b * span * this.scale) * 6;
    const to = Math.min(w.length, (Math.floor((b + 1) * span * this.scale) + LOCAL_PROBES) * 6);
    let acc = 0;
    for (let i = from; i < to; i += 16) acc ^= w[i]!;
    // Kept, so that the compiler cannot drop the reads.
    this.streamed ^= acc;
  }

  /**
   * Applies every deferred put (a key's puts all sit in one bucket, in order; buckets hold different
   * keys), marking what they supersede. Reads do it themselves; a builder calls it when done so that
   * its {@link SupersededOffsets} is complete.
   */
  flushDeferred(): void {
    if (this.deferred === 0) return;
    const count = this.deferredCount;
    for (let b = 0; b < count.length; b++) if (count[b]! > 0) this.applyBucket(b);
  }

  /**
   * Puts one digest (without touching `latestOffset`).
   * The probe loop repeats {@link findSlot}'s on purpose (the hot path of the map build; the
   * duplicates report lists the pair).
   */
  private insert(h0: number, h1: number, h2: number, h3: number, offset: number): number {
    if (this.entries >= this.slots) throw new KlxError('internal', `offset map is full: ${this.entries} entries in ${this.slots} slots`);
    this.lookups++;
    const w = this.words;
    const slots = this.slots;
    // Local probes first (inlined slotOf for attempts below LOCAL_PROBES).
    let slot = this.firstSlot(h0);
    for (let attempt = 0; ; attempt++) {
      if (attempt >= LOCAL_PROBES) slot = this.kafkaSlot(h0, h1, h2, h3, attempt - LOCAL_PROBES);
      else if (attempt > 0 && ++slot === slots) slot = 0;
      this.probes++;
      const p = slot * 6;
      const a = w[p]!;
      const b = w[p + 1]!;
      const c = w[p + 2]!;
      const d = w[p + 3]!;
      if (a === h0 && b === h1 && c === h2 && d === h3) {
        const prev = this.offsets[slot * 3 + 2]!;
        this.offsets[slot * 3 + 2] = offset;
        return prev;
      }
      if (a === 0 && b === 0 && c === 0 && d === 0 && this.offsets[slot * 3 + 2] === 0) {
        this.written[Math.floor(slot / REGION_SLOTS)] = 1;
        w[p] = h0;
        w[p + 1] = h1;
        w[p + 2] = h2;
        w[p + 3] = h3;
        this.offsets[slot * 3 + 2] = offset;
        this.entries++;
        return -1;
      }
    }
  }

  /** Kafka `get` on the digest `h` (four words from index `at`): the key's offset, or −1. */
  getHashed(h: Int32Array, at = 0): number {
    const slot = this.findSlot(h, at);
    return slot < 0 ? -1 : this.offsets[slot * 3 + 2]!;
  }

  /** `put` of a key given as bytes. */
  put(key: Uint8Array, offset: number): void {
    this.putHashed(this.hash(key, 0, key.length), offset);
  }

  /** `get` of a key given as bytes: its offset, or −1. */
  get(key: Uint8Array): number {
    return this.getHashed(this.hash(key, 0, key.length));
  }
}

function bswap(x: number): number {
  return ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);
}

function byteOf(h0: number, h1: number, h2: number, h3: number, j: number): number {
  const w = j < 4 ? h0 : j < 8 ? h1 : j < 12 ? h2 : h3;
  return (w >>> ((j & 3) << 3)) & 0xff;
}
