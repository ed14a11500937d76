/**
 * Streaming reader of a `.log` file (spec §3; Kafka's `FileLogInputStream`, `FileRecords`,
 * and `DumpLogSegments` for how damage is reported).
 *
 * The file is read in windows of about 1 MiB (grown to hold a larger batch, case B17); the whole
 * file is never loaded. Each entry is yielded with its byte position; a shallow pass decodes only
 * headers (no decompression), a deep pass also decodes records.
 *
 * Damage never throws and never stops the walk silently:
 * - a CRC mismatch is reported on the batch (`crcValid: false`);
 * - an entry whose framing is impossible (size below the minimum, unknown magic, size past the end
 *   of the file) is reported as a `corrupt-region` when a valid batch follows it (found by scanning
 *   forward for a header whose CRC checks), or as an `invalid-tail` ("N invalid bytes at the end")
 *   when none does;
 * - a batch whose records cannot be decoded (deep pass) is yielded with `error`.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import { KlxError } from '../errors.ts';
import { crc32cUpdate, crc32ieeeUpdate, crcMismatchText } from './crc.ts';
import { decodeLegacyEntry } from './legacy.ts';
import { decodeV2Header, decodeV2Records } from './record-batch.ts';
import { HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, V0_MIN_MESSAGE_SIZE, V1_MIN_MESSAGE_SIZE, V2_HEADER_SIZE, V2_MIN_BATCH_LENGTH, type BatchHeader, type KafkaRecord } from './types.ts';

/** Default read window: 1 MiB. */
export const DEFAULT_CHUNK_SIZE = 1 << 20;

/** A batch (v2) or top-level legacy message found in the file. */
export interface BatchEntry {
  type: 'batch';
  header: BatchHeader;
  /** The entry's bytes (a view; stays valid after the walk moves on). */
  bytes: Buffer;
  /** Deep pass only (or legacy compressed wrappers): the decoded records. */
  records?: KafkaRecord[];
  /** Deep pass only: why the records could not be decoded. */
  error?: KlxError;
}

/** Bytes that are not a batch. `code` tells why the first of them could not be one. */
export interface DamageEntry {
  type: 'invalid-tail' | 'corrupt-region';
  position: number;
  /** Number of bytes that are not a batch. */
  size: number;
  code: ErrorCode;
  reason: string;
  /** True when every byte of the region is zero (a preallocated or crashed tail). */
  zeros: boolean;
}

export type LogEntry = BatchEntry | DamageEntry;

/** Random access to the bytes of a log (a file descriptor or an in-memory buffer). */
export interface ByteSource {
  readonly size: number;
  /** The file the bytes come from, named in errors (none for bytes in memory). */
  readonly path?: string;
  /** Returns up to `length` bytes starting at `position` (fewer at the end of the source). */
  read(position: number, length: number): Buffer;
  /** Reads up to `into.length` bytes starting at `position` into `into`; returns the part filled. Optional. */
  readInto?(into: Buffer, position: number): Buffer;
}

export interface ScanOptions {
  /** Check CRCs (default true). */
  verifyCrc?: boolean;
  /** Decode records too (default false: headers only, nothing decompressed). */
  deep?: boolean;
  /** First byte position to read (default 0); must be an entry start. */
  start?: number;
  /** Stop before this byte position (default: end of file). */
  end?: number;
  /** Read window in bytes (default 1 MiB). */
  chunkSize?: number;
  /** Look for valid batches after damage (default true). */
  resync?: boolean;
  /** The topic's `max.message.bytes` (deep pass: bounds decompression; default 1048588). */
  maxMessageBytes?: number;
  /** Largest entry loaded (default {@link MAX_ENTRY_BYTES}); a longer length field is damage. */
  maxEntryBytes?: number;
  /** The file named in errors (default: the source's path). */
  file?: string;
  /**
   * Read windows into two buffers used in turn instead of a new buffer per window (default false):
   * no allocation per MiB read, but an entry's `bytes` (and its records' keys and values) are valid
   * only until the entry after it is asked for. For walks that keep nothing of an entry.
   */
  reuseWindows?: boolean;
}

/** A {@link ByteSource} over an open file. */
export class FileSource implements ByteSource {
  readonly size: number;
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  read(position: number, length: number): Buffer {
    return this.readInto(Buffer.allocUnsafe(Math.max(0, Math.min(length, this.size - position))), position);
  }

