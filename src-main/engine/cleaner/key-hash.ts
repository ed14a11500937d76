/**
 * The digest of a record key in the cleaner's offset map (spec §13.3; Kafka's `SkimpyOffsetMap`).
 *
 * The map never keeps keys, only a 16-byte digest of each: two records are "the same key" for the
 * cleaner when their digests are equal. Kafka computes that digest with MD5 (`SkimpyOffsetMap`'s
 * `hashAlgorithm`, set from `CleanerConfig.hashAlgorithm`, "MD5"; no broker setting changes it).
 * This engine uses **MurmurHash3 x86_128** instead ({@link murmur3Words}, the default
 * {@link KeyHashAlgorithm}): measured on the compaction bench's 16-byte keys it costs a quarter to an eighth
 * of our MD5 (`npm run bench -- compaction` prints both in the same run), and the libraries tried
 * (xxh3-128 from `@node-rs/xxhash` and `hash-wasm`) lose to both on per-key call overhead for keys
 * of 10–40 bytes (a BigInt or a new array per key). The choice cannot change which records survive
 * unless two distinct keys of one partition share a 128-bit digest (a chance of about n²/2^129 for n
 * keys, i.e. nil for accidental keys); neither MD5 nor MurmurHash3 resists keys crafted to collide.
 * {@link md5Words} stays for the bench's comparison and for runs asked to hash as Kafka does.
 *
 * Both are written for the cleaner's hot loop: no allocation per key, the digest returned as four
 * int32 words in a caller-provided array.
 * - MD5 (RFC 1321): word i holds digest bytes 4i..4i+3 read little-endian (MD5's own word order),
 *   so `bytes[j] = (words[j >> 2] >>> (8 * (j & 3))) & 0xff`.
 * - MurmurHash3 x86_128 with seed {@link MURMUR3_SEED}: words h1, h2, h3, h4 of the reference
 *   `MurmurHash3_x86_128`, whose output bytes are those words little-endian, so the same byte
 *   formula holds. Not seed 0: with seed 0 the empty key's digest is all zeros, which the map reads
 *   as an empty slot (Kafka's `SkimpyOffsetMap.isEmpty` test, kept in `offset-map.ts`).
 */

/** Which 128-bit digest keys the offset map (see the module comment). */
export type KeyHashAlgorithm = 'murmur3-x86-128' | 'md5';

/** The digest klx's compactor uses unless told otherwise (Kafka's SkimpyOffsetMap uses MD5). */
export const DEFAULT_KEY_HASH: KeyHashAlgorithm = 'murmur3-x86-128';

/**
 * The short names users choose a digest by (`klx compact --key-hash`, `cleanup.plan`'s `keyHash`):
 * `md5` is Kafka's (`SkimpyOffsetMap`); `murmur3` (the default) is cheaper, but MurmurHash3 has
 * seed-independent multicollisions: keys crafted to collide under it could make the cleaner drop a
 * record a broker keeps, while under MD5 the same keys collide for the broker too.
 */
export type KeyHashName = 'murmur3' | 'md5';

/** The {@link KeyHashAlgorithm} of a {@link KeyHashName}. */
export function keyHashAlgorithm(name: KeyHashName): KeyHashAlgorithm {
  return name === 'md5' ? 'md5' : 'murmur3-x86-128';
}

/** Writes the digest of `src[start, start + length)` as four int32 words into `out[at, at + 4)`. */
export type KeyDigestFn = (src: Uint8Array, start: number, length: number, out: Int32Array, at: number) => void;

/** The MurmurHash3 seed of the key digest ("klx" + 1: any value whose empty-key digest is not zero). */
export const MURMUR3_SEED = 0x6b6c7801;

const MC1 = 0x239b961b;
const MC2 = 0xab0e9789 | 0;
const MC3 = 0x38b34ae5;
const MC4 = 0xa1e38b93 | 0;

