/**
 * The SQL build's segment rows (`segment-rows.ts`, issue 16): v2 data batches are decoded straight
 * from their bytes into the chunk's columns (offsets and timestamps as int64 words, keys as DuckDB
 * `string_t` structs), without a record object. Checked here against the engine's record objects
 * (`walkLog` + `recordsOf`, the `V2Record` getters: an independent decoding of the same bytes), row
 * by row, on batches of every codec, offsets and timestamps whose low 32-bit word carries (offsets
 * crossing 2^32, timestamps crossing 2^32 ms), a negative, a just-below-2^53 and a > 2^53 timestamp delta, a
 * LogAppendTime batch, keys of 0, 1, 12, 13 and 100 bytes and multi-byte UTF-8, null keys,
 * tombstones, headers, control batches and a batch whose records cannot be decoded.
 */
import { describe, expect, it } from 'vitest';
import { encodeBatch, type RecordSpec } from '../../../src-main/engine/format/record-batch.ts';
import { COMPRESSIONS } from '../../../src-main/engine/format/types.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { CHUNK_RECORDS, segmentRowChunks, STRING_T_BYTES, type ChunkBatch, type RowsChunk } from '../../../src-main/engine/sql/segment-rows.ts';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { markerBatch, txnBatch } from './sql-test-helpers.ts';

const TWO_32 = 2n ** 32n;
const KEYS = [null, '', 'k', 'abcdefghijkl', 'abcdefghijklm', 'x'.repeat(100), 'ключ-ключ'];

/** A partition whose first segment starts 3 offsets below 2^32 (see the module comment). */
function varietyPartition(): { dir: string; undecodableBaseOffset: bigint } {
  const base = TWO_32 - 3n;
  const batches: BatchInput[] = [];
  let n = 0;
  for (const compression of COMPRESSIONS) {
    // Timestamps from 2^32 − 2 ms: the low word of baseTimestamp + delta carries.
    const records: RecordSpec[] = Array.from({ length: 7 }, (_, i) => {
      const k = KEYS[(n + i) % KEYS.length]!;
      return rec(k, (n + i) % 5 === 0 ? null : `value-${compression}-${i}`, TWO_32 - 2n + BigInt(i), i % 3 === 0 ? [{ key: 'h', value: `${i}` }] : undefined);
    });
    batches.push({ compression, records, ...(n === 0 ? { baseOffset: base } : {}) });
    n += 7;
  }
  // A negative timestamp delta, a delta above 2^28 (a varlong of more than 4 bytes) and one above 2^53 (a bigint).
  batches.push({ records: [rec('early', 'a', 5_000_000), rec('before', 'b', 4_000_000), rec('far', 'c', 5_000_000 + 2 ** 40), rec('very-far-key', 'd', 2n ** 60n)] });
  // A delta just below 2^53 over a base whose low word is 2^32 − 1: the sum (2^53 + 2^32 − 5, odd) is not a double (review of stop 26).
  batches.push({ records: [rec('edge-base', 'e', TWO_32 - 1n), rec('edge-far', 'f', TWO_32 - 1n + 2n ** 53n - 4n)] });
  // LogAppendTime: every record reads as maxTimestamp.
  batches.push({ timestampType: 'LogAppendTime', maxTimestamp: 1_700_000_000_123n, records: [rec('lat-1', 'x', 1), rec('lat-2', null, 2)] });
  const segment0 = { batches };
  // Segment 1: a transaction and its marker, then a batch whose recordsCount claims one more record than it holds.
  const next = base + BigInt(n) + 6n;
  const undecodable = encodeBatch({ baseOffset: next + 4n, records: [rec('u1', 'x'), rec('u2', 'y')] });
  undecodable.writeInt32BE(3, 57);
  const segment1 = { batches: [txnBatch(5, Number(next), ['t1', 't2', 't3']), markerBatch(5, 'COMMIT', Number(next + 3n)), undecodable, { records: [rec('after', 'z', 9)] }] };
  return { dir: buildPartition(tempDir(), { segments: [segment0, segment1] }), undecodableBaseOffset: next + 4n };
}

interface Row {
  offset: bigint;
  timestamp: bigint;
  key: string | null;
  valueSize: number;
  headerCount: number;
}

/** The rows of the chunks of every segment, with their key structs checked against the keys. */
function chunkRows(log: PartitionLog): { rows: Row[]; batches: ChunkBatch[] } {
  const rows: Row[] = [];
  const batches: ChunkBatch[] = [];
  for (const seg of log.segments) {
    for (const c of segmentRowChunks(seg, seg.files.logSize)) {
      for (const e of c.entries) if (e.t === 'batch') batches.push(e);
      for (let i = 0; i < c.records; i++) {
        const len = c.keyLength[i]!;
        const key = len < 0 ? null : c.keyBytes.subarray(c.keyStart[i]!, c.keyStart[i]! + len);
        expect(structOf(c, i)).toEqual(expectedStruct(key));
        rows.push({ offset: c.offset[i]!, timestamp: c.timestamp[i]!, key: key && Buffer.from(key).toString('utf8'), valueSize: c.valueSize[i]!, headerCount: c.headerCount[i]! });
      }
    }
  }
  return { rows, batches };
}