  readInto(into: Buffer, position: number): Buffer {
    const n = Math.max(0, Math.min(into.length, this.size - position));
    let done = 0;
    while (done < n) {
      const got = readSync(this.fd, into, done, n - done, position + done);
      if (got === 0) break;
      done += got;
    }
    return into.subarray(0, done);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A {@link ByteSource} over bytes already in memory. */
export class BufferSource implements ByteSource {
  readonly size: number;
  constructor(private readonly buf: Buffer) {
    this.size = buf.length;
  }
  read(position: number, length: number): Buffer {
    return this.buf.subarray(position, Math.min(this.buf.length, position + length));
  }
}

/**
 * Largest entry the reader loads into memory (256 MiB). Kafka bounds a batch by the topic's
 * `max.message.bytes` (1 MiB by default); a length field above this is treated as damage (the
 * bytes are not read), so that a hostile length never allocates gigabytes.
 */
export const MAX_ENTRY_BYTES = 256 * 1024 * 1024;

/**
 * Work bound of a resync (looking for the next valid batch after damage), in bytes checksummed:
 * {@link RESYNC_FREE_WORK} plus {@link RESYNC_WORK_PER_BYTE} per byte of the damaged region
 * scanned so far, counted apart for headers claiming more than 1048588 bytes. A plausible header
 * whose CRC check would pass that bound is not checked (it is counted, and the damage entry says
 * so); so a resync costs time linear in the region's size.
 */
export const RESYNC_FREE_WORK = 64 * 1024 * 1024;
export const RESYNC_WORK_PER_BYTE = 16;
/** Skipped headers remembered per resync for the walk back along the chain (16 bytes each). */
const RESYNC_REMEMBERED = 4 * 1024 * 1024;
/** Entries above this size (Kafka's default max.message.bytes) are checked from a budget of their own. */
const RESYNC_LARGE_ENTRY = 1048588;

/** Why the entry at `pos` cannot be a batch, or null if its framing is plausible. */
function framingProblem(size: number, magic: number, remaining: number, maxEntry: number): { code: ErrorCode; reason: string } | null {
  if (magic !== 0 && magic !== 1 && magic !== 2) return { code: 'unknown-magic', reason: `unknown magic byte ${magic}` };
  const min = magic === 2 ? V2_MIN_BATCH_LENGTH : magic === 1 ? V1_MIN_MESSAGE_SIZE : V0_MIN_MESSAGE_SIZE;
  if (size < min) return { code: 'batch-length-out-of-range', reason: `batch length ${size} is below the minimum ${min} for magic ${magic}` };
  if (size > remaining - LOG_OVERHEAD) {
    return { code: 'truncated-batch', reason: `the batch size (length field + 12-byte header, so ${size + LOG_OVERHEAD}) exceeds the ${remaining} bytes left in the file` };
  }
  if (size + LOG_OVERHEAD > maxEntry) {
    return { code: 'batch-length-out-of-range', reason: `batch length ${size} is above the ${maxEntry} bytes this reader loads (Kafka's max.message.bytes is 1048588 by default)` };
  }
  return null;
}

/** Read windows given back by walks that ended (`reuseWindows`), for the next walks to use. */
const windowPool: Buffer[] = [];
/** Windows kept in {@link windowPool}: two walks' worth. */
const WINDOW_POOL_MAX = 4;

/** A buffer of at least `size` bytes from the pool (the smallest that fits), else a new one. */
function takeWindow(size: number): Buffer {
  let best = -1;
  for (let i = 0; i < windowPool.length; i++) if (windowPool[i]!.length >= size && (best < 0 || windowPool[i]!.length < windowPool[best]!.length)) best = i;
  if (best < 0) return Buffer.allocUnsafe(size);
  const b = windowPool[best]!;
  windowPool.splice(best, 1);
  return b;
}

/** Gives a window back to the pool (only default-sized ones: a window grown for a huge batch is let go). */
function releaseWindow(b: Buffer): void {
  if (b.length <= DEFAULT_CHUNK_SIZE * 2 && windowPool.length < WINDOW_POOL_MAX && !windowPool.includes(b)) windowPool.push(b);
}

/** Zero bytes compared against in one go when measuring a zero run. */
const ZEROS = Buffer.alloc(1 << 20);

/**
 * Walks the entries of a log held by `source`.
 *
 * Work is linear in the bytes walked, whatever they hold: a run of zero bytes is measured with
 * block compares and reported as one damage entry (`zeros: true`; Kafka's recovery stops at the
 * first zero batch length: FileLogInputStream.nextBatch throws CorruptRecordException, LogSegment.recover truncates there), and a resync after damage never goes back and checksums at most
 * {@link RESYNC_FREE_WORK} + {@link RESYNC_WORK_PER_BYTE} × the region's size.
 * @yields batches in file order, and damage entries where bytes are not batches.
 * @throws only on I/O failure of the source.
 */
export function* scanEntries(source: ByteSource, opts: ScanOptions = {}): Generator<LogEntry> {
  const verifyCrc = opts.verifyCrc ?? true;
  const deep = opts.deep ?? false;
  const end = Math.min(opts.end ?? source.size, source.size);
  const chunk = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const resync = opts.resync ?? true;
  const maxEntry = opts.maxEntryBytes ?? MAX_ENTRY_BYTES;
  const file = opts.file ?? source.path;
  let win: Buffer = Buffer.alloc(0);
  let winStart = 0;
  // With reuseWindows: two buffers used in turn, so the window before the current one (which the
  // entry being checked may sit in) stays intact while the next one is read. They come from (and go
  // back to, when the walk ends) a small pool, so walks one after the other (a partition's segments,
  // every partition of a folder) do not each map and fault in fresh pages.
  const spare: (Buffer | null)[] = opts.reuseWindows && source.readInto ? [null, null] : [];
  let turn = 0;
  const ensure = (pos: number, len: number): number => {
    // Returns the offset of `pos` inside `win`, reading a new window if needed.
    if (pos < winStart || pos + len > winStart + win.length) {
      const want = Math.max(chunk, len);
      if (spare.length === 2) {
        const need = Math.max(len, Math.min(want, source.size - pos));
        let b = spare[turn];
        if (!b || b.length < need) {
          if (b) releaseWindow(b);
          b = spare[turn] = takeWindow(need);
        }
        turn ^= 1;
        win = source.readInto!(b, pos);
      } else win = source.read(pos, want);
      winStart = pos;
    }
    return pos - winStart;
  };

  let pos = opts.start ?? 0;
  try {
    while (pos < end) {
      const remaining = end - pos;
      if (remaining < HEADER_SIZE_UP_TO_MAGIC + 1 && remaining > 0) {
        yield damage('invalid-tail', pos, remaining, 'truncated-batch', `${remaining} bytes are too few for a batch header`, allZero(pos, remaining));
        return;
      }
      let off = ensure(pos, V2_HEADER_SIZE);
      const size = win.readInt32BE(off + 8);
      const magic = win.readInt8(off + 16);
      const problem = framingProblem(size, magic, remaining, maxEntry);
      if (problem) {
        const next = yield* recover(pos, problem);
        if (next < 0) return;
        pos = next;
        continue;
      }
      const total = size + LOG_OVERHEAD;
      off = ensure(pos, total);
      const bytes = win.subarray(off, off + total);
      let entry: BatchEntry;
      try {
        if (magic === 2) {
          const header = decodeV2Header(win, off, pos, verifyCrc);
          entry = { type: 'batch', header, bytes };
          if (header.crcValid === false && !nextLooksValid(pos + total)) {
            // A batch cut short in the middle of a file: its length field swallowed the start of the
            // next batch. Treat it as damage and look for the next real batch.
            const next = yield* recover(pos, { code: 'crc-mismatch', reason: `batch at baseOffset ${header.baseOffset} fails its CRC (${crcMismatchText(header)}) and is not followed by a valid batch (cut short or overwritten)` });
            if (next < 0) return;
            pos = next;
            continue;
          }
          if (deep) {
            try {
              entry.records = decodeV2Records(header, bytes, opts.maxMessageBytes);
            } catch (err) {
              entry.error = withFile(err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err), { position: pos }), pos);
            }
          }
        } else {
          const { header, records } = decodeLegacyEntry(win, off, pos, verifyCrc);
          entry = { type: 'batch', header, bytes, records };
        }
      } catch (err) {
        if (!(err instanceof KlxError)) throw err;
        if (magic !== 2 && crc32Range(pos + 16, pos + total) !== win.readUInt32BE(ensure(pos, HEADER_SIZE_UP_TO_MAGIC) + 12)) {
          // Not a message at all (its CRC fails too): its length cannot be trusted, so look for the
          // next valid entry instead of skipping what the length claims.
          const next = yield* recover(pos, { code: err.code, reason: `${err.reason}, and its CRC does not match` });
          if (next < 0) return;
          pos = next;
          continue;
        }
        // Framing and CRC are sound but the header or legacy message cannot be decoded: skip exactly this entry.
        yield damage('corrupt-region', pos, total, err.code, err.reason, allZero(pos, total));
        pos += total;
        continue;
      }
      yield entry;
      pos += total;
    }
  } finally {
    for (const b of spare) if (b) releaseWindow(b);
  }

