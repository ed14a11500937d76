/**
 * Compression codecs of the records area (spec §6; Kafka's `CompressionType`, `GzipCompression`,
 * `SnappyCompression` (xerial `SnappyInputStream`/`SnappyOutputStream`), `Lz4BlockInputStream`/
 * `Lz4BlockOutputStream`, `ZstdCompression`). Everything is synchronous: batches are small and
 * async per-batch decompression costs more than it saves.
 *
 * Libraries: node:zlib (gzip), `snappy` (raw snappy blocks; the xerial framing is ours),
 * `lz4-napi` (LZ4 frame), `zstd-napi` (zstd frame).
 */
import { gunzipSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { compressFrameSync as lz4CompressFrame, decompressFrameSync as lz4DecompressFrame } from 'lz4-napi';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { KlxError } from '../errors.ts';
import { COMPRESSIONS, type Compression } from './types.ts';

/**
 * Maps a codec id (attribute bits 0–2) to its name.
 * @throws KlxError `unknown-codec` for ids 5–7, or zstd (4) in a v0/v1 message.
 */
export function compressionForId(id: number, magic: number): Compression {
  const name = COMPRESSIONS[id];
  if (name === undefined || (name === 'zstd' && magic < 2)) {
    throw new KlxError('unknown-codec', `unknown compression codec id ${id}${name === 'zstd' ? ' (zstd is not valid in magic ' + magic + ' messages)' : ''}`);
  }
  return name;
}

/** Codec id of a codec name (0–4). */
export function compressionId(c: Compression): number {
  return COMPRESSIONS.indexOf(c);
}

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
/** Block size snappy-java uses when writing (32 KiB). */
const XERIAL_BLOCK_SIZE = 32 * 1024;

function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Decompresses a records area (or a legacy wrapper value).
 * @param magic the format version, for the LZ4 header-checksum rule of §6.4.
 * @returns the concatenated uncompressed bytes.
 * @throws KlxError `corrupt-batch` when the compressed stream is invalid.
 */
export function decompress(codec: Compression, data: Uint8Array, magic: number): Buffer {
  const buf = toBuffer(data);
  try {
    switch (codec) {
      case 'none':
        return buf;
      case 'gzip':
        return gunzipSync(buf, { chunkSize: gunzipChunkSize(buf) });
      case 'snappy':
        return decompressSnappy(buf);
      case 'lz4':
        return lz4DecompressFrame(withFixedLz4HeaderChecksum(buf, magic));
      case 'zstd':
        return zstdDecompress(buf);
    }
  } catch (err) {
    if (err instanceof KlxError) throw err;
    throw new KlxError('corrupt-batch', `${codec} data cannot be decompressed: ${(err as Error).message}`, { cause: err });
  }
}

/** Largest deflate expansion: 1032 output bytes per input byte (RFC 1951 maximal-length runs). */
const DEFLATE_MAX_RATIO = 1032;

/**
 * Output chunk size for `gunzipSync`: one more than the stream's ISIZE trailer (uncompressed size
 * of its last member, mod 2^32) when that is plausible for the input's size, so that the output is
 * one buffer instead of 16 KiB chunks concatenated (a fifth less CPU for Kafka-sized batches; the
 * extra byte keeps zlib from allocating one more, empty, chunk after an exact fit). A wrong ISIZE
 * (a damaged or multi-member stream) only changes how the output is chunked, not what it is.
 */
function gunzipChunkSize(buf: Buffer): number {
  if (buf.length < 18) return zlibConstants.Z_DEFAULT_CHUNK;
  const isize = buf.readUInt32LE(buf.length - 4);
  return isize >= zlibConstants.Z_MIN_CHUNK && isize <= buf.length * DEFLATE_MAX_RATIO ? isize + 1 : zlibConstants.Z_DEFAULT_CHUNK;
}

/**
 * Compresses a records area the way Kafka's Java client writes it: gzip (default level), snappy
 * in xerial framing with 32 KiB blocks, LZ4 frame (FLG 0x60, BD 0x40, no checksums), zstd level 3.
 */
export function compress(codec: Compression, data: Uint8Array): Buffer {
  const buf = toBuffer(data);
  switch (codec) {
    case 'none':
      return buf;
    case 'gzip':
      return gzipSync(buf, { level: zlibConstants.Z_DEFAULT_COMPRESSION });
    case 'snappy':
      return compressXerialSnappy(buf);
    case 'lz4':
      return compressLz4Frame(buf);
    case 'zstd':
      return zstdCompress(buf, { compressionLevel: 3 });
  }
}

/** xerial framing if the magic is present, else one raw snappy block (spec §6.3). */
function decompressSnappy(buf: Buffer): Buffer {
  if (buf.length < XERIAL_HEADER_SIZE || !buf.subarray(0, 8).equals(XERIAL_MAGIC)) {
    return snappyUncompress(buf) as Buffer;
  }
  const version = buf.readInt32BE(8);
  if (version < 1) throw new KlxError('corrupt-batch', `xerial snappy stream version ${version} is not supported`);
  const parts: Buffer[] = [];
  let pos = XERIAL_HEADER_SIZE;
  let total = 0;
  while (pos < buf.length) {
    if (pos + 4 > buf.length) throw new KlxError('corrupt-batch', 'xerial snappy block length is cut off');
    const len = buf.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > buf.length) throw new KlxError('corrupt-batch', `xerial snappy block of ${len} bytes runs past the end of the stream`);
    const part = snappyUncompress(buf.subarray(pos, pos + len)) as Buffer;
    parts.push(part);
    total += part.length;
    pos += len;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

function compressXerialSnappy(buf: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([...XERIAL_MAGIC, 0, 0, 0, 1, 0, 0, 0, 1])];
  for (let pos = 0; pos < buf.length; pos += XERIAL_BLOCK_SIZE) {
    const block = snappyCompress(buf.subarray(pos, Math.min(buf.length, pos + XERIAL_BLOCK_SIZE)));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

const LZ4_MAGIC = 0x184d2204;

/**
 * Kafka before 0.10 (and magic-0 messages ever since) wrote the LZ4 frame header checksum over the
 * magic bytes too (KAFKA-3160). Kafka does not check HC for magic 0; lz4-napi always does, so the
 * reader rewrites HC to the correct value first. Other magics are left as they are.
 */
function withFixedLz4HeaderChecksum(buf: Buffer, magic: number): Buffer {
  if (magic !== 0 || buf.length < 7 || buf.readUInt32LE(0) !== LZ4_MAGIC) return buf;
  const flg = buf[4]!;
  const descriptorEnd = 6 + ((flg & 0x08) !== 0 ? 8 : 0) + ((flg & 0x01) !== 0 ? 4 : 0);
  if (buf.length <= descriptorEnd) return buf;
  const hc = (xxh32(buf.subarray(4, descriptorEnd), 0) >>> 8) & 0xff;
  if (buf[descriptorEnd] === hc) return buf;
  const copy = Buffer.from(buf);
  copy[descriptorEnd] = hc;
  return copy;
}

/** LZ4 frame as Kafka's `Lz4BlockOutputStream` writes it (FLG 0x60, BD 0x40, 64 KiB blocks, no checksums). */
function compressLz4Frame(buf: Buffer): Buffer {
  // lz4-napi writes the same descriptor (60 40 82) and end mark; an incompressible block is
  // stored raw with bit 31 set, as the Java stream does.
  return lz4CompressFrame(buf);
}

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}

/** xxHash32 of a short input (only used for the 2–14 byte LZ4 frame descriptor). */
export function xxh32(input: Uint8Array, seed: number): number {
  const len = input.length;
  let i = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + PRIME32_1 + PRIME32_2) >>> 0;
    let v2 = (seed + PRIME32_2) >>> 0;
    let v3 = seed >>> 0;
    let v4 = (seed - PRIME32_1) >>> 0;
    const round = (v: number, lane: number) => Math.imul(rotl((v + Math.imul(lane, PRIME32_2)) >>> 0, 13), PRIME32_1) >>> 0;
    const read = (p: number) => (input[p]! | (input[p + 1]! << 8) | (input[p + 2]! << 16) | (input[p + 3]! << 24)) >>> 0;
    while (i + 16 <= len) {
      v1 = round(v1, read(i));
      v2 = round(v2, read(i + 4));
      v3 = round(v3, read(i + 8));
      v4 = round(v4, read(i + 12));
      i += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) >>> 0;
  } else {
    h = (seed + PRIME32_5) >>> 0;
  }
  h = (h + len) >>> 0;
  while (i + 4 <= len) {
    const lane = (input[i]! | (input[i + 1]! << 8) | (input[i + 2]! << 16) | (input[i + 3]! << 24)) >>> 0;
    h = Math.imul(rotl((h + Math.imul(lane, PRIME32_3)) >>> 0, 17), PRIME32_4) >>> 0;
    i += 4;
  }
  while (i < len) {
    h = Math.imul(rotl((h + Math.imul(input[i]!, PRIME32_5)) >>> 0, 11), PRIME32_1) >>> 0;
    i++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME32_2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, PRIME32_3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}
