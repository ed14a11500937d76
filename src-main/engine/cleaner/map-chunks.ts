/**
 * The read half of building the offset map (spec §13.3; Kafka's `Cleaner.buildOffsetMapForSegment`):
 * reading a dirty segment's batches, checking their CRCs, walking their records and digesting their
 * keys, into compact {@link MapChunk}s that the map builder (`map-builder.ts`) then applies in offset
 * order (the transaction state, the puts, the map-full stop).
 *
 * The same code runs in the building thread and on the map-build worker thread
 * (`map-build-worker.ts`): a chunk is plain typed arrays, so a worker hands it over by transfer
 * without copying. Nothing here decides what is put: a chunk carries, per batch, what the builder's
 * decisions need (lastOffset, producerId, the transactional and control flags, the control type),
 * and the digest and offset of every record with a key and offset ≥ start, whether the batch turns
 * out to be aborted or not. An error met while walking a batch's records is carried with the batch
 * (the builder throws it only if it would have walked that batch: an aborted batch is never walked);
 * an error reading the segment (a damaged batch, a CRC mismatch) ends the segment's chunks.
 *
 * Bounds: a chunk is handed over once it holds {@link CHUNK_KEYS} keys or {@link CHUNK_BATCHES}
 * batches (one batch's keys at least), so about 28 × 32768 + 40 × 4096 B ≈ 1.1 MB plus the read windows of the
 * scan (`log-reader.ts`, `log.cleaner.io.buffer.size`-sized, grown only for a larger batch).
 */
import { errorAt, KlxError } from '../errors.ts';
import { decodeV2Records, inflateRecordsArea } from '../format/record-batch.ts';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import type { MessagePort } from 'node:worker_threads';
import type { KeyDigestFn, KeyHashAlgorithm } from './key-hash.ts';
import { newRecordView, readRecordAt } from './record-walk.ts';
import { sourceBatchesOf, unreadableBatchPrefix } from './source-batches.ts';

/** Keys after which a chunk is handed over. */
export const CHUNK_KEYS = 32768;
/** Batches after which a chunk is handed over. */
export const CHUNK_BATCHES = 4096;

/** Batch flag in {@link MapChunk.ints}: a control batch (transaction marker). */
export const F_CONTROL = 1;
/** Batch flag: the batch's isTransactional attribute. */
export const F_TRANSACTIONAL = 2;
/** Magic 0/1: the keys are put one at a time (the batch's records came decoded). */
export const F_LEGACY = 4;
/** The control batch's first record has no control type (`controlType` null). */
export const F_NO_CONTROL_TYPE = 8;
/** Walking the batch's records failed: `errors[ints[i * INTS + 5]]`. */
export const F_ERROR = 16;

/** Int32 fields per batch in {@link MapChunk.ints}: flags, controlType, records, size, position, keys or error index. */
export const INTS = 6;

/** An error as it crosses a thread (structured clone keeps no class): rebuilt by {@link errorOf}. */
export interface ChunkError {
  klx: boolean;
  code: string;
  reason: string;
  file?: string;
  position?: number;
  details?: Record<string, unknown>;
}

/**
 * Part of one dirty segment's batches, in file order (see the module comment).
 * Per batch `i`: `longs[2i]` lastOffset, `longs[2i + 1]` producerId; `ints[INTS·i ..]` flags,
 * control type (control batches), records walked (what the one-thread build counts: 1 for a control
 * batch, the records of the others), size in bytes, byte position, and the number of keys digested
 * (or the index in `errors` with {@link F_ERROR}). Key `k`: digest words `digests[4k, 4k + 4)`, offset
 * `offsets[k]`, and for a legacy batch `ordinals[k]` = the record's index in its batch.
 */
export interface MapChunk {
  /** Index of the segment in the task's list. */
  segment: number;
  batches: number;
  keys: number;
  longs: BigInt64Array;
  ints: Int32Array;
  digests: Int32Array;
  offsets: Float64Array;
  ordinals: Int32Array;
  errors: ChunkError[];
  /** The segment's batches end with this chunk (read to the end of the file, or stopped by `readError`). */
  last: boolean;
  /** Reading the segment failed after this chunk's batches. */
  readError: ChunkError | null;
}

/** The buffers of a chunk, for `postMessage`'s transfer list. */
export function chunkTransferList(c: MapChunk): ArrayBuffer[] {
  return [c.longs.buffer as ArrayBuffer, c.ints.buffer as ArrayBuffer, c.digests.buffer as ArrayBuffer, c.offsets.buffer as ArrayBuffer, c.ordinals.buffer as ArrayBuffer];
}

