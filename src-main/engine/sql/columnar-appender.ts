/**
 * Bulk insert into a DuckDB table one column at a time: rows are written into typed arrays and
 * handed to DuckDB as data chunks of `vector_size()` (2048) rows through its appender
 * (`duckdb_append_data_chunk`, DuckDB's `Appender::AppendDataChunk`).
 *
 * Why not `DuckDBAppender.appendXxx` row by row, or the `DuckDBVector.setItem` wrappers: both cost
 * several microseconds per value in JS (value objects, per-item caches), about 10 s for a million
 * log records. Here fixed-width values go straight into `Int32Array`/`BigInt64Array`/`Uint8Array`
 * columns that are copied into the chunk's vectors once per chunk (`copy_data_to_vector`); BLOB/VARCHAR
 * values of at most 12 bytes are written the same way as DuckDB's inline `string_t`, and each longer
 * one is one native call (`vector_assign_string_element_len`), which copies the bytes into the
 * chunk's own string heap ({@link StringVectorWriter}). The low-level calls come from `@duckdb/node-bindings`, loaded
 * from where `@duckdb/node-api` resolves it, so both always share one native module and version.
 *
 * Invariants: every column of a row must be written (or set null) before {@link ColumnarAppender.endRow};
 * a value written into a chunk is copied by DuckDB when the chunk is appended, so the caller's
 * buffers may be reused right after `endRow`. Nothing is visible in the table before
 * {@link ColumnarAppender.close} (or a full chunk) flushes it.
 */
import { createRequire } from 'node:module';
import { DuckDBDataChunk, type DuckDBAppender, type DuckDBConnection, type DuckDBType } from './duckdb.ts';
import { KlxError } from '../errors.ts';

type Bindings = typeof import('@duckdb/node-bindings');
type Vector = import('@duckdb/node-bindings').Vector;

