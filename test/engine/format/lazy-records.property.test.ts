/**
 * Property tests (fast-check): the lazily materialised records of `decodeV2Records` (getters over
 * the batch's bytes) equal an eager reference decode of the same batch, field by field, for random
 * batches (null or byte keys/values, headers, negative and 64-bit timestamp deltas, sparse and large
 * offset deltas, LogAppendTime, control batches, gzip); and a damaged records area fails with the
 * same error (code, message, position) in both, or decodes to the same records.
 *
 * The reference is the eager decoder the codec used before records became lazy: one plain object
 * per record, every field decoded up front with the cursor readers of `varint.ts`.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { decompress } from '../../../src-main/engine/format/compression.ts';
import { decodeControlRecord, encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { decodeV2Header, decodeV2Records, encodeBatch, plainRecord, type RecordSpec } from '../../../src-main/engine/format/record-batch.ts';
import { V2_HEADER_SIZE, type BatchHeader, type Compression, type KafkaRecord, type RecordHeader } from '../../../src-main/engine/format/types.ts';
import { readVarint, readVarlong, sizeOfVarint, toBigInt, type Cursor } from '../../../src-main/engine/format/varint.ts';

// ---------------------------------------------------------------------------------------------
// Eager reference decoder

const textDecoder = new TextDecoder('utf-8');

function refReadBytes(c: Cursor): Uint8Array | null {
  const len = readVarint(c);
  if (len < 0) return null;
  if (c.pos + len > c.end) throw new KlxError('corrupt-batch', `a field of ${len} bytes runs past the end of its record`);
  const b = new Uint8Array(c.buf.buffer, c.buf.byteOffset + c.pos, len);
  c.pos += len;
  return b;
}

function referenceDecode(header: BatchHeader, entry: Uint8Array): KafkaRecord[] {
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
  const records: KafkaRecord[] = [];
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
      const key = refReadBytes(c);
      const value = refReadBytes(c);
      const headerCount = readVarint(c);
      if (headerCount < 0) throw new KlxError('corrupt-batch', `record ${i} has a negative header count ${headerCount}`);
      const headers: RecordHeader[] = [];
      for (let h = 0; h < headerCount; h++) {
        const keyLen = readVarint(c);
        if (keyLen < 0 || c.pos + keyLen > c.end) throw new KlxError('corrupt-batch', `record ${i} header ${h} has an invalid key length ${keyLen}`);
        const hk = textDecoder.decode(data.subarray(c.pos, c.pos + keyLen));
        c.pos += keyLen;
        headers.push({ key: hk, value: refReadBytes(c) });
      }
      if (c.pos !== end) throw new KlxError('corrupt-batch', `record ${i} declares ${length} bytes but its fields take ${c.pos - start}`);
      c.end = recEnd;
      const rec: { -readonly [K in keyof KafkaRecord]: KafkaRecord[K] } = {
        offset: header.baseOffset + toBigInt(offsetDelta),
        timestamp: logAppend ? header.maxTimestamp : header.baseTimestamp + timestampDelta,
        attributes,
        key,
        value,
        headers,
        timestampDelta,
        offsetDelta,
        sizeInBytes: length + sizeOfVarint(length),
      };
      if (header.isControl) rec.control = decodeControlRecord(key, value);
      records.push(rec);
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

// ---------------------------------------------------------------------------------------------
// Comparison

type Outcome = { ok: true; records: KafkaRecord[] } | { ok: false; code: string; message: string; position: number | undefined; cause: string | undefined };

function outcome(decode: () => KafkaRecord[]): Outcome {
  try {
    return { ok: true, records: decode() };
  } catch (err) {
    if (!(err instanceof KlxError)) throw err;
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    return { ok: false, code: err.code, message: err.message, position: err.position, cause };
  }
}

/** Every field of every lazy record, read twice (a getter must not depend on what was read before). */
function expectSameRecords(lazy: KafkaRecord[], ref: KafkaRecord[]): void {
  expect(lazy.length).toBe(ref.length);
  expect(lazy.map(plainRecord)).toEqual(ref);
  // Each field on its own, in reverse order, and twice.
  for (let i = lazy.length - 1; i >= 0; i--) {
    const r = lazy[i]!;
    const e = ref[i]!;
    expect(r.headers).toEqual(e.headers);
    expect(r.headers).toBe(r.headers);
    expect(r.control).toEqual(e.control);
    expect(r.value).toEqual(e.value);
    expect(r.key).toEqual(e.key);
    expect(r.sizeInBytes).toBe(e.sizeInBytes);
    expect(r.attributes).toBe(e.attributes);
    expect(r.timestampDelta).toBe(e.timestampDelta);
    expect(r.timestamp).toBe(e.timestamp);
    expect(r.timestamp).toBe(e.timestamp);
    expect(r.offsetDelta).toBe(e.offsetDelta);
    expect(r.offset).toBe(e.offset);
    expect(r.offset).toBe(e.offset);
    expect(r.key).toEqual(e.key);
    expect('control' in r).toBe('control' in e);
  }
}

