/**
 * One segment of a partition decoded for the SQL tables (issue 16): its batches, damage and records
 * as {@link RowsChunk}s of typed-array columns, in file order. Segments are independent, so the
 * build decodes them in worker threads (`sql-build-pool.ts`, `sql-build-worker.ts`) or, with one
 * core, in the building thread; either way `log-tables.ts` appends the chunks in segment order, so
 * the tables are the same byte for byte.
 *
 * A chunk holds what a structured clone moves cheaply: the record columns as typed arrays (their
 * buffers are transferred, not copied), the keys packed in one byte array, and one small entry per
 * batch or damaged region (the batch header, and for a transactional control batch its marker).
 * A chunk ends after the batch that brings it to {@link CHUNK_RECORDS} records or
 * {@link CHUNK_KEY_BYTES} bytes of keys, so a chunk's memory is bounded by those plus one batch.
 *
 * Units: offsets and timestamps are int64 (`bigint` / `BigInt64Array`), sizes and positions bytes.
 */
import { KlxError } from '../errors.ts';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { BatchHeader } from '../format/types.ts';
import { recordsOf, scanSegmentFrom } from '../log/log-walk.ts';
import { markerTypeOf } from '../log/transactions.ts';
import type { LogSegment } from '../segment/log-segment.ts';

/** Records after which a chunk is closed (at the end of the batch reaching it). */
export const CHUNK_RECORDS = 65_536;
/** Bytes of keys after which a chunk is closed (at the end of the batch reaching it). */
export const CHUNK_KEY_BYTES = 4 * 2 ** 20;

/** A batch of the segment: its header and where its records are in the chunk's columns. */
export interface ChunkBatch {
  t: 'batch';
  header: BatchHeader;
  /** Index of its first record in the chunk's columns. */
  first: number;
  /** Records written to the columns (0 when they could not be decoded). */
  count: number;
  /** Why the records could not be decoded (`corrupt-batch`...), or null when they were. */
  error: { code: ErrorCode; reason: string } | null;
  /** For a transactional control batch: its marker type and the offset of its first record (Kafka's `EndTransactionMarker`). */
  marker: { type: 'ABORT' | 'COMMIT'; offset: bigint } | null;
  /** Control record types, one per record, for a control batch (else null). */
  controlTypes: string[] | null;
}

/** Bytes of the segment that are not a batch (`LogEntry` damage). */
export interface ChunkDamage {
  t: 'damage';
  type: 'invalid-tail' | 'corrupt-region';
  position: number;
  size: number;
  code: ErrorCode;
  reason: string;
}

/** A piece of one segment's rows (see the module comment). Column arrays have exactly `records` elements. */
export interface RowsChunk {
  entries: (ChunkBatch | ChunkDamage)[];
  records: number;
  offset: BigInt64Array;
  timestamp: BigInt64Array;
  /** Key length in bytes, −1 for a null key. */
  keyLength: Int32Array;
  /** Start of each key in `keyBytes`. */
  keyStart: Int32Array;
  keyBytes: Uint8Array;
  /** Value size in bytes, −1 for a null value. */
  valueSize: Int32Array;
  headerCount: Int32Array;
}

/** The buffers of a chunk, for `postMessage`'s transfer list. */
export function chunkTransferList(c: RowsChunk): ArrayBuffer[] {
  return [c.offset, c.timestamp, c.keyLength, c.keyStart, c.keyBytes, c.valueSize, c.headerCount].map((a) => a.buffer as ArrayBuffer);
}

/** Growable columns of the chunk being filled. */
class ChunkBuilder {
  entries: (ChunkBatch | ChunkDamage)[] = [];
  n = 0;
  keyUsed = 0;
  offset = new BigInt64Array(1024);
  timestamp = new BigInt64Array(1024);
  keyLength = new Int32Array(1024);
  keyStart = new Int32Array(1024);
  valueSize = new Int32Array(1024);
  headerCount = new Int32Array(1024);
  keyBytes = new Uint8Array(64 * 1024);

