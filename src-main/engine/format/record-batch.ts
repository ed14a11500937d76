/**
 * RecordBatch magic v2: header (61 bytes), records (spec §4, §5) and encoding (spec §16 writer
 * checklist). Follows Kafka's `DefaultRecordBatch`, `DefaultRecord` and `MemoryRecordsBuilder`.
 *
 * Layout: baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 |
 * crc uint32 (CRC-32C of [21, end)) | attributes int16 | lastOffsetDelta int32 |
 * baseTimestamp int64 | maxTimestamp int64 | producerId int64 | producerEpoch int16 |
 * baseSequence int32 | recordsCount int32 | records (compressed as one stream when codec ≠ none).
 */
import { KlxError } from '../errors.ts';
import { compress, compressionForId, compressionId, decompress } from './compression.ts';
import { decodeControlRecord } from './control.ts';
import { crc32c } from './crc.ts';
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_DELETE_HORIZON,
  ATTR_TIMESTAMP_TYPE,
  ATTR_TRANSACTIONAL,
  V2_HEADER_SIZE,
  type BatchHeader,
  type Compression,
  type KafkaRecord,
  type RecordHeader,
  type TimestampType,
} from './types.ts';
import { ByteWriter, readVarint, readVarlong, toBigInt, type Cursor } from './varint.ts';

const textDecoder = new TextDecoder('utf-8');
const textEncoder = new TextEncoder();

/**
 * Decodes the 61-byte header of a v2 batch that starts at `off` in `buf`.
 * The caller has checked that `size` bytes (12 + batchLength) are present from `off`.
 * @param position the batch's byte position in its file (reported, not used for reading).
 * @param verifyCrc compute CRC-32C over [21, size) and set `crcValid`.
 * @throws KlxError `unknown-codec` for codec bits 5–7 (message names the codec id and baseOffset).
 */
export function decodeV2Header(buf: Buffer, off: number, position: number, verifyCrc: boolean): BatchHeader {
  const baseOffset = buf.readBigInt64BE(off);
  const batchLength = buf.readInt32BE(off + 8);
  const size = batchLength + 12;
  const attributes = buf.readInt16BE(off + 21);
  const codecId = attributes & ATTR_COMPRESSION_MASK;
  let compression: Compression;
  try {
    compression = compressionForId(codecId, 2);
  } catch (err) {
    throw new KlxError('unknown-codec', `unknown compression codec id ${codecId} in the batch at baseOffset ${baseOffset}`, { position, details: { codecId, baseOffset: baseOffset.toString() }, cause: err });
  }
  const crc = buf.readUInt32BE(off + 17);
  const lastOffsetDelta = buf.readInt32BE(off + 23);
  return {
    position,
    size,
    magic: 2,
    baseOffset,
    lastOffset: baseOffset + BigInt(lastOffsetDelta),
    lastOffsetDelta,
    batchLength,
    partitionLeaderEpoch: buf.readInt32BE(off + 12),
    crc,
    crcValid: verifyCrc ? crc32c(buf.subarray(off + 21, off + size)) === crc : undefined,
    attributes,
    compression,
    timestampType: (attributes & ATTR_TIMESTAMP_TYPE) !== 0 ? 'LogAppendTime' : 'CreateTime',
    isTransactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
    isControl: (attributes & ATTR_CONTROL) !== 0,
    hasDeleteHorizon: (attributes & ATTR_DELETE_HORIZON) !== 0,
    baseTimestamp: buf.readBigInt64BE(off + 27),
    maxTimestamp: buf.readBigInt64BE(off + 35),
    producerId: buf.readBigInt64BE(off + 43),
    producerEpoch: buf.readInt16BE(off + 51),
    baseSequence: buf.readInt32BE(off + 53),
    recordCount: buf.readInt32BE(off + 57),
  };
}

/**
 * Decodes the records of a v2 batch.
 * @param entry the whole batch (exactly `header.size` bytes, starting at baseOffset).
 * @returns records with absolute offsets and timestamps (LogAppendTime: every record reads as
 *   maxTimestamp), control info on control batches.
 * @throws KlxError `corrupt-batch` (with the batch position) when a record overruns its length, the
 *   count does not match the records area, or decompression fails.
 */
