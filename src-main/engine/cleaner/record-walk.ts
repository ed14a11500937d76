/**
 * A zero-allocation walk over the records area of a v2 batch, for the cleaner's hot loops (spec §5;
 * Kafka's `DefaultRecord.readFrom` as used by `MemoryRecords.filterTo`).
 *
 * Record layout: length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
 * keyLength varint | key | valueLength varint | value | headersCount varint | headers.
 *
 * The cleaner only needs the offset, the key bytes, whether the value is null and the timestamp
 * delta; everything from `offsetDelta` to the end of the record is copied verbatim when a record is
 * re-encoded with a new timestamp delta (the batch keeps its baseOffset, so offsetDelta, key, value
 * and headers do not change). {@link decodeV2Records} remains the full decoder; this walk checks
 * the same framing (every field inside its record, the record's length consumed exactly) and throws
 * the same `corrupt-batch` errors.
 *
 * Numbers: offsets deltas are int32; timestamp deltas are returned as JS numbers, exact while
 * |delta| ≤ 2^53 (`timestampDeltaExact` says so; Kafka timestamps are ms, far below that).
 */
import { KlxError } from '../errors.ts';
import { sizeOfVarint } from '../format/varint.ts';

/** One record of a records area, as positions in that area. Reused across calls. */
export interface RecordView {
  /** Position of the record's length varint. */
  start: number;
  /** Position after the record. */
  end: number;
  /** Position of the offsetDelta field (what follows attributes and timestampDelta). */
  restStart: number;
  attributes: number;
  timestampDelta: number;
  timestampDeltaExact: boolean;
  offsetDelta: number;
  /** Position of the key bytes; `keyLength` −1 for a null key. */
  keyStart: number;
  keyLength: number;
  /** −1 for a null value (a tombstone). */
  valueLength: number;
  /** Position of the value bytes. */
  valueStart: number;
}

/** A fresh view to pass to {@link readRecordAt}. */
export function newRecordView(): RecordView {
  return { start: 0, end: 0, restStart: 0, attributes: 0, timestampDelta: 0, timestampDeltaExact: true, offsetDelta: 0, keyStart: 0, keyLength: -1, valueLength: -1, valueStart: 0 };
}

function corrupt(reason: string): KlxError {
  return new KlxError('corrupt-batch', reason);
}

// Reading
//
// The two readers below are local on purpose. `format/varint.ts` reads through a `Cursor` object
// (`readVarint`) and returns varlongs as bigints (`readVarlong`); on this walk the cursor version
// measured 1.5–2× slower (a 64 MiB segment of ~110-byte records: ~35 ms → ~65 ms CPU, on every
// walk of the map builder and the compactor), and the bigint one would allocate for every timestamp
// delta ≥ 1024. They decode the same zigzag encoding with the same framing checks and throw the
// same `corrupt-batch` reasons as `readVarint` / `readVarlong`.

/** Read position of the walk (module state: the hot loop allocates no cursor and reads no field). */
let pos = 0;

/** `readVarint` over `d[pos, limit)`, one-byte values first. */
function varint(d: Uint8Array, limit: number): number {
  if (pos < limit) {
    const b0 = d[pos]!;
    if (b0 < 0x80) {
      pos++;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
  }
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= limit) throw corrupt('varint runs past the end of the record data');
    const b = d[pos++]!;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return (value >>> 1) ^ -(value & 1);
    shift += 7;
  }
  throw corrupt('varint longer than 5 bytes');
}

const POW7 = Array.from({ length: 10 }, (_, i) => 2 ** (7 * i));

