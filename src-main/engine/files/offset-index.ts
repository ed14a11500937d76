/**
 * Offset index `N.index` (spec §9.1; Kafka's `OffsetIndex` / `AbstractIndex`, and the rebuild loop of
 * `LogSegment.recover`).
 *
 * Format: a flat array of 8-byte big-endian entries `relativeOffset int32 | position int32`, no header.
 * N (the file name) is the segment base offset B; an entry means "the batch that starts at byte
 * `position` of `N.log` ends with offset `B + relativeOffset`". The index is sparse.
 *
 * Invariants of a well-formed index:
 * - entries strictly increase in offset and in position; `0 ≤ relativeOffset ≤ 2^31−1`;
 * - no entry has position 0 (the first batch of a segment is never indexed), except a first entry
 *   `(0, 0)`, which Kafka accepts (KAFKA-7076 made the sanity check `<`, so a one-entry index
 *   `(0, 0)` is valid, case B12) and which is harmless: a lookup would fall back to `(B, 0)` anyway;
 * - a closed segment's index is trimmed to `entries × 8` bytes; the active segment's index is
 *   preallocated (10 485 760 bytes by default) and zero-filled past the entries. After a crash the
 *   area past the real entries may hold zeros or stale entries.
 *
 * Kafka's own sanity check (`OffsetIndex.sanityCheck`) takes `floor(length / 8)` slots as entries and
 * rejects the file when the length is not a multiple of 8 or when the last slot's offset is below B
 * (KAFKA-7076 made this `<`, so a last offset equal to B is fine). This module reports those checks as
 * {@link IndexProblem}s with `kafkaCorrupt: true`, and separately finds the real entries (stopping
 * at the first slot that breaks the invariants above) and the stale / zero tail after them.
 */
import { KlxError } from '../errors.ts';
import { offsetFromFileName } from './file-names.ts';
import { readFileBytes, writeFileAtomic, type WriteOptions } from './fsync-write.ts';
import { basename } from 'node:path';

/** Size of one offset-index entry, in bytes. */
export const OFFSET_INDEX_ENTRY_SIZE = 8;
/** Default `segment.index.bytes`: maximum index file size, in bytes (10 MiB). */
export const DEFAULT_SEGMENT_INDEX_BYTES = 10 * 1024 * 1024;
/** Default `index.interval.bytes`: bytes of log between two index entries (strictly more than this). */
export const DEFAULT_INDEX_INTERVAL_BYTES = 4096;
/** Largest relative offset an index can hold (int32). */
export const MAX_RELATIVE_OFFSET = 2147483647;

/** One entry of an offset index. */
export interface OffsetIndexEntry {
  /** Absolute offset: base offset + relativeOffset. */
  offset: bigint;
  /** Offset relative to the segment base offset (int32 as stored). */
  relativeOffset: number;
  /** Byte position in the segment's `.log` of the batch that ends at `offset`. */
  position: number;
}

/** What is wrong with an index file. */
export type IndexProblemKind =
  /** File length not a multiple of the entry size (Kafka: corrupt). */
  | 'size-not-multiple'
  /** Last slot's offset below the base offset (Kafka: corrupt). */
  | 'last-offset-below-base'
  /** Last slot's timestamp below the first slot's (time index; Kafka: corrupt). */
  | 'last-timestamp-below-first'
  /** Non-zero slots after the real entries that break the ordering rules (stale after a crash). */
  | 'stale-entries'
  /** A transaction-index entry whose last offset is below the base offset (Kafka: corrupt). */
  | 'txn-last-offset-below-base'
  /** A transaction-index entry with a version Kafka does not know (Kafka: error). */
  | 'unsupported-version'
  /** Transaction-index entries whose last offsets do not strictly increase. */
  | 'out-of-order'
  /** Bytes at the end that do not make a whole entry, where Kafka ignores them (transaction index). */
  | 'partial-entry';

/** A problem found in an index file. Reported, never thrown by the readers. */
export interface IndexProblem {
  kind: IndexProblemKind;
  /** The file as given to the reader (or its label). */
  file: string;
  /** Byte position in the index file where the problem starts. */
  position: number;
  /** Human-readable reason. */
  reason: string;
  /**
   * True when Kafka's own sanity check (`sanityCheck()` of `OffsetIndex` / `TimeIndex` /
   * `TransactionIndex`, or reading `TransactionIndex`) would throw for this file; a broker then
   * deletes and rebuilds the segment's indexes. False for what only this reader detects.
   */
  kafkaCorrupt: boolean;
}

