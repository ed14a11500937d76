/**
 * `crc32cCombine` and `crc32cUpdateSmall` (format/crc.ts) against the native CRC-32C of
 * `@node-rs/crc32` over the concatenated bytes: the check value of "123456789", empty parts,
 * lengths around powers of two, a 1 MiB tail, and the same length twice (the operator cache).
 */
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cCombine, crc32cUpdate, crc32cUpdateSmall } from '../../../src-main/engine/format/crc.ts';

/** `n` bytes from a seeded generator. */
function bytes(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

describe('CRC-32C combine', () => {
  it('the CRC of A‖B from crc(A), crc(B) and |B| equals the native CRC of the concatenation', () => {
    const cases: [number, number][] = [[0, 0], [0, 1], [1, 0], [9, 9], [21, 4000], [61, 4096], [3, 4095], [100, 65_537], [7, 1 << 20], [21, 4000]];
    for (const [la, lb] of cases) {
      const a = bytes(la, la + 1);
      const b = bytes(lb, lb + 7);
      expect([la, lb, crc32cCombine(crc32c(a), crc32c(b), lb)]).toEqual([la, lb, crc32c(Buffer.concat([a, b]))]);
    }
    expect(crc32cCombine(crc32c(Buffer.from('1234')), crc32c(Buffer.from('56789')), 5)).toBe(0xe3069283);
  });

  it('the byte-at-a-time update equals the native one (check value 0xE3069283)', () => {
    expect(crc32cUpdateSmall(Buffer.from('123456789'), 0, 9, 0)).toBe(0xe3069283);
    const b = bytes(200, 3);
    for (const [from, to, prev] of [[0, 21, 0], [5, 61, 0x12345678], [0, 200, 0xffffffff], [10, 10, 42]] as const) {
      expect(crc32cUpdateSmall(b, from, to, prev)).toBe(crc32cUpdate(b.subarray(from, to), prev));
    }
  });
});
