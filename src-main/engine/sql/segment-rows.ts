/**
 * One segment of a partition decoded for the SQL tables (issue 16): its batches, damage and records
 * as {@link RowsChunk}s of typed-array columns, in file order. Segments are independent, so the
 * build decodes them in worker threads (`sql-build-pool.ts`, `sql-build-worker.ts`) or, with one
 * core, in the building thread; either way `log-tables.ts` appends the chunks in segment order, so
 * the tables are the same byte for byte.
 *
 * A chunk holds what a structured clone moves cheaply: the record columns as typed arrays (their
 * buffers are transferred, not copied) in the layout of DuckDB's vectors (int64 offsets and
 * timestamps, int32 sizes, the keys as DuckDB `string_t` structs beside the key bytes), so the
 * building thread copies them into its data chunks in bulk; and one small entry per batch or
 * damaged region (the batch header, and for a transactional control batch its marker).
 * The records of a v2 data batch are read straight from the batch's bytes into the columns
 * (`visitV2Records`: the checks and errors of `decodeV2Records`, without a record object or, on
 * little-endian hosts, a bigint per record); control batches and legacy entries go through the
 * engine's record objects (`recordsOf`).
 * A chunk ends after the batch that brings it to {@link CHUNK_RECORDS} records or
 * {@link CHUNK_KEY_BYTES} bytes of keys, so a chunk's memory is bounded by those plus one batch.
 *
 * Units: offsets and timestamps are int64 (`bigint` / `BigInt64Array`), sizes and positions bytes.
 */
import { KlxError } from '../errors.ts';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { BatchHeader } from '../format/types.ts';
import { recordsOf, scanSegmentFrom } from '../log/log-walk.ts';
import { inflateRecordsArea, recordTimestampDeltaAt, visitV2Records, type V2RecordVisitor } from '../format/record-batch.ts';
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
  /**
   * The keys as DuckDB's `string_t` (16 bytes per record: uint32 length, then the key when it has at
   * most 12 bytes, zero-padded; longer keys and null keys: zeros after the length, the building
   * thread assigns the long ones from `keyBytes` and sets the null ones NULL).
   */
  keyStructs: Uint8Array;
  /** Value size in bytes, −1 for a null value. */
  valueSize: Int32Array;
  headerCount: Int32Array;
}

/** The buffers of a chunk, for `postMessage`'s transfer list. */
export function chunkTransferList(c: RowsChunk): ArrayBuffer[] {
  return [c.offset, c.timestamp, c.keyLength, c.keyStart, c.keyBytes, c.keyStructs, c.valueSize, c.headerCount].map((a) => a.buffer as ArrayBuffer);
}

/** Bytes of DuckDB's `string_t` (`duckdb_string_t`): a uint32 length, then 12 bytes (inline value, or prefix and pointer). */
export const STRING_T_BYTES = 16;
/** Longest value DuckDB keeps inline in a `string_t` (bytes). */
export const STRING_T_INLINE_BYTES = 12;

/** True on little-endian hosts: int64 columns are then written as two 32-bit words, key structs as DuckDB lays them out. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const TWO_32 = 2 ** 32;
const TWO_52 = 2 ** 52;
const EMPTY = new Uint8Array(0);

/** Which entries of a segment {@link segmentRowChunks} gives (byte positions in the `.log`). */
export interface SegmentPart {
  /** Only entries starting at or after this position (default 0). */
  from?: number;
  /** Only entries starting before this position (default: all). */
  before?: number;
}

/** Growable columns of the chunk being filled. */
class ChunkBuilder {
  entries: (ChunkBatch | ChunkDamage)[] = [];
  n = 0;
  keyUsed = 0;
  offset = new BigInt64Array(1024);
  timestamp = new BigInt64Array(1024);
  /** `offset` / `timestamp` as (low, high) 32-bit words (little-endian hosts), written without a bigint per record. */
  offsetWords = new Int32Array(this.offset.buffer);
  timestampWords = new Int32Array(this.timestamp.buffer);
  keyLength = new Int32Array(1024);
  keyStart = new Int32Array(1024);
  keyStructs = new Uint8Array(1024 * STRING_T_BYTES);
  keyStructWords = new Uint32Array(this.keyStructs.buffer);
  valueSize = new Int32Array(1024);
  headerCount = new Int32Array(1024);
  keyBytes = new Uint8Array(64 * 1024);