/** The native bindings `@duckdb/node-api` itself uses (same copy, same version). */
const bindings: Bindings = (() => {
  const requireHere = createRequire(import.meta.url);
  return createRequire(requireHere.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as Bindings;
})();

/**
 * How a column is written:
 * - `int32`: INTEGER; `int64`: BIGINT (bigint values); `bool`: BOOLEAN; `double`: DOUBLE;
 * - `blob`: BLOB (bytes); `varchar`: VARCHAR (JS strings);
 * - `headers`: `STRUCT(key VARCHAR, value BLOB)[]` (Kafka record headers; never NULL, `[]` when none).
 */
export type ColumnKind = 'int32' | 'int64' | 'bool' | 'double' | 'blob' | 'varchar' | 'headers';

/** A Kafka record header as written into a `headers` column. */
export interface HeaderValue {
  key: string;
  value: Uint8Array | null;
}

/** The DuckDB type of each kind, for `CREATE TABLE`. */
export const SQL_TYPE_OF: Record<ColumnKind, string> = {
  int32: 'INTEGER',
  int64: 'BIGINT',
  bool: 'BOOLEAN',
  double: 'DOUBLE',
  blob: 'BLOB',
  varchar: 'VARCHAR',
  headers: 'STRUCT("key" VARCHAR, "value" BLOB)[]',
};

const WIDTH: Record<ColumnKind, number> = { int32: 4, int64: 8, bool: 1, double: 8, blob: 0, varchar: 0, headers: 16 };

/** State of a `headers` column within the current chunk. */
interface ListState {
  /** (offset, length) pairs per row: DuckDB's `list_entry_t` (two uint64). */
  entries: BigUint64Array;
  /** The same bytes as 32-bit words: values stay far below 2^32, so only the low words are written. */
  words: Uint32Array;
  /** Elements written so far in this chunk. */
  size: number;
  /** Elements the child vectors can hold without `list_vector_reserve`. */
  capacity: number;
  keys: Vector | null;
  values: Vector | null;
  /** Validity of the `value` child (1 bit per element), grown with the capacity. */
  valueValidity: Uint8Array;
  valueHasNull: boolean;
}

function listState(rows: number): ListState {
  const entries = new BigUint64Array(rows * 2);
  return { entries, words: new Uint32Array(entries.buffer), size: 0, capacity: 0, keys: null, values: null, valueValidity: new Uint8Array(0), valueHasNull: false };
}

/** True on little-endian hosts (every platform DuckDB ships for); list entries are written as 32-bit words there. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The BLOB/VARCHAR values of one vector, written as DuckDB's `string_t` (`duckdb_string_t` of
 * duckdb.h: a uint32 length, then up to 12 bytes inline, zero-padded; longer values point into the
 * vector's string heap). Values of at most 12 bytes (Kafka keys such as `key-0001234`, format
 * names) are written into {@link structs} here and handed to DuckDB with the other fixed-width
 * columns in one copy; longer ones are copied into {@link longBytes} and assigned one native call
 * each after that copy (DuckDB copies them into the vector's heap). Little-endian hosts only (see
 * {@link LITTLE_ENDIAN}); elsewhere every value takes the native call.
 */
export class StringVectorWriter {
  /** 16 bytes per row: DuckDB's `string_t`. */
  private readonly structs: Uint8Array;
  private readonly lengths: Uint32Array;
  private longBytes = new Uint8Array(64 * 1024);
  private longUsed = 0;
  /** Rows of long values and where their bytes are in {@link longBytes} (or their text). */
  private readonly longRows: number[] = [];
  private readonly longStarts: number[] = [];
  private readonly longLengths: number[] = [];
  private readonly longTexts: (string | null)[] = [];

  constructor(rows: number) {
    this.structs = new Uint8Array(rows * 16);
    this.lengths = new Uint32Array(this.structs.buffer);
  }

  /** Writes `src[start, start + length)` into `row`. */
  bytes(row: number, src: Uint8Array, start: number, length: number): void {
    const at = row * 16;
    const st = this.structs;
    if (length <= 12 && LITTLE_ENDIAN) {
      this.lengths[row * 4] = length;
      let i = 0;
      for (; i < length; i++) st[at + 4 + i] = src[start + i]!;
      for (; i < 12; i++) st[at + 4 + i] = 0;
      return;
    }
    const need = this.longUsed + length;
    if (need > this.longBytes.length) {
      let cap = this.longBytes.length * 2;
      while (cap < need) cap *= 2;
      const grown = new Uint8Array(cap);
      grown.set(this.longBytes.subarray(0, this.longUsed));
      this.longBytes = grown;
    }
    this.longBytes.set(src.subarray(start, start + length), this.longUsed);
    this.longRows.push(row);
    this.longStarts.push(this.longUsed);
    this.longLengths.push(length);
    this.longTexts.push(null);
    this.longUsed = need;
  }

  /**
   * Writes rows `[row, row + n)` from values already laid out as DuckDB's `string_t`
   * (`structs[from * 16, (from + n) * 16)`, as `segment-rows.ts` makes them) in one copy; values
   * longer than 12 bytes (`length[i]` > 12) are taken from `bytes[start[i], start[i] + length[i])`.
   * Rows with a negative length must be set NULL by the caller. Little-endian hosts only (see
   * {@link StringVectorWriter.inlineStructs}).
   */
  structs16(row: number, structs: Uint8Array, bytes: Uint8Array, start: Int32Array, length: Int32Array, from: number, n: number): void {
    this.structs.set(structs.subarray(from * 16, (from + n) * 16), row * 16);
    for (let i = 0; i < n; i++) {
      const len = length[from + i]!;
      if (len > 12) this.bytes(row + i, bytes, start[from + i]!, len);
    }
  }

  /** True when values are handed to DuckDB as `string_t` structs written here (little-endian hosts). */
  static readonly inlineStructs = LITTLE_ENDIAN;

  /** Writes `text` (as UTF-8) into `row`. */
  text(row: number, text: string): void {
    const n = text.length;
    if (n <= 12 && LITTLE_ENDIAN) {
      const at = row * 16;
      const st = this.structs;
      let ascii = true;
      for (let i = 0; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c > 0x7f) {
          ascii = false;
          break;
        }
        st[at + 4 + i] = c;
      }
      if (ascii) {
        this.lengths[row * 4] = n;
        for (let i = n; i < 12; i++) st[at + 4 + i] = 0;
        return;
      }
    }
    this.longRows.push(row);
    this.longStarts.push(0);
    this.longLengths.push(0);
    this.longTexts.push(text);
  }

  /** Forgets every value written since the last {@link StringVectorWriter.flush} (after a failed fill). */
  reset(): void {
    this.structs.fill(0);
    this.longRows.length = 0;
    this.longStarts.length = 0;
    this.longLengths.length = 0;
    this.longTexts.length = 0;
    this.longUsed = 0;
  }

  /**
   * Hands rows `[0, n)` to `vector`: the inline values in one copy, then each long one. Rows not
   * written are empty values (set them NULL in the vector's validity).
   */
  flush(vector: Vector, n: number): void {
    if (LITTLE_ENDIAN) {
      bindings.copy_data_to_vector(vector, 0, this.structs.buffer as ArrayBuffer, this.structs.byteOffset, n * 16);
      // Rows left unwritten in the next chunk (NULLs) then read as empty inline values, never as stale pointers.
      this.structs.fill(0, 0, n * 16);
    }
    for (let i = 0; i < this.longRows.length; i++) {
      const t = this.longTexts[i];
      if (t !== null && t !== undefined) bindings.vector_assign_string_element(vector, this.longRows[i]!, t);
      else bindings.vector_assign_string_element_len(vector, this.longRows[i]!, this.longBytes.subarray(this.longStarts[i]!, this.longStarts[i]! + this.longLengths[i]!));
    }
    this.longRows.length = 0;
    this.longStarts.length = 0;
    this.longLengths.length = 0;
    this.longTexts.length = 0;
    this.longUsed = 0;
  }
}

