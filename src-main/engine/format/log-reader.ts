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
import { crc32c, crc32ieee } from './crc.ts';
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
  /** Returns up to `length` bytes starting at `position` (fewer at the end of the source). */
  read(position: number, length: number): Buffer;
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
    const n = Math.max(0, Math.min(length, this.size - position));
    const buf = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const got = readSync(this.fd, buf, done, n - done, position + done);
      if (got === 0) break;
      done += got;
    }
    return done === n ? buf : buf.subarray(0, done);
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

/** Why the entry at `pos` cannot be a batch, or null if its framing is plausible. */
function framingProblem(size: number, magic: number, remaining: number): { code: ErrorCode; reason: string } | null {
  if (magic !== 0 && magic !== 1 && magic !== 2) return { code: 'unknown-magic', reason: `unknown magic byte ${magic}` };
  const min = magic === 2 ? V2_MIN_BATCH_LENGTH : magic === 1 ? V1_MIN_MESSAGE_SIZE : V0_MIN_MESSAGE_SIZE;
  if (size < min) return { code: 'batch-length-out-of-range', reason: `batch length ${size} is below the minimum ${min} for magic ${magic}` };
  if (size > remaining - LOG_OVERHEAD) {
    return { code: 'truncated-batch', reason: `the batch size (length field + 12-byte header, so ${size + LOG_OVERHEAD}) exceeds the ${remaining} bytes left in the file` };
  }
  return null;
}

/**
 * Walks the entries of a log held by `source`.
 * @yields batches in file order, and damage entries where bytes are not batches.
 * @throws only on I/O failure of the source.
 */
export function* scanEntries(source: ByteSource, opts: ScanOptions = {}): Generator<LogEntry> {
  const verifyCrc = opts.verifyCrc ?? true;
  const deep = opts.deep ?? false;
  const end = Math.min(opts.end ?? source.size, source.size);
  const chunk = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const resync = opts.resync ?? true;
  let win: Buffer = Buffer.alloc(0);
  let winStart = 0;
  const ensure = (pos: number, len: number): number => {
    // Returns the offset of `pos` inside `win`, reading a new window if needed.
    if (pos < winStart || pos + len > winStart + win.length) {
      win = source.read(pos, Math.max(chunk, len));
      winStart = pos;
    }
    return pos - winStart;
  };

  let pos = opts.start ?? 0;
  while (pos < end) {
    const remaining = end - pos;
    if (remaining < HEADER_SIZE_UP_TO_MAGIC + 1 && remaining > 0) {
      const off = ensure(pos, remaining);
      yield damage('invalid-tail', pos, remaining, 'truncated-batch', `${remaining} bytes are too few for a batch header`, win.subarray(off, off + remaining));
      return;
    }
    let off = ensure(pos, V2_HEADER_SIZE);
    const size = win.readInt32BE(off + 8);
    const magic = win.readInt8(off + 16);
    const problem = framingProblem(size, magic, remaining);
    if (problem) {
      yield* recover(pos, problem);
      return;
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
          yield* recover(pos, { code: 'crc-mismatch', reason: `batch at baseOffset ${header.baseOffset} fails its CRC and is not followed by a valid batch (cut short or overwritten)` });
          return;
        }
        if (deep) {
          try {
            entry.records = decodeV2Records(header, bytes);
          } catch (err) {
            entry.error = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err), { position: pos });
          }
        }
      } else {
        const { header, records } = decodeLegacyEntry(win, off, pos, verifyCrc);
        entry = { type: 'batch', header, bytes, records };
      }
    } catch (err) {
      if (!(err instanceof KlxError)) throw err;
      // Framing is sound but the header or legacy message cannot be decoded: skip exactly this entry.
      yield damage('corrupt-region', pos, total, err.code, err.reason, bytes);
      pos += total;
      continue;
    }
    yield entry;
    pos += total;
  }

  function nextLooksValid(next: number): boolean {
    if (next >= end) return true;
    if (end - next < HEADER_SIZE_UP_TO_MAGIC + 1) return false;
    const o = ensure(next, HEADER_SIZE_UP_TO_MAGIC);
    return framingProblem(win.readInt32BE(o + 8), win.readInt8(o + 16), end - next) === null;
  }

  function* recover(at: number, problem: { code: ErrorCode; reason: string }): Generator<LogEntry> {
    const next = resync ? findNextValidEntry(at + 1) : -1;
    if (next < 0) {
      const len = end - at;
      yield damage('invalid-tail', at, len, problem.code, `${len} invalid bytes at the end of the file: ${problem.reason}`, len <= 64 * 1024 * 1024 ? source.read(at, len) : null);
      return;
    }
    yield damage('corrupt-region', at, next - at, problem.code, `${next - at} bytes from position ${at} are not a valid batch (${problem.reason}); reading resumed at position ${next}`, source.read(at, next - at));
    yield* scanEntries(source, { ...opts, start: next, end });
  }

  /** First position ≥ from where an entry with plausible framing and a valid CRC starts, or −1. */
  function findNextValidEntry(from: number): number {
    for (let p = from; p + V2_HEADER_SIZE <= end || p + LOG_OVERHEAD + V0_MIN_MESSAGE_SIZE <= end; p++) {
      const o = ensure(p, Math.min(V2_HEADER_SIZE, end - p));
      const avail = Math.min(win.length - o, end - p);
      if (avail < HEADER_SIZE_UP_TO_MAGIC + 1) continue;
      const magic = win[o + 16]!;
      if (magic > 2) continue;
      const size = win.readInt32BE(o + 8);
      if (framingProblem(size, magic, end - p) !== null) continue;
      if (magic === 2 && (win.readInt16BE(o + 21) & 0x07) > 4) continue;
      const total = size + LOG_OVERHEAD;
      const eo = ensure(p, total);
      const ok = magic === 2 ? crc32c(win.subarray(eo + 21, eo + total)) === win.readUInt32BE(eo + 17) : crc32ieee(win.subarray(eo + 16, eo + total)) === win.readUInt32BE(eo + 12);
      if (ok) return p;
    }
    return -1;
  }
}

function damage(type: DamageEntry['type'], position: number, size: number, code: ErrorCode, reason: string, bytes: Buffer | null): DamageEntry {
  let zeros = bytes !== null;
  if (bytes) for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) { zeros = false; break; }
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
