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
 * at the first slot that breaks the invariants above) and the stale / zero tail after them. The
 * scaffolding it shares with the time index (slot splitting, problems, binary search, buffer sizing)
 * lives in `index-file.ts`; this module gives the offset index's layout and rules.
 */
import { KlxError } from '../errors.ts';
import { writeFileAtomic } from './fsync-write.ts';
import {
  allocIndexBuffer,
  lastEntryAtOrBelow,
  parseIndexSlots,
  readIndexFile,
  type IndexFileContents,
  type IndexProblem,
  type IndexReadOptions,
  type IndexSlotFormat,
  type IndexWriteOptions,
} from './index-file.ts';

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

/** A decoded offset index file (`trailingBytes` is `fileSize % 8`). */
export type OffsetIndexFile = IndexFileContents<OffsetIndexEntry>;

/** Options of {@link parseOffsetIndex} / {@link readOffsetIndex}. */
export interface OffsetIndexReadOptions extends IndexReadOptions {
  /** Size of the segment's `.log` in bytes; entries whose position is ≥ it are not real. */
  logSize?: number;
}

/** The offset index's slots: `relativeOffset int32 | position int32`; offsets and positions increase. */
function offsetIndexFormat(logSize: number | undefined): IndexSlotFormat<OffsetIndexEntry> {
  const rel = (view: DataView, i: number): number => view.getInt32(i * 8);
  const pos = (view: DataView, i: number): number => view.getInt32(i * 8 + 4);
  return {
    entrySize: OFFSET_INDEX_ENTRY_SIZE,
    noun: 'index',
    relativeOffset: rel,
    follows: (view, i, prev) => {
      const r = rel(view, i);
      const p = pos(view, i);
      if (r < 0 || p < 0) return false;
      if (logSize !== undefined && p >= logSize && !(p === 0 && prev < 0)) return false;
      if (prev < 0) return true;
      return r > rel(view, prev) && p > pos(view, prev);
    },
    fields: (view, i) => ({ relativeOffset: rel(view, i), position: pos(view, i) }),
    entry: (view, i, baseOffset) => {
      const r = rel(view, i);
      return { offset: baseOffset + BigInt(r), relativeOffset: r, position: pos(view, i) };
    },
    kafkaChecks: (s) => [s.sizeNotMultiple(), s.lastOffsetBelowBase()],
  };
}

/**
 * Decodes an offset index held in memory.
 * @param buf the file's bytes.
 * @param baseOffset the segment base offset B.
 * @returns entries, tail accounting and problems (Kafka sanity rules + stale entries); never throws on content.
 */
export function parseOffsetIndex(buf: Uint8Array, baseOffset: bigint, opts: Omit<OffsetIndexReadOptions, 'baseOffset'> = {}): OffsetIndexFile {
  return parseIndexSlots(buf, baseOffset, opts.file ?? '<buffer>', offsetIndexFormat(opts.logSize));
}

/**
 * Reads and decodes an `N.index` file in one go (it is bounded by `segment.index.bytes`).
 * @param path the file; its name gives the base offset unless `opts.baseOffset` is set.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readOffsetIndex(path: string, opts: OffsetIndexReadOptions = {}): OffsetIndexFile {
  return readIndexFile(path, opts, (buf, baseOffset, file) => parseOffsetIndex(buf, baseOffset, { file, logSize: opts.logSize }));
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
  const found = lastEntryAtOrBelow(e, target, entryOffset);
  return found < 0 ? { offset: index.baseOffset, position: 0 } : { offset: e[found]!.offset, position: e[found]!.position };
}

const entryOffset = (e: OffsetIndexEntry): bigint => e.offset;

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
  const buf = allocIndexBuffer('index', OFFSET_INDEX_ENTRY_SIZE, entries.length, fileSize);
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

/**
 * Writes an `N.index` file atomically and durably (via `<path>.tmp`, fsync, rename, fsync dir),
 * trimmed to `entries × 8` bytes (a closed segment) or preallocated (an active segment).
 * @throws KlxError `invalid-argument` (see {@link encodeOffsetIndex}), `io-error`; or what `opts.fault` throws.
 */
export function writeOffsetIndex(path: string, baseOffset: bigint, entries: readonly Pick<OffsetIndexEntry, 'offset' | 'position'>[], opts: IndexWriteOptions = {}): void {
  writeFileAtomic(path, encodeOffsetIndex(baseOffset, entries, opts.preallocateBytes), opts);
}