/** A decoded offset index file. */
export interface OffsetIndexFile {
  /** Segment base offset B (from the file name unless given). */
  baseOffset: bigint;
  /** The real entries: the longest valid prefix of the file's slots. */
  entries: OffsetIndexEntry[];
  /** File size in bytes. */
  fileSize: number;
  /** Slots between the real entries and the zero tail: non-zero data that breaks the ordering (stale). */
  staleEntries: number;
  /** All-zero slots at the end of the file (preallocated, never written). */
  trailingZeroEntries: number;
  /** Bytes at the end that do not make a whole entry (`fileSize % 8`). */
  trailingBytes: number;
  problems: IndexProblem[];
}

/** Options of {@link parseOffsetIndex} / {@link readOffsetIndex}. */
export interface OffsetIndexReadOptions {
  /** Segment base offset; by default taken from the file name. */
  baseOffset?: bigint;
  /** Name used in problems (default: the path, or `'<buffer>'`). */
  file?: string;
  /** Size of the segment's `.log` in bytes; entries whose position is ≥ it are not real. */
  logSize?: number;
}

/** The slots split into real entries, stale slots and a zero tail. Shared with the time index. */
export interface SlotSplit {
  valid: number;
  stale: number;
  zeros: number;
}

/**
 * Splits `slots` slots of `entrySize` bytes into [valid prefix][stale][zero suffix].
 * `isValidNext(i)` says whether slot i continues the valid prefix (called with increasing i while it holds).
 * A leading all-zero slot counts as an entry only when it is the file's only slot or the next slot is a
 * valid successor; otherwise an all-zero file reads as zero entries (preallocated, never written).
 */
export function splitSlots(buf: Uint8Array, entrySize: number, slots: number, isValidNext: (i: number) => boolean): SlotSplit {
  const isZero = (i: number): boolean => {
    for (let p = i * entrySize, end = p + entrySize; p < end; p++) if (buf[p] !== 0) return false;
    return true;
  };
  let zeroStart = slots;
  while (zeroStart > 0 && isZero(zeroStart - 1)) zeroStart--;
  // An all-zero first slot reads as (offset B, position 0) / (timestamp 0, offset B): ambiguous with
  // preallocated padding. It is an entry only when it is the only slot or slot 1 validly follows it.
  const leadingZeroIsPadding = slots > 1 && isZero(0) && !isValidNext(1);
  let valid = 0;
  if (!leadingZeroIsPadding) while (valid < slots && isValidNext(valid)) valid++;
  const zeroFrom = Math.max(zeroStart, valid);
  return { valid, stale: zeroFrom - valid, zeros: slots - zeroFrom };
}

/**
 * Decodes an offset index held in memory.
 * @param buf the file's bytes.
 * @param baseOffset the segment base offset B.
 * @returns entries, tail accounting and problems (Kafka sanity rules + stale entries); never throws on content.
 */
export function parseOffsetIndex(buf: Uint8Array, baseOffset: bigint, opts: Omit<OffsetIndexReadOptions, 'baseOffset'> = {}): OffsetIndexFile {
  const file = opts.file ?? '<buffer>';
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const slots = Math.floor(buf.length / OFFSET_INDEX_ENTRY_SIZE);
  const rel = (i: number): number => view.getInt32(i * 8);
  const pos = (i: number): number => view.getInt32(i * 8 + 4);
  const logSize = opts.logSize;
  const isValidNext = (i: number): boolean => {
    const r = rel(i);
    const p = pos(i);
    if (r < 0 || p < 0) return false;
    if (logSize !== undefined && p >= logSize && !(p === 0 && i === 0)) return false;
    if (i === 0) return true;
    return r > rel(i - 1) && p > pos(i - 1);
  };
  const split = splitSlots(buf, OFFSET_INDEX_ENTRY_SIZE, slots, isValidNext);
  const entries: OffsetIndexEntry[] = new Array(split.valid);
  for (let i = 0; i < split.valid; i++) {
    const r = rel(i);
    entries[i] = { offset: baseOffset + BigInt(r), relativeOffset: r, position: pos(i) };
  }
  const problems: IndexProblem[] = [];
  const trailingBytes = buf.length % OFFSET_INDEX_ENTRY_SIZE;
  if (trailingBytes !== 0) {
    problems.push({ kind: 'size-not-multiple', file, position: slots * 8, reason: `index file is ${buf.length} bytes, not a multiple of ${OFFSET_INDEX_ENTRY_SIZE}`, kafkaCorrupt: true });
  }
  if (slots > 0 && rel(slots - 1) < 0) {
    const last = baseOffset + BigInt(rel(slots - 1));
    problems.push({ kind: 'last-offset-below-base', file, position: (slots - 1) * 8, reason: `last offset ${last} (slot ${slots - 1}) is less than the base offset ${baseOffset}`, kafkaCorrupt: true });
  }
  if (split.stale > 0) {
    problems.push({
      kind: 'stale-entries',
      file,
      position: split.valid * 8,
      reason: `${split.stale} entr${split.stale === 1 ? 'y' : 'ies'} after the ${split.valid} valid one${split.valid === 1 ? '' : 's'} break the ordering (stale data after a crash?)`,
      kafkaCorrupt: false,
    });
  }
  return { baseOffset, entries, fileSize: buf.length, staleEntries: split.stale, trailingZeroEntries: split.zeros, trailingBytes, problems };
}

