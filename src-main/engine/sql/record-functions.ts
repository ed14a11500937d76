/**
 * The record columns the SQL cache does not keep (issue 16): values, headers and the decoded
 * columns are read back from the segments when a query asks for them, through three DuckDB scalar
 * functions over a record's place on disk (partition_id, segment_base_offset, position of its batch,
 * offset):
 *
 * - `klx_value(...) → BLOB`: the value, cut to the value cap at a UTF-8 character boundary (as the
 *   cached column was; `value_size` gives the real size), NULL for a null value;
 * - `klx_headers(...) → STRUCT(key VARCHAR, value BLOB)[]`: the record headers (`[]` when none);
 * - `klx_decoded(...) → STRUCT(key_format, value_format, key_decoded, value_decoded VARCHAR,
 *   schema_id INTEGER, decode_error VARCHAR)`: the decode layer's result for key and value (issue
 *   11), NULL when decoding is off and for control records outside `__cluster_metadata`.
 *
 * The views `records` / `latest` / `state` call them, so a query that names none of these columns
 * never reads the log (DuckDB drops unused view columns), and one that does pays one read of each
 * batch it touches (the last batches read are kept, one per DuckDB thread, so records of one batch cost one read). What was
 * reached is counted ({@link RecordFunctions.reads}: distinct batches and their bytes in the log since
 * {@link RecordFunctions.startCount}) so a query can say what it cost.
 *
 * Cancel: while {@link RecordFunctionsSource.cancelled} says so, every call fails at once with DuckDB's
 * function error (the query stops within one chunk of rows instead of decoding the chunks DuckDB's
 * threads have queued for the JS thread).
 *
 * DuckDB runs these functions on its own threads and waits for the JS thread, so they are only
 * usable from async queries (never `runSync`). They are registered per DuckDB instance (DuckDB's
 * system catalog), on the build instance (the views are bound there) and on each query instance.
 *
 * The log must be the one the tables were built from: a batch that is not at its recorded position
 * any more, or lacks the recorded offset, is a KlxError `io-error` ("the log changed since the SQL
 * tables were built"), never another record's bytes.
 */
import { createRequire } from 'node:module';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { BIGINT, BLOB, INTEGER, LIST, STRUCT, VARCHAR, type DuckDBConnection, type DuckDBType } from './duckdb.ts';
import { errorAt, KlxError } from '../errors.ts';
import { segmentFileName } from '../files/file-names.ts';
import { scanEntries, type ByteSource } from '../format/log-reader.ts';
import type { KafkaRecord } from '../format/types.ts';
import type { RecordDecoder } from '../decode/record-decoder.ts';
import { recordsOf } from '../log/log-walk.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import { StringVectorWriter } from './columnar-appender.ts';

type Bindings = typeof import('@duckdb/node-bindings');
type Vector = import('@duckdb/node-bindings').Vector;
type DataChunk = import('@duckdb/node-bindings').DataChunk;

