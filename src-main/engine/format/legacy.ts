/**
 * Legacy message sets, magic 0 and 1 (spec §8; Kafka's `LegacyRecord`, `AbstractLegacyRecordBatch`).
 *
 * Entry: offset int64 | messageSize int32 | crc uint32 (CRC-32 IEEE of [16, 12+messageSize)) |
 * magic int8 | attributes int8 | [v1: timestamp int64] | keyLength int32 | key | valueLength int32 | value.
 * A compressed wrapper (codec bits ≠ 0) holds, as its value, the compressed bytes of an inner
 * message set of uncompressed messages; its entry offset is the LAST inner offset. v0 inner offsets
 * are absolute; v1 inner offsets are relative (absolute = wrapper − lastRelative + relative).
 */
import { KlxError } from '../errors.ts';
import { compress, compressionForId, compressionId, decompress, xxh32 } from './compression.ts';
import { crc32ieee } from './crc.ts';
import { checkOffsetRange } from './record-batch.ts';
import { ATTR_COMPRESSION_MASK, ATTR_TIMESTAMP_TYPE, V0_MIN_MESSAGE_SIZE, V1_MIN_MESSAGE_SIZE, type BatchHeader, type Compression, type KafkaRecord, type TimestampType } from './types.ts';

interface LegacyMessage {
  offset: bigint;
  size: number;
  crc: number;
  magic: 0 | 1;
  attributes: number;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/**
 * Parses one legacy message at `off` (its full `12 + messageSize` bytes must be present).
 * @throws KlxError `batch-length-out-of-range` or `corrupt-batch` when key/value lengths overrun.
 */
function parseMessage(buf: Buffer, off: number, end: number): LegacyMessage {
  const offset = buf.readBigInt64BE(off);
  const size = buf.readInt32BE(off + 8);
  const magic = buf.readInt8(off + 16);
  if (magic !== 0 && magic !== 1) throw new KlxError('unknown-magic', `inner message has magic ${magic}`);
  const min = magic === 0 ? V0_MIN_MESSAGE_SIZE : V1_MIN_MESSAGE_SIZE;
  if (size < min || off + 12 + size > end) throw new KlxError('batch-length-out-of-range', `message size ${size} is out of range (minimum ${min}, ${end - off - 12} bytes available)`);
  const msgEnd = off + 12 + size;
  const attributes = buf.readInt8(off + 17) & 0xff;
  let p = off + 18;
  let timestamp = -1n;
  if (magic === 1) {
    timestamp = buf.readBigInt64BE(p);
    p += 8;
  }
  const readField = (): Uint8Array | null => {
    if (p + 4 > msgEnd) throw new KlxError('corrupt-batch', 'message field length runs past the message end');
    const len = buf.readInt32BE(p);
    p += 4;
    if (len < 0) return null;
    if (p + len > msgEnd) throw new KlxError('corrupt-batch', `message field of ${len} bytes runs past the message end`);
    const b = buf.subarray(p, p + len);
    p += len;
    return b;
  };
  const key = readField();
  const value = readField();
  if (p !== msgEnd) throw new KlxError('corrupt-batch', `message has ${msgEnd - p} bytes after its value`);
  return { offset, size, crc: buf.readUInt32BE(off + 12), magic, attributes, timestamp, key, value };
}

/**
 * Decodes a top-level legacy entry at `off` (exactly `12 + messageSize` bytes present): its header
 * and, for compressed wrappers, the inner records (needed for the first offset and the count).
 * @throws KlxError `unknown-codec`, `batch-length-out-of-range`, `corrupt-batch` (all with `position`).
 */
export function decodeLegacyEntry(buf: Buffer, off: number, position: number, verifyCrc: boolean): { header: BatchHeader; records: KafkaRecord[] } {
  try {
    const m = parseMessage(buf, off, off + 12 + buf.readInt32BE(off + 8));
    const codec = compressionForId(m.attributes & ATTR_COMPRESSION_MASK, m.magic);
    // Kafka `AbstractLegacyRecordBatch.timestampType`: NO_TIMESTAMP_TYPE for magic 0 (no timestamp field, −1).
    const timestampType: TimestampType = m.magic === 0 ? 'NoTimestampType' : (m.attributes & ATTR_TIMESTAMP_TYPE) !== 0 ? 'LogAppendTime' : 'CreateTime';
    const computedCrc = verifyCrc ? crc32ieee(buf.subarray(off + 16, off + 12 + m.size)) >>> 0 : undefined;
    const crcValid = computedCrc === undefined ? undefined : computedCrc === m.crc >>> 0;
    let records: KafkaRecord[];
    if (codec === 'none') {
      records = [{ offset: m.offset, timestamp: m.timestamp, attributes: m.attributes, key: m.key, value: m.value, headers: [], sizeInBytes: 12 + m.size }];
    } else {
      if (m.value === null) throw new KlxError('corrupt-batch', 'compressed wrapper message has a null value');
      const inner = decompress(codec, m.value, m.magic);
      const msgs: LegacyMessage[] = [];
      for (let p = 0; p < inner.length; ) {
        if (p + 17 > inner.length) throw new KlxError('corrupt-batch', `inner message set has ${inner.length - p} trailing bytes`);
        const im = parseMessage(inner, p, inner.length);
        if ((im.attributes & ATTR_COMPRESSION_MASK) !== 0) throw new KlxError('corrupt-batch', 'nested compression inside a wrapper message');
        msgs.push(im);
        p += 12 + im.size;
      }
      if (msgs.length === 0) throw new KlxError('corrupt-batch', 'compressed wrapper message holds no inner messages');
      const lastRel = msgs[msgs.length - 1]!.offset;
      records = msgs.map((im) => ({
        offset: m.magic === 1 ? m.offset - lastRel + im.offset : im.offset,
        timestamp: timestampType === 'LogAppendTime' ? m.timestamp : im.timestamp,
        attributes: im.attributes,
        key: im.key,
        value: im.value,
        headers: [],
        sizeInBytes: 12 + im.size,
      }));
    }
    const baseOffset = records[0]!.offset;
    checkOffsetRange(baseOffset, m.offset, position);
    const header: BatchHeader = {
      position,
      size: 12 + m.size,
      magic: m.magic,
      baseOffset,
      lastOffset: m.offset,
      lastOffsetDelta: Number(m.offset - baseOffset),
      batchLength: m.size,
      partitionLeaderEpoch: -1,
      crc: m.crc,
      crcValid,
      ...(computedCrc !== undefined ? { computedCrc } : {}),
      attributes: m.attributes,
      compression: codec,
      timestampType,
      isTransactional: false,
      isControl: false,
      hasDeleteHorizon: false,
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
      baseTimestamp: records[0]!.timestamp,
      maxTimestamp: m.timestamp,
      recordCount: records.length,
      legacyTimestamp: m.timestamp,
    };
    return { header, records };
  } catch (err) {
    if (err instanceof KlxError && err.position === undefined) throw new KlxError(err.code, err.reason, { position, cause: err });
    throw err;
  }
}

/** One legacy message to encode. */
export interface LegacyRecordSpec {
  offset: bigint;
  /** Ignored for magic 0. */
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

function encodeMessage(magic: 0 | 1, offset: bigint, attributes: number, timestamp: bigint, key: Uint8Array | null, value: Uint8Array | null): Buffer {
  const size = (magic === 0 ? V0_MIN_MESSAGE_SIZE : V1_MIN_MESSAGE_SIZE) + (key?.length ?? 0) + (value?.length ?? 0);
  const out = Buffer.alloc(12 + size);
  out.writeBigInt64BE(offset, 0);
  out.writeInt32BE(size, 8);
  out.writeInt8(magic, 16);
  out.writeUInt8(attributes & 0xff, 17);
  let p = 18;
  if (magic === 1) {
    out.writeBigInt64BE(timestamp, p);
    p += 8;
  }
  for (const f of [key, value]) {
    if (f === null) out.writeInt32BE(-1, p), (p += 4);
    else {
      out.writeInt32BE(f.length, p);
      out.set(f, p + 4);
      p += 4 + f.length;
    }
  }
  out.writeUInt32BE(crc32ieee(out.subarray(16)), 12);
  return out;
}

/**
 * Encodes legacy entries the way a 0.10-era broker stored them: uncompressed, one entry per message;
 * compressed, one wrapper whose inner offsets are absolute (v0) or relative (v1). Used to build
 * test inputs (the writer emits only v2).
 * @param timestampType v1 wrappers only; LogAppendTime sets attribute bit 3 and `wrapperTimestamp`.
 */
export function encodeLegacy(magic: 0 | 1, compression: Compression, records: LegacyRecordSpec[], opts: { timestampType?: TimestampType; wrapperTimestamp?: bigint } = {}): Buffer {
  if (compression === 'none') return Buffer.concat(records.map((r) => encodeMessage(magic, r.offset, 0, r.timestamp, r.key, r.value)));
  if (records.length === 0) throw new KlxError('invalid-record', 'a compressed wrapper needs at least one message');
  const first = records[0]!.offset;
  const inner = Buffer.concat(records.map((r) => encodeMessage(magic, magic === 1 ? r.offset - first : r.offset, 0, r.timestamp, r.key, r.value)));
  let compressed = compress(compression, inner);
  if (magic === 0 && compression === 'lz4') {
    // Java writes magic-0 LZ4 frames with the pre-KIP-57 header checksum (over the magic bytes too).
    compressed = Buffer.from(compressed);
    compressed[6] = (xxh32(compressed.subarray(0, 6), 0) >>> 8) & 0xff;
  }
  let attributes = compressionId(compression);
  let ts = -1n;
  for (const r of records) if (r.timestamp > ts) ts = r.timestamp;
  if (opts.timestampType === 'LogAppendTime') {
    attributes |= ATTR_TIMESTAMP_TYPE;
    ts = opts.wrapperTimestamp ?? ts;
  }
  return encodeMessage(magic, records[records.length - 1]!.offset, attributes, ts, null, compressed);
}