  // The batch being visited by `visit` (set by `visitBatch`).
  private data: Uint8Array = new Uint8Array(0);
  private first = 0;
  private baseLo = 0;
  private baseHi = 0;
  private tsLo = 0;
  private tsHi = 0;
  private baseTimestamp = 0n;
  private createTime = true;

  reserve(records: number): void {
    const need = this.n + records;
    if (need <= this.offset.length) return;
    let cap = this.offset.length;
    while (cap < need) cap *= 2;
    const grow = <T extends BigInt64Array | Int32Array | Uint8Array>(a: T, make: (n: number) => T, width = 1): T => {
      const b = make(cap * width);
      b.set(a.subarray(0, this.n * width) as never);
      return b;
    };
    this.offset = grow(this.offset, (n) => new BigInt64Array(n));
    this.timestamp = grow(this.timestamp, (n) => new BigInt64Array(n));
    this.offsetWords = new Int32Array(this.offset.buffer);
    this.timestampWords = new Int32Array(this.timestamp.buffer);
    this.keyLength = grow(this.keyLength, (n) => new Int32Array(n));
    this.keyStart = grow(this.keyStart, (n) => new Int32Array(n));
    this.keyStructs = grow(this.keyStructs, (n) => new Uint8Array(n), STRING_T_BYTES);
    this.keyStructWords = new Uint32Array(this.keyStructs.buffer);
    this.valueSize = grow(this.valueSize, (n) => new Int32Array(n));
    this.headerCount = grow(this.headerCount, (n) => new Int32Array(n));
  }