/** The native bindings `@duckdb/node-api` itself uses (same copy, same version). */
const bindings: Bindings = (() => {
  const requireHere = createRequire(import.meta.url);
  return createRequire(requireHere.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as Bindings;
})();

/** Names of the functions, as the views call them. */
export const RECORD_FUNCTIONS = { value: 'klx_value', headers: 'klx_headers', decoded: 'klx_decoded' } as const;

/** The arguments every function takes, as SQL over `klx_internal.record_rows r`. */
export const RECORD_PLACE_SQL = 'r.partition_id, r.segment_base_offset, r."position", r."offset"';

/** What the functions reached in the log. */
export interface LogReads {
  /** Distinct batches whose records were read back (a batch read twice, once evicted, counts once). */
  batches: number;
  /** Bytes those batches take in the `.log` files (each batch's size on disk, log overhead included; not the read windows). */
  bytes: number;
}

/** What {@link registerRecordFunctions} needs: the partitions by `partition_id`, the value cap, the decoder. */
export interface RecordFunctionsSource {
  /** `partitions[partition_id]`. */
  partitions: readonly PartitionLog[];
  /** Bytes of a value `klx_value` returns (the tables' value cap). */
  valueCapBytes: number;
  /** The decode layer (asked for on the first decoded row, so `_schemas` is read only when needed); null: `klx_decoded` is NULL. */
  decoder: () => RecordDecoder | null;
  /** Asked before each chunk of rows: true makes the call fail at once with {@link CANCELLED_MESSAGE} (a cancelled query). */
  cancelled?: () => boolean;
}

/** The function error DuckDB reports when {@link RecordFunctionsSource.cancelled} stopped a call. */
export const CANCELLED_MESSAGE = 'klx: query cancelled';

/** The decoded struct's fields, in order. */
const DECODED_FIELDS = ['key_format', 'value_format', 'key_decoded', 'value_decoded', 'schema_id', 'decode_error'] as const;

/** Read window over a `.log`: sequential batch reads are served from one 1 MiB read. */
const WINDOW_BYTES = 1 << 20;

/**
 * Windows and batches kept per reader. DuckDB scans a table with one thread per core, each on its
 * own row group, and calls the functions with their chunks in turn: each thread reads its own
 * stretch of the log, so one window (or one batch) per thread, not one in all, keeps reads
 * sequential (with a single window, two threads made every chunk read 1 MiB again: 9× the log's
 * bytes for a query over every value).
 */
const KEPT = 4;

/** A `.log` opened for the functions, read through up to {@link KEPT} windows (least recently used replaced). */
class WindowedLog implements ByteSource {
  readonly size: number;
  private readonly fd: number;
  /** Windows, most recently used first. */
  private readonly windows: { start: number; bytes: Buffer }[] = [];

  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'r');
    } catch (err) {
      throw new KlxError((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not-found' : 'io-error', `cannot read the segment: ${(err as Error).message}`, { file: path, cause: err });
    }
    this.size = fstatSync(this.fd).size;
  }

  read(position: number, length: number): Buffer {
    const ws = this.windows;
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i]!;
      if (position >= w.start && position + length <= w.start + w.bytes.length) {
        if (i > 0) {
          ws.splice(i, 1);
          ws.unshift(w);
        }
        return w.bytes.subarray(position - w.start, position - w.start + length);
      }
    }
    const n = Math.max(0, Math.min(Math.max(length, WINDOW_BYTES), this.size - position));
    const buf = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const got = readSync(this.fd, buf, done, n - done, position + done);
      if (got === 0) break;
      done += got;
    }
    ws.unshift({ start: position, bytes: buf.subarray(0, done) });
    if (ws.length > KEPT) ws.pop();
    return buf.subarray(0, Math.min(length, done));
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A batch read back: its place and records, and where the last lookup in it ended. */
interface KeptBatch {
  pid: number;
  segment: bigint;
  position: number;
  records: KafkaRecord[];
  index: number;
}

/**
 * Reads records back by their place on disk (see the module comment), keeping the last batches read.
 */
export class RecordReader {
  /** What was reached since {@link startCount} (distinct batches, their bytes in the log). */
  readonly reads: LogReads = { batches: 0, bytes: 0 };
  /** Batches counted since {@link startCount}: positions by `partition_id` and segment. */
  private counted = new Map<number, Map<bigint, Set<number>>>();
  private readonly logs = new Map<string, WindowedLog>();
  private readonly segments: Map<bigint, LogSegment>[];
  /** The last batches read (up to {@link KEPT}, most recently used first: one per DuckDB thread). */
  private kept: KeptBatch[] = [];

  constructor(readonly source: RecordFunctionsSource) {
    this.segments = source.partitions.map((p) => new Map(p.segments.map((s) => [s.baseOffset, s])));
  }

  /**
   * The record at `offset` of the batch at byte `position` of segment `segmentBase` of partition `pid`.
   * @throws KlxError `io-error` when the log changed since the tables were built (see the module
   *   comment), `not-found` when the segment is gone, `corrupt-batch` when the batch cannot be decoded.
   */
  record(pid: number, segmentBase: bigint, position: number, offset: bigint): KafkaRecord {
    const kept = this.kept;
    let b = kept[0];
    if (b === undefined || b.pid !== pid || b.segment !== segmentBase || b.position !== position) {
      const i = kept.findIndex((k) => k.pid === pid && k.segment === segmentBase && k.position === position);
      if (i > 0) {
        b = kept[i]!;
        kept.splice(i, 1);
        kept.unshift(b);
      } else {
        b = this.loadBatch(pid, segmentBase, position);
        kept.unshift(b);
        if (kept.length > KEPT) kept.pop();
      }
    }
    const rs = b.records;
    // Records of a batch come in offset order and queries mostly ask in that order: look from the last hit.
    let i = b.index < rs.length && rs[b.index]!.offset <= offset ? b.index : 0;
    while (i < rs.length && rs[i]!.offset < offset) i++;
    const r = rs[i];
    if (r === undefined || r.offset !== offset) throw this.changed(pid, segmentBase, position, `the batch there holds no record at offset ${offset}`);
    b.index = i;
    return r;
  }