/** MurmurHash3's 32-bit finaliser. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * MurmurHash3 x86_128 with seed {@link MURMUR3_SEED} of `src[start, start + length)` (Austin Appleby's public-domain
 * algorithm: 16-byte blocks as four little-endian 32-bit lanes, a 1–15-byte tail, then the length
 * and the finaliser mixed in).
 * @param out receives h1..h4 as int32 words from index `at` (see the module comment).
 */
export function murmur3Words(src: Uint8Array, start: number, length: number, out: Int32Array, at = 0): void {
  let h1 = MURMUR3_SEED;
  let h2 = MURMUR3_SEED;
  let h3 = MURMUR3_SEED;
  let h4 = MURMUR3_SEED;
  let k1 = 0;
  let k2 = 0;
  let k3 = 0;
  let k4 = 0;
  let p = start;
  const blocksEnd = start + (length & ~15);
  for (; p < blocksEnd; p += 16) {
    k1 = src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | (src[p + 3]! << 24);
    k2 = src[p + 4]! | (src[p + 5]! << 8) | (src[p + 6]! << 16) | (src[p + 7]! << 24);
    k3 = src[p + 8]! | (src[p + 9]! << 8) | (src[p + 10]! << 16) | (src[p + 11]! << 24);
    k4 = src[p + 12]! | (src[p + 13]! << 8) | (src[p + 14]! << 16) | (src[p + 15]! << 24);
    k1 = Math.imul(k1, MC1);
    k1 = Math.imul((k1 << 15) | (k1 >>> 17), MC2);
    h1 ^= k1;
    h1 = (h1 << 19) | (h1 >>> 13);
    h1 = (Math.imul((h1 + h2) | 0, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(k2, MC2);
    k2 = Math.imul((k2 << 16) | (k2 >>> 16), MC3);
    h2 ^= k2;
    h2 = (h2 << 17) | (h2 >>> 15);
    h2 = (Math.imul((h2 + h3) | 0, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(k3, MC3);
    k3 = Math.imul((k3 << 17) | (k3 >>> 15), MC4);
    h3 ^= k3;
    h3 = (h3 << 15) | (h3 >>> 17);
    h3 = (Math.imul((h3 + h4) | 0, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(k4, MC4);
    k4 = Math.imul((k4 << 18) | (k4 >>> 14), MC1);
    h4 ^= k4;
    h4 = (h4 << 13) | (h4 >>> 19);
    h4 = (Math.imul((h4 + h1) | 0, 5) + 0x32ac3b17) | 0;
  }
  const rest = length & 15;
  if (rest > 0) {
    k1 = 0;
    k2 = 0;
    k3 = 0;
    k4 = 0;
    for (let i = 0; i < rest; i++) {
      const b = src[p + i]! << ((i & 3) << 3);
      if (i < 4) k1 |= b;
      else if (i < 8) k2 |= b;
      else if (i < 12) k3 |= b;
      else k4 |= b;
    }
    if (rest > 12) h4 ^= Math.imul(rotl(Math.imul(k4, MC4), 18), MC1);
    if (rest > 8) h3 ^= Math.imul(rotl(Math.imul(k3, MC3), 17), MC4);
    if (rest > 4) h2 ^= Math.imul(rotl(Math.imul(k2, MC2), 16), MC3);
    h1 ^= Math.imul(rotl(Math.imul(k1, MC1), 15), MC2);
  }
  h1 ^= length;
  h2 ^= length;
  h3 ^= length;
  h4 ^= length;
  h1 = (((h1 + h2) | 0) + ((h3 + h4) | 0)) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h3 = fmix32(h3);
  h4 = fmix32(h4);
  h1 = (((h1 + h2) | 0) + ((h3 + h4) | 0)) | 0;
  out[at] = h1;
  out[at + 1] = (h2 + h1) | 0;
  out[at + 2] = (h3 + h1) | 0;
  out[at + 3] = (h4 + h1) | 0;
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** The digest function of `algorithm`. */
export function keyDigestFn(algorithm: KeyHashAlgorithm): KeyDigestFn {
  return algorithm === 'md5' ? md5Words : murmur3Words;
}

/** The digest of `bytes` with `algorithm` as 16 bytes (for tests and reports). */
export function keyDigest(bytes: Uint8Array, algorithm: KeyHashAlgorithm = DEFAULT_KEY_HASH): Buffer {
  const w = new Int32Array(4);
  keyDigestFn(algorithm)(bytes, 0, bytes.length, w, 0);
  const out = Buffer.alloc(16);
  for (let i = 0; i < 4; i++) out.writeInt32LE(w[i]!, i * 4);
  return out;
}

/** The last one or two 64-byte blocks (data tail + padding + length), as little-endian words. */
const tw = new Int32Array(32);
let h0 = 0;
let h1 = 0;
let h2 = 0;
let h3 = 0;

/** One 64-byte block read from bytes at `p`. */
function blockBytes(buf: Uint8Array, p: number): void {
  const w0 = buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24);
  const w1 = buf[p + 4]! | (buf[p + 5]! << 8) | (buf[p + 6]! << 16) | (buf[p + 7]! << 24);
  const w2 = buf[p + 8]! | (buf[p + 9]! << 8) | (buf[p + 10]! << 16) | (buf[p + 11]! << 24);
  const w3 = buf[p + 12]! | (buf[p + 13]! << 8) | (buf[p + 14]! << 16) | (buf[p + 15]! << 24);
  const w4 = buf[p + 16]! | (buf[p + 17]! << 8) | (buf[p + 18]! << 16) | (buf[p + 19]! << 24);
  const w5 = buf[p + 20]! | (buf[p + 21]! << 8) | (buf[p + 22]! << 16) | (buf[p + 23]! << 24);
  const w6 = buf[p + 24]! | (buf[p + 25]! << 8) | (buf[p + 26]! << 16) | (buf[p + 27]! << 24);
  const w7 = buf[p + 28]! | (buf[p + 29]! << 8) | (buf[p + 30]! << 16) | (buf[p + 31]! << 24);
  const w8 = buf[p + 32]! | (buf[p + 33]! << 8) | (buf[p + 34]! << 16) | (buf[p + 35]! << 24);
  const w9 = buf[p + 36]! | (buf[p + 37]! << 8) | (buf[p + 38]! << 16) | (buf[p + 39]! << 24);
  const w10 = buf[p + 40]! | (buf[p + 41]! << 8) | (buf[p + 42]! << 16) | (buf[p + 43]! << 24);
  const w11 = buf[p + 44]! | (buf[p + 45]! << 8) | (buf[p + 46]! << 16) | (buf[p + 47]! << 24);
  const w12 = buf[p + 48]! | (buf[p + 49]! << 8) | (buf[p + 50]! << 16) | (buf[p + 51]! << 24);
  const w13 = buf[p + 52]! | (buf[p + 53]! << 8) | (buf[p + 54]! << 16) | (buf[p + 55]! << 24);
  const w14 = buf[p + 56]! | (buf[p + 57]! << 8) | (buf[p + 58]! << 16) | (buf[p + 59]! << 24);
  const w15 = buf[p + 60]! | (buf[p + 61]! << 8) | (buf[p + 62]! << 16) | (buf[p + 63]! << 24);
  let a = h0;
  let b = h1;
  let c = h2;
  let d = h3;
  a = (a + ((b & c) | (~b & d)) + -680876936 + w0) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -389564586 + w1) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + 606105819 + w2) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -1044525330 + w3) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + -176418897 + w4) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + 1200080426 + w5) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -1473231341 + w6) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -45705983 + w7) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + 1770035416 + w8) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -1958414417 + w9) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -42063 + w10) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -1990404162 + w11) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + 1804603682 + w12) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -40341101 + w13) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -1502002290 + w14) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + 1236535329 + w15) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -165796510 + w1) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -1069501632 + w6) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + 643717713 + w11) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -373897302 + w0) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -701558691 + w5) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + 38016083 + w10) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + -660478335 + w15) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -405537848 + w4) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + 568446438 + w9) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -1019803690 + w14) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + -187363961 + w3) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + 1163531501 + w8) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -1444681467 + w13) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -51403784 + w2) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + 1735328473 + w7) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -1926607734 + w12) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + (b ^ c ^ d) + -378558 + w5) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -2022574463 + w8) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + 1839030562 + w11) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -35309556 + w14) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + -1530992060 + w1) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + 1272893353 + w4) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + -155497632 + w7) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -1094730640 + w10) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + 681279174 + w13) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -358537222 + w0) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + -722521979 + w3) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + 76029189 + w6) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + -640364487 + w9) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -421815835 + w12) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + 530742520 + w15) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -995338651 + w2) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + -198630844 + w0) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + 1126891415 + w7) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1416354905 + w14) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -57434055 + w5) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + 1700485571 + w12) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -1894986606 + w3) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1051523 + w10) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -2054922799 + w1) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + 1873313359 + w8) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -30611744 + w15) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1560198380 + w6) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + 1309151649 + w13) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + -145523070 + w4) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -1120210379 + w11) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + 718787259 + w2) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -343485551 + w9) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  h0 = (h0 + a) | 0;
  h1 = (h1 + b) | 0;
  h2 = (h2 + c) | 0;
  h3 = (h3 + d) | 0;
}