/**
 * The same records, or the same error. A recordsCount that cannot fit in the records area (7 bytes
 * a record at least) is refused before any record is walked, so there only the code and position
 * must match: the reference fails later, on the record that runs out.
 */
function expectSameOutcome(lazy: Outcome, ref: Outcome): void {
  if (ref.ok && lazy.ok) expectSameRecords(lazy.records, ref.records);
  else if (!lazy.ok && / cannot fit in a records area of /.test(lazy.message)) {
    expect(ref.ok).toBe(false);
    expect(lazy.code).toBe(ref.ok ? 'ok' : ref.code);
    expect(lazy.position).toBe(ref.ok ? -1 : ref.position);
  } else expect(lazy).toEqual(ref);
}

function decodeBoth(header: BatchHeader, bytes: Uint8Array): { lazy: Outcome; ref: Outcome } {
  return { lazy: outcome(() => decodeV2Records(header, bytes)), ref: outcome(() => referenceDecode(header, bytes)) };
}

// ---------------------------------------------------------------------------------------------
// Generators

const bytesArb = fc.option(fc.uint8Array({ maxLength: 200 }), { nil: null, freq: 4 });
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
/** Timestamp deltas: mostly small, sometimes negative, past 2^27 (multi-byte), past 2^53, or int64 extremes. */
const tsDeltaArb = fc.oneof(
  { weight: 4, arbitrary: fc.bigInt({ min: -1000n, max: 100_000n }) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: INT64_MIN / 2n, max: INT64_MAX / 2n }) },
  { weight: 1, arbitrary: fc.constantFrom(INT64_MIN / 2n, INT64_MAX / 2n, -(1n << 53n) - 1n, (1n << 53n) + 1n, -(1n << 27n), (1n << 27n) - 1n, 0n) },
);
const headerArb = fc.record({ key: fc.string({ maxLength: 10, unit: 'grapheme' }), value: bytesArb });
const recordArb = fc.record({
  key: bytesArb,
  value: bytesArb,
  timestampDelta: tsDeltaArb,
  headers: fc.array(headerArb, { maxLength: 3 }),
  gap: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.nat({ max: 200 }) }, { weight: 1, arbitrary: fc.nat({ max: 1 << 24 }) }),
  attributes: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -128, max: 127 }) }),
});
const controlRecordArb = fc.record({
  typeId: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(0, 1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 9 }) }),
  version: fc.integer({ min: 0, max: 3 }),
  coordinatorEpoch: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  timestampDelta: tsDeltaArb,
});