  /** `err` with this file and (if it has none) `position`. */
  function withFile(err: KlxError, position: number): KlxError {
    if (file === undefined || err.file !== undefined) return err.position === undefined ? new KlxError(err.code, err.reason, { file: err.file, position, details: err.details, cause: err }) : err;
    return new KlxError(err.code, err.reason, { file, position: err.position ?? position, details: err.details, cause: err });
  }

  function nextLooksValid(next: number): boolean {
    if (next >= end) return true;
    if (end - next < HEADER_SIZE_UP_TO_MAGIC + 1) return false;
    const o = ensure(next, HEADER_SIZE_UP_TO_MAGIC);
    return framingProblem(win.readInt32BE(o + 8), win.readInt8(o + 16), end - next, maxEntry) === null;
  }

  /**
   * Reports the damage that starts at `at` and returns where reading resumes (−1: the damage runs
   * to the end). Never recursive, never goes back before `at`.
   */
  function* recover(at: number, problem: { code: ErrorCode; reason: string }): Generator<LogEntry, number> {
    const zeroEnd = zeroRunEnd(at);
    if (zeroEnd >= end) {
      // A preallocated or crashed tail: one entry, measured by block compares.
      const len = end - at;
      yield damage('invalid-tail', at, len, problem.code, `${len} invalid bytes at the end of the file: ${problem.reason}`, true);
      return -1;
    }
    // A batch after a zero run starts at most 11 bytes before its first non-zero byte (its length field is not zero).
    const from = Math.max(at + 1, zeroEnd - 11);
    const found = resync ? findNextValidEntry(from) : { next: -1, skipped: 0, work: 0 };
    const unchecked = found.skipped > 0 ? `; ${found.skipped} plausible batch headers in it were not checked because the resync work bound (${found.work} bytes checksummed) was reached` : '';
    if (found.next < 0) {
      const len = end - at;
      yield damage('invalid-tail', at, len, problem.code, `${len} invalid bytes at the end of the file: ${problem.reason}${unchecked}`, allZero(at, len));
      return -1;
    }
    const next = found.next;
    yield damage('corrupt-region', at, next - at, problem.code, `${next - at} bytes from position ${at} are not a valid batch (${problem.reason}); reading resumed at position ${next}${unchecked}`, allZero(at, next - at));
    return next;
  }

