/**
 * A cursor over bytes in Kafka's protocol encoding, as written by Kafka's generated message classes
 * (`org.apache.kafka.common.protocol.Readable` / `ByteBufferAccessor`): big-endian fixed-width
 * integers, zig-zag varints, strings and bytes with int16/int32 lengths or, in flexible versions,
 * "compact" lengths (unsigned varint of length + 1, 0 = null), arrays likewise, and tagged fields
 * (KIP-482: an unsigned varint count, then per field an unsigned varint tag, size and the bytes).
 *
 * Used by the decoders of Kafka's internal topics (`__consumer_offsets`, `__transaction_state`,
 * `__cluster_metadata`) and of the consumer protocol. Every read checks the remaining length first
 * and throws {@link DecodeError} with the byte position and the field's name, so a truncated or
 * hostile value never reads out of bounds, and no array is allocated from a count that the
 * remaining bytes cannot hold. int64 fields are returned as `bigint` (exact beyond 2^53).
 * Pure: no Node or DOM imports.
 */
import { DecodeError } from './decode-error.ts';

/** Kafka's `Readable.readString` is `new String(bytes, UTF_8)`, which puts U+FFFD in place of malformed bytes: so does this decoder. */
const utf8 = new TextDecoder('utf-8');

/** A tagged field this reader did not interpret: its tag and raw bytes. */
export interface UnknownTaggedField {
  tag: number;
  data: Uint8Array;
}

/** Kafka's `Uuid.toString()`: the 16 bytes in URL-safe base64 without padding (22 characters). */
export function uuidText(b: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < b.length; i++) bin += String.fromCharCode(b[i]!);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A bounds-checked reader of Kafka protocol fields over one key or value. */
export class ProtocolReader {
  /** The next byte to read (0-based, relative to the start of the bytes given). */
  pos = 0;
  private readonly dv: DataView;