/** See the module comment. */
export class ColumnarAppender {
  /** Rows per chunk (DuckDB's vector size). */
  readonly chunkRows: number;
  /** Rows appended so far (flushed or not). */
  rowsAppended = 0;
  private readonly kinds: ColumnKind[];
  private readonly types: DuckDBType[];
  private readonly data: (Int32Array | BigInt64Array | Float64Array | Uint8Array | null)[];
  private readonly validity: Uint8Array[];
  private readonly hasNull: boolean[];
  private readonly lists: (ListState | null)[];
  private readonly strings: (StringVectorWriter | null)[];
  private chunk: DuckDBDataChunk | undefined;
  private vectors!: Vector[];
  private row = 0;
  private closed = false;

  private constructor(
    private readonly appender: DuckDBAppender,
    kinds: ColumnKind[],
    private readonly table: string,
  ) {
    this.kinds = kinds;
    this.chunkRows = bindings.vector_size();
    const n = appender.columnCount;
    if (n !== kinds.length) throw new KlxError('internal', `table ${table} has ${n} columns but ${kinds.length} column kinds were given`);
    this.types = Array.from({ length: n }, (_, i) => appender.columnType(i));
    const rows = this.chunkRows;
    this.data = kinds.map((k) => (k === 'int32' ? new Int32Array(rows) : k === 'int64' ? new BigInt64Array(rows) : k === 'double' ? new Float64Array(rows) : k === 'bool' ? new Uint8Array(rows) : null));
    this.validity = kinds.map(() => new Uint8Array(rows / 8).fill(0xff));
    this.hasNull = kinds.map(() => false);
    this.lists = kinds.map((k) => (k === 'headers' ? listState(rows) : null));
    this.strings = kinds.map((k) => (k === 'blob' || k === 'varchar' ? new StringVectorWriter(rows) : null));
    this.newChunk();
  }

  /**
   * Opens an appender on `[catalog.]schema.table` (catalog: an attached database), whose columns must be, in order, of the given kinds.
   * @throws KlxError `internal` when the column count differs; DuckDB's error when the table is missing.
   */
  static async create(connection: DuckDBConnection, schema: string | null, table: string, kinds: ColumnKind[], catalog: string | null = null): Promise<ColumnarAppender> {
    const appender = await connection.createAppender(table, schema, catalog);
    return new ColumnarAppender(appender, kinds, [catalog, schema, table].filter((x) => x !== null).join('.'));
  }

  /**
   * Readies the chunk for the next rows: created once, then reset after each append (DuckDB's
   * `DataChunk::Reset`: the vectors keep their buffers and addresses, the string heap and validity
   * are cleared), so a build allocates no chunk per 2048 rows.
   */
  private newChunk(): void {
    if (this.chunk === undefined) {
      this.chunk = DuckDBDataChunk.create(this.types, this.chunkRows);
      this.vectors = this.kinds.map((_, i) => bindings.data_chunk_get_vector(this.chunk!.chunk, i));
    } else {
      bindings.data_chunk_reset(this.chunk.chunk);
      bindings.data_chunk_set_size(this.chunk.chunk, this.chunkRows);
    }
    for (const l of this.lists) {
      if (!l) continue;
      l.size = 0;
      l.capacity = 0;
      l.keys = null;
      l.values = null;
      l.valueHasNull = false;
    }
  }

  /** Writes an INTEGER. */
  int32(col: number, v: number): void {
    (this.data[col] as Int32Array)[this.row] = v;
  }

  /** Writes a BIGINT. */
  int64(col: number, v: bigint): void {
    (this.data[col] as BigInt64Array)[this.row] = v;
  }

