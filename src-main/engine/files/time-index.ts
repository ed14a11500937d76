/**
 * Time index `N.timeindex` (spec §9.2; Kafka's `TimeIndex`, and `LogSegment.recover` /
 * `LogSegment.onBecomeInactiveSegment` for what a broker writes).
 *
 * Format: a flat array of 12-byte big-endian entries `timestamp int64 (ms) | relativeOffset int32`,
 * no header. N is the segment base offset B. An entry `(ts, B + rel)` means: when it was written, `ts`
 * was the largest batch max timestamp appended to the segment so far and `B + rel` the last offset
 * of the batch that carried it; every record with a timestamp above `ts` is at a later offset.
 *
 * Invariants of a well-formed time index:
 * - timestamps strictly increase (an entry is only added when its timestamp is greater than the
 *   last entry's, starting from −1, so every timestamp is ≥ 0); offsets never decrease; `rel ≥ 0`;
 * - for a closed segment the last entry holds the segment's largest timestamp (final entry added on
 *   roll / close / recovery); a segment without timestamps ≥ 0 has an empty time index;
 * - closed segments are trimmed to `entries × 12` bytes; the active one is preallocated
 *   (10 485 756 bytes = 873 813 slots by default) and zero-filled past the entries.
 *
 * Kafka's sanity check (`TimeIndex.sanityCheck`) takes `floor(length / 12)` slots as entries and
 * rejects the file when the length is not a multiple of 12, when the last slot's timestamp is below
 * the first slot's, or when the last slot's offset is below B. Note that a preallocated time index
 * with real entries followed by zeros fails the timestamp rule (the last slot reads as timestamp 0):
 * this is the "Found a corrupted index file" a broker logs after an unclean shutdown (case B12).
 */
import { basename } from 'node:path';
import { KlxError } from '../errors.ts';
import { offsetFromFileName } from './file-names.ts';
import { readFileBytes, writeFileAtomic } from './fsync-write.ts';
import { DEFAULT_INDEX_INTERVAL_BYTES, relativeOffsetOf, splitSlots, type IndexableBatch, type IndexProblem, type IndexWriteOptions } from './offset-index.ts';

/** Size of one time-index entry, in bytes. */
export const TIME_INDEX_ENTRY_SIZE = 12;
/** Timestamp of "no entry" lookups (Kafka `RecordBatch.NO_TIMESTAMP`). */
export const NO_TIMESTAMP = -1n;

/** One entry of a time index. */
export interface TimeIndexEntry {
  /** Timestamp in ms since the epoch. */
  timestamp: bigint;
  /** Absolute offset: base offset + relativeOffset. */
  offset: bigint;
  /** Offset relative to the segment base offset (int32 as stored). */
  relativeOffset: number;
}

/** A decoded time index file. */
export interface TimeIndexFile {
  /** Segment base offset B. */
  baseOffset: bigint;
  /** The real entries: the longest valid prefix of the file's slots. */
  entries: TimeIndexEntry[];
  /** File size in bytes. */
  fileSize: number;
  /** Slots between the real entries and the zero tail that break the ordering (stale). */
  staleEntries: number;
  /** All-zero slots at the end of the file. */
  trailingZeroEntries: number;
  /** Bytes at the end that do not make a whole entry (`fileSize % 12`). */
  trailingBytes: number;
  problems: IndexProblem[];
}

/** Options of {@link parseTimeIndex} / {@link readTimeIndex}. */
export interface TimeIndexReadOptions {
  /** Segment base offset; by default taken from the file name. */
  baseOffset?: bigint;
  /** Name used in problems (default: the path, or `'<buffer>'`). */
  file?: string;
}

/**
 * Decodes a time index held in memory.
 * @param buf the file's bytes; @param baseOffset the segment base offset B.
 * @returns entries, tail accounting and problems (Kafka sanity rules + stale entries); never throws on content.
 */