  /** First position ≥ `from` whose byte is not zero (or `end`), compared a block at a time. */
  function zeroRunEnd(from: number): number {
    let p = from;
    while (p < end) {
      const n = Math.min(ZEROS.length, end - p);
      const o = ensure(p, n);
      const block = win.subarray(o, o + n);
      if (block.equals(ZEROS.subarray(0, n))) {
        p += n;
        continue;
      }
      let i = 0;
      while (block[i] === 0) i++;
      return p + i;
    }
    return end;
  }

  /** True when the `len` bytes from `at` are all zero (block compares; reads at most one window at a time). */
  function allZero(at: number, len: number): boolean {
    return len > 0 && zeroRunEnd(at) >= Math.min(end, at + len);
  }

  /**
   * CRC of [from, to) with `update` (CRC-32C or CRC-32 IEEE), read a window at a time (no
   * allocation of the whole range).
   */
  function crcRange(from: number, to: number, update: (bytes: Buffer, crc: number) => number): number {
    let crc = 0;
    for (let p = from; p < to; ) {
      const n = Math.min(chunk, to - p);
      const o = ensure(p, n);
      crc = update(win.subarray(o, o + n), crc);
      p += n;
    }
    return crc >>> 0;
  }
  function crc32cRange(from: number, to: number): number {
    return crcRange(from, to, crc32cUpdate);
  }
  function crc32Range(from: number, to: number): number {
    return crcRange(from, to, crc32ieeeUpdate);
  }

  /** CRC check of the entry at `p` (framing already found plausible). */
  function crcMatches(p: number, total: number): boolean {
    const o = ensure(p, HEADER_SIZE_UP_TO_MAGIC + 4);
    const magic = win[o + 16]!;
    const stored = win.readUInt32BE(o + (magic === 2 ? 17 : 12));
    return magic === 2 ? crc32cRange(p + 21, p + total) === stored : crc32Range(p + 16, p + total) === stored;
  }

