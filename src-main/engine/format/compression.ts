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
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import { KlxError } from '../errors.ts';
import { asBuffer } from './bytes.ts';
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

/** Kafka's default `max.message.bytes` (1048588 bytes: 1 MiB + the 12-byte log overhead). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1048588;

/**
 * Default ceiling on the uncompressed size of one records area (256 MiB), whatever its
 * recordsCount claims. Kafka has no such ceiling: a broker checks `max.message.bytes` against the
 * batch as written, compressed (UnifiedLog.analyzeAndValidateRecords), and decompresses record by
 * record as a stream where it decompresses at all (LogValidator, DefaultRecordBatch's streaming
 * iterator), as the consumer does (CompletedFetch). A real batch of very compressible records (1,000
 * records of 1 MiB of zeros) can therefore pass it: such a batch is reported as not checked, a limit
 * of this tool, never as damage, and {@link setMaxInflatedBytes} (`--max-inflated-bytes`) raises it.
 */
export const DECOMPRESSION_CEILING = 256 * 1024 * 1024;

/**
 * The most `--max-inflated-bytes` may allow (2 GiB): one records area is held in memory whole, so
 * this bounds what reading one batch can take whatever the option says.
 */
export const MAX_INFLATED_BYTES_CEILING = 2 * 1024 * 1024 * 1024;

/** The environment variable through which the bound reaches worker threads (and may be set by hand). */
export const MAX_INFLATED_BYTES_ENV = 'KLX_MAX_INFLATED_BYTES';

/**
 * The bound set by {@link setMaxInflatedBytes} (or the environment), null for the default one.
 * Read from the environment when the module loads, so worker threads started after the option was
 * set use it too.
 */
let inflatedBytesOverride: number | null = parseMaxInflatedBytes(process.env[MAX_INFLATED_BYTES_ENV]);

/**
 * Worker threads already running (the app's scan, SQL-build and map-build pools) hear a new bound on
 * this channel; `unref` keeps it from holding a thread open. A thread picks it up between two tasks.
 */
const BOUND_CHANNEL = 'klx-max-inflated-bytes';
let boundSender: BroadcastChannel | null = null;
if (!isMainThread) {
  const listener = new BroadcastChannel(BOUND_CHANNEL);
  listener.onmessage = (event: unknown) => {
    // A thread's own broadcasts are not for it: its bound is already set (and a late one would undo a newer setting).
    const m = (event as { data: { from: number; bytes: unknown } }).data;
    if (m.from !== threadId) applyMaxInflatedBytes(typeof m.bytes === 'number' ? m.bytes : null);
  };
  listener.unref();
}

/**
 * Checks a `--max-inflated-bytes` value: a whole number of bytes from 1 to {@link MAX_INFLATED_BYTES_CEILING}.
 * @param text the value (a decimal number of bytes), undefined or empty for none.
 * @returns the bytes, or null when none is given.
 * @throws KlxError `invalid-argument` naming the option and the ceiling.
 */
export function parseMaxInflatedBytes(text: string | number | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = typeof text === 'number' ? text : /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INFLATED_BYTES_CEILING) {
    throw new KlxError('invalid-argument', `--max-inflated-bytes must be a number of bytes from 1 to ${MAX_INFLATED_BYTES_CEILING} (2 GiB: one records area is held in memory whole), got ${String(text)}`);
  }
  return n;
}

/**
 * Sets the decompression bound of this process: every records area may then inflate to `bytes`
 * (instead of recordsCount × max.message.bytes, at most {@link DECOMPRESSION_CEILING}); null goes
 * back to the default. Also sets {@link MAX_INFLATED_BYTES_ENV} so that worker threads started
 * afterwards use the same bound, and tells the running ones (a broadcast channel: they use it from
 * their next task on).
 * @param bytes 1 to {@link MAX_INFLATED_BYTES_CEILING}, or null.
 * @throws KlxError `invalid-argument` outside that range.
 */