export function parseTimeIndex(buf: Uint8Array, baseOffset: bigint, opts: Omit<TimeIndexReadOptions, 'baseOffset'> = {}): TimeIndexFile {
  const file = opts.file ?? '<buffer>';
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const slots = Math.floor(buf.length / TIME_INDEX_ENTRY_SIZE);
  const ts = (i: number): bigint => view.getBigInt64(i * 12);
  const rel = (i: number): number => view.getInt32(i * 12 + 8);
  const isValidNext = (i: number): boolean => {
    if (ts(i) < 0n || rel(i) < 0) return false;
    if (i === 0) return true;
    return ts(i) > ts(i - 1) && rel(i) >= rel(i - 1);
  };
  const split = splitSlots(buf, TIME_INDEX_ENTRY_SIZE, slots, isValidNext);
  const entries: TimeIndexEntry[] = new Array(split.valid);
  for (let i = 0; i < split.valid; i++) {
    const r = rel(i);
    entries[i] = { timestamp: ts(i), offset: baseOffset + BigInt(r), relativeOffset: r };
  }
  const problems: IndexProblem[] = [];
  const trailingBytes = buf.length % TIME_INDEX_ENTRY_SIZE;
  if (slots > 0) {
    const last = slots - 1;
    if (ts(last) < ts(0)) {
      problems.push({
        kind: 'last-timestamp-below-first',
        file,
        position: last * 12,
        reason: `last timestamp ${ts(last)} (slot ${last}) is less than the first timestamp ${ts(0)}`,
        kafkaCorrupt: true,
      });
    }
    if (rel(last) < 0) {
      problems.push({ kind: 'last-offset-below-base', file, position: last * 12, reason: `last offset ${baseOffset + BigInt(rel(last))} (slot ${last}) is less than the base offset ${baseOffset}`, kafkaCorrupt: true });
    }
  }
  if (trailingBytes !== 0) {
    problems.push({ kind: 'size-not-multiple', file, position: slots * 12, reason: `time index file is ${buf.length} bytes, not a multiple of ${TIME_INDEX_ENTRY_SIZE}`, kafkaCorrupt: true });
  }
  if (split.stale > 0) {
    problems.push({
      kind: 'stale-entries',
      file,
      position: split.valid * 12,
      reason: `${split.stale} entr${split.stale === 1 ? 'y' : 'ies'} after the ${split.valid} valid one${split.valid === 1 ? '' : 's'} break the ordering (stale data after a crash?)`,
      kafkaCorrupt: false,
    });
  }
  return { baseOffset, entries, fileSize: buf.length, staleEntries: split.stale, trailingZeroEntries: split.zeros, trailingBytes, problems };
}

/**
 * Reads and decodes an `N.timeindex` file in one go.
 * @param path the file; its name gives the base offset unless `opts.baseOffset` is set.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readTimeIndex(path: string, opts: TimeIndexReadOptions = {}): TimeIndexFile {
  const baseOffset = opts.baseOffset ?? offsetFromFileName(basename(path));
  return parseTimeIndex(readFileBytes(path), baseOffset, { file: opts.file ?? path });
}

/** Result of a time-index lookup. */
export interface TimestampOffset {
  /** Timestamp in ms, or −1 when no entry applies. */
  timestamp: bigint;
  /** Absolute offset (the base offset when no entry applies). */
  offset: bigint;
}

/**
 * Kafka `TimeIndex.lookup`: the last entry whose timestamp is ≤ `timestamp` (binary search), or
 * `(−1, baseOffset)` when there is none. To find the first record with a timestamp ≥ t, start
 * scanning the `.log` at the offset-index position of the returned offset.
 * @param timestamp target in ms.
 */
export function lookupTimestamp(index: { baseOffset: bigint; entries: readonly TimeIndexEntry[] }, timestamp: bigint): TimestampOffset {
  const e = index.entries;
  let lo = 0;
  let hi = e.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (e[mid]!.timestamp <= timestamp) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found < 0 ? { timestamp: NO_TIMESTAMP, offset: index.baseOffset } : { timestamp: e[found]!.timestamp, offset: e[found]!.offset };
}

/** Options of {@link buildTimeIndexEntries}. */
export interface TimeIndexBuildOptions {
  /** `index.interval.bytes` (default 4096); entries are written together with offset-index entries. */
  indexIntervalBytes?: number;
  /**
   * Append the final `(maxTimestampSoFar, itsOffset)` entry that a broker adds when the segment is
   * rolled, closed or recovered (default true). False gives what an active segment holds mid-life.
   */
  final?: boolean;
}

