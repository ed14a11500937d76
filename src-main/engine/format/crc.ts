/**
 * Checksums of the format (spec §2.2): CRC-32C for v2 batches and producer snapshots, CRC-32 (IEEE)
 * for v0/v1 messages. Both come from `@node-rs/crc32` (native); Kafka's `Crc32C` and
 * `java.util.zip.CRC32` compute the same values.
 *
 * Speed (x86-64): its CRC-32 uses PCLMULQDQ (crc32fast, ~6–8 GB/s), but its CRC-32C is the `crc32c`
 * crate's table-driven software path (~2.8 GB/s): the prebuilt binary is compiled without SSE4.2,
 * so it has no `crc32` instruction. That is ~0.1 s per 256 MiB scanned, about 40% of a shallow scan.
 */
import { crc32, crc32c as nativeCrc32c } from '@node-rs/crc32';

/** CRC-32C (Castagnoli) of `bytes`, as a uint32. `crc32c("123456789") = 0xE3069283`. */
export function crc32c(bytes: Uint8Array): number {
  return nativeCrc32c(bytes as Buffer) >>> 0;
}

/** CRC-32 (IEEE, zlib) of `bytes`, as a uint32. `crc32ieee("123456789") = 0xCBF43926`. */
export function crc32ieee(bytes: Uint8Array): number {
  return crc32(bytes as Buffer) >>> 0;
}

/** CRC-32C continued over `bytes` from a previous value (0 to start), as a uint32. */
export function crc32cUpdate(bytes: Uint8Array, previous: number): number {
  return nativeCrc32c(bytes as Buffer, previous) >>> 0;
}

/** CRC-32 (IEEE) continued over `bytes` from a previous value (0 to start), as a uint32. */
export function crc32ieeeUpdate(bytes: Uint8Array, previous: number): number {
  return crc32(bytes as Buffer, previous) >>> 0;
}

/** The CRC a batch carries: CRC-32C for magic 2 (`DefaultRecordBatch`), CRC-32 for magic 0/1 (`LegacyRecord`). */
export function crcAlgorithm(magic: number): 'CRC-32C' | 'CRC-32' {
  return magic === 2 ? 'CRC-32C' : 'CRC-32';
}

/**
 * Kafka's words for a CRC mismatch (`DefaultRecordBatch.ensureValid` / `LegacyRecord.ensureValid`:
 * "Record is corrupt (stored crc = S, computed crc = C)", both unsigned decimal), with the algorithm.
 */
export function crcMismatchText(h: { magic: number; crc: number; computedCrc?: number }): string {
  const computed = h.computedCrc === undefined ? 'not computed' : String(h.computedCrc >>> 0);
  return `Record is corrupt (stored crc = ${h.crc >>> 0}, computed crc = ${computed}; ${crcAlgorithm(h.magic)})`;
}

// ---------------------------------------------------------------------------------------------
// Combining CRC-32C values: the CRC of A‖B from crc(A), crc(B) and B's length, without reading B
// (the GF(2) polynomial arithmetic of zlib's crc32_combine, for the Castagnoli polynomial).

/** The reflected Castagnoli polynomial (bit 31 is x^0). */
const CASTAGNOLI = 0x82f63b78;

/** a(x)·b(x) mod p(x) for reflected 32-bit polynomials (int32 steps, a's bits from x^0 on). */
function multModP(a: number, b: number): number {
  let p = 0;
  a |= 0;
  b |= 0;
  while (a !== 0) {
    if (a < 0) p ^= b;
    a <<= 1;
    b = (b >>> 1) ^ (-(b & 1) & CASTAGNOLI);
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) mod p(x). */
const X2N = (() => {
  const t = new Int32Array(32);
  let p = 0x40000000; // x^1
  t[0] = p;
  for (let k = 1; k < 32; k++) t[k] = p = multModP(p, p);
  return t;
})();

/** x^(8·n) mod p(x): the operator that appends n zero bytes (n a safe integer ≥ 0). */
function zeroBytesOperator(n: number): number {
  let p = 0x80000000 | 0; // x^0
  let k = 3;
  while (n > 0) {
    if (n % 2 === 1) p = multModP(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p >>> 0;
}

/**
 * The CRC-32C of the concatenation A‖B from `crcA` = CRC-32C(A), `crcB` = CRC-32C(B) and `lengthB`
 * (bytes of B), as a uint32: `crc32cCombine(crc32c(a), crc32c(b), b.length) ===
 * crc32c(Buffer.concat([a, b]))`. About 32 integer steps per set bit of lengthB, whatever B holds.
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  let op = operators.get(lengthB);
  if (op === undefined) {
    if (operators.size >= MAX_OPERATORS) operators.clear();
    op = zeroBytesOperator(lengthB);
    operators.set(lengthB, op);
  }
  return (multModP(op, crcA >>> 0) ^ crcB) >>> 0;
}

/** {@link zeroBytesOperator} by length, for lengths seen before (batches of a segment repeat theirs). */
const operators = new Map<number, number>();
/** Operators kept (16 bytes or so each); the cache starts over beyond. */
const MAX_OPERATORS = 65_536;

/** Byte table of the reflected Castagnoli polynomial (for {@link crc32cUpdateSmall}). */
const CRC32C_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (-(c & 1) & CASTAGNOLI);
    t[n] = c;
  }
  return t;
})();

/**
 * {@link crc32cUpdate} of `bytes[start, end)`, computed here a byte at a time: cheaper than the
 * native call for a few dozen bytes (a batch header), slower beyond.
 */
export function crc32cUpdateSmall(bytes: Uint8Array, start: number, end: number, previous: number): number {
  let c = ~previous;
  for (let i = start; i < end; i++) c = CRC32C_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