/** Turns anything thrown into a {@link ChunkError}. */
export function chunkErrorOf(err: unknown): ChunkError {
  if (err instanceof KlxError) {
    return { klx: true, code: err.code, reason: err.reason, ...(err.file !== undefined ? { file: err.file } : {}), ...(err.position !== undefined ? { position: err.position } : {}), ...(err.details !== undefined ? { details: err.details } : {}) };
  }
  const e = err as NodeJS.ErrnoException;
  return { klx: false, code: typeof e?.code === 'string' ? e.code : '', reason: err instanceof Error ? err.message : String(err) };
}

/** The error a {@link ChunkError} stands for: a KlxError with the same code, reason, file, position and details, or an Error with the same message and code. */
export function errorOf(e: ChunkError): Error {
  if (e.klx) return new KlxError(e.code as ErrorCode, e.reason, { ...(e.file !== undefined ? { file: e.file } : {}), ...(e.position !== undefined ? { position: e.position } : {}), ...(e.details !== undefined ? { details: e.details } : {}) });
  const err = new Error(e.reason) as NodeJS.ErrnoException;
  if (e.code) err.code = e.code;
  return err;
}

/** One segment to read: its `.log` file, baseOffset (for error details) and the byte position to start at. */
export interface MapSegmentTask {
  file: string;
  baseOffset: bigint;
  from: number;
}

/** Chunks the worker may post that this thread has not taken yet. */
export const MAX_CHUNKS_AHEAD = 4;

/** The first message to the worker (`map-build-worker.ts`). */
export interface MapWorkerStart {
  tasks: MapSegmentTask[];
  start: bigint;
  keyHash: KeyHashAlgorithm;
  /** Int32 cells: [0] chunks posted, [1] chunks taken, [2] stop (1), [3] started (1). */
  control: SharedArrayBuffer;
  port: MessagePort;
}

/** A message of the worker: a chunk, or the error that stopped it outside any segment. */
export type MapWorkerMessage = { chunk: MapChunk } | { fatal: ChunkError };

/** Fills chunks; with `fresh` every chunk taken gets new buffers (they are transferred), else they are reused. */
class ChunkBuilder {
  batches = 0;
  keys = 0;
  longs = new BigInt64Array(0);
  ints = new Int32Array(0);
  digests = new Int32Array(0);
  offsets = new Float64Array(0);
  ordinals = new Int32Array(0);
  errors: ChunkError[] = [];

  constructor(private readonly fresh: boolean) {
    this.allocate(CHUNK_BATCHES, CHUNK_KEYS);
  }

  private allocate(batches: number, keys: number): void {
    this.longs = new BigInt64Array(batches * 2);
    this.ints = new Int32Array(batches * INTS);
    this.digests = new Int32Array(keys * 4);
    this.offsets = new Float64Array(keys);
    this.ordinals = new Int32Array(keys);
  }

  /** Room for one more batch of up to `records` keys. */
  reserve(records: number): void {
    const needB = this.batches + 1;
    if (needB * 2 > this.longs.length) {
      const l = new BigInt64Array(needB * 4);
      l.set(this.longs);
      this.longs = l;
      const i = new Int32Array(needB * 2 * INTS);
      i.set(this.ints);
      this.ints = i;
    }
    const needK = this.keys + records;
    if (needK > this.offsets.length) {
      const cap = Math.max(needK, this.offsets.length * 2);
      const d = new Int32Array(cap * 4);
      d.set(this.digests.subarray(0, this.keys * 4));
      this.digests = d;
      const o = new Float64Array(cap);
      o.set(this.offsets.subarray(0, this.keys));
      this.offsets = o;
      const r = new Int32Array(cap);
      r.set(this.ordinals.subarray(0, this.keys));
      this.ordinals = r;
    }
  }

  get ready(): boolean {
    return this.keys >= CHUNK_KEYS || this.batches >= CHUNK_BATCHES;
  }

  take(segment: number, last: boolean, readError: ChunkError | null): MapChunk {
    const c: MapChunk = { segment, batches: this.batches, keys: this.keys, longs: this.longs, ints: this.ints, digests: this.digests, offsets: this.offsets, ordinals: this.ordinals, errors: this.errors, last, readError };
    this.batches = 0;
    this.keys = 0;
    this.errors = [];
    if (this.fresh) this.allocate(CHUNK_BATCHES, CHUNK_KEYS);
    return c;
  }
}