  /** @param b the bytes of one key or value (not copied) */
  constructor(readonly b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  /** Bytes left to read. */
  get remaining(): number {
    return this.b.byteLength - this.pos;
  }

  /** Throws {@link DecodeError} unless `n` more bytes are there. */
  need(n: number, what: string): void {
    if (n > this.b.byteLength - this.pos) throw new DecodeError(this.pos, `${what}: needs ${n} bytes, ${this.b.byteLength - this.pos} left`);
  }

  int8(what: string): number {
    this.need(1, what);
    return this.dv.getInt8(this.pos++);
  }

  /** A boolean (one byte, non-zero = true, as Kafka's generated messages read it: `_readable.readByte() != 0` on a ByteBufferAccessor). */
  bool(what: string): boolean {
    return this.int8(what) !== 0;
  }

  int16(what: string): number {
    this.need(2, what);
    const v = this.dv.getInt16(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(what: string): number {
    this.need(2, what);
    const v = this.dv.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  int32(what: string): number {
    this.need(4, what);
    const v = this.dv.getInt32(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(what: string): number {
    this.need(4, what);
    const v = this.dv.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  /** int64 as an exact `bigint`. */
  int64(what: string): bigint {
    this.need(8, what);
    const v = this.dv.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }

  float64(what: string): number {
    this.need(8, what);
    const v = this.dv.getFloat64(this.pos);
    this.pos += 8;
    return v;
  }

  /** Unsigned varint (at most 5 bytes, value < 2^32), as Kafka's `ByteUtils.readUnsignedVarint`. */
  uvarint(what: string): number {
    const at = this.pos;
    let v = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      this.need(1, what);
      const byte = this.b[this.pos++]!;
      v += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return v;
    }
    throw new DecodeError(at, `${what}: unsigned varint longer than 5 bytes`);
  }

  /** Zig-zag varint (int32), as Kafka's `ByteUtils.readVarint`. */
  varint(what: string): number {
    const u = this.uvarint(what);
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /** Zig-zag varlong (int64) as an exact `bigint`, as Kafka's `ByteUtils.readVarlong` (at most 10 bytes). */
  varlong(what: string): bigint {
    const at = this.pos;
    let v = 0n;
    for (let shift = 0n; shift <= 63n; shift += 7n) {
      this.need(1, what);
      const byte = this.b[this.pos++]!;
      v |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return (v >> 1n) ^ -(v & 1n);
    }
    throw new DecodeError(at, `${what}: varlong longer than 10 bytes`);
  }

  /** A 16-byte Kafka `Uuid`, as its base64url text (see {@link uuidText}). */
  uuid(what: string): string {
    this.need(16, what);
    const s = uuidText(this.b.subarray(this.pos, this.pos + 16));
    this.pos += 16;
    return s;
  }

  /**
   * `n` bytes decoded as UTF-8, invalid sequences replaced by U+FFFD as Kafka's generated messages read
   * strings (`Readable.readString`: `new String(bytes, StandardCharsets.UTF_8)`).
   */
  utf8(n: number, what: string): string {
    this.need(n, what);
    const s = utf8.decode(this.b.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }

  /**
   * A string: int16 length (−1 = null), or in flexible versions a compact length (uvarint length + 1,
   * 0 = null). Throws when null is read and `nullable` is false.
   */
  string(what: string, flexible: boolean, nullable: true): string | null;
  string(what: string, flexible: boolean, nullable?: false): string;
  string(what: string, flexible: boolean, nullable = false): string | null {
    const at = this.pos;
    const n = flexible ? this.uvarint(what) - 1 : this.int16(what);
    if (n < 0) {
      if (nullable) return null;
      throw new DecodeError(at, `${what}: null where a string is required`);
    }
    return this.utf8(n, what);
  }

  /** Raw bytes of length `n` (a view, not a copy). */
  raw(n: number, what: string): Uint8Array {
    this.need(n, what);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** Bytes: int32 length (−1 = null), or compact (uvarint length + 1) in flexible versions. A view. */
  bytes(what: string, flexible: boolean): Uint8Array | null {
    const n = flexible ? this.uvarint(what) - 1 : this.int32(what);
    if (n < 0) return null;
    return this.raw(n, what);
  }

  /**
   * An array's entry count: int32 (−1 = null), or compact in flexible versions. Throws when the count
   * cannot fit in the remaining bytes at `minEntryBytes` per entry (so no caller sizes memory from a
   * hostile count). Returns −1 for null.
   */
  arrayLength(what: string, flexible: boolean, minEntryBytes = 1): number {
    const at = this.pos;
    const n = flexible ? this.uvarint(what) - 1 : this.int32(what);
    if (n < -1) throw new DecodeError(at, `${what}: negative array length ${n}`);
    if (n > 0 && n * minEntryBytes > this.remaining) throw new DecodeError(at, `${what}: array of ${n} entries cannot fit in the ${this.remaining} bytes left`);
    return n;
  }

  /**
   * Reads an array with `entry` per element; null arrays give `null` unless `nullable` is false
   * (then a {@link DecodeError}).
   */
  array<T>(what: string, flexible: boolean, entry: (r: ProtocolReader, i: number) => T, nullable = false, minEntryBytes = 1): T[] | null {
    const at = this.pos;
    const n = this.arrayLength(what, flexible, minEntryBytes);
    if (n < 0) {
      if (nullable) return null;
      throw new DecodeError(at, `${what}: null where an array is required`);
    }
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(entry(this, i));
    return out;
  }

  /**
   * The tagged-field section of a flexible struct. `known(tag, r, size)` reads a tag it knows and
   * returns true; unknown tags are kept raw and returned. A known tag must consume exactly its size.
   */
  taggedFields(what: string, known?: (tag: number, r: ProtocolReader, size: number) => boolean): UnknownTaggedField[] {
    const count = this.uvarint(`${what} tagged field count`);
    const unknown: UnknownTaggedField[] = [];
    let lastTag = -1;
    for (let i = 0; i < count; i++) {
      const tagAt = this.pos;
      const tag = this.uvarint(`${what} tag`);
      if (tag <= lastTag) throw new DecodeError(tagAt, `${what}: tagged field ${tag} after ${lastTag} (tags must increase)`);
      lastTag = tag;
      const size = this.uvarint(`${what} tag ${tag} size`);
      this.need(size, `${what} tag ${tag}`);
      const end = this.pos + size;
      if (known) {
        const sub = new ProtocolReader(this.b.subarray(this.pos, end));
        if (known(tag, sub, size)) {
          if (sub.pos !== size) throw new DecodeError(this.pos + sub.pos, `${what} tag ${tag}: read ${sub.pos} of its ${size} bytes`);
          this.pos = end;
          continue;
        }
      }
      unknown.push({ tag, data: this.b.subarray(this.pos, end) });
      this.pos = end;
    }
    return unknown;
  }

  /** Throws unless every byte was read (a value longer than its version's schema). */
  end(what: string): void {
    if (this.pos !== this.b.byteLength) throw new DecodeError(this.pos, `${what}: ${this.b.byteLength - this.pos} bytes left after the last field`);
  }
}