  private ensureKeyBytes(more: number): void {
    const need = this.keyUsed + more;
    if (need <= this.keyBytes.length) return;
    let cap = this.keyBytes.length;
    while (cap < need) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.keyBytes.subarray(0, this.keyUsed));
    this.keyBytes = b;
  }

  /** Writes the key of row `i` (`src[start, start + length)`, or null when `length` < 0): its bytes and its `string_t`. */
  private keyAt(i: number, src: Uint8Array, start: number, length: number): void {
    const st = this.keyStructs;
    const at = i * STRING_T_BYTES;
    if (length < 0) {
      this.keyLength[i] = -1;
      st.fill(0, at, at + STRING_T_BYTES);
      return;
    }
    this.ensureKeyBytes(length);
    const kb = this.keyBytes;
    const used = this.keyUsed;
    this.keyStart[i] = used;
    this.keyLength[i] = length;
    this.keyStructWords[i * 4] = length;
    if (length <= STRING_T_INLINE_BYTES) {
      let j = 0;
      for (; j < length; j++) {
        const b = src[start + j]!;
        kb[used + j] = b;
        st[at + 4 + j] = b;
      }
      for (; j < STRING_T_INLINE_BYTES; j++) st[at + 4 + j] = 0;
    } else {
      // Not inline: the building thread assigns these from keyBytes (DuckDB copies them into the vector's heap).
      kb.set(src.subarray(start, start + length), used);
      st.fill(0, at + 4, at + STRING_T_BYTES);
    }
    this.keyUsed = used + length;
  }

  /** Writes a key given as bytes (or null). */
  key(i: number, k: Uint8Array | null): void {
    if (k === null) this.keyAt(i, EMPTY, 0, -1);
    else this.keyAt(i, k, 0, k.length);
  }

  /**
   * Writes the `h.recordCount` records of a checked-on-the-fly v2 data batch whose records area is
   * `data` (inflated), straight from its bytes (no object or bigint per record on little-endian hosts).
   * @throws KlxError as `decodeV2Records` (the rows written so far are then dropped by the caller).
   */
  visitBatch(h: BatchHeader, data: Uint8Array): void {
    const count = h.recordCount;
    this.reserve(count);
    this.data = data;
    this.first = this.n;
    const base = BigInt.asUintN(64, h.baseOffset);
    this.baseLo = Number(base & 0xffffffffn);
    this.baseHi = Number(base >> 32n) | 0;
    this.createTime = h.timestampType !== 'LogAppendTime';
    if (this.createTime) {
      this.baseTimestamp = h.baseTimestamp;
      const ts = BigInt.asUintN(64, h.baseTimestamp);
      this.tsLo = Number(ts & 0xffffffffn);
      this.tsHi = Number(ts >> 32n) | 0;
    } else this.timestamp.fill(h.maxTimestamp, this.first, this.first + count);
    visitV2Records(h, data, this.visit);
    this.n = this.first + count;
  }

  private readonly visit: V2RecordVisitor = (i, recStart, offsetDelta, _keyAt, keyLength, valueLength, headerCount, keyStart) => {
    const r = this.first + i;
    if (LITTLE_ENDIAN) {
      let lo = this.baseLo + offsetDelta;
      let hi = this.baseHi;
      if (lo >= TWO_32 || lo < 0) {
        const carry = Math.floor(lo / TWO_32);
        lo -= carry * TWO_32;
        hi += carry;
      }
      this.offsetWords[2 * r] = lo;
      this.offsetWords[2 * r + 1] = hi;
    } else this.offset[r] = BigInt.asIntN(64, (BigInt(this.baseHi) << 32n) + BigInt(this.baseLo) + BigInt(offsetDelta));
    if (this.createTime) {
      const delta = recordTimestampDeltaAt(this.data, recStart);
      // Below 2^52 the sum with the low word (< 2^32) stays exact in a double; larger deltas (damaged bytes) go through BigInt.
      if (typeof delta === 'number' && LITTLE_ENDIAN && delta < TWO_52 && delta > -TWO_52) {
        let lo = this.tsLo + delta;
        let hi = this.tsHi;
        if (lo >= TWO_32 || lo < 0) {
          const carry = Math.floor(lo / TWO_32);
          lo -= carry * TWO_32;
          hi += carry;
        }
        this.timestampWords[2 * r] = lo;
        this.timestampWords[2 * r + 1] = hi;
      } else this.timestamp[r] = this.baseTimestamp + BigInt(delta);
    }
    this.keyAt(r, this.data, keyStart, keyLength);
    this.valueSize[r] = valueLength;
    this.headerCount[r] = headerCount;
  };

  /** Drops rows `[n, this.n)` (a batch whose records turned out undecodable). */
  truncate(n: number, keyUsed: number): void {
    this.n = n;
    this.keyUsed = keyUsed;
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
      keyStructs: this.keyStructs.slice(0, n * STRING_T_BYTES),
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
 *
 * `part` splits a segment in two at a byte position P, so that two threads share it: `before: P`
 * gives the entries (batches, damaged regions) that start before P, `from: P` those that start at
 * or after it. Both walk the segment from its start with the same reader (the entries before P are
 * skipped, not decoded, by `from`), so they agree on where every entry starts even past damage,
 * and the two parts together are the whole segment's chunks' entries and rows, in order.
 * @throws KlxError `not-found` / `io-error` when the `.log` cannot be read. Damage inside the file is
 *   never thrown: it becomes {@link ChunkDamage} entries, and undecodable records a batch `error`.
 */
export function* segmentRowChunks(segment: LogSegment, end: number, part: SegmentPart = {}): Generator<RowsChunk> {
  const b = new ChunkBuilder();
  const from = part.from ?? 0;
  const before = part.before ?? Infinity;
  for (const e of scanSegmentFrom(segment, 0, { verifyCrc: true, end, reuseWindows: true })) {
    const position = e.type === 'batch' ? e.header.position : e.position;
    if (position >= before) break;
    if (position < from) continue;
    if (e.type !== 'batch') {
      b.entries.push({ t: 'damage', type: e.type, position: e.position, size: e.size, code: e.code, reason: e.reason });
    } else {
      const h = e.header;
      const entry: ChunkBatch = { t: 'batch', header: h, first: b.n, count: 0, error: null, marker: null, controlTypes: null };
      b.entries.push(entry);
      if (!e.records && h.magic === 2 && !h.isControl) {
        // A v2 data batch: its records go straight from the bytes into the columns.
        const n = b.n;
        const keyUsed = b.keyUsed;
        try {
          const area = inflateRecordsArea(h, e.bytes);
          b.visitBatch(h, new Uint8Array(area.buffer, area.byteOffset, area.length));
          entry.count = h.recordCount;
        } catch (err) {
          b.truncate(n, keyUsed);
          const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
          entry.error = { code: k.code, reason: k.reason };
        }
      } else {
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
            b.key(i, r.key);
            b.valueSize[i] = r.value === null ? -1 : r.value.length;
            b.headerCount[i] = r.headers.length;
          }
          entry.count = records.length;
        }
      }
    }
    if (b.n >= CHUNK_RECORDS || b.keyUsed >= CHUNK_KEY_BYTES || b.entries.length >= CHUNK_RECORDS) yield b.take();
  }
  if (b.entries.length > 0) yield b.take();
}