/**
 * One 64-byte block read from the words `tw[o, o + 16)`. The 64 rounds repeat those of
 * {@link blockBytes} on purpose (the duplicates report lists the pair): only the message-word reads
 * differ, and a shared round function taking the words as arguments costs the hot loop a call and
 * 16 argument copies per block.
 */
function blockWords(o: number): void {
  const w0 = tw[o + 0]!;
  const w1 = tw[o + 1]!;
  const w2 = tw[o + 2]!;
  const w3 = tw[o + 3]!;
  const w4 = tw[o + 4]!;
  const w5 = tw[o + 5]!;
  const w6 = tw[o + 6]!;
  const w7 = tw[o + 7]!;
  const w8 = tw[o + 8]!;
  const w9 = tw[o + 9]!;
  const w10 = tw[o + 10]!;
  const w11 = tw[o + 11]!;
  const w12 = tw[o + 12]!;
  const w13 = tw[o + 13]!;
  const w14 = tw[o + 14]!;
  const w15 = tw[o + 15]!;
  let a = h0;
  let b = h1;
  let c = h2;
  let d = h3;
  a = (a + ((b & c) | (~b & d)) + -680876936 + w0) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -389564586 + w1) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + 606105819 + w2) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -1044525330 + w3) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + -176418897 + w4) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + 1200080426 + w5) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -1473231341 + w6) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -45705983 + w7) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + 1770035416 + w8) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -1958414417 + w9) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -42063 + w10) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + -1990404162 + w11) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & c) | (~b & d)) + 1804603682 + w12) | 0; a = (((a << 7) | (a >>> 25)) + b) | 0;
  d = (d + ((a & b) | (~a & c)) + -40341101 + w13) | 0; d = (((d << 12) | (d >>> 20)) + a) | 0;
  c = (c + ((d & a) | (~d & b)) + -1502002290 + w14) | 0; c = (((c << 17) | (c >>> 15)) + d) | 0;
  b = (b + ((c & d) | (~c & a)) + 1236535329 + w15) | 0; b = (((b << 22) | (b >>> 10)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -165796510 + w1) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -1069501632 + w6) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + 643717713 + w11) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -373897302 + w0) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -701558691 + w5) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + 38016083 + w10) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + -660478335 + w15) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -405537848 + w4) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + 568446438 + w9) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -1019803690 + w14) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + -187363961 + w3) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + 1163531501 + w8) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + ((b & d) | (c & ~d)) + -1444681467 + w13) | 0; a = (((a << 5) | (a >>> 27)) + b) | 0;
  d = (d + ((a & c) | (b & ~c)) + -51403784 + w2) | 0; d = (((d << 9) | (d >>> 23)) + a) | 0;
  c = (c + ((d & b) | (a & ~b)) + 1735328473 + w7) | 0; c = (((c << 14) | (c >>> 18)) + d) | 0;
  b = (b + ((c & a) | (d & ~a)) + -1926607734 + w12) | 0; b = (((b << 20) | (b >>> 12)) + c) | 0;
  a = (a + (b ^ c ^ d) + -378558 + w5) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -2022574463 + w8) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + 1839030562 + w11) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -35309556 + w14) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + -1530992060 + w1) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + 1272893353 + w4) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + -155497632 + w7) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -1094730640 + w10) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + 681279174 + w13) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -358537222 + w0) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + -722521979 + w3) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + 76029189 + w6) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (b ^ c ^ d) + -640364487 + w9) | 0; a = (((a << 4) | (a >>> 28)) + b) | 0;
  d = (d + (a ^ b ^ c) + -421815835 + w12) | 0; d = (((d << 11) | (d >>> 21)) + a) | 0;
  c = (c + (d ^ a ^ b) + 530742520 + w15) | 0; c = (((c << 16) | (c >>> 16)) + d) | 0;
  b = (b + (c ^ d ^ a) + -995338651 + w2) | 0; b = (((b << 23) | (b >>> 9)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + -198630844 + w0) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + 1126891415 + w7) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1416354905 + w14) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -57434055 + w5) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + 1700485571 + w12) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -1894986606 + w3) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1051523 + w10) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -2054922799 + w1) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + 1873313359 + w8) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -30611744 + w15) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + -1560198380 + w6) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + 1309151649 + w13) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  a = (a + (c ^ (b | ~d)) + -145523070 + w4) | 0; a = (((a << 6) | (a >>> 26)) + b) | 0;
  d = (d + (b ^ (a | ~c)) + -1120210379 + w11) | 0; d = (((d << 10) | (d >>> 22)) + a) | 0;
  c = (c + (a ^ (d | ~b)) + 718787259 + w2) | 0; c = (((c << 15) | (c >>> 17)) + d) | 0;
  b = (b + (d ^ (c | ~a)) + -343485551 + w9) | 0; b = (((b << 21) | (b >>> 11)) + c) | 0;
  h0 = (h0 + a) | 0;
  h1 = (h1 + b) | 0;
  h2 = (h2 + c) | 0;
  h3 = (h3 + d) | 0;
}

