/**
 * What the slot-array index files of a segment — the offset index `N.index` (`offset-index.ts`) and
 * the time index `N.timeindex` (`time-index.ts`) — share (spec §9.1–§9.2; Kafka's `AbstractIndex`):
 *
 * - the layout: fixed-size big-endian slots, no header; Kafka takes `floor(length / entrySize)` slots
 *   as entries, a closed segment's file is trimmed to them and the active one is preallocated and
 *   zero-filled past them;
 * - reading: splitting the slots into the real entries (the longest prefix that keeps the kind's
 *   ordering rules), stale slots left by a crash, and the zero tail ({@link parseIndexSlots});
 * - error reporting: {@link IndexProblem}s, with `kafkaCorrupt` for what Kafka's `sanityCheck`
 *   rejects, the problems both kinds report worded once here, and {@link assertKafkaSane};
 * - lookup: the last entry whose key is ≤ a target, by binary search ({@link lastEntryAtOrBelow});
 * - encoding: the trimmed or preallocated, zero-filled buffer ({@link allocIndexBuffer}).
 *
 * The transaction index (`txn-index.ts`) has no slot array of this kind but reports its problems with
 * the same {@link IndexProblem} type.
 */
import { basename } from 'node:path';
import { KlxError } from '../errors.ts';
import { offsetFromFileName } from './file-names.ts';
import { readFileBytes, type WriteOptions } from './fsync-write.ts';

/** What is wrong with an index file. */
export type IndexProblemKind =
  /** File length not a multiple of the entry size (Kafka: corrupt, OffsetIndex/TimeIndex.sanityCheck). */
  | 'size-not-multiple'
  /** Last slot's offset below the base offset (Kafka: corrupt, OffsetIndex/TimeIndex.sanityCheck). */
  | 'last-offset-below-base'
  /** Last slot's timestamp below the first slot's (time index; Kafka: corrupt). */
  | 'last-timestamp-below-first'
  /** Non-zero slots after the real entries that break the ordering rules (stale after a crash). */
  | 'stale-entries'
  /**
   * One slot out of order while the others keep the ordering: the first slot, one in the middle
   * (the slots after it are in order again with the one before it) or the last one of a trimmed file.
   */
  | 'out-of-order-slot'
  /** A transaction-index entry whose last offset is below the base offset (Kafka: corrupt). */
  | 'txn-last-offset-below-base'
  /** A transaction-index entry with a version Kafka does not know (Kafka: error, TransactionIndex's iterator throws). */
  | 'unsupported-version'
  /** Transaction-index entries whose last offsets do not strictly increase. */
  | 'out-of-order'
  /** Bytes at the end that do not make a whole entry, where Kafka ignores them (transaction index: TransactionIndex reads whole entries only). */
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
   * `TransactionIndex`, or reading `TransactionIndex`) would throw for this file. At startup a broker
   * runs only the `.txnindex` check (and then recovers the segment, rebuilding its indexes:
   * `LogSegment.sanityCheck`, `LogLoader.loadSegmentFiles`); the offset and time index checks ran
   * at startup only before 2.3 (KAFKA-7283). False for what only this reader detects.
   */
  kafkaCorrupt: boolean;
  /**
   * `out-of-order-slot` only: `slot` (0-based), `where` (`first`, `middle`, `last`), the slot's fields
   * and its neighbours' (`slotEntry`, `before`, `after`: {@link IndexSlotFormat.fields}, null when
   * there is no such slot), `inOrderAfter` (how many non-zero slots follow it, all in order).
   */
  details?: Record<string, unknown>;
}

/**
 * Throws the first problem Kafka's sanity check would raise, if any.
 * @throws KlxError `corrupt-index` with the file and byte position of the problem.
 */
export function assertKafkaSane(index: { problems: IndexProblem[] }): void {
  const p = index.problems.find((x) => x.kafkaCorrupt);
  if (p) throw new KlxError('corrupt-index', p.reason, { file: p.file, position: p.position, details: { kind: p.kind } });
}

/** The slots split into real entries, stale slots and a zero tail. */
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

/** A decoded slot-array index file (`OffsetIndexFile`, `TimeIndexFile`). */
export interface IndexFileContents<E> {
  /** Segment base offset B (from the file name unless given). */
  baseOffset: bigint;
  /** The real entries: the longest valid prefix of the file's slots. */
  entries: E[];
  /** File size in bytes. */
  fileSize: number;
  /** Slots between the real entries and the zero tail: non-zero data that breaks the ordering (stale). */
  staleEntries: number;
  /** All-zero slots at the end of the file (preallocated, never written). */
  trailingZeroEntries: number;
  /** Bytes at the end that do not make a whole entry (`fileSize % entrySize`). */
  trailingBytes: number;
  problems: IndexProblem[];
}

