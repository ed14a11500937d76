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
import { asBuffer } from './bytes.ts';
import { compress, compressionForId, compressionId, decompress, decompressionLimit, DEFAULT_MAX_MESSAGE_BYTES } from './compression.ts';
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
  type ControlRecordInfo,
  type KafkaRecord,
  type RecordHeader,
  type TimestampType,
} from './types.ts';
import { ByteWriter, readVarint, readVarlong, sizeOfVarint, toBigInt } from './varint.ts';

const textDecoder = new TextDecoder('utf-8');

/** Smallest v2 record in bytes: length, attributes, timestampDelta, offsetDelta, key length, value length, header count (one byte each). */
export const MIN_RECORD_SIZE = 7;
const textEncoder = new TextEncoder();

/** Long.MAX_VALUE: the largest offset; the log end offset after a batch must not pass it. */
export const INT64_MAX = (1n << 63n) - 1n;

/** Long.MIN_VALUE. */
const INT64_MIN = -(1n << 63n);

/**
 * Refuses a batch whose offsets leave the int64 range: its lastOffset + 1 (the log end offset after
 * it) must be at most 2^63 − 1, as every offset Kafka hands out is (`UnifiedLog` assigns
 * `logEndOffset`, a `long`), and its lastOffset (baseOffset + a negative lastOffsetDelta) at least
 * −2^63 (`DefaultRecordBatch.lastOffset` is `long` arithmetic, which would wrap there).
 * @throws KlxError `offset-overflow` with the batch position and both offsets in details.
 */
export function checkOffsetRange(baseOffset: bigint, lastOffset: bigint, position: number): void {
  if (lastOffset < INT64_MIN) {
    throw new KlxError('offset-overflow', `batch at baseOffset ${baseOffset} ends at offset ${lastOffset}: below −2^63 (Long.MIN_VALUE), where DefaultRecordBatch.lastOffset's long arithmetic wraps; no broker writes it`, {
      position,
      details: { baseOffset: baseOffset.toString(), lastOffset: lastOffset.toString() },
    });
  }
  if (lastOffset >= INT64_MAX) {
    throw new KlxError('offset-overflow', `batch at baseOffset ${baseOffset} ends at offset ${lastOffset}: the next offset would be past 2^63 − 1 (Long.MAX_VALUE), which no broker can write`, {
      position,
      details: { baseOffset: baseOffset.toString(), lastOffset: lastOffset.toString() },
    });
  }
}

/**
 * The int64 at `off` (big-endian) as a bigint: one BigInt made from a safe number when the value is
 * within ±2^53 (offsets, timestamps and producer ids in practice), else Buffer.readBigInt64BE.
 */
