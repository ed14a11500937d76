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
 * this is the "Found a corrupted index file" brokers before 2.3 logged after an unclean shutdown
 * (case B12); since 2.3 (KAFKA-7283) `LogSegment.sanityCheck` skips this check and a broker rebuilds
 * the index only when it recovers the segment (`LogLoader.recoverLog`).
 *
 * The scaffolding shared with the offset index (slot splitting, problems, binary search, buffer
 * sizing) lives in `index-file.ts`; this module gives the time index's layout and rules.
 */
import { KlxError } from '../errors.ts';
import { writeFileAtomic } from './fsync-write.ts';
import { allocIndexBuffer, lastEntryAtOrBelow, parseIndexSlots, readIndexFile, type IndexFileContents, type IndexReadOptions, type IndexSlotFormat, type IndexWriteOptions } from './index-file.ts';
import { DEFAULT_INDEX_INTERVAL_BYTES, relativeOffsetOf, type IndexableBatch } from './offset-index.ts';

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

/** A decoded time index file (`trailingBytes` is `fileSize % 12`). */
export type TimeIndexFile = IndexFileContents<TimeIndexEntry>;

/** Options of {@link parseTimeIndex} / {@link readTimeIndex}. */
export type TimeIndexReadOptions = IndexReadOptions;

/** The time index's slots: `timestamp int64 | relativeOffset int32`; timestamps increase, offsets do not decrease. */
const ts = (view: DataView, i: number): bigint => view.getBigInt64(i * 12);
const rel = (view: DataView, i: number): number => view.getInt32(i * 12 + 8);
const TIME_INDEX_FORMAT: IndexSlotFormat<TimeIndexEntry> = {
  entrySize: TIME_INDEX_ENTRY_SIZE,
  noun: 'time index',
  relativeOffset: rel,
  follows: (view, i, prev) => {
    if (ts(view, i) < 0n || rel(view, i) < 0) return false;
    if (prev < 0) return true;
    return ts(view, i) > ts(view, prev) && rel(view, i) >= rel(view, prev);
  },
  fields: (view, i) => {
    const t = ts(view, i);
    return { timestamp: t >= BigInt(Number.MIN_SAFE_INTEGER) && t <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(t) : String(t), relativeOffset: rel(view, i) };
  },
  entry: (view, i, baseOffset) => {
    const r = rel(view, i);
    return { timestamp: ts(view, i), offset: baseOffset + BigInt(r), relativeOffset: r };
  },
  kafkaChecks: (s) => {
    const last = s.slots - 1;
    const first = ts(s.view, 0);
    const lastTs = ts(s.view, last);
    return [
      lastTs < first ? s.corrupt('last-timestamp-below-first', last, `last timestamp ${lastTs} (slot ${last}) is less than the first timestamp ${first}`) : undefined,
      s.lastOffsetBelowBase(),
      s.sizeNotMultiple(),
    ];
  },
};

/**
 * Decodes a time index held in memory.
 * @param buf the file's bytes; @param baseOffset the segment base offset B.
 * @returns entries, tail accounting and problems (Kafka sanity rules + stale entries); never throws on content.
 */
export function parseTimeIndex(buf: Uint8Array, baseOffset: bigint, opts: Omit<TimeIndexReadOptions, 'baseOffset'> = {}): TimeIndexFile {
  return parseIndexSlots(buf, baseOffset, opts.file ?? '<buffer>', TIME_INDEX_FORMAT);
}

/**
 * Reads and decodes an `N.timeindex` file in one go.
 * @param path the file; its name gives the base offset unless `opts.baseOffset` is set.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readTimeIndex(path: string, opts: TimeIndexReadOptions = {}): TimeIndexFile {
  return readIndexFile(path, opts, (buf, baseOffset, file) => parseTimeIndex(buf, baseOffset, { file }));
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
  const found = lastEntryAtOrBelow(e, timestamp, entryTimestamp);
  return found < 0 ? { timestamp: NO_TIMESTAMP, offset: index.baseOffset } : { timestamp: e[found]!.timestamp, offset: e[found]!.offset };
}

const entryTimestamp = (e: TimeIndexEntry): bigint => e.timestamp;

/** Options of {@link buildTimeIndexEntries}. */
export interface TimeIndexBuildOptions {
  /** `index.interval.bytes` (default 4096); entries are written together with offset-index entries. */
  indexIntervalBytes?: number;
  /**
   * Append the final `(maxTimestampSoFar, itsOffset)` entry that a broker adds when the segment is
   * rolled, closed or recovered (default true; LogSegment.onBecomeInactiveSegment, LogSegment.recover). False gives what an active segment holds mid-life.
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
  const buf = allocIndexBuffer('time index', TIME_INDEX_ENTRY_SIZE, entries.length, fileSize);
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