const batchArb = fc.record({
  control: fc.boolean(),
  records: fc.array(recordArb, { minLength: 0, maxLength: 25 }),
  controlRecords: fc.array(controlRecordArb, { minLength: 1, maxLength: 3 }),
  baseOffset: fc.oneof(fc.bigInt({ min: 0n, max: 1n << 40n }), fc.bigInt({ min: 0n, max: INT64_MAX - (1n << 33n) })),
  baseTimestamp: fc.oneof(fc.bigInt({ min: -1n, max: 4_000_000_000_000n }), fc.bigInt({ min: INT64_MIN / 2n, max: INT64_MAX / 2n })),
  maxTimestamp: fc.bigInt({ min: -1n, max: 4_000_000_000_000n }),
  logAppendTime: fc.boolean(),
  compression: fc.constantFrom<Compression>('none', 'none', 'none', 'gzip'),
  firstDelta: fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 30 })),
});

type BatchValue = typeof batchArb extends fc.Arbitrary<infer T> ? T : never;

function encode(b: BatchValue): Buffer {
  let delta = b.firstDelta;
  let specs: RecordSpec[];
  if (b.control) {
    specs = b.controlRecords.map((c, i) => {
      if (i > 0) delta += 1;
      const marker = c.typeId === 0 || c.typeId === 1;
      return { offsetDelta: delta, timestamp: 0n, timestampDelta: c.timestampDelta, key: encodeControlKey(c.typeId, c.version), value: marker ? encodeEndTxnMarkerValue(c.coordinatorEpoch, c.version) : Buffer.from([c.version, 1, 2]) };
    });
  } else {
    specs = b.records.map((r, i) => {
      if (i > 0) delta += 1 + r.gap;
      return { offsetDelta: Math.min(delta, 2 ** 31 - 1 - (b.records.length - i)), timestamp: 0n, timestampDelta: r.timestampDelta, key: r.key, value: r.value, headers: r.headers, attributes: r.attributes };
    });
    // keep offsetDeltas strictly increasing after the clamp
    for (let i = 1; i < specs.length; i++) if (specs[i]!.offsetDelta! <= specs[i - 1]!.offsetDelta!) specs[i]!.offsetDelta = specs[i - 1]!.offsetDelta! + 1;
  }
  return encodeBatch({
    baseOffset: b.baseOffset,
    records: specs,
    compression: b.compression,
    timestampType: b.logAppendTime ? 'LogAppendTime' : 'CreateTime',
    isControl: b.control,
    isTransactional: b.control,
    producerId: b.control ? 7n : -1n,
    producerEpoch: b.control ? 1 : -1,
    baseTimestamp: b.baseTimestamp,
    maxTimestamp: b.maxTimestamp,
  });
}

/** A damage to apply to the records area of an uncompressed batch. */
const damageArb = fc.oneof(
  // overwrite a few bytes
  fc.record({ kind: fc.constant('bytes' as const), at: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }) }),
  // claim a different record count
  fc.record({ kind: fc.constant('count' as const), delta: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(2 ** 31 - 1, -(2 ** 31))) }),
  // cut the records area short (or pad it) without fixing the count
  fc.record({ kind: fc.constant('length' as const), delta: fc.integer({ min: -40, max: 12 }) }),
);

// ---------------------------------------------------------------------------------------------