function int64At(buf: Buffer, off: number): bigint {
  const hi = (buf[off]! << 24) | (buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!;
  if (hi >= -2097152 && hi < 2097152) {
    const lo = ((buf[off + 4]! << 24) | (buf[off + 5]! << 16) | (buf[off + 6]! << 8) | buf[off + 7]!) >>> 0;
    return BigInt(hi * 4294967296 + lo);
  }
  return buf.readBigInt64BE(off);
}

function int32At(buf: Buffer, off: number): number {
  return (buf[off]! << 24) | (buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!;
}

function int16At(buf: Buffer, off: number): number {
  return (((buf[off]! << 8) | buf[off + 1]!) << 16) >> 16;
}

/**
 * Decodes the 61-byte header of a v2 batch that starts at `off` in `buf`.
 * The caller has checked that `size` bytes (12 + batchLength) are present from `off`.
 * `crcValid` and `computedCrc` are set only when the CRC is checked (`crcValid` undefined otherwise).
 * @param position the batch's byte position in its file (reported, not used for reading).
 * @param verifyCrc compute CRC-32C over [21, size) and set `crcValid`.
 * @throws KlxError `unknown-codec` for codec bits 5–7 (message names the codec id and baseOffset).
 */
export function decodeV2Header(buf: Buffer, off: number, position: number, verifyCrc: boolean): BatchHeader {
  if (off < 0 || off + V2_HEADER_SIZE > buf.length) throw new RangeError(`a batch header needs ${V2_HEADER_SIZE} bytes from ${off}; the buffer has ${buf.length}`);
  const baseOffset = int64At(buf, off);
  const batchLength = int32At(buf, off + 8);
  const size = batchLength + 12;
  const attributes = int16At(buf, off + 21);
  const codecId = attributes & ATTR_COMPRESSION_MASK;
  let compression: Compression;
  try {
    compression = compressionForId(codecId, 2);
  } catch (err) {
    throw new KlxError('unknown-codec', `unknown compression codec id ${codecId} in the batch at baseOffset ${baseOffset}`, { position, details: { codecId, baseOffset: baseOffset.toString() }, cause: err });
  }
  const crc = int32At(buf, off + 17) >>> 0;
  const lastOffsetDelta = int32At(buf, off + 23);
  const lastOffset = baseOffset + BigInt(lastOffsetDelta);
  checkOffsetRange(baseOffset, lastOffset, position);
  const partitionLeaderEpoch = int32At(buf, off + 12);
  const timestampType: TimestampType = (attributes & ATTR_TIMESTAMP_TYPE) !== 0 ? 'LogAppendTime' : 'CreateTime';
  const isTransactional = (attributes & ATTR_TRANSACTIONAL) !== 0;
  const isControl = (attributes & ATTR_CONTROL) !== 0;
  const hasDeleteHorizon = (attributes & ATTR_DELETE_HORIZON) !== 0;
  const baseTimestamp = int64At(buf, off + 27);
  const maxTimestamp = int64At(buf, off + 35);
  const producerId = int64At(buf, off + 43);
  const producerEpoch = int16At(buf, off + 51);
  const baseSequence = int32At(buf, off + 53);
  const recordCount = int32At(buf, off + 57);
  if (!verifyCrc) {
    return { position, size, magic: 2, baseOffset, lastOffset, lastOffsetDelta, batchLength, partitionLeaderEpoch, crc, crcValid: undefined, attributes, compression, timestampType, isTransactional, isControl, hasDeleteHorizon, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount };
  }
  const computedCrc = crc32c(buf.subarray(off + 21, off + size)) >>> 0;
  return { position, size, magic: 2, baseOffset, lastOffset, lastOffsetDelta, batchLength, partitionLeaderEpoch, crc, crcValid: computedCrc === crc, computedCrc, attributes, compression, timestampType, isTransactional, isControl, hasDeleteHorizon, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount };
}

/**
 * Decodes the records of a v2 batch.
 *
 * The records area is walked once, eagerly, and every record's framing checked exactly as Kafka's
 * `DefaultRecord.readFrom` does (so damage is reported here, not on first use), but each record is
 * returned as a small {@link V2Record}: its fields are prototype getters that read them from the
 * batch's bytes when accessed (offset and timestamp as bigint, key/value as fresh `Uint8Array`
 * views, headers decoded and cached on first access). Control records are decoded eagerly.
 *
 * @param entry the whole batch (exactly `header.size` bytes, starting at baseOffset).
 * @param maxMessageBytes the topic's `max.message.bytes`: with recordsCount it bounds what the
 *   records area may inflate to ({@link decompressionLimit}).
 * @returns records with absolute offsets and timestamps (LogAppendTime: every record reads as
 *   maxTimestamp), control info on control batches.
 * @throws KlxError (with the batch position) `decompression-limit` when the compressed area would
 *   inflate past that bound; `corrupt-batch` when a record overruns its length, the count does not
 *   match the records area (or cannot fit in it), or decompression fails.
 */
export function decodeV2Records(header: BatchHeader, entry: Uint8Array, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): KafkaRecord[] {
  const count = header.recordCount;
  const data = inflateRecordsArea(header, entry, maxMessageBytes);
  const records: KafkaRecord[] = new Array(count);
  walkWholeRecordsArea(header, data, count, () => walkRecords(header, data, records));
  return records;
}

/**
 * The records of a v2 batch one at a time, for scans over batches of any record count (verify,
 * search, counts): the records area is decompressed once (within {@link decompressionLimit}) and
 * checked whole before this returns (every record, as {@link decodeV2Records} checks them, but
 * without making an object per record), then the iterable makes one lazy record per step, which
 * the caller drops before the next. Memory: the records area, not the record count (a batch of 5 M
 * tiny records decoded by {@link decodeV2Records} holds 5 M objects at once).
 * @param entry the whole batch (exactly `header.size` bytes).
 * @returns an iterable over the records in offset order (iterable more than once).
 * @throws KlxError (with the batch position) as {@link decodeV2Records}, eagerly.
 */
export function streamV2Records(header: BatchHeader, entry: Uint8Array, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): Iterable<KafkaRecord> & { readonly count: number } {
  const data = inflateRecordsArea(header, entry, maxMessageBytes);
  const count = header.recordCount;
  checkRecordsArea(header, data, count);
  const shared = new RecordsArea(header, data);
  const control = header.isControl;
  return {
    count,
    *[Symbol.iterator](): Generator<KafkaRecord> {
      const d = shared.data;
      let pos = 0;
      for (let i = 0; i < count; i++) {
        const recStart = pos;
        const length = checkedVarint(d, pos);
        const start = after;
        // attributes (1 byte), then the timestampDelta varlong.
        const offsetDelta = checkedVarint(d, skipCheckedVarint(d, start + 1));
        const keyAt = after;
        pos = start + length;
        yield control ? new V2ControlRecord(shared, recStart, offsetDelta, keyAt) : new V2Record(shared, recStart, offsetDelta, keyAt);
      }
    },
  };
}

/**
 * Checks a v2 batch's records without decoding them into objects (see {@link streamV2Records}).
 * @returns the number of records (recordsCount, now known to match the records area).
 * @throws KlxError (with the batch position) as {@link decodeV2Records}.
 */
export function checkV2Records(header: BatchHeader, entry: Uint8Array, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): number {
  checkRecordsArea(header, inflateRecordsArea(header, entry, maxMessageBytes), header.recordCount);
  return header.recordCount;
}

/**
 * Walks the records of a v2 batch whose records area `data` came from {@link inflateRecordsArea},
 * reporting each record to `visit` without making an object per record (the SQL build's columns,
 * `segment-rows.ts`), with every check and error of {@link decodeV2Records} (Kafka's
 * `DefaultRecord.readFrom`, then no bytes left after the last record). Records before a corrupt
 * one have been visited when it throws: the caller drops them.
 * @throws KlxError `corrupt-batch` with the batch's position, as {@link decodeV2Records}.
 */
export function visitV2Records(header: BatchHeader, data: Uint8Array, visit: V2RecordVisitor): void {
  const count = header.recordCount;
  walkWholeRecordsArea(header, data, count, () => walkV2Records(data, count, visit));
}

/** Walks a decompressed records area with no visitor; errors as {@link decodeV2Records} gives them. */
function checkRecordsArea(header: BatchHeader, data: Uint8Array, count: number): void {
  walkWholeRecordsArea(header, data, count, () => {
    // Its own loop (no visitor call per record: one call site shared by every visitor is not inlined).
    const len = data.length;
    let pos = 0;
    for (let i = 0; i < count; i++) pos = checkRecordAt(data, pos, len, i);
    return pos;
  });
}

/**
 * Runs `walk` over a decompressed records area of `count` records and checks that it ended exactly
 * at the area's end (Kafka's `DefaultRecordBatch` iterator fails on bytes left after the last
 * record). An error the walk raised without a position gets the batch's position and baseOffset.
 * @param walk returns the byte position (in `data`) where the last record ended.
 * @throws KlxError `corrupt-batch` (position = the batch's) for bytes left over; the walk's errors.
 */
function walkWholeRecordsArea(header: BatchHeader, data: Uint8Array, count: number, walk: () => number): void {
  let pos: number;
  try {
    pos = walk();
  } catch (err) {
    if (err instanceof KlxError && err.position === undefined) {
      throw new KlxError(err.code, `batch at baseOffset ${header.baseOffset}: ${err.reason}`, { position: header.position, cause: err });
    }
    throw err;
  }
  if (pos !== data.length) {
    throw new KlxError('corrupt-batch', `batch at baseOffset ${header.baseOffset}: ${data.length - pos} bytes left in the records area after ${count} records`, { position: header.position });
  }
}

/**
 * The records area of a v2 batch, decompressed within {@link decompressionLimit} (recordsCount ×
 * `max.message.bytes`, at most the absolute ceiling), after checking that recordsCount can fit in
 * it, so that callers may size arrays from the count.
 * @param entry the whole batch (exactly `header.size` bytes).
 * @param maxMessageBytes the topic's `max.message.bytes` (bytes).
 * @returns the uncompressed records area (a view of `entry` when the codec is none).
 * @throws KlxError with the batch position: `decompression-limit` (details: codec, claimedBytes,
 *   allowedBytes), `corrupt-batch` (negative count, a count that cannot fit, invalid stream).
 */
export function inflateRecordsArea(header: BatchHeader, entry: Uint8Array, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): Buffer {
  const count = header.recordCount;
  if (count < 0) throw new KlxError('corrupt-batch', `negative recordsCount ${count} in the batch at baseOffset ${header.baseOffset}`, { position: header.position });
  const area = entry.subarray(V2_HEADER_SIZE, header.size);
  let data: Buffer;
  try {
    data = header.compression === 'none' ? asBuffer(area) : decompress(header.compression, area, 2, decompressionLimit(count, maxMessageBytes));
  } catch (err) {
    const k = err instanceof KlxError ? err : null;
    throw new KlxError(k?.code ?? 'corrupt-batch', `batch at baseOffset ${header.baseOffset}: ${k?.reason ?? (err as Error).message}`, { position: header.position, details: k?.details, cause: err });
  }
  if (count > data.length / MIN_RECORD_SIZE) {
    // Never size an array from a header count: a record takes at least 7 bytes.
    throw new KlxError('corrupt-batch', `batch at baseOffset ${header.baseOffset}: recordsCount ${count} cannot fit in a records area of ${data.length} bytes (a record takes at least ${MIN_RECORD_SIZE})`, { position: header.position });
  }
  return data;
}

/**
 * How many records of a batch whose CRC fails can actually be read: its header (recordsCount,
 * lastOffsetDelta) is not verified, so a count is taken from its bytes instead: the record frames
 * (length varint + that many bytes) found one after the other in its records area (inflated, within
 * the same bound as {@link inflateRecordsArea}), at most recordsCount. 0 when the area cannot be
 * inflated. Magic 0/1 entries are one message each (their `recordCount`, computed when read).
 * Kafka's consumer never counts these records: it throws CorruptRecordException at the batch
 * (CompletedFetch.maybeEnsureValid).
 * @param entry the whole batch (`header.size` bytes). @returns a count ≤ recordsCount and ≤ records area bytes / 7.
 */
export function readableRecordCount(header: BatchHeader, entry: Uint8Array, maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): number {
  if (header.magic !== 2) return header.recordCount;
  const count = header.recordCount;
  if (count <= 0 || entry.length < V2_HEADER_SIZE) return 0;
  const area = entry.subarray(V2_HEADER_SIZE, Math.min(header.size, entry.length));
  let data: Uint8Array;
  try {
    data = header.compression === 'none' ? area : decompress(header.compression, area, 2, decompressionLimit(Math.min(count, Math.floor(maxMessageBytes / MIN_RECORD_SIZE)), maxMessageBytes));
  } catch {
    return 0;
  }
  const buf = asBuffer(data);
  let n = 0;
  let pos = 0;
  while (n < count && pos < buf.length) {
    const c = { buf, pos, end: buf.length };
    let len: number;
    try {
      len = readVarint(c);
    } catch {
      break;
    }
    if (len < MIN_RECORD_SIZE - 1 || c.pos + len > buf.length) break;
    pos = c.pos + len;
    n++;
  }
  return n;
}

/** What the records of one batch share: the decoded records area and the batch fields they need. */
class RecordsArea {
  /** The records area, as a plain Uint8Array (element reads on a Buffer subclass instance are slower). */
  readonly data: Uint8Array;
  /** `data.buffer` and `data.byteOffset`, read once: those accessors cost more than making a view. */
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly baseOffset: bigint;
  /** Timestamp of every record of a LogAppendTime batch; null for CreateTime. */
  readonly logAppendTime: bigint | null;
  readonly baseTimestamp: bigint;

  constructor(header: BatchHeader, data: Uint8Array) {
    this.buffer = data.buffer;
    this.byteOffset = data.byteOffset;
    this.data = new Uint8Array(this.buffer, this.byteOffset, data.length);
    this.baseOffset = header.baseOffset;
    this.logAppendTime = header.timestampType === 'LogAppendTime' ? header.maxTimestamp : null;
    this.baseTimestamp = header.baseTimestamp;
  }
}

function corrupt(reason: string): KlxError {
  return new KlxError('corrupt-batch', reason);
}

/** Position after the last varint read by {@link varintAt}, {@link varint} or {@link checkedVarint}. */
let after = 0;

/**
 * A zigzag varint (≤ 5 bytes) at `pos`, read before `end` (the same arithmetic and errors as
 * {@link readVarint}); sets {@link after}.
 */
function varintAt(d: Uint8Array, pos: number, end: number): number {
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) throw corrupt('varint runs past the end of the record data');
    const b = d[pos++]!;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      after = pos;
      return (value >>> 1) ^ -(value & 1);
    }
    shift += 7;
  }
  throw corrupt('varint longer than 5 bytes');
}