/**
 * Reads and decodes an `N.index` file in one go (it is bounded by `segment.index.bytes`).
 * @param path the file; its name gives the base offset unless `opts.baseOffset` is set.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readOffsetIndex(path: string, opts: OffsetIndexReadOptions = {}): OffsetIndexFile {
  const baseOffset = opts.baseOffset ?? offsetFromFileName(basename(path));
  const buf = readFileBytes(path);
  return parseOffsetIndex(buf, baseOffset, { file: opts.file ?? path, logSize: opts.logSize });
}

/**
 * Throws the first problem Kafka's sanity check would raise, if any.
 * @throws KlxError `corrupt-index` with the file and byte position of the problem.
 */
export function assertKafkaSane(index: { problems: IndexProblem[] }): void {
  const p = index.problems.find((x) => x.kafkaCorrupt);
  if (p) throw new KlxError('corrupt-index', p.reason, { file: p.file, position: p.position, details: { kind: p.kind } });
}

/** Result of an index lookup: where to start scanning the `.log`. */
export interface OffsetPosition {
  /** Absolute offset of the entry found (or the base offset). */
  offset: bigint;
  /** Byte position in the `.log` (0 when no entry applies). */
  position: number;
}

/**
 * Kafka `OffsetIndex.lookup`: the last entry whose offset is ≤ `target` (binary search), or the
 * segment start `(baseOffset, 0)` when there is none. Scan the `.log` forward from `position` to the
 * first batch whose last offset is ≥ target.
 * @param target an absolute offset.
 */
export function lookupOffset(index: { baseOffset: bigint; entries: readonly OffsetIndexEntry[] }, target: bigint): OffsetPosition {
  const e = index.entries;
  let lo = 0;
  let hi = e.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (e[mid]!.offset <= target) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found < 0 ? { offset: index.baseOffset, position: 0 } : { offset: e[found]!.offset, position: e[found]!.position };
}

/**
 * Kafka `OffsetIndex.fetchUpperBoundOffset`-style helper: the first entry whose position is ≥
 * `position + size`, or undefined. Useful to bound a read of `size` bytes starting at `position`.
 * @param position byte position in the `.log`; @param size bytes.
 */
export function upperBoundEntry(index: { entries: readonly OffsetIndexEntry[] }, position: number, size: number): OffsetIndexEntry | undefined {
  const limit = position + size;
  const e = index.entries;
  let lo = 0;
  let hi = e.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (e[mid]!.position < limit) lo = mid + 1;
    else hi = mid;
  }
  return e[lo];
}

// ---------------------------------------------------------------------------------------------
// Building and writing

/** What the index builders need to know about a batch of the `.log` (a v2 batch or a top-level legacy message). */
export interface IndexableBatch {
  /** Byte position of the batch in the `.log`. */
  position: number;
  /** Size of the batch in bytes (12 + length field). */
  size: number;
  /** Last offset of the batch (absolute). */
  lastOffset: bigint;
  /** Max timestamp of the batch in ms (−1 when none). */
  maxTimestamp: bigint;
}

/**
 * Checks a batch's last offset against the segment (Kafka `LogSegment.ensureOffsetInRange`).
 * @throws KlxError `invalid-argument` when `lastOffset − base` is outside 0..2^31−1.
 */
export function relativeOffsetOf(baseOffset: bigint, offset: bigint): number {
  const rel = offset - baseOffset;
  if (rel < 0n || rel > BigInt(MAX_RELATIVE_OFFSET)) {
    throw new KlxError('invalid-argument', `offset ${offset} cannot be stored in the segment with base offset ${baseOffset} (relative offset ${rel} outside 0..${MAX_RELATIVE_OFFSET})`);
  }
  return Number(rel);
}