  /** Writes a DOUBLE. */
  double(col: number, v: number): void {
    (this.data[col] as Float64Array)[this.row] = v;
  }

  /** Writes a BOOLEAN. */
  bool(col: number, v: boolean): void {
    (this.data[col] as Uint8Array)[this.row] = v ? 1 : 0;
  }

  /** Writes a BLOB (copied), or NULL. */
  blob(col: number, v: Uint8Array | null): void {
    if (v === null) this.null(col);
    else this.strings[col]!.bytes(this.row, v, 0, v.length);
  }

  /** Writes a VARCHAR, or NULL. */
  varchar(col: number, v: string | null): void {
    if (v === null) this.null(col);
    else this.strings[col]!.text(this.row, v);
  }

  /** Writes a `headers` list (`[]` for none). */
  headers(col: number, hs: readonly HeaderValue[]): void {
    const l = this.lists[col]!;
    if (LITTLE_ENDIAN) {
      l.words[this.row * 4] = l.size;
      l.words[this.row * 4 + 2] = hs.length;
    } else {
      l.entries[this.row * 2] = BigInt(l.size);
      l.entries[this.row * 2 + 1] = BigInt(hs.length);
    }
    if (hs.length === 0) return;
    const vec = this.vectors[col]!;
    const need = l.size + hs.length;
    if (need > l.capacity || l.keys === null) {
      const capacity = Math.max(need, l.capacity * 2, 64);
      bindings.list_vector_reserve(vec, capacity);
      const grown = new Uint8Array(Math.ceil(capacity / 64) * 8).fill(0xff);
      grown.set(l.valueValidity.subarray(0, Math.min(l.valueValidity.length, grown.length)));
      l.valueValidity = grown;
      l.capacity = capacity;
      const child = bindings.list_vector_get_child(vec);
      l.keys = bindings.struct_vector_get_child(child, 0);
      l.values = bindings.struct_vector_get_child(child, 1);
    }
    for (const h of hs) {
      bindings.vector_assign_string_element(l.keys!, l.size, h.key);
      if (h.value === null) {
        l.valueValidity[l.size >> 3]! &= ~(1 << (l.size & 7));
        l.valueHasNull = true;
      } else bindings.vector_assign_string_element_len(l.values!, l.size, h.value);
      l.size++;
    }
  }

  /**
   * Appends `count` rows column-wise: `fill(row, from, n)` must write every column of rows
   * `[row, row + n)` of the current chunk from the caller's rows `[from, from + n)` (with the
   * `*Range` / `fill*` methods); it is called once per chunk the rows reach.
   */
  appendRows(count: number, fill: (row: number, from: number, n: number) => void): void {
    let from = 0;
    while (from < count) {
      const n = Math.min(count - from, this.chunkRows - this.row);
      fill(this.row, from, n);
      this.row += n;
      this.rowsAppended += n;
      from += n;
      if (this.row === this.chunkRows) this.flushChunk();
    }
  }

  /** Writes BIGINTs `src[from, from + n)` into rows `[row, row + n)`. */
  int64Range(col: number, row: number, src: BigInt64Array, from: number, n: number): void {
    (this.data[col] as BigInt64Array).set(src.subarray(from, from + n), row);
  }

  /** Writes INTEGERs `src[from, from + n)` into rows `[row, row + n)`, NULL where `src` is negative when `negativeIsNull`. */
  int32Range(col: number, row: number, src: Int32Array, from: number, n: number, negativeIsNull = false): void {
    (this.data[col] as Int32Array).set(src.subarray(from, from + n), row);
    if (negativeIsNull) for (let i = 0; i < n; i++) if (src[from + i]! < 0) this.nullRow(col, row + i);
  }

  /** Writes the BLOBs `bytes[start[i], start[i] + length[i])` for i in `[from, from + n)` into rows `[row, row + n)`; NULL where the length is negative. */
  blobRange(col: number, row: number, bytes: Uint8Array, start: Int32Array, length: Int32Array, from: number, n: number): void {
    const out = this.strings[col]!;
    for (let i = 0; i < n; i++) {
      const len = length[from + i]!;
      if (len < 0) this.nullRow(col, row + i);
      else out.bytes(row + i, bytes, start[from + i]!, len);
    }
  }