/**
 * {@link varintAt} with the one- and two-byte cases (nearly every length and delta in a records
 * area) in front, small enough to be inlined into the walk.
 */
function varint(d: Uint8Array, pos: number, end: number): number {
  if (pos < end) {
    const b0 = d[pos]!;
    if (b0 < 0x80) {
      after = pos + 1;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
    if (pos + 1 < end) {
      const b1 = d[pos + 1]!;
      if (b1 < 0x80) {
        const v = (b0 & 0x7f) | (b1 << 7);
        after = pos + 2;
        return (v >>> 1) ^ -(v & 1);
      }
    }
  }
  return varintAt(d, pos, end);
}

/** Position after the zigzag varlong (≤ 10 bytes) at `pos` (the errors of {@link readVarlong}). */
function skipVarlong(d: Uint8Array, pos: number, end: number): number {
  if (pos + 1 < end) {
    if (d[pos]! < 0x80) return pos + 1;
    if (d[pos + 1]! < 0x80) return pos + 2;
  }
  return skipVarlongSlow(d, pos, end);
}

function skipVarlongSlow(d: Uint8Array, pos: number, end: number): number {
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw corrupt('varlong runs past the end of the record data');
    if ((d[pos++]! & 0x80) === 0) return pos;
  }
  throw corrupt('varlong longer than 10 bytes');
}