/** Reads a zigzag varlong as a number; sets `exact` false when it is beyond ±2^53. */
function varlong(d: Uint8Array, limit: number, view: RecordView): number {
  // Fast path: up to 4 bytes (|value| < 2^27), plain int arithmetic.
  let small = 0;
  let p = pos;
  for (let i = 0; i < 4 && p < limit; i++) {
    const b = d[p++]!;
    small |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) {
      pos = p;
      view.timestampDeltaExact = true;
      return (small >>> 1) ^ -(small & 1);
    }
  }
  let u = 0;
  for (let i = 0; i < 10; i++) {
    if (pos >= limit) throw corrupt('varlong runs past the end of the record data');
    const b = d[pos++]!;
    u += (b & 0x7f) * POW7[i]!;
    if ((b & 0x80) === 0) {
      view.timestampDeltaExact = u <= Number.MAX_SAFE_INTEGER;
      return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    }
  }
  throw corrupt('varlong longer than 10 bytes');
}

/**
 * Reads the record starting at `start` in `data[.., end)` into `view`.
 * @returns the position after the record.
 * @throws KlxError `corrupt-batch` when a field runs past its record or the record's length is not
 *   consumed exactly.
 */
export function readRecordAt(data: Uint8Array, start: number, end: number, view: RecordView): number {
  pos = start;
  const length = varint(data, end);
  const recEnd = pos + length;
  if (length < 1 || recEnd > end) throw corrupt(`a record declares ${length} bytes but only ${end - pos} remain`);
  view.start = start;
  view.end = recEnd;
  view.attributes = data[pos++]!;
  view.timestampDelta = varlong(data, recEnd, view);
  view.restStart = pos;
  view.offsetDelta = varint(data, recEnd);
  const keyLength = varint(data, recEnd);
  view.keyLength = keyLength < 0 ? -1 : keyLength;
  view.keyStart = pos;
  if (keyLength > 0) {
    if (pos + keyLength > recEnd) throw corrupt(`a key of ${keyLength} bytes runs past the end of its record`);
    pos += keyLength;
  }
  const valueLength = varint(data, recEnd);
  view.valueLength = valueLength < 0 ? -1 : valueLength;
  view.valueStart = pos;
  if (valueLength > 0) {
    if (pos + valueLength > recEnd) throw corrupt(`a value of ${valueLength} bytes runs past the end of its record`);
    pos += valueLength;
  }
  const headers = varint(data, recEnd);
  if (headers < 0) throw corrupt(`a record has a negative header count ${headers}`);
  for (let h = 0; h < headers; h++) {
    const kl = varint(data, recEnd);
    if (kl < 0 || pos + kl > recEnd) throw corrupt(`a record header has an invalid key length ${kl}`);
    pos += kl;
    const vl = varint(data, recEnd);
    if (vl > 0) {
      if (pos + vl > recEnd) throw corrupt(`a record header value of ${vl} bytes runs past the end of its record`);
      pos += vl;
    }
  }
  if (pos !== recEnd) throw corrupt(`a record declares ${length} bytes but its fields take ${pos - (recEnd - length)}`);
  return recEnd;
}

/** What {@link peekRecordAt} reads of a record. Reused across calls. */
export interface RecordPeek {
  /** Position after the record. */
  end: number;
  offsetDelta: number;
  /** −1 for a null key. */
  keyLength: number;
}

/** A fresh peek to pass to {@link peekRecordAt}. */
export function newRecordPeek(): RecordPeek {
  return { end: 0, offsetDelta: 0, keyLength: -1 };
}

/** `varint` that never throws: −2^31 − 1 (not an int32) when the varint runs past `limit` or is longer than 5 bytes. */
function varintOrBad(d: Uint8Array, limit: number): number {
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= limit) return BAD;
    const b = d[pos++]!;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return (value >>> 1) ^ -(value & 1);
    shift += 7;
  }
  return BAD;
}
const BAD = -2147483649;

/**
 * Reads only the length, offsetDelta and keyLength of the record at `start` in `data[.., end)`
 * (skipping its attributes and timestampDelta), for a walk that drops the record by its offset
 * without looking at the rest: the key, value and headers are neither read nor checked, so only for
 * records whose framing was checked before ({@link readRecordAt} in the map build).
 * @returns false (and `peek` unspecified) when these fields are not well-formed: the caller reads
 *   the record with {@link readRecordAt}, which reports why. Never throws.
 */