/** The slots of one file, as a kind's rules and Kafka checks see them. */
export interface IndexSlots {
  /** The file's bytes. */
  view: DataView;
  /** Whole slots: `floor(fileSize / entrySize)`. */
  slots: number;
  baseOffset: bigint;
  /** Name used in problems. */
  file: string;
  /** A Kafka sanity-check failure (`kafkaCorrupt: true`: OffsetIndex/TimeIndex.sanityCheck) found at slot `slot`. */
  corrupt(kind: IndexProblemKind, slot: number, reason: string): IndexProblem;
  /** `size-not-multiple` when the file length is not a multiple of the entry size. */
  sizeNotMultiple(): IndexProblem | undefined;
  /** `last-offset-below-base` when the last slot's relative offset is negative. */
  lastOffsetBelowBase(): IndexProblem | undefined;
}

/** What tells one kind of slot-array index from another. */
export interface IndexSlotFormat<E> {
  /** Bytes per slot. */
  entrySize: number;
  /** What the messages call such a file: `'index'`, `'time index'`. */
  noun: string;
  /** The slot's relative offset (int32 as stored). */
  relativeOffset(view: DataView, slot: number): number;
  /**
   * Whether slot `slot` may come right after slot `prev` in this kind's ordering (`prev` −1: whether
   * it may be the first entry). With `prev = slot − 1` it says whether the slot continues the real
   * entries (see {@link splitSlots}).
   */
  follows(view: DataView, slot: number, prev: number): boolean;
  /** The slot's fields as JSON-safe numbers (offset index: relativeOffset, position; time index: timestamp, relativeOffset). */
  fields(view: DataView, slot: number): Record<string, number | string>;
  /** The entry held by slot `i`. */
  entry(view: DataView, slot: number, baseOffset: bigint): E;
  /**
   * The problems Kafka's `sanityCheck` of this kind raises (OffsetIndex.sanityCheck, TimeIndex.sanityCheck), in the order this kind reports them
   * (`undefined` for a check that passes). Called only when the file has at least one slot; with
   * none, only `size-not-multiple` can apply and is reported.
   */
  kafkaChecks(s: IndexSlots): (IndexProblem | undefined)[];
}

/**
 * Decodes a slot-array index held in memory: the real entries, the stale slots and zero tail after
 * them, Kafka's sanity-check problems (`format.kafkaChecks`: OffsetIndex/TimeIndex.sanityCheck) and then `stale-entries`.
 * @param file name used in problems.
 * @returns never throws on content.
 */
export function parseIndexSlots<E>(buf: Uint8Array, baseOffset: bigint, file: string, format: IndexSlotFormat<E>): IndexFileContents<E> {
  const size = format.entrySize;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const slots = Math.floor(buf.length / size);
  const split = splitSlots(buf, size, slots, (i) => format.follows(view, i, i - 1));
  const entries: E[] = new Array(split.valid);
  for (let i = 0; i < split.valid; i++) entries[i] = format.entry(view, i, baseOffset);
  const trailingBytes = buf.length % size;
  const corrupt = (kind: IndexProblemKind, slot: number, reason: string): IndexProblem => ({ kind, file, position: slot * size, reason, kafkaCorrupt: true });
  const sizeNotMultiple = (): IndexProblem | undefined =>
    trailingBytes === 0 ? undefined : corrupt('size-not-multiple', slots, `${format.noun} file is ${buf.length} bytes, not a multiple of ${size}`);
  const s: IndexSlots = {
    view,
    slots,
    baseOffset,
    file,
    corrupt,
    sizeNotMultiple,
    lastOffsetBelowBase: () => {
      const last = slots - 1;
      const rel = format.relativeOffset(view, last);
      return rel >= 0 ? undefined : corrupt('last-offset-below-base', last, `last offset ${baseOffset + BigInt(rel)} (slot ${last}) is less than the base offset ${baseOffset}`);
    },
  };
  const problems: IndexProblem[] = [];
  for (const p of slots > 0 ? format.kafkaChecks(s) : [sizeNotMultiple()]) if (p) problems.push(p);
  if (split.stale > 0) problems.push(outOfOrderProblem(view, split, file, format) ?? staleProblem(split, file, size));
  return { baseOffset, entries, fileSize: buf.length, staleEntries: split.stale, trailingZeroEntries: split.zeros, trailingBytes, problems };
}

/** The `stale-entries` problem: the slots after the real entries break the ordering and do not resume it. */
function staleProblem(split: SlotSplit, file: string, size: number): IndexProblem {
  return {
    kind: 'stale-entries',
    file,
    position: split.valid * size,
    reason: `${split.stale} entr${split.stale === 1 ? 'y' : 'ies'} after the ${split.valid} valid one${split.valid === 1 ? '' : 's'} break${split.stale === 1 ? 's' : ''} the ordering (stale data after a crash?)`,
    kafkaCorrupt: false,
  };
}

/**
 * The `out-of-order-slot` problem when the slots that break the ordering are one slot and not a
 * stale tail: the first slot (slots 1.. are in order), a middle slot k (slot k + 1 follows slot k − 1
 * and the slots after it are in order), or the last slot of a file without a zero tail (a trimmed
 * file: a crash leaves stale slots only in a preallocated one). Null otherwise.
 */