/**
 * Where one record of a v2 records area lies, as {@link walkV2Records} reports it: `recStart` is the
 * position of its length varint, `keyAt` of its key's length varint, `keyStart` of the key's first
 * byte (positions in the records area), `keyLength` / `valueLength` in bytes (−1 = null),
 * `headerCount` ≥ 0.
 */
export type V2RecordVisitor = (i: number, recStart: number, offsetDelta: number, keyAt: number, keyLength: number, valueLength: number, headerCount: number, keyStart: number) => void;

/** What {@link checkRecordAt} read of the record it checked (module slots, as {@link after}: no object per record). */
let recOffsetDelta = 0;
let recKeyAt = 0;
let recKeyStart = 0;
let recKeyLength = 0;
let recValueLength = 0;
let recHeaderCount = 0;

/**
 * Checks record `i` whose length varint is at `pos` of the records area `d` (`len` bytes): the
 * checks and messages of Kafka's `DefaultRecord.readFrom`, in its order. Sets {@link recOffsetDelta},
 * {@link recKeyAt} (position of the key's length varint), {@link recKeyStart} (of its first byte),
 * {@link recKeyLength} / {@link recValueLength} (−1 = null) and {@link recHeaderCount}.
 * @returns the position after the record.
 * @throws KlxError `corrupt-batch` without a position (the caller adds the batch's).
 */
