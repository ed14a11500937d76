/**
 * The cleaner's key → latest offset map in a fixed memory budget (spec §13.3; Kafka's
 * `SkimpyOffsetMap`): an open-addressing hash table in one `ArrayBuffer`, never a map of strings.
 *
 * Layout: `slots = floor(memory / 24)` entries of 24 bytes — the 16-byte digest of the key
 * (`key-hash.ts`: MurmurHash3 x86_128 by default, MD5 as Kafka when asked; Kafka's entry is the same
 * 16-byte MD5 digest + 8-byte offset) and the offset (stored as a float64, exact up to 2^53). An
 * all-zero entry is empty. At the default load factor a full map costs 24 / 0.9 ≈ 26.7 bytes per key.
 * Probing is Kafka's: attempt `i` looks at slot `|readIntBE(digest, min(i, 12)) + max(0, i − 12)| mod
 * slots` (Java int arithmetic), i.e. first successive 32-bit windows of the digest, then linear
 * probing. There are no deletes. The map counts as full at `floor(slots × loadFactor)` entries
 * (`log.cleaner.io.buffer.load.factor`, 0.9): the caller stops adding keys there and cleans up to
 * where it got, then runs another pass (several rounds on a broker).
 *
 * `latestOffset` is the last offset put (or set with {@link SkimpyOffsetMap.updateLatestOffset}):
 * the end of the range the map covers.
 */
import { KlxError } from '../errors.ts';
import { DEFAULT_KEY_HASH, keyDigestFn, type KeyDigestFn, type KeyHashAlgorithm } from './key-hash.ts';

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

/** A SkimpyOffsetMap (see the module comment). Offsets are numbers (safe integers). */
export class SkimpyOffsetMap {
  /** Number of entries the table can hold. */
  readonly slots: number;
  /** Entries at which the cleaner considers the map full. */
  readonly maxEntries: number;
  private readonly words: Int32Array;
  private readonly offsets: Float64Array;
  private readonly h = new Int32Array(4);
  private entries = 0;
  /**
   * Which {@link REGION_SLOTS}-slot regions of the table hold an entry, so that {@link clear} zeroes
   * only those: a fresh table is all zeros and is not touched (its pages are never faulted in when a
   * small partition puts a few keys in a 128 MiB map). 1 byte per 64 KiB or so of table.
   */
  private readonly written: Uint8Array;
  private lastOffset = -1;
  /**
   * Writes the key digest of `src[start, start + length)` as four words into `out[at, at + 4)`
   * (the map's {@link KeyHashAlgorithm}; for batch hashing before {@link putHashed}).
   */
  readonly digestInto: KeyDigestFn;
  /** Lookups and probes, for the collision rate. */
  lookups = 0;
  probes = 0;

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
  }

  /** Distinct keys put. */
  get size(): number {
    return this.entries;
  }

  /** True when no more distinct keys may be added. */
  get full(): boolean {
    return this.entries >= this.maxEntries;
  }

  /** The last offset put (or set), −1 when none. */
  get latestOffset(): number {
    return this.lastOffset;
  }

  /** Fraction of the slots in use. */
  get utilization(): number {
    return this.entries / this.slots;
  }

  /** Empties the map. */
  clear(): void {
    const written = this.written;
    for (let r = 0; r < written.length; r++) {
      if (written[r] === 0) continue;
      this.words.fill(0, r * REGION_SLOTS * 6, Math.min(this.slots, (r + 1) * REGION_SLOTS) * 6);
      written[r] = 0;
    }
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

  /** Kafka's probe position (slot index) for attempt `attempt` of the digest words h0..h3. */
  private slotOf(h0: number, h1: number, h2: number, h3: number, attempt: number): number {
    let probe: number;
    if (attempt === 0) probe = bswap(h0);
    else {
      const at = Math.min(attempt, 12);
      // Big-endian int32 of digest bytes [at, at + 4).
      probe = (byteOf(h0, h1, h2, h3, at) << 24) | (byteOf(h0, h1, h2, h3, at + 1) << 16) | (byteOf(h0, h1, h2, h3, at + 2) << 8) | byteOf(h0, h1, h2, h3, at + 3);
      probe = (probe + Math.max(0, attempt - 12)) | 0;
    }
    const abs = probe === -2147483648 ? 0 : probe < 0 ? -probe : probe;
    this.probes++;
    return abs % this.slots;
  }

  /** The slot of the key whose digest is `h`, or −1 when absent. */
  findSlot(h: Int32Array, at = 0): number {
    this.lookups++;
    const w = this.words;
    const h0 = h[at]!;
    const h1 = h[at + 1]!;
    const h2 = h[at + 2]!;
    const h3 = h[at + 3]!;
    const maxAttempts = this.slots + 12;
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
   * Reads the first probe slot of `n` digests (4 words each in `digests`) without using the result,
   * so that the cache misses of a batch of keys overlap instead of stalling one key at a time.
   */
  touch(digests: Int32Array, n: number): void {
    const w = this.words;
    let acc = 0;
    for (let i = 0; i < n; i++) acc ^= w[this.slotOf(digests[i * 4]!, 0, 0, 0, 0) * 6]!;
    this.probes -= n;
    this.sink ^= acc;
  }
  private sink = 0;

  /**
   * Kafka `put`: sets the key's offset (adding the key when new) and `latestOffset`.
   * @param h the digest, four words from index `at`.
   * @returns the offset the key had before, or −1 when it is new.
   * The probe loop repeats {@link findSlot}'s on purpose (the hot path of the map build; the
   * duplicates report lists the pair).
   * @throws KlxError `internal` when the table has no free slot (the caller must stop at {@link full}).
   */
  putHashed(h: Int32Array, offset: number, at = 0): number {
    if (this.entries >= this.slots) throw new KlxError('internal', `offset map is full: ${this.entries} entries in ${this.slots} slots`);
    this.lookups++;
    const w = this.words;
    const h0 = h[at]!;
    const h1 = h[at + 1]!;
    const h2 = h[at + 2]!;
    const h3 = h[at + 3]!;
    for (let attempt = 0; ; attempt++) {
      const slot = this.slotOf(h0, h1, h2, h3, attempt);
      const p = slot * 6;
      const a = w[p]!;
      const b = w[p + 1]!;
      const c = w[p + 2]!;
      const d = w[p + 3]!;
      if (a === h0 && b === h1 && c === h2 && d === h3) {
        const prev = this.offsets[slot * 3 + 2]!;
        this.offsets[slot * 3 + 2] = offset;
        this.lastOffset = offset;
        return prev;
      }
      if (a === 0 && b === 0 && c === 0 && d === 0 && this.offsets[slot * 3 + 2] === 0) {
        this.written[Math.floor(slot / REGION_SLOTS)] = 1;
        w[p] = h0;
        w[p + 1] = h1;
        w[p + 2] = h2;
        w[p + 3] = h3;
        this.offsets[slot * 3 + 2] = offset;
        this.lastOffset = offset;
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
