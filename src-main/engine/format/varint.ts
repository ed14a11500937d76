/**
 * ZigZag varint / varlong as used inside v2 records (spec §2.1; Kafka's `ByteUtils.readVarint`,
 * `readVarlong`, `writeVarint`, `writeVarlong`, `sizeOfVarint`).
 *
 * Readers work on a Buffer and a cursor object so the hot decode loop allocates nothing but results.
 */
import { KlxError } from '../errors.ts';

/** A read cursor over a byte buffer: `pos` advances as values are read. */
export interface Cursor {
  buf: Uint8Array;
  pos: number;
  /** Exclusive end of the readable region. */
  end: number;
}

/** BigInt(0) … BigInt(1023), allocated once: BigInts are immutable, so decoders can share them. */
const SMALL_BIGINTS: readonly bigint[] = Array.from({ length: 1024 }, (_, i) => BigInt(i));

/**
 * `BigInt(n)` for an integer `n`, without allocating for 0 ≤ n < 1024 (offset and timestamp deltas
 * inside a batch nearly always are).
 */
export function toBigInt(n: number): bigint {
  return n >= 0 && n < 1024 ? SMALL_BIGINTS[n]! : BigInt(n);
}

/**
 * Reads a zigzag varint (≤ 5 bytes) and returns it as a signed 32-bit number.
 * @throws KlxError `corrupt-batch` if it runs past `end` or exceeds 5 bytes.
 */
export function readVarint(c: Cursor): number {
  const buf = c.buf;
  let pos = c.pos;
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= c.end) throw new KlxError('corrupt-batch', 'varint runs past the end of the record data');
    const b = buf[pos++]!;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return (value >>> 1) ^ -(value & 1);
    }
    shift += 7;
  }
  throw new KlxError('corrupt-batch', 'varint longer than 5 bytes');
}

/**
 * Reads a zigzag varlong (≤ 10 bytes) as a bigint.
 * @throws KlxError `corrupt-batch` if it runs past `end` or exceeds 10 bytes.
 */
export function readVarlong(c: Cursor): bigint {
  const buf = c.buf;
  let pos = c.pos;
  // Fast path: values that fit in 28 bits (4 bytes) — nearly every timestamp delta.
  let small = 0;
  let shift = 0;
  for (let i = 0; i < 4; i++) {
    if (pos >= c.end) throw new KlxError('corrupt-batch', 'varlong runs past the end of the record data');
    const b = buf[pos++]!;
    small |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return toBigInt((small >>> 1) ^ -(small & 1));
    }
    shift += 7;
  }
  let value = BigInt(small >>> 0);
  let bshift = 28n;
  for (let i = 4; i < 10; i++) {
    if (pos >= c.end) throw new KlxError('corrupt-batch', 'varlong runs past the end of the record data');
    const b = buf[pos++]!;
    value |= BigInt(b & 0x7f) << bshift;
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return (value >> 1n) ^ -(value & 1n);
    }
    bshift += 7n;
  }
  throw new KlxError('corrupt-batch', 'varlong longer than 10 bytes');
}

/** Number of bytes the zigzag varint encoding of `v` (int32) takes. */
export function sizeOfVarint(v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (u >= 0x80) {
    u >>>= 7;
    n++;
  }
  return n;
}

/** Number of bytes the zigzag varlong encoding of `v` (int64) takes. */
export function sizeOfVarlong(v: bigint): number {
  let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  let n = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    n++;
  }
  return n;
}

/** A growable byte writer used by the encoders. */
export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(initial = 256) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Writes a zigzag varint (int32). */
  varint(v: number): void {
    this.ensure(5);
    let u = ((v << 1) ^ (v >> 31)) >>> 0;
    while (u >= 0x80) {
      this.buf[this.pos++] = (u & 0x7f) | 0x80;
      u >>>= 7;
    }
    this.buf[this.pos++] = u;
  }

  /** Writes a zigzag varlong (int64). */
  varlong(v: bigint): void {
    this.ensure(10);
    if (v >= -0x8000000n && v < 0x8000000n) {
      this.varint(Number(v));
      return;
    }
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** The written bytes (a view; copy it if the writer is reused). */
  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
