/**
 * A tiny byte writer for hand-building Kafka protocol messages in tests, field by field, written from
 * Kafka's protocol rules (big-endian ints, unsigned varints, compact lengths = n + 1, tagged-field
 * sections) and independent of the decoders under test (it shares no code with them).
 */
export class Bytes {
  private parts: number[] = [];

  /** Unsigned varint (7 bits a byte, low first). */
  uv(n: number): this {
    let v = n;
    while (v >= 0x80) {
      this.parts.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    this.parts.push(v);
    return this;
  }
  i8(n: number): this {
    this.parts.push(n & 0xff);
    return this;
  }
  bool(b: boolean): this {
    return this.i8(b ? 1 : 0);
  }
  i16(n: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(n);
    return this.raw(b);
  }
  u16(n: number): this {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(n);
    return this.raw(b);
  }
  i32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return this.raw(b);
  }
  i64(n: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(n);
    return this.raw(b);
  }
  f64(n: number): this {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(n);
    return this.raw(b);
  }
  raw(b: Uint8Array | number[]): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  /** Compact string (uvarint length + 1; null = 0). */
  cstr(s: string | null): this {
    if (s === null) return this.uv(0);
    const b = Buffer.from(s, 'utf8');
    return this.uv(b.length + 1).raw(b);
  }
  /** Classic string (int16 length; null = -1). */
  str(s: string | null): this {
    if (s === null) return this.i16(-1);
    const b = Buffer.from(s, 'utf8');
    return this.i16(b.length).raw(b);
  }
  /** Compact bytes. */
  cbytes(b: Uint8Array | null): this {
    if (b === null) return this.uv(0);
    return this.uv(b.length + 1).raw(b);
  }
  /** Compact array length (n + 1; null = 0). */
  carr(n: number | null): this {
    return this.uv(n === null ? 0 : n + 1);
  }
  /** Classic array length (int32; null = -1). */
  arr(n: number | null): this {
    return this.i32(n === null ? -1 : n);
  }
  /** Compact array of int32. */
  cints(xs: number[] | null): this {
    this.carr(xs === null ? null : xs.length);
    for (const x of xs ?? []) this.i32(x);
    return this;
  }
  /** A 16-byte uuid. */
  uuid(b: Uint8Array): this {
    return this.raw(b);
  }
  /** A tagged-field section: [tag, bytes of the field] in increasing tag order. */
  tags(...fields: [number, Uint8Array][]): this {
    this.uv(fields.length);
    for (const [tag, data] of fields) this.uv(tag).uv(data.length).raw(data);
    return this;
  }
  /** No tagged fields. */
  t0(): this {
    return this.uv(0);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

/** A new writer. */
export const bytes = (): Bytes => new Bytes();

/** Kafka's Uuid text of 16 bytes (URL-safe base64, no padding), via Node's own base64url. */
export const uuidB64 = (b: Uint8Array): string => Buffer.from(b).toString('base64url');
