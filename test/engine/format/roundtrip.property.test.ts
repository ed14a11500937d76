/**
 * Property tests (fast-check): random batches of every codec and magic survive encode → decode
 * unchanged (offsets, timestamps, keys, values, headers, header fields).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBatch, type RecordSpec } from '../../../src-main/engine/format/record-batch.ts';
import { encodeLegacy } from '../../../src-main/engine/format/legacy.ts';
import { scanLogBuffer, type BatchEntry } from '../../../src-main/engine/format/log-reader.ts';
import { COMPRESSIONS } from '../../../src-main/engine/format/types.ts';

const bytes = fc.option(fc.uint8Array({ maxLength: 300 }), { nil: null, freq: 5 });
const ts = fc.bigInt({ min: 0n, max: 4_000_000_000_000n });
const recordArb = fc.record({
  key: bytes,
  value: bytes,
  timestamp: ts,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 12 }), value: bytes }), { maxLength: 3 }),
  gap: fc.nat({ max: 3 }),
});

function decodeAll(buf: Buffer): BatchEntry[] {
  const out = [...scanLogBuffer(buf, { deep: true })];
  for (const e of out) expect(e.type).toBe('batch');
  return out as BatchEntry[];
}

const norm = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'));

describe('v2 round trip', () => {
  for (const compression of COMPRESSIONS) {
    it(`${compression}: encode → decode is the identity`, () => {
      fc.assert(
        fc.property(
          fc.array(recordArb, { minLength: 1, maxLength: 40 }),
          fc.bigInt({ min: 0n, max: 1n << 40n }),
          fc.integer({ min: -1, max: 1000 }),
          fc.boolean(),
          fc.option(fc.record({ producerId: fc.bigInt({ min: 0n, max: 1n << 50n }), producerEpoch: fc.integer({ min: 0, max: 32767 }), baseSequence: fc.integer({ min: 0, max: 1 << 30 }) }), { nil: undefined }),
          (recs, baseOffset, epoch, transactional, producer) => {
            let delta = 0;
            const specs: RecordSpec[] = recs.map((r, i) => {
              if (i > 0) delta += 1 + r.gap; // compaction-like holes inside a batch
              return { offsetDelta: delta, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers };
            });
            const buf = encodeBatch({ baseOffset, partitionLeaderEpoch: epoch, compression, isTransactional: transactional, records: specs, ...(producer ?? {}) });
            const [e] = decodeAll(buf);
            const h = e!.header;
            expect(h).toMatchObject({ baseOffset, lastOffset: baseOffset + BigInt(delta), partitionLeaderEpoch: epoch, compression, isTransactional: transactional, crcValid: true, recordCount: recs.length, size: buf.length });
            if (producer) expect(h).toMatchObject(producer);
            expect(e!.records!.map((r) => [r.offset, r.timestamp, norm(r.key), norm(r.value), r.headers.map((x) => [x.key, norm(x.value)])])).toEqual(
              specs.map((s) => [baseOffset + BigInt(s.offsetDelta!), s.timestamp, norm(s.key as Uint8Array | null), norm(s.value as Uint8Array | null), s.headers!.map((x) => [x.key, norm(x.value as Uint8Array | null)])]),
            );
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('several batches in one buffer decode in order with their positions', () => {
    fc.assert(
      fc.property(fc.array(fc.array(recordArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }), fc.constantFrom(...COMPRESSIONS), (batches, compression) => {
        let offset = 0n;
        const bufs = batches.map((recs) => {
          const b = encodeBatch({ baseOffset: offset, compression, records: recs.map((r) => ({ timestamp: r.timestamp, key: r.key, value: r.value })) });
          offset += BigInt(recs.length);
          return b;
        });
        const all = Buffer.concat(bufs);
        const dec = decodeAll(all);
        expect(dec.map((e) => e.header.position)).toEqual(bufs.map((_, i) => bufs.slice(0, i).reduce((s, b) => s + b.length, 0)));
        expect(dec.flatMap((e) => e.records!.map((r) => r.offset))).toEqual([...Array(Number(offset)).keys()].map(BigInt));
      }),
      { numRuns: 40 },
    );
  });
});

describe('legacy round trip', () => {
  for (const magic of [0, 1] as const) {
    for (const compression of ['none', 'gzip', 'snappy', 'lz4'] as const) {
      it(`magic ${magic} ${compression}`, () => {
        fc.assert(
          fc.property(fc.array(recordArb, { minLength: 1, maxLength: 20 }), fc.bigInt({ min: 0n, max: 1n << 40n }), (recs, first) => {
            const specs = recs.map((r, i) => ({ offset: first + BigInt(i), timestamp: magic === 0 ? -1n : r.timestamp, key: r.key, value: r.value }));
            const buf = encodeLegacy(magic, compression, specs);
            const dec = decodeAll(buf);
            expect(dec.every((e) => e.header.magic === magic && e.header.crcValid === true && e.header.compression === compression)).toBe(true);
            if (compression !== 'none') {
              expect(dec).toHaveLength(1);
              expect(dec[0]!.header).toMatchObject({ baseOffset: first, lastOffset: first + BigInt(recs.length - 1), recordCount: recs.length });
            }
            expect(dec.flatMap((e) => e.records!.map((r) => [r.offset, r.timestamp, norm(r.key), norm(r.value)]))).toEqual(specs.map((s) => [s.offset, s.timestamp, norm(s.key), norm(s.value)]));
          }),
          { numRuns: 40 },
        );
      });
    }
  }

  it('v1 LogAppendTime wrapper: every inner record reads as the wrapper timestamp', () => {
    const buf = encodeLegacy(1, 'gzip', [{ offset: 7n, timestamp: 5n, key: null, value: Buffer.from('a') }, { offset: 8n, timestamp: 6n, key: null, value: Buffer.from('b') }], { timestampType: 'LogAppendTime', wrapperTimestamp: 999n });
    const [e] = decodeAll(buf);
    expect(e!.header.timestampType).toBe('LogAppendTime');
    expect(e!.records!.map((r) => [r.offset, r.timestamp])).toEqual([[7n, 999n], [8n, 999n]]);
  });

  it('magic 0 lz4 with the pre-KIP-57 broken header checksum (0x1A) decodes', () => {
    const buf = encodeLegacy(0, 'lz4', [{ offset: 0n, timestamp: -1n, key: Buffer.from('k'), value: Buffer.from('v') }]);
    // the wrapper value starts after 12 + 4 + 1 + 1 + 4 (null key) + 4 bytes
    const frame = buf.subarray(26);
    expect(frame.subarray(4, 7).toString('hex')).toBe('60401a');
    const [e] = decodeAll(buf);
    expect(e!.records!.map((r) => Buffer.from(r.value!).toString())).toEqual(['v']);
  });
});