/**
 * MD5 of `src[start, start + length)`.
 * @param out receives the digest as four int32 words from index `at` (see the module comment).
 */
export function md5Words(src: Uint8Array, start: number, length: number, out: Int32Array, at = 0): void {
  h0 = 0x67452301;
  h1 = 0xefcdab89 | 0;
  h2 = 0x98badcfe | 0;
  h3 = 0x10325476;
  const end = start + length;
  let p = start;
  for (; p + 64 <= end; p += 64) blockBytes(src, p);
  const rest = end - p;
  const blocks = rest < 56 ? 1 : 2;
  const n = blocks * 16;
  // Whole little-endian words of the tail, then the partial word with the 0x80 pad byte, then zeros.
  const full = rest >> 2;
  let q = p;
  for (let i = 0; i < full; i++, q += 4) tw[i] = src[q]! | (src[q + 1]! << 8) | (src[q + 2]! << 16) | (src[q + 3]! << 24);
  const r3 = rest & 3;
  let last = 0x80 << (r3 << 3);
  if (r3 > 0) last |= src[q]!;
  if (r3 > 1) last |= src[q + 1]! << 8;
  if (r3 > 2) last |= src[q + 2]! << 16;
  tw[full] = last;
  for (let i = full + 1; i < n - 2; i++) tw[i] = 0;
  const bits = length * 8;
  tw[n - 2] = bits | 0;
  tw[n - 1] = Math.floor(bits / 0x100000000) | 0;
  blockWords(0);
  if (blocks === 2) blockWords(16);
  out[at] = h0;
  out[at + 1] = h1;
  out[at + 2] = h2;
  out[at + 3] = h3;
}

/** MD5 digest of `bytes` as 16 bytes (for tests and reports). */
export function md5(bytes: Uint8Array): Buffer {
  return keyDigest(bytes, 'md5');
}
