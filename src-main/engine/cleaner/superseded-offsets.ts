/**
 * The offsets of the dirty section that the map pass already knows are superseded, as a bitmap, so
 * that the cleaning pass does not hash those keys a second time (an optimisation over Kafka's
 * cleaner, which computes the digest of every record key twice: to build the map and to look it up,
 * SkimpyOffsetMap.put from Cleaner.buildOffsetMap and SkimpyOffsetMap.get from Cleaner.shouldRetainRecord).
 *
 * When `put(key, offset)` replaces an earlier offset `p` of the same key, `p` is superseded: its bit
 * is set. When the map is complete, a dirty record (offset in `[start, end)`) that was put is the
 * latest for its key exactly when its bit is clear — the answer Kafka gets from
 * `offset >= map.get(key)`. Records of the clean section (below `start`) are still looked up by hash.
 *
 * Memory: one bit per offset of the dirty range; ranges above {@link MAX_BITMAP_OFFSETS} offsets
 * (32 MiB of bits) get no bitmap and every key is looked up by hash, as Kafka does.
 */

/** Largest dirty range (in offsets) given a bitmap: 2^28 offsets = 32 MiB. */
export const MAX_BITMAP_OFFSETS = 2 ** 28;

/** See the module comment. Offsets are numbers (below 2^53). */
export class SupersededOffsets {
  private readonly bits: Uint8Array;

  /** @param start first offset of the range; @param length offsets in the range. */
  constructor(
    readonly start: number,
    readonly length: number,
  ) {
    this.bits = new Uint8Array(Math.ceil(length / 8));
  }

  /** A bitmap for `[start, end)`, or undefined when the range is too large. */
  static forRange(start: number, end: number): SupersededOffsets | undefined {
    const n = end - start;
    return n > 0 && n <= MAX_BITMAP_OFFSETS ? new SupersededOffsets(start, n) : undefined;
  }

  /** Marks `offset` (inside the range) superseded. */
  mark(offset: number): void {
    const i = offset - this.start;
    this.bits[i >>> 3]! |= 1 << (i & 7);
  }

  /** True when `offset` lies in the range (and so was mapped, if it had a key). */
  covers(offset: number): boolean {
    const i = offset - this.start;
    return i >= 0 && i < this.length;
  }

  /** Whether `offset` (inside the range) was superseded. */
  isSuperseded(offset: number): boolean {
    const i = offset - this.start;
    return (this.bits[i >>> 3]! & (1 << (i & 7))) !== 0;
  }
}