export function peekRecordAt(data: Uint8Array, start: number, end: number, peek: RecordPeek): boolean {
  pos = start;
  const length = varintOrBad(data, end);
  const recEnd = pos + length;
  if (length < 1 || recEnd > end) return false;
  pos++; // attributes
  // timestampDelta: a varlong of at most 10 bytes, skipped.
  let i = 0;
  while (i < 10 && pos < recEnd && (data[pos]! & 0x80) !== 0) {
    pos++;
    i++;
  }
  if (i === 10 || pos >= recEnd) return false;
  pos++;
  const offsetDelta = varintOrBad(data, recEnd);
  if (offsetDelta === BAD) return false;
  const keyLength = varintOrBad(data, recEnd);
  if (keyLength === BAD) return false;
  peek.end = recEnd;
  peek.offsetDelta = offsetDelta;
  peek.keyLength = keyLength < 0 ? -1 : keyLength;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Writing
//
// `format/varint.ts` sizes varints (`sizeOfVarint`, used here) but writes them only through its
// growable `ByteWriter`, and its varlong helpers take bigints. The re-encoder writes into a buffer it
// has sized exactly and keeps timestamp deltas as numbers, so the three helpers below stay local.

/**
 * Values whose zigzag fits 31 bits: sized and written with int32 shifts instead of float division
 * (re-encoded timestamp deltas are mostly here: a delete horizon a day away is ~8.6e7 ms).
 */
const INT_ZIGZAG_MIN = -(2 ** 30);
const INT_ZIGZAG_MAX = 2 ** 30 - 1;

/** Bytes of the zigzag varlong of a safe integer (`sizeOfVarlong` for a number). */
function varlongSize(v: number): number {
  if (v >= INT_ZIGZAG_MIN && v <= INT_ZIGZAG_MAX) return sizeOfVarint(v);
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  let n = 1;
  while (u >= 128) {
    u = Math.floor(u / 128);
    n++;
  }
  return n;
}

/** Writes a zigzag varint at `p`; returns the position after it (`ByteWriter.varint` at a position). */
function writeVarint(out: Uint8Array, p: number, v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  while (u >= 0x80) {
    out[p++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  out[p++] = u;
  return p;
}

/** Writes a zigzag varlong of a safe integer at `p`; returns the position after it. */
function writeVarlong(out: Uint8Array, p: number, v: number): number {
  if (v >= INT_ZIGZAG_MIN && v <= INT_ZIGZAG_MAX) return writeVarint(out, p, v);
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  while (u >= 128) {
    out[p++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  out[p++] = u;
  return p;
}

/**
 * Records up to this many bytes (after the timestamp delta) are copied byte by byte, longer ones
 * with Buffer.copy: measured on 16–108-byte copies, the loop costs ~0.7 ns a byte warm (more while
 * cold), Buffer.copy ~42 ns a call whatever the size up to there, so they cross near 56 bytes.
 */
const SMALL_COPY = 48;

/**
 * Writes the record whose bytes from `restStart` to `end` are in `data` (see {@link RecordView}),
 * re-encoded with timestamp delta `tsDelta` and attributes 0 (Kafka's `DefaultRecord.writeTo` always
 * writes attributes 0), at `p`; returns the position after it. It takes at most
 * `end − restStart + 16` bytes (length varint ≤ 5, attributes 1, timestamp delta varlong ≤ 10).
 */
export function writeReencoded(out: Buffer, p: number, data: Buffer, restStart: number, end: number, tsDelta: number): number {
  const rest = end - restStart;
  p = writeVarint(out, p, 1 + varlongSize(tsDelta) + rest);
  out[p++] = 0;
  p = writeVarlong(out, p, tsDelta);
  if (rest <= SMALL_COPY) {
    // A loop beats Buffer.copy (argument checks, ~40 ns a call) for a record's few bytes.
    for (let i = restStart; i < end; i++) out[p++] = data[i]!;
    return p;
  }
  return p + data.copy(out, p, restStart, end);
}