  /**
   * First position ≥ from where an entry with plausible framing and a valid CRC starts (−1: none),
   * the plausible headers not checked because of the work bound, and the bytes checksummed.
   * Positions are visited once, in order; runs of zero bytes are skipped by block compares.
   *
   * Headers skipped for the work bound are remembered (position and size), and once a valid entry
   * (or the end of the file) is found, those whose size ends exactly there are checked, latest
   * first, walking back along the chain: real batches end where the next one starts, so a valid
   * batch hidden among hostile headers is still found, for one more pass over the remembered list.
   */
  function findNextValidEntry(from: number): { next: number; skipped: number; work: number } {
    const work = [0, 0];
    let skipped = 0;
    let skipP = new Float64Array(1024);
    let skipT = new Float64Array(1024);
    let found = -1;
    for (let p = from; p + LOG_OVERHEAD + V0_MIN_MESSAGE_SIZE <= end; p++) {
      let o = ensure(p, Math.min(V2_HEADER_SIZE, end - p));
      if (win[o] === 0 && win[o + 8] === 0 && win[o + 9] === 0 && win[o + 10] === 0 && win[o + 11] === 0 && win[o + 16] === 0) {
        // Inside a zero run: the next batch starts at most 11 bytes before the run's end.
        const z = zeroRunEnd(p);
        if (z >= end) break;
        if (z - 11 > p) {
          p = z - 12;
          continue;
        }
        o = ensure(p, Math.min(V2_HEADER_SIZE, end - p));
      }
      const avail = Math.min(win.length - o, end - p);
      if (avail < HEADER_SIZE_UP_TO_MAGIC + 1) continue;
      const magic = win[o + 16]!;
      if (magic > 2) continue;
      const size = win.readInt32BE(o + 8);
      if (framingProblem(size, magic, end - p, maxEntry) !== null) continue;
      if (magic === 2 && (avail < 23 || (win.readInt16BE(o + 21) & 0x07) > 4)) continue;
      const total = size + LOG_OVERHEAD;
      // Two budgets, so that headers claiming more than Kafka's default max.message.bytes cannot
      // use up the work a normal-sized batch needs to be found.
      const large = total > RESYNC_LARGE_ENTRY ? 1 : 0;
      if (work[large]! + total > RESYNC_FREE_WORK + RESYNC_WORK_PER_BYTE * (p - from)) {
        if (skipped < RESYNC_REMEMBERED) {
          if (skipped === skipP.length) {
            const np = new Float64Array(skipped * 2);
            np.set(skipP);
            skipP = np;
            const nt = new Float64Array(skipped * 2);
            nt.set(skipT);
            skipT = nt;
          }
          skipP[skipped] = p;
          skipT[skipped] = total;
        }
        skipped++;
        continue;
      }
      work[large]! += total;
      if (crcMatches(p, total)) {
        found = p;
        break;
      }
    }
    // Walk back along the chain of skipped headers that end where the found entry starts.
    let target = found < 0 ? end : found;
    let spent = 0;
    const budget = RESYNC_FREE_WORK + RESYNC_WORK_PER_BYTE * (target - from);
    for (let i = Math.min(skipped, RESYNC_REMEMBERED) - 1; i >= 0; i--) {
      const p = skipP[i]!;
      const total = skipT[i]!;
      if (p + total !== target) continue;
      if (spent + total > budget) break;
      spent += total;
      if (crcMatches(p, total)) {
        target = p;
        found = p;
      }
    }
    return { next: found, skipped, work: work[0]! + work[1]! + spent };
  }
}

function damage(type: DamageEntry['type'], position: number, size: number, code: ErrorCode, reason: string, zeros: boolean): DamageEntry {
  return { type, position, size, code, reason: zeros ? `${reason} (all zero bytes: a preallocated or crashed tail)` : reason, zeros };
}

/**
 * Walks a `.log` file on disk. Convenience wrapper over {@link scanEntries} that opens and closes
 * the file.
 * @throws KlxError `not-found` when the file does not exist; `io-error` on read failures.
 */
export function* scanLogFile(path: string, opts: ScanOptions = {}): Generator<LogEntry> {
  let src: FileSource;
  try {
    src = new FileSource(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new KlxError(e.code === 'ENOENT' ? 'not-found' : 'io-error', e.message, { file: path, cause: err });
  }
  try {
    yield* scanEntries(src, opts);
  } finally {
    src.close();
  }
}

/** Walks a log held in memory. */
export function scanLogBuffer(buf: Buffer, opts: ScanOptions = {}): Generator<LogEntry> {
  return scanEntries(new BufferSource(buf), opts);
}