  private loadBatch(pid: number, segmentBase: bigint, position: number): KeptBatch {
    const log = this.source.partitions[pid];
    const segment = log ? this.segments[pid]!.get(segmentBase) : undefined;
    if (!log || !segment) throw this.changed(pid, segmentBase, position, 'no such segment');
    const file = segment.files.log;
    let src = this.logs.get(file);
    if (!src) {
      src = new WindowedLog(file);
      this.logs.set(file, src);
    }
    const it = scanEntries(src, { start: position, verifyCrc: false, resync: false, chunkSize: 64 * 1024, file });
    const first = it.next();
    void it.return(undefined);
    const e = first.done ? undefined : first.value;
    if (!e || e.type !== 'batch') throw this.changed(pid, segmentBase, position, 'no batch starts there');
    let records: KafkaRecord[];
    try {
      records = recordsOf(e);
    } catch (err) {
      throw errorAt(err, { file, position });
    }
    this.count(pid, segmentBase, position, e.bytes.length);
    return { pid, segment: segmentBase, position, records, index: 0 };
  }

  /** Counts a batch of `size` bytes once per {@link startCount}. */
  private count(pid: number, segmentBase: bigint, position: number, size: number): void {
    let bySegment = this.counted.get(pid);
    if (!bySegment) this.counted.set(pid, (bySegment = new Map()));
    let positions = bySegment.get(segmentBase);
    if (!positions) bySegment.set(segmentBase, (positions = new Set()));
    if (positions.has(position)) return;
    positions.add(position);
    this.reads.batches++;
    this.reads.bytes += size;
  }

  /** Zeroes {@link reads}: the next batches reached count again, each once (the kept batches are dropped, so each is read and counted). */
  startCount(): void {
    this.counted = new Map();
    this.kept = [];
    this.reads.batches = 0;
    this.reads.bytes = 0;
  }

  private changed(pid: number, segmentBase: bigint, position: number, why: string): KlxError {
    const log = this.source.partitions[pid];
    const name = log ? `${log.topic}-${log.partition}` : `partition_id ${pid}`;
    return new KlxError('io-error', `the log changed since the SQL tables were built (${name}, segment ${segmentBase}, position ${position}: ${why}); reopen the folder to rebuild them`, {
      position,
      ...(log ? { file: join(log.dir, segmentFileName(segmentBase, '.log')) } : {}),
    });
  }

  /** Closes the files. */
  close(): void {
    for (const l of this.logs.values()) l.close();
    this.logs.clear();
    this.kept = [];
  }
}

/** The four place arguments of one chunk, as typed views of DuckDB's vectors (flat: DuckDB flattens UDF inputs). */
interface Places {
  n: number;
  pid: Int32Array;
  segment: BigInt64Array;
  position: BigInt64Array;
  offset: BigInt64Array;
  /** Row validity of each argument (null: all valid). */
  validity: (Uint8Array | null)[];
}

function placesOf(input: DataChunk): Places {
  const n = bindings.data_chunk_get_size(input);
  const vec = (i: number) => bindings.data_chunk_get_vector(input, i);
  const view64 = (i: number) => {
    const d = bindings.vector_get_data(vec(i), n * 8);
    return new BigInt64Array(d.buffer, d.byteOffset, n);
  };
  const d0 = bindings.vector_get_data(vec(0), n * 4);
  return {
    n,
    pid: new Int32Array(d0.buffer, d0.byteOffset, n),
    segment: view64(1),
    position: view64(2),
    offset: view64(3),
    validity: [0, 1, 2, 3].map((i) => bindings.vector_get_validity(vec(i), Math.ceil(n / 64) * 8)),
  };
}

function placeIsNull(p: Places, row: number): boolean {
  for (const v of p.validity) if (v && !bindings.validity_row_is_valid(v, row)) return true;
  return false;
}

/** Sets rows of `out` to NULL: a validity mask built here and copied into the vector by {@link flush}. */
class NullWriter {
  private validity: Uint8Array | null = null;
  constructor(
    private readonly out: Vector,
    private readonly n: number,
  ) {}
  setNull(row: number): void {
    this.validity ??= new Uint8Array(Math.ceil(this.n / 64) * 8).fill(0xff);
    this.validity[row >> 3]! &= ~(1 << (row & 7));
  }
  /** Copies the mask into the vector (nothing when no row is NULL). */
  flush(): void {
    if (!this.validity) return;
    bindings.vector_ensure_validity_writable(this.out);
    bindings.copy_data_to_vector_validity(this.out, 0, this.validity.buffer as ArrayBuffer, 0, this.validity.byteLength);
  }
}