/**
 * The offset-index entries a broker writes when it rebuilds the index of a segment
 * (spec §9.1 rebuild rule; Kafka `LogSegment.recover`; also what `LogSegment.append` writes in
 * Kafka ≥ 3.x, which indexes batch by batch): `lastIndexed = 0`; for a batch at position p, if
 * `p − lastIndexed > indexIntervalBytes` add `(lastOffset − B, p)` and set `lastIndexed = p`.
 * Hence the first batch never gets an entry.
 * @param batches the segment's batches in file order.
 * @param indexIntervalBytes `index.interval.bytes`, default 4096.
 * @throws KlxError `invalid-argument` for a batch whose offset does not fit the segment or does not
 *   increase (Kafka: `LogSegmentOffsetOverflowException` / `InvalidOffsetException`).
 */
export function buildOffsetIndexEntries(baseOffset: bigint, batches: Iterable<IndexableBatch>, indexIntervalBytes: number = DEFAULT_INDEX_INTERVAL_BYTES): OffsetIndexEntry[] {
  const out: OffsetIndexEntry[] = [];
  let lastIndexed = 0;
  for (const b of batches) {
    const rel = relativeOffsetOf(baseOffset, b.lastOffset);
    if (b.position - lastIndexed > indexIntervalBytes) {
      const prev = out[out.length - 1];
      if (prev && rel <= prev.relativeOffset) {
        throw new KlxError('invalid-argument', `batch at position ${b.position} ends at offset ${b.lastOffset}, not after the last indexed offset ${prev.offset}`);
      }
      out.push({ offset: b.lastOffset, relativeOffset: rel, position: b.position });
      lastIndexed = b.position;
    }
  }
  return out;
}

/**
 * Encodes offset-index entries (Kafka `OffsetIndex.append` layout).
 * @param entries absolute offsets, strictly increasing; positions non-negative int32.
 * @param fileSize total bytes to produce: default `entries × 8` (trimmed); larger to preallocate
 *   (rounded down to a multiple of 8, zero-filled past the entries).
 * @throws KlxError `invalid-argument` for an offset outside the segment, non-increasing offsets, a
 *   bad position, or a `fileSize` too small for the entries.
 */
export function encodeOffsetIndex(baseOffset: bigint, entries: readonly Pick<OffsetIndexEntry, 'offset' | 'position'>[], fileSize?: number): Buffer {
  const need = entries.length * OFFSET_INDEX_ENTRY_SIZE;
  const total = fileSize === undefined ? need : Math.floor(fileSize / OFFSET_INDEX_ENTRY_SIZE) * OFFSET_INDEX_ENTRY_SIZE;
  if (total < need) throw new KlxError('invalid-argument', `index size ${fileSize} cannot hold ${entries.length} entries (${need} bytes)`);
  const buf = Buffer.alloc(total);
  let prev = -1;
  entries.forEach((e, i) => {
    const rel = relativeOffsetOf(baseOffset, e.offset);
    if (rel <= prev) throw new KlxError('invalid-argument', `index entry ${i} (offset ${e.offset}) is not larger than the previous offset`);
    if (!Number.isInteger(e.position) || e.position < 0 || e.position > 2147483647) throw new KlxError('invalid-argument', `index entry ${i} has invalid position ${e.position}`);
    buf.writeInt32BE(rel, i * 8);
    buf.writeInt32BE(e.position, i * 8 + 4);
    prev = rel;
  });
  return buf;
}

/** Options of {@link writeOffsetIndex}. */
export interface IndexWriteOptions extends WriteOptions {
  /** Preallocate the file to this many bytes (rounded down to whole entries), zero-filled; default: trimmed. */
  preallocateBytes?: number;
}

/**
 * Writes an `N.index` file atomically and durably (via `<path>.tmp`, fsync, rename, fsync dir),
 * trimmed to `entries × 8` bytes (a closed segment) or preallocated (an active segment).
 * @throws KlxError `invalid-argument` (see {@link encodeOffsetIndex}), `io-error`; or what `opts.fault` throws.
 */
export function writeOffsetIndex(path: string, baseOffset: bigint, entries: readonly Pick<OffsetIndexEntry, 'offset' | 'position'>[], opts: IndexWriteOptions = {}): void {
  writeFileAtomic(path, encodeOffsetIndex(baseOffset, entries, opts.preallocateBytes), opts);
}