function checkRecordAt(d: Uint8Array, pos: number, len: number, i: number): number {
  const length = varint(d, pos, len);
  const start = after;
  const end = start + length;
  if (length < 0 || end > len) throw corrupt(`record ${i} declares ${length} bytes but only ${len - start} remain`);
  // attributes (not checked: an empty record fails on the next field), timestampDelta
  pos = skipVarlong(d, start + 1, end);
  recOffsetDelta = varint(d, pos, end);
  const keyAt = after;
  recKeyAt = keyAt;
  const keyLength = varint(d, keyAt, end); // key
  pos = after;
  recKeyStart = pos;
  if (keyLength >= 0) {
    if (pos + keyLength > end) throw corrupt(`a field of ${keyLength} bytes runs past the end of its record`);
    pos += keyLength;
  }
  const valueLength = varint(d, pos, end); // value
  pos = after;
  if (valueLength >= 0) {
    if (pos + valueLength > end) throw corrupt(`a field of ${valueLength} bytes runs past the end of its record`);
    pos += valueLength;
  }
  const headerCount = varint(d, pos, end); // headers count
  pos = after;
  if (headerCount !== 0) pos = walkHeaders(d, pos, end, i, headerCount);
  if (pos !== end) throw corrupt(`record ${i} declares ${length} bytes but its fields take ${pos - start}`);
  recKeyLength = keyLength < 0 ? -1 : keyLength;
  recValueLength = valueLength < 0 ? -1 : valueLength;
  recHeaderCount = headerCount;
  return pos;
}