  reserve(records: number): void {
    const need = this.n + records;
    if (need <= this.offset.length) return;
    let cap = this.offset.length;
    while (cap < need) cap *= 2;
    const grow = <T extends BigInt64Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a.subarray(0, this.n) as never);
      return b;
    };
    this.offset = grow(this.offset, (n) => new BigInt64Array(n));
    this.timestamp = grow(this.timestamp, (n) => new BigInt64Array(n));
    this.keyLength = grow(this.keyLength, (n) => new Int32Array(n));
    this.keyStart = grow(this.keyStart, (n) => new Int32Array(n));
    this.valueSize = grow(this.valueSize, (n) => new Int32Array(n));
    this.headerCount = grow(this.headerCount, (n) => new Int32Array(n));
  }

  key(k: Uint8Array): void {
    const need = this.keyUsed + k.length;
    if (need > this.keyBytes.length) {
      let cap = this.keyBytes.length;
      while (cap < need) cap *= 2;
      const b = new Uint8Array(cap);
      b.set(this.keyBytes.subarray(0, this.keyUsed));
      this.keyBytes = b;
    }
    this.keyBytes.set(k, this.keyUsed);
    this.keyUsed = need;
  }

  take(): RowsChunk {
    const n = this.n;
    const c: RowsChunk = {
      entries: this.entries,
      records: n,
      offset: this.offset.slice(0, n),
      timestamp: this.timestamp.slice(0, n),
      keyLength: this.keyLength.slice(0, n),
      keyStart: this.keyStart.slice(0, n),
      keyBytes: this.keyBytes.slice(0, this.keyUsed),
      valueSize: this.valueSize.slice(0, n),
      headerCount: this.headerCount.slice(0, n),
    };
    this.entries = [];
    this.n = 0;
    this.keyUsed = 0;
    return c;
  }
}

/**
 * The rows of one segment, `[0, end)` of its `.log` (`end`: the size the building thread saw, so a
 * worker reads the same bytes even if the file grew since), as chunks in file order. CRCs are
 * checked (a mismatch leaves `crcValid` false in the header: its records are still listed).
 * @throws KlxError `not-found` / `io-error` when the `.log` cannot be read. Damage inside the file is
 *   never thrown: it becomes {@link ChunkDamage} entries, and undecodable records a batch `error`.
 */
export function* segmentRowChunks(segment: LogSegment, end: number): Generator<RowsChunk> {
  const b = new ChunkBuilder();
  for (const e of scanSegmentFrom(segment, 0, { verifyCrc: true, end, reuseWindows: true })) {
    if (e.type !== 'batch') {
      b.entries.push({ t: 'damage', type: e.type, position: e.position, size: e.size, code: e.code, reason: e.reason });
    } else {
      const h = e.header;
      const entry: ChunkBatch = { t: 'batch', header: h, first: b.n, count: 0, error: null, marker: null, controlTypes: null };
      b.entries.push(entry);
      let records;
      try {
        records = recordsOf(e);
      } catch (err) {
        const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
        entry.error = { code: k.code, reason: k.reason };
        records = null;
      }
      if (records) {
        if (h.magic === 2 && h.producerId >= 0n && h.isTransactional && h.isControl) {
          const type = markerTypeOf(h, records);
          if (type !== null) entry.marker = { type, offset: records[0]!.offset };
        }
        if (h.isControl) entry.controlTypes = records.map((r) => r.control?.type ?? null) as string[];
        b.reserve(records.length);
        for (const r of records) {
          const i = b.n++;
          b.offset[i] = r.offset;
          b.timestamp[i] = r.timestamp;
          const k = r.key;
          if (k === null) b.keyLength[i] = -1;
          else {
            b.keyStart[i] = b.keyUsed;
            b.keyLength[i] = k.length;
            b.key(k);
          }
          b.valueSize[i] = r.value === null ? -1 : r.value.length;
          b.headerCount[i] = r.headers.length;
        }
        entry.count = records.length;
      }
    }
    if (b.n >= CHUNK_RECORDS || b.keyUsed >= CHUNK_KEY_BYTES || b.entries.length >= CHUNK_RECORDS) yield b.take();
  }
  if (b.entries.length > 0) yield b.take();
}