  /**
   * As {@link ColumnarAppender.blobRange}, from keys already laid out as DuckDB's `string_t`
   * (`structs`, 16 bytes per value, see `segment-rows.ts` `RowsChunk.keyStructs`): one bulk copy,
   * then one native call per value longer than 12 bytes.
   */
  blobStructRange(col: number, row: number, structs: Uint8Array, bytes: Uint8Array, start: Int32Array, length: Int32Array, from: number, n: number): void {
    if (!StringVectorWriter.inlineStructs) {
      this.blobRange(col, row, bytes, start, length, from, n);
      return;
    }
    this.strings[col]!.structs16(row, structs, bytes, start, length, from, n);
    for (let i = 0; i < n; i++) if (length[from + i]! < 0) this.nullRow(col, row + i);
  }

  /** Writes the same INTEGER into rows `[row, row + n)`. */
  fillInt32(col: number, row: number, n: number, v: number): void {
    (this.data[col] as Int32Array).fill(v, row, row + n);
  }

  /** Writes the same BIGINT into rows `[row, row + n)`. */
  fillInt64(col: number, row: number, n: number, v: bigint): void {
    (this.data[col] as BigInt64Array).fill(v, row, row + n);
  }

  /** Writes the same BOOLEAN (or NULL) into rows `[row, row + n)`. */
  fillBool(col: number, row: number, n: number, v: boolean | null): void {
    if (v === null) this.fillNull(col, row, n);
    else (this.data[col] as Uint8Array).fill(v ? 1 : 0, row, row + n);
  }

  /** Sets rows `[row, row + n)` of a column to NULL. */
  fillNull(col: number, row: number, n: number): void {
    for (let i = 0; i < n; i++) this.nullRow(col, row + i);
  }

  /** Writes a VARCHAR (or NULL) into row `row` of the current chunk. */
  varcharAt(col: number, row: number, v: string | null): void {
    if (v === null) this.nullRow(col, row);
    else this.strings[col]!.text(row, v);
  }

  private nullRow(col: number, row: number): void {
    const v = this.validity[col]!;
    v[row >> 3]! &= ~(1 << (row & 7));
    this.hasNull[col] = true;
  }

  /** Sets a column of the current row to NULL. */
  null(col: number): void {
    const v = this.validity[col]!;
    v[this.row >> 3]! &= ~(1 << (this.row & 7));
    this.hasNull[col] = true;
  }

  /** Ends the current row; appends the chunk to the table when it is full. */
  endRow(): void {
    this.row++;
    this.rowsAppended++;
    if (this.row === this.chunkRows) this.flushChunk();
  }

  private flushChunk(): void {
    const n = this.row;
    if (n === 0) return;
    const raw = this.chunk!.chunk;
    bindings.data_chunk_set_size(raw, n);
    for (let c = 0; c < this.kinds.length; c++) {
      const vec = this.vectors[c]!;
      const d = this.data[c];
      if (d) bindings.copy_data_to_vector(vec, 0, d.buffer as ArrayBuffer, d.byteOffset, n * WIDTH[this.kinds[c]!]);
      this.strings[c]?.flush(vec, n);
      const l = this.lists[c];
      if (l) {
        bindings.copy_data_to_vector(vec, 0, l.entries.buffer as ArrayBuffer, l.entries.byteOffset, n * 16);
        if (l.size > 0) {
          if (l.valueHasNull) {
            bindings.vector_ensure_validity_writable(l.values!);
            bindings.copy_data_to_vector_validity(l.values!, 0, l.valueValidity.buffer as ArrayBuffer, l.valueValidity.byteOffset, Math.ceil(l.size / 64) * 8);
            l.valueValidity.fill(0xff);
          }
          bindings.list_vector_set_size(vec, l.size);
        }
      }
      if (this.hasNull[c]) {
        const v = this.validity[c]!;
        bindings.vector_ensure_validity_writable(vec);
        bindings.copy_data_to_vector_validity(vec, 0, v.buffer as ArrayBuffer, v.byteOffset, v.byteLength);
        v.fill(0xff);
        this.hasNull[c] = false;
      }
    }
    try {
      this.appender.appendDataChunk(this.chunk!);
    } catch (err) {
      throw new KlxError('internal', `appending ${n} rows to ${this.table} failed: ${(err as Error).message}`, { cause: err });
    }
    this.row = 0;
    this.newChunk();
  }

  /**
   * Appends what is buffered and closes the appender (the rows are then in the table).
   * @throws KlxError `internal` when DuckDB refuses the data.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flushChunk();
    try {
      this.appender.closeSync();
    } catch (err) {
      throw new KlxError('internal', `closing the appender of ${this.table} failed: ${(err as Error).message}`, { cause: err });
    }
  }
}