/**
 * Walks the records area `data` of a v2 batch holding `count` records, checking every record (the
 * checks and messages of Kafka's `DefaultRecord.readFrom`, in its order), and reports each to `visit`.
 * @returns the position after the last record.
 * @throws KlxError `corrupt-batch` without a position (the caller adds the batch's).
 */
export function walkV2Records(data: Uint8Array, count: number, visit: V2RecordVisitor): number {
  const len = data.length;
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const recStart = pos;
    pos = checkRecordAt(data, pos, len, i);
    visit(i, recStart, recOffsetDelta, recKeyAt, recKeyLength, recValueLength, recHeaderCount, recKeyStart);
  }
  return pos;
}

/**
 * The timestampDelta of the record whose length varint is at `recStart` of a records area already
 * checked by {@link walkV2Records}, as a number when it fits in 2^53 (nearly always), else a bigint.
 */
export function recordTimestampDeltaAt(d: Uint8Array, recStart: number): number | bigint {
  const pos = skipCheckedVarint(d, recStart) + 1;
  let small = 0;
  for (let i = 0, shift = 0; i < 4; i++, shift += 7) {
    const b = d[pos + i]!;
    small |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return (small >>> 1) ^ -(small & 1);
  }
  const v = readVarlong({ buf: d, pos, end: d.length });
  return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
}