function structOf(c: RowsChunk, i: number): number[] {
  return [...c.keyStructs.subarray(i * STRING_T_BYTES, (i + 1) * STRING_T_BYTES)];
}

/** DuckDB's `string_t` of a key as the chunk holds it: length (LE), then ≤ 12 bytes inline or zeros. */
function expectedStruct(key: Uint8Array | null): number[] {
  const s = new Array<number>(16).fill(0);
  if (key === null) return s;
  s[0] = key.length & 0xff;
  s[1] = (key.length >> 8) & 0xff;
  if (key.length <= 12) key.forEach((b, j) => (s[4 + j] = b));
  return s;
}

describe('segment rows', () => {
  it('key structs of a later chunk carry no bytes of the earlier chunk that used the same buffers', () => {
    // Chunk 1: CHUNK_RECORDS records with 12-byte keys (inline, every struct byte used); chunk 2: 1-byte keys.
    const long = { records: Array.from({ length: CHUNK_RECORDS }, (_, i) => rec(`abcdefghij${String(i % 100).padStart(2, '0')}`, 'v', 1000)) };
    const short = { records: Array.from({ length: 100 }, () => rec('k', 'v', 1000)) };
    const log = PartitionLog.open(buildPartition(tempDir(), { segments: [{ batches: [long, short] }] }));
    const chunks = [...segmentRowChunks(log.segments[0]!, log.segments[0]!.files.logSize)];
    expect(chunks.map((c) => c.records)).toEqual([CHUNK_RECORDS, 100]);
    const expected = Buffer.alloc(100 * STRING_T_BYTES);
    for (let i = 0; i < 100; i++) {
      expected[i * STRING_T_BYTES] = 1;
      expected[i * STRING_T_BYTES + 4] = 'k'.charCodeAt(0);
    }
    expect(Buffer.from(chunks[1]!.keyStructs).equals(expected)).toBe(true);
  });

  it('decodes v2 batches into the columns exactly as the engine decodes their records', () => {
    const { dir, undecodableBaseOffset } = varietyPartition();
    const log = PartitionLog.open(dir);
    const expected: Row[] = [];
    for (const e of walkLog(log, { verifyCrc: true })) {
      if (e.type !== 'batch') continue;
      let records;
      try {
        records = recordsOf(e);
      } catch {
        continue;
      }
      for (const r of records) {
        expected.push({ offset: r.offset, timestamp: r.timestamp, key: r.key && Buffer.from(r.key).toString('utf8'), valueSize: r.value === null ? -1 : r.value.length, headerCount: r.headers.length });
      }
    }
    const { rows, batches } = chunkRows(log);
    expect(rows.length).toBe(7 * COMPRESSIONS.length + 4 + 2 + 2 + 3 + 1 + 1);
    expect(rows).toEqual(expected);

    // Values a broker's consumer would read, independent of both decoders.
    expect(rows[0]).toEqual({ offset: TWO_32 - 3n, timestamp: TWO_32 - 2n, key: null, valueSize: -1, headerCount: 1 });
    expect(rows[3]!.offset).toBe(TWO_32);
    expect(rows[4]!.key).toBe('abcdefghijklm');
    expect(rows.find((r) => r.key === 'before')!.timestamp).toBe(4_000_000n);
    expect(rows.find((r) => r.key === 'far')!.timestamp).toBe(5_000_000n + 2n ** 40n);
    expect(rows.find((r) => r.key === 'very-far-key')!.timestamp).toBe(2n ** 60n);
    expect(rows.find((r) => r.key === 'edge-far')!.timestamp).toBe(2n ** 53n + TWO_32 - 5n);
    expect(rows.filter((r) => r.key?.startsWith('lat-')).map((r) => r.timestamp)).toEqual([1_700_000_000_123n, 1_700_000_000_123n]);
    expect(rows.find((r) => r.key === 'ключ-ключ')!.valueSize).toBe('value-none-6'.length);

    const bad = batches.find((b) => b.header.baseOffset === undecodableBaseOffset)!;
    expect(bad.count).toBe(0);
    expect(bad.error?.code).toBe('corrupt-batch');
    const marker = batches.find((b) => b.header.isControl)!;
    expect(marker.marker?.type).toBe('COMMIT');
    expect(marker.controlTypes).toEqual(['COMMIT']);
  });
});