function outOfOrderProblem<E>(view: DataView, split: SlotSplit, file: string, format: IndexSlotFormat<E>): IndexProblem | null {
  const k = split.valid;
  const end = split.valid + split.stale; // the first zero-tail slot
  /** Whether slots from..end−1 are in order, slot `from` coming after slot `prev`. */
  const inOrder = (from: number, prev: number): boolean => {
    for (let i = from; i < end; i++) if (!format.follows(view, i, i === from ? prev : i - 1)) return false;
    return true;
  };
  let bad: number;
  let where: 'first' | 'middle' | 'last';
  if (k >= 1 && end - k >= 2 && inOrder(k + 1, k - 1)) {
    bad = k;
    where = 'middle';
  } else if (k <= 1 && end >= 2 + k && inOrder(1, -1)) {
    bad = 0;
    where = 'first';
  } else if (k >= 1 && end - k === 1 && split.zeros === 0) {
    bad = k;
    where = 'last';
  } else {
    return null;
  }
  const size = format.entrySize;
  const text = (i: number): string =>
    Object.entries(format.fields(view, i))
      .map(([name, v]) => `${FIELD_WORDS[name] ?? name} ${v}`)
      .join(', ');
  const inOrderAfter = end - bad - 1;
  const self = `slot ${bad} (byte ${bad * size}: ${text(bad)})`;
  const reason =
    where === 'middle'
      ? `${self} is out of order between slot ${bad - 1} (${text(bad - 1)}) and slot ${bad + 1} (${text(bad + 1)}); the ${inOrderAfter} entr${inOrderAfter === 1 ? 'y' : 'ies'} after it ${inOrderAfter === 1 ? 'is' : 'are'} in order again`
      : where === 'first'
        ? `the first ${self} does not come before slot 1 (${text(1)}); the ${inOrderAfter} entr${inOrderAfter === 1 ? 'y' : 'ies'} after it ${inOrderAfter === 1 ? 'is' : 'are'} in order`
        : `the last ${self} does not come after slot ${bad - 1} (${text(bad - 1)}); the ${bad} entr${bad === 1 ? 'y' : 'ies'} before it ${bad === 1 ? 'is' : 'are'} in order`;
  return {
    kind: 'out-of-order-slot',
    file,
    position: bad * size,
    reason,
    kafkaCorrupt: false,
    details: {
      slot: bad,
      where,
      slotEntry: format.fields(view, bad),
      before: bad > 0 ? format.fields(view, bad - 1) : null,
      after: bad + 1 < end ? format.fields(view, bad + 1) : null,
      inOrderAfter,
    },
  };
}

/** How the texts name the fields of {@link IndexSlotFormat.fields}. */
const FIELD_WORDS: Record<string, string> = { relativeOffset: 'relative offset', position: 'position', timestamp: 'timestamp' };

/** Options every slot-array index reader takes. */
export interface IndexReadOptions {
  /** Segment base offset; by default taken from the file name. */
  baseOffset?: bigint;
  /** Name used in problems (default: the path, or `'<buffer>'`). */
  file?: string;
}

/**
 * Reads an index file in one go (it is bounded by `segment.index.bytes`) and decodes it with `parse`.
 * @param path the file; its name gives the base offset unless `opts.baseOffset` is set.
 * @throws KlxError `not-found` / `io-error` when the file cannot be read; `invalid-argument` when no
 *   base offset is given and the name does not start with one. Content problems are reported, not thrown.
 */
export function readIndexFile<T>(path: string, opts: IndexReadOptions, parse: (buf: Uint8Array, baseOffset: bigint, file: string) => T): T {
  const baseOffset = opts.baseOffset ?? offsetFromFileName(basename(path));
  return parse(readFileBytes(path), baseOffset, opts.file ?? path);
}

/**
 * Kafka `AbstractIndex.largestLowerBoundSlotFor`: the index of the last entry whose key is ≤ `target`
 * (binary search over keys that increase with the index), or −1 when there is none.
 */
export function lastEntryAtOrBelow<E>(entries: readonly E[], target: bigint, key: (e: E) => bigint): number {
  let lo = 0;
  let hi = entries.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (key(entries[mid]!) <= target) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * The zero-filled buffer an encoder writes `count` entries into.
 * @param fileSize total bytes: default `count × entrySize` (trimmed); larger to preallocate (rounded
 *   down to whole entries).
 * @param noun what the message calls the file (`'index'`, `'time index'`).
 * @throws KlxError `invalid-argument` when `fileSize` is too small for the entries.
 */
export function allocIndexBuffer(noun: string, entrySize: number, count: number, fileSize: number | undefined): Buffer {
  const need = count * entrySize;
  const total = fileSize === undefined ? need : Math.floor(fileSize / entrySize) * entrySize;
  if (total < need) throw new KlxError('invalid-argument', `${noun} size ${fileSize} cannot hold ${count} entries (${need} bytes)`);
  return Buffer.alloc(total);
}

/** Options of the index writers (`writeOffsetIndex`, `writeTimeIndex`). */
export interface IndexWriteOptions extends WriteOptions {
  /** Preallocate the file to this many bytes (rounded down to whole entries), zero-filled; default: trimmed. */
  preallocateBytes?: number;
}