export function decodeV2Records(header: BatchHeader, entry: Uint8Array): KafkaRecord[] {
  const count = header.recordCount;
  if (count < 0) throw new KlxError('corrupt-batch', `negative recordsCount ${count} in the batch at baseOffset ${header.baseOffset}`, { position: header.position });
  const area = entry.subarray(V2_HEADER_SIZE, header.size);
  let data: Uint8Array;
  try {
    data = header.compression === 'none' ? area : decompress(header.compression, area, 2);
  } catch (err) {
    throw new KlxError('corrupt-batch', `batch at baseOffset ${header.baseOffset}: ${(err as KlxError).reason ?? (err as Error).message}`, { position: header.position, cause: err });
  }
  const c: Cursor = { buf: data, pos: 0, end: data.length };
  const records: KafkaRecord[] = new Array(count);
  const logAppend = header.timestampType === 'LogAppendTime';
  try {
    for (let i = 0; i < count; i++) {
      const length = readVarint(c);
      const start = c.pos;
      const end = start + length;
      if (length < 0 || end > data.length) throw new KlxError('corrupt-batch', `record ${i} declares ${length} bytes but only ${data.length - start} remain`);
      const recEnd = c.end;
      c.end = end;
      const attributes = data[c.pos++]!;
      const timestampDelta = readVarlong(c);
      const offsetDelta = readVarint(c);
      const key = readBytes(c);
      const value = readBytes(c);
      const headerCount = readVarint(c);
      if (headerCount < 0) throw new KlxError('corrupt-batch', `record ${i} has a negative header count ${headerCount}`);
      const headers: RecordHeader[] = headerCount === 0 ? [] : new Array(headerCount);
      for (let h = 0; h < headerCount; h++) {
        const keyLen = readVarint(c);
        if (keyLen < 0 || c.pos + keyLen > c.end) throw new KlxError('corrupt-batch', `record ${i} header ${h} has an invalid key length ${keyLen}`);
        const hk = textDecoder.decode(data.subarray(c.pos, c.pos + keyLen));
        c.pos += keyLen;
        headers[h] = { key: hk, value: readBytes(c) };
      }
      if (c.pos !== end) throw new KlxError('corrupt-batch', `record ${i} declares ${length} bytes but its fields take ${c.pos - start}`);
      c.end = recEnd;
      const rec: KafkaRecord = {
        offset: header.baseOffset + toBigInt(offsetDelta),
        timestamp: logAppend ? header.maxTimestamp : header.baseTimestamp + timestampDelta,
        attributes,
        key,
        value,
        headers,
        timestampDelta,
        offsetDelta,
        sizeInBytes: length + varintLen(length),
      };
      if (header.isControl) rec.control = decodeControlRecord(key, value);
      records[i] = rec;
    }
  } catch (err) {
    if (err instanceof KlxError && err.position === undefined) {
      throw new KlxError(err.code, `batch at baseOffset ${header.baseOffset}: ${err.reason}`, { position: header.position, cause: err });
    }
    throw err;
  }
  if (c.pos !== data.length) {
    throw new KlxError('corrupt-batch', `batch at baseOffset ${header.baseOffset}: ${data.length - c.pos} bytes left in the records area after ${count} records`, { position: header.position });
  }
  return records;
}

function varintLen(n: number): number {
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  let len = 1;
  while (u >= 0x80) {
    u >>>= 7;
    len++;
  }
  return len;
}

function readBytes(c: Cursor): Uint8Array | null {
  const len = readVarint(c);
  if (len < 0) return null;
  if (c.pos + len > c.end) throw new KlxError('corrupt-batch', `a field of ${len} bytes runs past the end of its record`);
  // A plain Uint8Array view: Buffer#subarray (a FastBuffer subclass instance) costs twice as much,
  // and keys/values are typed Uint8Array anyway.
  const b = new Uint8Array(c.buf.buffer, c.buf.byteOffset + c.pos, len);
  c.pos += len;
  return b;
}

/** One record to encode. */
export interface RecordSpec {
  /** Offset relative to the batch baseOffset; defaults to the record's index. */
  offsetDelta?: number;
  /** CreateTime timestamp (ms). For LogAppendTime batches give `timestampDelta` instead if the original deltas must be kept. */
  timestamp: bigint;
  /** Explicit timestampDelta, overriding `timestamp − baseTimestamp`. */
  timestampDelta?: bigint;
  key: Uint8Array | string | null;
  value: Uint8Array | string | null;
  headers?: { key: string; value: Uint8Array | string | null }[];
  /** Record attributes byte (0). */
  attributes?: number;
}

/** Everything needed to write one v2 batch. Defaults are what a fresh producer/broker writes. */
export interface BatchSpec {
  baseOffset: bigint;
  records: RecordSpec[];
  /** Default 0 (a fresh single-node log). */
  partitionLeaderEpoch?: number;
  compression?: Compression;
  timestampType?: TimestampType;
  isTransactional?: boolean;
  isControl?: boolean;
  /** When set, attribute bit 6 is set and baseTimestamp = deleteHorizon (spec §13.6). */
  deleteHorizon?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  /** Default: the last record's offsetDelta (0 for an empty batch). Compaction keeps the original. */
  lastOffsetDelta?: number;
  /** Default: first record's timestamp (or the horizon); −1 for an empty batch. */
  baseTimestamp?: bigint;
  /** Default: max record timestamp (CreateTime). Required for LogAppendTime and empty batches. */
  maxTimestamp?: bigint;
}