const view = newRecordView();

/**
 * The chunks of the segments `tasks` (see the module comment), segment by segment; the chunks of
 * segment `i` carry `segment = i`. Stops after a segment whose read failed.
 * @param start the map's start offset (firstDirtyOffset): keys of records below it are not digested.
 * @param fresh new buffers for every chunk (to transfer them), else one set reused: a chunk is then
 *   valid only until the next one is asked for.
 * @param shouldStop asked before each chunk is made: true ends the walk.
 */
export function* mapChunks(tasks: readonly MapSegmentTask[], start: bigint, digestInto: KeyDigestFn, fresh: boolean, shouldStop?: () => boolean): Generator<MapChunk> {
  const b = new ChunkBuilder(fresh);
  const startNum = Number(start);
  for (let si = 0; si < tasks.length; si++) {
    const t = tasks[si]!;
    let readError: ChunkError | null = null;
    const it = sourceBatchesOf(t.file, t.baseOffset, t.from, true, true);
    for (;;) {
      let step: IteratorResult<import('../format/log-reader.ts').BatchEntry>;
      try {
        step = it.next();
      } catch (err) {
        readError = chunkErrorOf(err);
        break;
      }
      if (step.done) break;
      const entry = step.value;
      const h = entry.header;
      const i = b.batches;
      b.reserve(0);
      const p = i * INTS;
      let controlType = 0;
      b.longs[2 * i] = h.lastOffset;
      b.longs[2 * i + 1] = h.producerId;
      let flags = (h.isControl ? F_CONTROL : 0) | (h.isTransactional ? F_TRANSACTIONAL : 0);
      let records = 0;
      let keys = 0;
      const keysBefore = b.keys;
      try {
        if (h.isControl) {
          const recs = decodeV2Records(h, entry.bytes);
          const type = recs[0]?.control?.typeId ?? null;
          if (type === null) flags |= F_NO_CONTROL_TYPE;
          else controlType = type;
          records = 1;
        } else if (h.magic === 2) {
          const data = inflateRecordsArea(h, entry.bytes);
          b.reserve(h.recordCount); // at most the records area's bytes / 7 (inflateRecordsArea checks)
          const base = Number(h.baseOffset);
          const digests = b.digests;
          const offsets = b.offsets;
          let n = keysBefore;
          let pos = 0;
          for (let r = 0; r < h.recordCount; r++) {
            pos = readRecordAt(data, pos, data.length, view);
            const offset = base + view.offsetDelta;
            if (view.keyLength >= 0 && offset >= startNum) {
              digestInto(data, view.keyStart, view.keyLength, digests, n * 4);
              offsets[n++] = offset;
            }
          }
          if (pos !== data.length) throw new KlxError('corrupt-batch', `${data.length - pos} bytes left in the records area after ${h.recordCount} records`);
          records = h.recordCount;
          keys = n - keysBefore;
        } else {
          flags |= F_LEGACY;
          const recs = entry.records ?? [];
          b.reserve(recs.length);
          let n = keysBefore;
          for (let r = 0; r < recs.length; r++) {
            const rec = recs[r]!;
            const offset = Number(rec.offset);
            if (rec.key !== null && offset >= startNum) {
              digestInto(rec.key, 0, rec.key.length, b.digests, n * 4);
              b.offsets[n] = offset;
              b.ordinals[n++] = r;
            }
          }
          records = recs.length;
          keys = n - keysBefore;
        }
      } catch (err) {
        // As the one-thread build names it: the batch's place in the segment file.
        const e = err instanceof KlxError && err.position === undefined ? new KlxError(err.code, `batch at baseOffset ${h.baseOffset}: ${err.reason}`, { position: h.position, cause: err }) : err;
        flags |= F_ERROR;
        keys = b.errors.length;
        b.errors.push(chunkErrorOf(errorAt(e, { file: t.file, position: h.position }, unreadableBatchPrefix(e))));
        records = h.recordCount;
      }
      const ints = b.ints;
      ints[p] = flags;
      ints[p + 1] = controlType;
      ints[p + 2] = records;
      ints[p + 3] = h.size;
      ints[p + 4] = h.position;
      ints[p + 5] = keys;
      b.batches++;
      if (!(flags & F_ERROR)) b.keys += keys;
      if (b.ready) {
        if (shouldStop?.()) return;
        yield b.take(si, false, null);
      }
    }
    if (shouldStop?.()) return;
    yield b.take(si, true, readError);
    if (readError) return;
  }
}