export function setMaxInflatedBytes(bytes: number | null): void {
  inflatedBytesOverride = bytes === null ? null : parseMaxInflatedBytes(bytes);
  if (inflatedBytesOverride === null) delete process.env[MAX_INFLATED_BYTES_ENV];
  else process.env[MAX_INFLATED_BYTES_ENV] = String(inflatedBytesOverride);
  if (boundSender === null) {
    boundSender = new BroadcastChannel(BOUND_CHANNEL);
    boundSender.unref();
  }
  boundSender.postMessage({ from: threadId, bytes: inflatedBytesOverride });
}

/**
 * Sets the decompression bound of this thread only (no broadcast): the bound a task message
 * carries (`WorkerPool` sends the main thread's with every task, so a task never runs with a bound
 * older than the one set when it was submitted) or one heard on the broadcast channel. Also sets
 * {@link MAX_INFLATED_BYTES_ENV} in this thread's `process.env`, which worker threads it starts
 * afterwards copy (a `Worker` starts with its parent thread's environment, not the main thread's).
 * @param bytes 1 to {@link MAX_INFLATED_BYTES_CEILING} (not checked again: it was checked where set), or null.
 */
export function applyMaxInflatedBytes(bytes: number | null): void {
  inflatedBytesOverride = bytes;
  if (bytes === null) delete process.env[MAX_INFLATED_BYTES_ENV];
  else process.env[MAX_INFLATED_BYTES_ENV] = String(bytes);
}

/** The bound set by {@link setMaxInflatedBytes} (bytes), or null when the default applies. */
export function maxInflatedBytes(): number | null {
  return inflatedBytesOverride;
}

/**
 * The most bytes the records area of a batch may inflate to: `recordsCount` × the largest record
 * the topic's `max.message.bytes` permits uncompressed, at least one record's worth, and never more
 * than `ceiling`; or the bound set by {@link setMaxInflatedBytes} when that is larger (the option
 * raises the bound, it never makes a batch the default reads unread). This is klx's memory bound, not a Kafka rule: a broker checks only the compressed
 * batch against `max.message.bytes` (UnifiedLog.analyzeAndValidateRecords), so a record that compresses
 * well can be larger (a producer bounds it by `max.request.size`, KafkaProducer.ensureValidRecordSize).
 * @param recordCount the batch's recordsCount (negative or unknown: treated as 1).
 * @param maxMessageBytes the topic's `max.message.bytes` (bytes; default 1048588).
 * @param ceiling absolute ceiling in bytes (default {@link DECOMPRESSION_CEILING}).
 * @returns bytes.
 */
export function decompressionLimit(recordCount: number, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES, ceiling: number = DECOMPRESSION_CEILING): number {
  const n = Number.isFinite(recordCount) && recordCount > 1 ? recordCount : 1;
  const byDefault = Math.min(ceiling, n * Math.max(1, maxMessageBytes));
  // The option raises the bound, never lowers it: a batch the default reads stays read (review of stop 26).
  return inflatedBytesOverride !== null ? Math.max(inflatedBytesOverride, byDefault) : byDefault;
}

/**
 * The `decompression-limit` error: a batch this tool did not check because its records area would
 * inflate past the bound; not damage (a broker and a consumer have no such bound). Names the codec,
 * the claimed and allowed sizes (bytes) and the option that raises the bound.
 */
function limitError(codec: Compression, claimed: number | null, allowed: number): KlxError {
  const what = claimed === null ? `more than ${allowed} bytes` : `${claimed} bytes`;
  const how =
    allowed >= MAX_INFLATED_BYTES_CEILING
      ? `that is the most --max-inflated-bytes allows (2 GiB)`
      : `read it with --max-inflated-bytes <bytes> (up to ${MAX_INFLATED_BYTES_CEILING})`;
  return new KlxError(
    'decompression-limit',
    `not checked: its ${codec} records area would inflate to ${what}, past this tool's decompression bound of ${allowed} bytes (${inflatedBytesOverride !== allowed ? `recordsCount × max.message.bytes, at most ${DECOMPRESSION_CEILING}` : '--max-inflated-bytes'}); a limit of this tool, not damage (a broker and a consumer decompress record by record: DefaultRecordBatch, CompletedFetch); ${how}`,
    { details: { codec, claimedBytes: claimed, allowedBytes: allowed, notChecked: true } },
  );
}