/** Fills `records` with lazy records over the checked area (see {@link walkV2Records}). */
function walkRecords(header: BatchHeader, data: Uint8Array, records: KafkaRecord[]): number {
  const shared = new RecordsArea(header, data);
  const d = shared.data;
  const len = d.length;
  const count = records.length;
  let pos = 0;
  if (header.isControl) {
    for (let i = 0; i < count; i++) {
      const recStart = pos;
      pos = checkRecordAt(d, pos, len, i);
      records[i] = new V2ControlRecord(shared, recStart, recOffsetDelta, recKeyAt);
    }
  } else {
    for (let i = 0; i < count; i++) {
      const recStart = pos;
      pos = checkRecordAt(d, pos, len, i);
      records[i] = new V2Record(shared, recStart, recOffsetDelta, recKeyAt);
    }
  }
  return pos;
}

/** Checks the `count` headers of record `i` starting at `pos`; returns the position after them. */
function walkHeaders(d: Uint8Array, pos: number, end: number, i: number, count: number): number {
  if (count < 0) throw corrupt(`record ${i} has a negative header count ${count}`);
  for (let h = 0; h < count; h++) {
    const keyLen = varintAt(d, pos, end);
    pos = after;
    if (keyLen < 0 || pos + keyLen > end) throw corrupt(`record ${i} header ${h} has an invalid key length ${keyLen}`);
    pos += keyLen;
    const n = varintAt(d, pos, end);
    pos = after;
    if (n >= 0) {
      if (pos + n > end) throw corrupt(`a field of ${n} bytes runs past the end of its record`);
      pos += n;
    }
  }
  return pos;
}

// Readers of fields already checked by walkRecords (no bounds checks needed).

/** Zigzag varint at `pos` of checked data; sets {@link after}. */
function checkedVarint(d: Uint8Array, pos: number): number {
  const b = d[pos]!;
  if (b < 0x80) {
    after = pos + 1;
    return (b >>> 1) ^ -(b & 1);
  }
  // Two bytes: lengths of 64 to 8191 bytes (most keys and values past 63 bytes).
  const b1 = d[pos + 1]!;
  if (b1 < 0x80) {
    const v = (b & 0x7f) | (b1 << 7);
    after = pos + 2;
    return (v >>> 1) ^ -(v & 1);
  }
  return varintAt(d, pos, d.length);
}

/** Position after the varint at `pos` of checked data. */
function skipCheckedVarint(d: Uint8Array, pos: number): number {
  while (d[pos++]! >= 0x80);
  return pos;
}

/** A key/value/header value view at `pos` (its length varint) of the checked area; sets {@link after}. */
function bytesAt(a: RecordsArea, pos: number): Uint8Array | null {
  const n = checkedVarint(a.data, pos);
  if (n < 0) return null;
  // A plain Uint8Array view: Buffer#subarray (a FastBuffer subclass instance) costs twice as much,
  // and keys/values are typed Uint8Array anyway.
  const start = after;
  after = start + n;
  return new Uint8Array(a.buffer, a.byteOffset + start, n);
}

/** Position after the key/value field whose length varint is at `pos` of checked data. */
function skipBytes(d: Uint8Array, pos: number): number {
  const n = checkedVarint(d, pos);
  return n < 0 ? after : after + n;
}

/**
 * One record of a v2 batch, read from its batch's bytes on access (see {@link decodeV2Records}).
 * Its fields are prototype getters: spreading it, `Object.keys` or `structuredClone` do not see
 * them (use {@link plainRecord} for a plain object). Each access to `offset`/`timestamp` computes
 * the bigint and each access to `key`/`value` makes a new view of the same bytes; `headers` is
 * decoded once.
 */