/**
 * The length to keep of a value under `cap` bytes: the cap moved back to the start of a UTF-8
 * character when it would cut one (so a text prefix stays valid text).
 */
export function cappedLength(value: Uint8Array, cap: number): number {
  if (value.length <= cap) return value.length;
  let n = cap;
  for (let back = 0; back < 3 && n > 0 && (value[n]! & 0xc0) === 0x80; back++) n--;
  return n;
}

const PLACE_TYPES: DuckDBType[] = [INTEGER, BIGINT, BIGINT, BIGINT];
const HEADERS_TYPE = LIST(STRUCT({ key: VARCHAR, value: BLOB }));
const DECODED_TYPE = STRUCT({ key_format: VARCHAR, value_format: VARCHAR, key_decoded: VARCHAR, value_decoded: VARCHAR, schema_id: INTEGER, decode_error: VARCHAR });

/** The functions registered on one DuckDB instance; {@link close} closes their files. */
export class RecordFunctions {
  /** The text writers of `klx_decoded`, one per VARCHAR field, for chunks of up to `rows` rows (DuckDB's vector size). */
  private readonly decodedTexts = { rows: bindings.vector_size(), writers: DECODED_FIELDS.map((f) => (f === 'schema_id' ? null : new StringVectorWriter(bindings.vector_size()))) };

  private constructor(readonly reader: RecordReader) {}

  /** What the functions reached in the log since {@link startCount} (distinct batches, their bytes on disk). */
  get reads(): LogReads {
    return { ...this.reader.reads };
  }

  /** Starts counting {@link reads} again from zero (a query starts). */
  startCount(): void {
    this.reader.startCount();
  }

  /**
   * Registers `klx_value`, `klx_headers` and `klx_decoded` on the instance of `connection`.
   * @throws DuckDB's error when a function of that name exists already.
   */
  static register(connection: DuckDBConnection, source: RecordFunctionsSource): RecordFunctions {
    const self = new RecordFunctions(new RecordReader(source));
    const raw = (connection as unknown as { connection: import('@duckdb/node-bindings').Connection }).connection;
    const define = (name: string, returnType: DuckDBType, main: (p: Places, out: Vector) => void) => {
      const fn = bindings.create_scalar_function();
      bindings.scalar_function_set_name(fn, name);
      for (const t of PLACE_TYPES) bindings.scalar_function_add_parameter(fn, t.toLogicalType().logical_type);
      bindings.scalar_function_set_return_type(fn, returnType.toLogicalType().logical_type);
      bindings.scalar_function_set_special_handling(fn); // NULL arguments reach the function (they give NULL)
      bindings.scalar_function_set_function(fn, (info, input, output) => {
        if (source.cancelled?.()) {
          bindings.scalar_function_set_error(info, CANCELLED_MESSAGE);
          return;
        }
        try {
          main(placesOf(input), output);
        } catch (err) {
          bindings.scalar_function_set_error(info, err instanceof KlxError ? `${err.reason}${err.file ? ` (${err.file})` : ''}` : String((err as Error)?.message ?? err));
        }
      });
      bindings.register_scalar_function(raw, fn);
      bindings.destroy_scalar_function_sync(fn);
    };
    define(RECORD_FUNCTIONS.value, BLOB, (p, out) => self.values(p, out));
    define(RECORD_FUNCTIONS.headers, HEADERS_TYPE, (p, out) => self.headers(p, out));
    define(RECORD_FUNCTIONS.decoded, DECODED_TYPE, (p, out) => self.decoded(p, out));
    return self;
  }

  private recordAt(p: Places, row: number): KafkaRecord {
    return this.reader.record(p.pid[row]!, p.segment[row]!, Number(p.position[row]!), p.offset[row]!);
  }

  private values(p: Places, out: Vector): void {
    const nulls = new NullWriter(out, p.n);
    const cap = this.reader.source.valueCapBytes;
    for (let row = 0; row < p.n; row++) {
      const v = placeIsNull(p, row) ? null : this.recordAt(p, row).value;
      if (v === null) nulls.setNull(row);
      else bindings.vector_assign_string_element_len(out, row, v.length > cap ? v.subarray(0, cappedLength(v, cap)) : v);
    }
    nulls.flush();
  }