/**
 * The time-index entries a broker writes for a segment when it rebuilds it (spec §9.2; Kafka
 * `LogSegment.recover` with `TimeIndex.maybeAppend`):
 * for each batch, first `if (maxTimestamp > maxSoFar) (maxSoFar, offsetOfMax) = (maxTimestamp, lastOffset)`
 * (strictly greater: on a tie the earlier batch keeps it); then, when the offset-index rule fires
 * (`position − lastIndexed > indexIntervalBytes`), append `(maxSoFar, offsetOfMax)` if `maxSoFar` is
 * greater than the last entry's timestamp (initially −1). With `final`, the same append once more at the end.
 * @param batches the segment's batches in file order.
 * @throws KlxError `invalid-argument` for a batch whose last offset does not fit the segment.
 */
export function buildTimeIndexEntries(baseOffset: bigint, batches: Iterable<IndexableBatch>, opts: TimeIndexBuildOptions = {}): TimeIndexEntry[] {
  const interval = opts.indexIntervalBytes ?? DEFAULT_INDEX_INTERVAL_BYTES;
  const out: TimeIndexEntry[] = [];
  let maxTs = NO_TIMESTAMP;
  let maxOffset = -1n;
  let lastIndexed = 0;
  const maybeAppend = (): void => {
    const lastTs = out.length ? out[out.length - 1]!.timestamp : NO_TIMESTAMP;
    if (maxTs > lastTs) out.push({ timestamp: maxTs, offset: maxOffset, relativeOffset: relativeOffsetOf(baseOffset, maxOffset) });
  };
  for (const b of batches) {
    relativeOffsetOf(baseOffset, b.lastOffset);
    if (b.maxTimestamp > maxTs) {
      maxTs = b.maxTimestamp;
      maxOffset = b.lastOffset;
    }
    if (b.position - lastIndexed > interval) {
      maybeAppend();
      lastIndexed = b.position;
    }
  }
  if (opts.final ?? true) maybeAppend();
  return out;
}

/**
 * Encodes time-index entries.
 * @param entries strictly increasing timestamps, non-decreasing offsets inside the segment.
 * @param fileSize total bytes: default `entries × 12` (trimmed); larger to preallocate (rounded down
 *   to a multiple of 12, zero-filled).
 * @throws KlxError `invalid-argument` when the entries break the ordering (Kafka `TimeIndex.maybeAppend`
 *   throws too), an offset does not fit, or `fileSize` is too small.
 */
export function encodeTimeIndex(baseOffset: bigint, entries: readonly Pick<TimeIndexEntry, 'timestamp' | 'offset'>[], fileSize?: number): Buffer {
  const need = entries.length * TIME_INDEX_ENTRY_SIZE;
  const total = fileSize === undefined ? need : Math.floor(fileSize / TIME_INDEX_ENTRY_SIZE) * TIME_INDEX_ENTRY_SIZE;
  if (total < need) throw new KlxError('invalid-argument', `time index size ${fileSize} cannot hold ${entries.length} entries (${need} bytes)`);
  const buf = Buffer.alloc(total);
  let prevTs = NO_TIMESTAMP;
  let prevRel = -1;
  entries.forEach((e, i) => {
    const rel = relativeOffsetOf(baseOffset, e.offset);
    if (e.timestamp <= prevTs) throw new KlxError('invalid-argument', `time index entry ${i}: timestamp ${e.timestamp} is not larger than the previous ${prevTs}`);
    if (rel < prevRel) throw new KlxError('invalid-argument', `time index entry ${i}: offset ${e.offset} is below the previous entry's`);
    buf.writeBigInt64BE(e.timestamp, i * 12);
    buf.writeInt32BE(rel, i * 12 + 8);
    prevTs = e.timestamp;
    prevRel = rel;
  });
  return buf;
}

/**
 * Writes an `N.timeindex` file atomically and durably (via `<path>.tmp`), trimmed or preallocated.
 * @throws KlxError `invalid-argument` (see {@link encodeTimeIndex}), `io-error`; or what `opts.fault` throws.
 */
export function writeTimeIndex(path: string, baseOffset: bigint, entries: readonly Pick<TimeIndexEntry, 'timestamp' | 'offset'>[], opts: IndexWriteOptions = {}): void {
  writeFileAtomic(path, encodeTimeIndex(baseOffset, entries, opts.preallocateBytes), opts);
}