/**
 * Decompresses a records area (or a legacy wrapper value), never producing more than `allowed`
 * bytes: the size the stream claims (gzip ISIZE, snappy preambles, the LZ4 and zstd frame and block
 * headers) is checked before anything is inflated, and gzip is also stopped as soon as its output
 * passes the limit, so memory stays within `allowed` whatever the input.
 * @param magic the format version, for the LZ4 header-checksum rule of §6.4.
 * @param allowed most output bytes (default {@link DECOMPRESSION_CEILING}; see {@link decompressionLimit}).
 * @returns the concatenated uncompressed bytes.
 * @throws KlxError `decompression-limit` (details: codec, claimedBytes, allowedBytes) when the
 *   output would pass `allowed`; `corrupt-batch` when the compressed stream is invalid. Neither has
 *   a file or position: the caller adds them.
 */
export function decompress(codec: Compression, data: Uint8Array, magic: number, allowed: number = DECOMPRESSION_CEILING): Buffer {
  const buf = asBuffer(data);
  try {
    switch (codec) {
      case 'none':
        return buf;
      case 'gzip': {
        // The ISIZE trailer may be damaged, so it is only named, not trusted: zlib stops as soon
        // as the output passes the limit.
        try {
          return gunzipSync(buf, { chunkSize: Math.min(gunzipChunkSize(buf), allowed + 1), maxOutputLength: Math.max(1, allowed) });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') throw err;
          const isize = buf.length >= 18 ? buf.readUInt32LE(buf.length - 4) : 0;
          throw limitError(codec, isize > allowed ? isize : null, allowed);
        }
      }
      case 'snappy': {
        return decompressSnappy(buf, allowed);
      }
      case 'lz4': {
        const bound = lz4OutputBound(buf);
        if (bound > allowed) throw limitError(codec, bound, allowed);
        return lz4DecompressFrame(withFixedLz4HeaderChecksum(buf, magic));
      }
      case 'zstd': {
        const bound = zstdOutputBound(buf);
        if (bound > allowed) throw limitError(codec, bound, allowed);
        return zstdDecompress(buf);
      }
    }
  } catch (err) {
    if (err instanceof KlxError) throw err;
    throw new KlxError('corrupt-batch', `${codec} data cannot be decompressed: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * One frame's contribution to an output bound: `end` is the byte after the frame, `bound` what it
 * inflates to at most; `done` ends the walk there (the framing is cut short or damaged).
 */
interface FrameBound {
  end: number;
  bound: number;
  done: boolean;
}

/** Skippable frames (LZ4 frame format §"Skippable frames", RFC 8878 §3.1.2): magic 0x184D2A5?. */
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

/**
 * Sums the output bounds of the concatenated frames of `buf` (bytes), skipping skippable frames,
 * and stopping at the first byte that is not a frame of `magic`. `frameAt(p)` reads the frame at
 * byte `p` (its magic already checked) and returns `null` when its header is cut short.
 */
function sumFrameBounds(buf: Buffer, magic: number, frameAt: (p: number) => FrameBound | null): number {
  let total = 0;
  let p = 0;
  while (p + 4 <= buf.length) {
    const word = buf.readUInt32LE(p);
    if ((word & SKIPPABLE_MAGIC_MASK) === SKIPPABLE_MAGIC) {
      if (p + 8 > buf.length) break;
      p += 8 + buf.readUInt32LE(p + 4);
      continue;
    }
    if (word !== magic) break;
    const frame = frameAt(p);
    if (frame === null) break;
    total += frame.bound;
    if (frame.done) break;
    p = frame.end;
  }
  return total;
}

/**
 * Upper bound of what an LZ4 frame (or concatenated frames) inflates to, from its headers only:
 * the content size when the frame declares it, else the number of blocks × the block maximum size
 * of its BD byte (an uncompressed block: its own size). Damaged framing ends the walk (the
 * decompressor then reports the damage).
 */
export function lz4OutputBound(buf: Buffer): number {
  return sumFrameBounds(buf, LZ4_MAGIC, (p) => {
    if (p + 7 > buf.length) return null;
    const flg = buf[p + 4]!;
    const bd = buf[p + 5]!;
    const blockMax = 1 << (8 + 2 * ((bd >> 4) & 0x07));
    const blockChecksum = (flg & 0x10) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    let q = p + 6;
    let declared = -1;
    if ((flg & 0x08) !== 0) {
      if (q + 8 > buf.length) return null;
      declared = Number(buf.readBigUInt64LE(q));
      q += 8;
    }
    if ((flg & 0x01) !== 0) q += 4;
    q += 1; // header checksum
    let frame = 0;
    for (;;) {
      if (q + 4 > buf.length) return { end: q, bound: Math.max(frame, declared), done: true };
      const word = buf.readUInt32LE(q);
      q += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      frame += (word & 0x80000000) !== 0 ? size : blockMax;
      q += size + (blockChecksum ? 4 : 0);
    }
    if (contentChecksum) q += 4;
    return { end: q, bound: Math.max(frame, declared), done: false };
  });
}

const ZSTD_MAGIC = 0xfd2fb528;
/** Largest output of one compressed zstd block (RFC 8878 §3.1.1.2.3: min(Window_Size, 128 KiB)). */
const ZSTD_BLOCK_MAX = 128 * 1024;

/**
 * Upper bound of what a zstd stream (frames and skippable frames) inflates to, from its headers
 * only (RFC 8878): the larger of the declared Frame_Content_Size and the sum over blocks of their
 * regenerated size (raw and RLE blocks: their Block_Size; compressed blocks: 128 KiB). Damaged
 * framing ends the walk (the decompressor then reports the damage).
 */
export function zstdOutputBound(buf: Buffer): number {
  return sumFrameBounds(buf, ZSTD_MAGIC, (p) => {
    if (p + 5 > buf.length) return null;
    const fhd = buf[p + 4]!;
    const fcsFlag = fhd >> 6;
    const single = (fhd & 0x20) !== 0;
    const checksum = (fhd & 0x04) !== 0;
    const dictFlag = fhd & 0x03;
    let q = p + 5 + (single ? 0 : 1) + [0, 1, 2, 4][dictFlag]!;
    const fcsBytes = fcsFlag === 0 ? (single ? 1 : 0) : 1 << fcsFlag;
    let declared = -1;
    if (fcsBytes > 0) {
      if (q + fcsBytes > buf.length) return null;
      declared = fcsBytes === 1 ? buf[q]! : fcsBytes === 2 ? buf.readUInt16LE(q) + 256 : fcsBytes === 4 ? buf.readUInt32LE(q) : Number(buf.readBigUInt64LE(q));
      q += fcsBytes;
    }
    let frame = 0;
    for (;;) {
      if (q + 3 > buf.length) return { end: q, bound: Math.max(frame, declared), done: true };
      const h = buf[q]! | (buf[q + 1]! << 8) | (buf[q + 2]! << 16);
      q += 3;
      const last = (h & 1) !== 0;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      if (type === 0) {
        frame += size;
        q += size;
      } else if (type === 1) {
        frame += size;
        q += 1;
      } else if (type === 2) {
        frame += ZSTD_BLOCK_MAX;
        q += size;
      } else {
        return { end: q, bound: Math.max(frame, declared), done: true };
      }
      if (last) break;
    }
    if (checksum) q += 4;
    return { end: q, bound: Math.max(frame, declared), done: false };
  });
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
  const buf = asBuffer(data);
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
function decompressSnappy(buf: Buffer, allowed: number): Buffer {
  if (buf.length < XERIAL_HEADER_SIZE || !buf.subarray(0, 8).equals(XERIAL_MAGIC)) {
    const claimed = snappyPreamble(buf, 0, buf.length);
    if (claimed > allowed) throw limitError('snappy', claimed, allowed);
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
    const claimed = total + snappyPreamble(buf, pos, pos + len);
    if (claimed > allowed) throw limitError('snappy', claimed, allowed);
    const part = snappyUncompress(buf.subarray(pos, pos + len)) as Buffer;
    parts.push(part);
    total += part.length;
    pos += len;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

/** The uncompressed length a raw snappy block declares (its leading varint, ≤ 2^32 − 1); 0 when unreadable. */
function snappyPreamble(buf: Buffer, from: number, to: number): number {
  let value = 0;
  for (let i = 0, mul = 1; i < 5 && from + i < to; i++, mul *= 128) {
    const b = buf[from + i]!;
    value += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) return value;
  }
  return 0;
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