/**
 * Encodes one v2 batch exactly as Kafka writes it (big-endian header, CRC-32C over [21, end),
 * batchLength = size − 12). Spec §15.1–§15.8 are reproduced byte for byte.
 * @throws KlxError `invalid-record` when offsetDeltas are not strictly increasing or a header key is null.
 */
export function encodeBatch(spec: BatchSpec): Buffer {
  const records = spec.records;
  const compression = spec.compression ?? 'none';
  const timestampType = spec.timestampType ?? 'CreateTime';
  let maxTs = -1n;
  for (const r of records) if (r.timestamp > maxTs) maxTs = r.timestamp;
  const firstTs = records.length > 0 ? records[0]!.timestamp : -1n;
  const baseTimestamp = spec.deleteHorizon ?? spec.baseTimestamp ?? firstTs;
  const maxTimestamp = spec.maxTimestamp ?? maxTs;

  const body = new ByteWriter(64 + records.length * 32);
  let prevDelta = -1;
  let lastDelta = 0;
  records.forEach((r, i) => {
    const offsetDelta = r.offsetDelta ?? i;
    if (offsetDelta <= prevDelta) throw new KlxError('invalid-record', `offsetDelta ${offsetDelta} of record ${i} is not above the previous ${prevDelta}`);
    prevDelta = offsetDelta;
    lastDelta = offsetDelta;
    const tsDelta = r.timestampDelta ?? r.timestamp - baseTimestamp;
    writeRecord(body, r.attributes ?? 0, tsDelta, offsetDelta, toBytes(r.key), toBytes(r.value), r.headers ?? []);
  });
  const uncompressed = body.result();
  const recordsArea = compression === 'none' ? uncompressed : compress(compression, uncompressed);

  const size = V2_HEADER_SIZE + recordsArea.length;
  const out = Buffer.allocUnsafe(size);
  out.writeBigInt64BE(spec.baseOffset, 0);
  out.writeInt32BE(size - 12, 8);
  out.writeInt32BE(spec.partitionLeaderEpoch ?? 0, 12);
  out.writeInt8(2, 16);
  let attributes = compressionId(compression);
  if (timestampType === 'LogAppendTime') attributes |= ATTR_TIMESTAMP_TYPE;
  if (spec.isTransactional) attributes |= ATTR_TRANSACTIONAL;
  if (spec.isControl) attributes |= ATTR_CONTROL;
  if (spec.deleteHorizon !== undefined) attributes |= ATTR_DELETE_HORIZON;
  out.writeInt16BE(attributes, 21);
  out.writeInt32BE(spec.lastOffsetDelta ?? lastDelta, 23);
  out.writeBigInt64BE(baseTimestamp, 27);
  out.writeBigInt64BE(maxTimestamp, 35);
  out.writeBigInt64BE(spec.producerId ?? -1n, 43);
  out.writeInt16BE(spec.producerEpoch ?? -1, 51);
  out.writeInt32BE(spec.baseSequence ?? -1, 53);
  out.writeInt32BE(records.length, 57);
  out.set(recordsArea, V2_HEADER_SIZE);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

function toBytes(v: Uint8Array | string | null): Uint8Array | null {
  if (v === null) return null;
  return typeof v === 'string' ? textEncoder.encode(v) : v;
}

function writeRecord(
  w: ByteWriter,
  attributes: number,
  timestampDelta: bigint,
  offsetDelta: number,
  key: Uint8Array | null,
  value: Uint8Array | null,
  headers: { key: string; value: Uint8Array | string | null }[],
): void {
  // Body first into a scratch writer so the length prefix can be written before it.
  const b = new ByteWriter(32 + (key?.length ?? 0) + (value?.length ?? 0));
  b.int8(attributes);
  b.varlong(timestampDelta);
  b.varint(offsetDelta);
  if (key === null) b.varint(-1);
  else {
    b.varint(key.length);
    b.bytes(key);
  }
  if (value === null) b.varint(-1);
  else {
    b.varint(value.length);
    b.bytes(value);
  }
  b.varint(headers.length);
  for (const h of headers) {
    if (h.key === null || h.key === undefined) throw new KlxError('invalid-record', 'a record header key must not be null');
    const hk = textEncoder.encode(h.key);
    b.varint(hk.length);
    b.bytes(hk);
    const hv = toBytes(h.value);
    if (hv === null) b.varint(-1);
    else {
      b.varint(hv.length);
      b.bytes(hv);
    }
  }
  const bodyBytes = b.result();
  w.varint(bodyBytes.length);
  w.bytes(bodyBytes);
}