describe('lazy v2 records equal an eager reference decode', () => {
  it('random batches: every field of every record', () => {
    fc.assert(
      fc.property(batchArb, (b) => {
        const buf = encode(b);
        const header = decodeV2Header(buf, 0, 4096, true);
        const { lazy, ref } = decodeBoth(header, buf);
        expect(ref.ok).toBe(true);
        expect(lazy.ok).toBe(true);
        if (lazy.ok && ref.ok) expectSameRecords(lazy.records, ref.records);
      }),
      { numRuns: 300 },
    );
  });

  it('damaged records areas: the same error, or the same records', () => {
    fc.assert(
      fc.property(batchArb, damageArb, (b, dmg) => {
        const clean = encode({ ...b, compression: 'none' });
        let buf = Buffer.from(clean);
        const header = decodeV2Header(buf, 0, 777, false);
        if (dmg.kind === 'bytes') {
          const areaLen = buf.length - V2_HEADER_SIZE;
          if (areaLen === 0) return;
          for (const [at, v] of dmg.at) buf[V2_HEADER_SIZE + (at % areaLen)] = v;
        } else if (dmg.kind === 'count') {
          header.recordCount = Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, header.recordCount + dmg.delta));
        } else {
          const size = Math.max(V2_HEADER_SIZE, buf.length + dmg.delta);
          buf = size <= buf.length ? buf.subarray(0, size) : Buffer.concat([buf, Buffer.alloc(size - buf.length, 0x01)]);
          header.size = size;
        }
        const { lazy, ref } = decodeBoth(header, buf);
        expectSameOutcome(lazy, ref);
      }),
      { numRuns: 1500 },
    );
  });

  it('a damaged gzip records area fails the same way', () => {
    fc.assert(
      fc.property(batchArb, fc.nat(), fc.integer({ min: 0, max: 255 }), (b, at, v) => {
        const buf = Buffer.from(encode({ ...b, compression: 'gzip' }));
        buf[V2_HEADER_SIZE + (at % (buf.length - V2_HEADER_SIZE))] = v;
        const header = decodeV2Header(buf, 0, 99, false);
        const { lazy, ref } = decodeBoth(header, buf);
        expectSameOutcome(lazy, ref);
      }),
      { numRuns: 200 },
    );
  });

  it('records stay readable after the batch bytes they came from are out of reach', () => {
    const buf = encode({ control: false, records: [{ key: new Uint8Array([1, 2]), value: null, timestampDelta: -5n, headers: [{ key: 'h', value: new Uint8Array([9]) }], gap: 0, attributes: 0 }], controlRecords: [], baseOffset: 10n, baseTimestamp: 1000n, maxTimestamp: 1000n, logAppendTime: false, compression: 'none', firstDelta: 3 });
    const recs = decodeV2Records(decodeV2Header(buf, 0, 0, true), buf);
    expect(plainRecord(recs[0]!)).toEqual({ offset: 13n, timestamp: 995n, attributes: 0, key: new Uint8Array([1, 2]), value: null, headers: [{ key: 'h', value: new Uint8Array([9]) }], timestampDelta: -5n, offsetDelta: 3, sizeInBytes: 13 });
    expect(recs[0]).toMatchObject({ offset: 13n, timestamp: 995n, value: null });
  });
});

describe('gzip records areas', () => {
  /** What plain `gunzipSync` (16 KiB output chunks) makes of `buf`: the bytes, or the error message. */
  const plain = (buf: Buffer) => {
    try {
      return { ok: true, hex: gunzipSync(buf).toString('hex') };
    } catch (err) {
      return { ok: false, message: `gzip data cannot be decompressed: ${(err as Error).message}` };
    }
  };
  const ours = (buf: Buffer) => {
    try {
      return { ok: true, hex: decompress('gzip', buf, 2).toString('hex') };
    } catch (err) {
      return { ok: false, message: (err as KlxError).reason };
    }
  };

  it('decompress (output sized from the ISIZE trailer) equals plain gunzipSync, damaged or not', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40_000 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.integer({ min: -8, max: 0 }),
        (data, members, damage, cut) => {
          // Compressible input too: repeat a short prefix.
          const input = Buffer.concat([Buffer.from(data), Buffer.alloc(data.length, data[0] ?? 1)]);
          const one = gzipSync(input);
          let buf = Buffer.concat(Array.from({ length: members }, () => one));
          for (const [at, v] of damage) buf[at % buf.length] = v;
          if (cut < 0) buf = buf.subarray(0, Math.max(0, buf.length + cut));
          expect(ours(buf)).toEqual(plain(buf));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a trailer that claims an absurd size changes nothing', () => {
    const one = gzipSync(Buffer.from('hello hello hello'));
    for (const isize of [0, 1, 63, 64, 0xffffffff, one.length * 1032 + 1]) {
      const buf = Buffer.from(one);
      buf.writeUInt32LE(isize >>> 0, buf.length - 4);
      expect(ours(buf)).toEqual(plain(buf));
    }
  });
});