  private headers(p: Places, out: Vector): void {
    const nulls = new NullWriter(out, p.n);
    const entries = new BigUint64Array(p.n * 2);
    let size = 0;
    let capacity = 0;
    let keys: Vector | null = null;
    let values: Vector | null = null;
    const valueNulls: number[] = [];
    for (let row = 0; row < p.n; row++) {
      if (placeIsNull(p, row)) {
        nulls.setNull(row);
        continue;
      }
      const hs = this.recordAt(p, row).headers;
      entries[row * 2] = BigInt(size);
      entries[row * 2 + 1] = BigInt(hs.length);
      if (hs.length === 0) continue;
      if (size + hs.length > capacity || keys === null) {
        capacity = Math.max(size + hs.length, capacity * 2, 64);
        bindings.list_vector_reserve(out, capacity);
        const child = bindings.list_vector_get_child(out);
        keys = bindings.struct_vector_get_child(child, 0);
        values = bindings.struct_vector_get_child(child, 1);
      }
      for (const h of hs) {
        bindings.vector_assign_string_element(keys, size, h.key);
        if (h.value === null) valueNulls.push(size);
        else bindings.vector_assign_string_element_len(values!, size, h.value);
        size++;
      }
    }
    bindings.copy_data_to_vector(out, 0, entries.buffer, 0, entries.byteLength);
    nulls.flush();
    if (size > 0) {
      bindings.list_vector_set_size(out, size);
      if (valueNulls.length > 0) {
        const vn = new NullWriter(values!, capacity);
        for (const i of valueNulls) vn.setNull(i);
        vn.flush();
      }
    }
  }

  private decoded(p: Places, out: Vector): void {
    const nulls = new NullWriter(out, p.n);
    const children = DECODED_FIELDS.map((_, i) => bindings.struct_vector_get_child(out, i));
    const childNulls = children.map((c) => new NullWriter(c, p.n));
    // Texts of at most 12 bytes (format names, short keys) go to DuckDB in one copy per column; the
    // writers are kept from chunk to chunk (each flush leaves them empty).
    const texts = p.n <= this.decodedTexts.rows ? this.decodedTexts.writers : DECODED_FIELDS.map((f) => (f === 'schema_id' ? null : new StringVectorWriter(p.n)));
    try {
      this.decodedRows(p, texts, children, childNulls, nulls);
    } catch (err) {
      for (const t of texts) t?.reset();
      throw err;
    }
  }

  private decodedRows(p: Places, texts: (StringVectorWriter | null)[], children: Vector[], childNulls: NullWriter[], nulls: NullWriter): void {
    const ids = new Int32Array(p.n);
    let row = 0;
    // One closure per chunk, not per row.
    const text = (i: number, s: string | null | undefined) => {
      if (s === null || s === undefined) childNulls[i]!.setNull(row);
      else texts[i]!.text(row, s);
    };
    const decoder = p.n > 0 ? this.reader.source.decoder() : null;
    const partitions = this.reader.source.partitions;
    for (row = 0; row < p.n; row++) {
      const r = decoder === null || placeIsNull(p, row) ? null : this.recordAt(p, row);
      const topic = partitions[p.pid[row]!]?.topic ?? '';
      if (r === null || decoder === null || (r.control !== undefined && topic !== '__cluster_metadata')) {
        nulls.setNull(row);
        for (const c of childNulls) c.setNull(row);
        continue;
      }
      const controlType = r.control?.typeId;
      const k = decoder.decode(topic, 'key', r.key, null, controlType);
      const v = decoder.decode(topic, 'value', r.value, r.key, controlType);
      text(0, k.format);
      text(1, v.format);
      text(2, k.jsonText);
      text(3, v.jsonText);
      const id = v.schemaId ?? k.schemaId;
      if (id === undefined) childNulls[4]!.setNull(row);
      else ids[row] = id | 0;
      text(5, k.error !== undefined ? (v.error !== undefined ? `key: ${k.error}; ${v.error}` : `key: ${k.error}`) : (v.error ?? null));
    }
    bindings.copy_data_to_vector(children[4]!, 0, ids.buffer, 0, ids.byteLength);
    texts.forEach((t, i) => t?.flush(children[i]!, p.n));
    nulls.flush();
    for (const c of childNulls) c.flush();
  }

  /** Closes the files the functions opened (they reopen on the next call). */
  close(): void {
    this.reader.close();
  }
}