class V2Record implements KafkaRecord {
  // `declare`: the fields are set by the constructor only (no class-field definitions to run first).
  /** @internal The batch's records area. */
  declare readonly _area: RecordsArea;
  /** @internal Position of the record (its length varint) in the records area. */
  declare readonly _at: number;
  /** @internal offsetDelta. */
  declare readonly _offsetDelta: number;
  /** @internal Position of the key's length varint. */
  declare readonly _keyAt: number;
  /** @internal Decoded headers, on first access. */
  declare _headers: RecordHeader[] | undefined;

  constructor(area: RecordsArea, at: number, offsetDelta: number, keyAt: number) {
    this._area = area;
    this._at = at;
    this._offsetDelta = offsetDelta;
    this._keyAt = keyAt;
    this._headers = undefined;
  }

  get offset(): bigint {
    return this._area.baseOffset + toBigInt(this._offsetDelta);
  }

  get offsetDelta(): number {
    return this._offsetDelta;
  }

  get timestamp(): bigint {
    const a = this._area;
    return a.logAppendTime ?? a.baseTimestamp + this.timestampDelta;
  }

  get timestampDelta(): bigint {
    const d = this._area.data;
    const pos = skipCheckedVarint(d, this._at) + 1;
    // Fast path: up to 4 bytes (28 bits), nearly every timestamp delta.
    let small = 0;
    for (let i = 0, shift = 0; i < 4; i++, shift += 7) {
      const b = d[pos + i]!;
      small |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return toBigInt((small >>> 1) ^ -(small & 1));
    }
    return readVarlong({ buf: d, pos, end: d.length });
  }

  get attributes(): number {
    const d = this._area.data;
    return d[skipCheckedVarint(d, this._at)]!;
  }

  get sizeInBytes(): number {
    // As Kafka's DefaultRecord.sizeInBytes computes it: the length varint's minimal size.
    const length = checkedVarint(this._area.data, this._at);
    return sizeOfVarint(length) + length;
  }

  get key(): Uint8Array | null {
    return bytesAt(this._area, this._keyAt);
  }

  get value(): Uint8Array | null {
    const a = this._area;
    return bytesAt(a, skipBytes(a.data, this._keyAt));
  }

  get headers(): RecordHeader[] {
    return (this._headers ??= this.decodeHeaders());
  }

  private decodeHeaders(): RecordHeader[] {
    const a = this._area;
    const d = a.data;
    let pos = skipBytes(d, skipBytes(d, this._keyAt));
    const count = checkedVarint(d, pos);
    pos = after;
    const headers: RecordHeader[] = new Array(count);
    for (let h = 0; h < count; h++) {
      const keyLen = checkedVarint(d, pos);
      pos = after;
      const key = textDecoder.decode(d.subarray(pos, pos + keyLen));
      const value = bytesAt(a, pos + keyLen);
      pos = after;
      headers[h] = { key, value };
    }
    return headers;
  }
}

/** A record of a control batch: the control key/value are decoded (and checked) with the batch. */
class V2ControlRecord extends V2Record {
  declare readonly control: ControlRecordInfo;

  constructor(area: RecordsArea, at: number, offsetDelta: number, keyAt: number) {
    super(area, at, offsetDelta, keyAt);
    this.control = decodeControlRecord(this.key, this.value);
  }
}

/**
 * A plain-object copy of a record (every field an own property; `key`/`value` stay views of the
 * batch's bytes), for code that spreads, clones or compares records structurally.
 */
export function plainRecord(r: KafkaRecord): KafkaRecord {
  const o: { -readonly [K in keyof KafkaRecord]: KafkaRecord[K] } = {
    offset: r.offset,
    timestamp: r.timestamp,
    attributes: r.attributes,
    key: r.key,
    value: r.value,
    headers: r.headers,
    sizeInBytes: r.sizeInBytes,
  };
  if (r.timestampDelta !== undefined) o.timestampDelta = r.timestampDelta;
  if (r.offsetDelta !== undefined) o.offsetDelta = r.offsetDelta;
  if (r.control !== undefined) o.control = r.control;
  return o;
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
