/**
 * Offset holes of a partition: every offset from the first segment's base offset to the log end
 * offset that holds no record a consumer would receive (CompletedFetch.nextFetchedRecord), grouped in ranges, each with its cause
 * (spec §3 "offsets need not be contiguous", §4.4, §7, §10.1, §12.4, §13; cases B01, B02, B10, B11,
 * B14, B15). There is no Kafka class for this: it is the explorer's account of Kafka's rules.
 *
 * Causes, in the order a walk meets them:
 * - `below-log-start`: offsets of the first segment(s) below logStartOffset (DeleteRecords or a
 *   log-start-offset-checkpoint ahead of the segments): on disk but not readable;
 * - `compacted-between-batches`: no batch of the segment covers them (the cleaner dropped whole
 *   batches; also the range between a segment's base offset and its first batch, and, on a compacted
 *   topic, between two segments);
 * - `compacted-in-batch`: inside a batch's [baseOffset, lastOffset] but not held by any of its records
 *   (v2 compaction keeps baseOffset and lastOffsetDelta; B02). A batch whose recordsCount equals
 *   lastOffsetDelta + 1 has none and is not decompressed;
 * - `control-record`: offsets taken by control batches (COMMIT/ABORT markers, KRaft control records);
 * - `aborted-transaction`: data batches of aborted transactions (found from the markers of the walk
 *   itself, so exact even without `.txnindex` files): on disk, never delivered to read_committed;
 * - `empty-batch`: the span of a retained empty batch (recordsCount 0);
 * - `missing-segment`: between the end of one segment and the next segment's base offset on a topic
 *   that is not compacted (e.g. a deleted middle segment);
 * - `corrupt-region`: offsets around bytes in the middle of a segment that are not batches, or of a
 *   batch whose records cannot be decoded;
 * - `not-checked`: the offsets of a batch whose records this tool did not read because they inflate
 *   past its decompression bound (`--max-inflated-bytes`); not damage;
 * - `truncated-tail`: bytes at the end of a segment that are not batches (a crash mid-write or a
 *   preallocated zero tail). In the active segment these lie past the log end: the hole covers the
 *   offsets the cut batch's header claims when it is readable, else it counts 0 offsets.
 *
 * Holes are yielded in offset order; adjacent ranges of the same cause in the same segment are merged.
 * The walk streams each segment once, header-only except for the batches named above.
 */
import { HOLE_CAUSES, type HoleCause } from '../../../src-shared/hole-causes.ts';
import { KlxError } from '../errors.ts';
import { FileSource } from '../format/log-reader.ts';
import type { BatchHeader, KafkaRecord } from '../format/types.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import { Pacer, isDenseBatch, recordsOf, scanSegmentFrom, segmentIndexFor, walkLog, type LongReadOptions, type WalkedBatch, type WalkedDamage } from './log-walk.ts';
import { PartitionLog } from './partition-log.ts';
import { inSegmentOrder, splitPays, type ParallelScanOptions } from './segment-tasks.ts';
import { markerTypeOf } from './transactions.ts';
import { brokerTailAtLoad, unrecoveredTailText } from './unrecovered-tail.ts';

/** Every hole cause (see the module comment): the list shared with the wire types and the renderer. */
export { HOLE_CAUSES, type HoleCause };

/** A range of offsets that hold no deliverable record. */
export interface OffsetHole {
  /** First offset of the range. */
  from: bigint;
  /** Last offset of the range (inclusive); `from − 1` when the hole holds no offset (`count` 0). */
  to: bigint;
  /** Number of offsets: to − from + 1. */
  count: bigint;
  cause: HoleCause;
  /** Base offset of the segment the hole is in (the earlier one for a gap between segments). */
  segmentBaseOffset: bigint | null;
  /** Byte position in that segment's `.log` (of the batch or the damage) when it applies. */
  position?: number;
  /** What a person needs to know: which batch, which producer, which bytes... */
  detail: string;
}

/** Options of {@link scanHoles} / {@link findHoles}. */
export type HolesOptions = LongReadOptions;

/** Result of {@link findHoles}. */
export interface HolesReport {
  holes: OffsetHole[];
  /** Per cause: number of ranges and of offsets. */
  totals: Record<HoleCause, { ranges: number; offsets: bigint }>;
  /** Offsets in [logStartOffset, logEndOffset) that hold no deliverable record. */
  missingOffsets: bigint;
  firstSegmentBaseOffset: bigint | null;
  logStartOffset: bigint;
  logEndOffset: bigint;
  /** logEndOffset − logStartOffset. */
  offsetSpan: bigint;
}

function hole(from: bigint, to: bigint, cause: HoleCause, segmentBaseOffset: bigint | null, detail: string, position?: number): OffsetHole {
  const h: OffsetHole = { from, to, count: to - from + 1n, cause, segmentBaseOffset, detail };
  if (position !== undefined) h.position = position;
  return h;
}

/** Merges adjacent holes of the same cause and segment. */
class HoleMerger {
  private current: OffsetHole | null = null;
  private parts = 0;
  private readonly ready: OffsetHole[] = [];

  push(h: OffsetHole): void {
    const c = this.current;
    if (c && h.count > 0n && c.count > 0n && c.cause === h.cause && c.segmentBaseOffset === h.segmentBaseOffset && c.to + 1n === h.from && h.cause !== 'truncated-tail') {
      c.to = h.to;
      c.count = c.to - c.from + 1n;
      this.parts++;
      return;
    }
    this.flush();
    this.current = { ...h };
    this.parts = 1;
  }

  flush(): void {
    if (this.current) {
      if (this.parts > 1) this.current.detail += ` (and ${this.parts - 1} more adjacent)`;
      this.ready.push(this.current);
    }
    this.current = null;
    this.parts = 0;
  }

  take(): OffsetHole[] {
    return this.ready.splice(0, this.ready.length);
  }
}

/** A transactional data batch whose fate (commit or abort) is not known yet. */
interface PendingBatch {
  kind: 'pending';
  producerId: bigint;
  /** The hole it is if its transaction was aborted. */
  asAborted: OffsetHole;
  /** Its in-batch holes if it was committed (or is still open). */
  inner: OffsetHole[];
  state: 'open' | 'aborted' | 'committed';
}
type QueueItem = { kind: 'hole'; hole: OffsetHole } | PendingBatch;

/** Keeps holes in offset order while transactional batches wait for their marker. */
class HoleQueue {
  private items: QueueItem[] = [];
  private head = 0;
  private readonly byProducer = new Map<bigint, PendingBatch[]>();

  constructor(private readonly sink: HoleMerger) {}

  add(h: OffsetHole): void {
    if (this.head === this.items.length) this.sink.push(h);
    else this.items.push({ kind: 'hole', hole: h });
  }

  addPending(p: PendingBatch): void {
    this.items.push(p);
    const list = this.byProducer.get(p.producerId);
    if (list) list.push(p);
    else this.byProducer.set(p.producerId, [p]);
  }

  /** A marker of `producerId`: its waiting batches are decided. @returns how many batches it decided. */
  resolve(producerId: bigint, aborted: boolean): number {
    const list = this.byProducer.get(producerId);
    if (!list) return 0;
    for (const p of list) p.state = aborted ? 'aborted' : 'committed';
    this.byProducer.delete(producerId);
    this.drain();
    return list.length;
  }

  /** At the end of the log: transactions still open are not aborted (their data is readable uncommitted). */
  finish(): void {
    for (const list of this.byProducer.values()) for (const p of list) p.state = 'committed';
    this.byProducer.clear();
    this.drain();
  }

  private drain(): void {
    while (this.head < this.items.length) {
      const it = this.items[this.head]!;
      if (it.kind === 'pending' && it.state === 'open') break;
      if (it.kind === 'hole') this.sink.push(it.hole);
      else if (it.state === 'aborted') this.sink.push(it.asAborted);
      else for (const h of it.inner) this.sink.push(h);
      this.head++;
    }
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** In-batch holes of [from, to] of a batch whose records are `records`. */
function innerHoles(h: BatchHeader, records: readonly KafkaRecord[], from: bigint, to: bigint, segmentBaseOffset: bigint): OffsetHole[] {
  const out: OffsetHole[] = [];
  const span = h.lastOffset - h.baseOffset + 1n;
  const detail = `inside batch ${h.baseOffset}..${h.lastOffset} at position ${h.position}: compaction kept ${h.recordCount} of its ${span} offsets`;
  let next = from;
  for (const r of records) {
    if (r.offset < next) continue;
    if (r.offset > to) break;
    if (r.offset > next) out.push(hole(next, r.offset - 1n, 'compacted-in-batch', segmentBaseOffset, detail, h.position));
    next = r.offset + 1n;
  }
  if (next <= to) out.push(hole(next, to, 'compacted-in-batch', segmentBaseOffset, detail, h.position));
  return out;
}

/** Bytes that are not batches, as the holes need them (a plain object: it crosses threads). */
type Damage = Pick<WalkedDamage, 'size' | 'position' | 'file' | 'reason' | 'zeros'>;

function damageOf(d: WalkedDamage): Damage {
  return { size: d.size, position: d.position, file: d.file, reason: d.reason, zeros: d.zeros };
}

/** What the header of a cut batch at the start of tail damage claims, when it is readable. */
function claimedOffsets(d: Damage, from: bigint): { from: bigint; to: bigint } | null {
  if (d.zeros || d.size < 27) return null;
  let src: FileSource | null = null;
  try {
    src = new FileSource(d.file);
    const b = src.read(d.position, 27);
    if (b.length < 27 || b[16] !== 2) return null;
    const base = b.readBigInt64BE(0);
    const delta = b.readInt32BE(23);
    if (delta < 0 || base < from) return null;
    return { from: base, to: base + BigInt(delta) };
  } catch {
    return null;
  } finally {
    src?.close();
  }
}

/** Where a walk's holes go: the partition walk's {@link HoleQueue}, or a segment task's {@link SegmentHoleRecorder}. */
interface HoleSink {
  add(h: OffsetHole): void;
  addPending(p: PendingBatch): void;
  resolve(producerId: bigint, aborted: boolean): number;
}

/** The walk's state: the next offset not yet accounted for, and the current segment's damage. */
interface WalkState {
  cursor: bigint;
  /** Invalid tail of the current segment. */
  tail: Damage | null;
  /** Corrupt region since the last batch. */
  corrupt: Damage | null;
  batchesInSegment: number;
}

/**
 * One entry of a segment in the walk (after the pacing of a batch): damage is remembered, a batch
 * adds its holes to `q` and moves the cursor.
 * @returns `stop` for a batch at or past the log end offset (the walk ends there).
 */
function stepEntry(e: WalkedBatch | WalkedDamage, st: WalkState, logEnd: bigint, q: HoleSink): 'stop' | 'next' {
  if (e.type !== 'batch') {
    if (e.type === 'invalid-tail') st.tail = damageOf(e);
    else st.corrupt = damageOf(e);
    return 'next';
  }
  const h = e.header;
  if (h.lastOffset < st.cursor) return 'next';
  if (h.baseOffset >= logEnd) return 'stop';
  const segBase = e.segment.baseOffset;
  const cursor = st.cursor;
  if (h.baseOffset > cursor) {
    const corrupt = st.corrupt;
    if (corrupt) q.add(hole(cursor, h.baseOffset - 1n, 'corrupt-region', segBase, `${corrupt.size} bytes at position ${corrupt.position} of ${corrupt.file} are not batches (${corrupt.reason})`, corrupt.position));
    else q.add(hole(cursor, h.baseOffset - 1n, 'compacted-between-batches', segBase, st.batchesInSegment === 0 && cursor === segBase ? `between the base offset of segment ${segBase} and its first batch ${h.baseOffset} (removed by compaction)` : `no batch of segment ${segBase} holds these offsets (removed by compaction)`));
  }
  st.corrupt = null;
  st.batchesInSegment++;
  const from = h.baseOffset > cursor ? h.baseOffset : cursor;
  const to = h.lastOffset < logEnd ? h.lastOffset : logEnd - 1n;
  classifyBatch(e, from, to, q);
  st.cursor = to + 1n;
  return 'next';
}

function classifyBatch(e: WalkedBatch, from: bigint, to: bigint, q: HoleSink): void {
  const h = e.header;
  const segBase = e.segment.baseOffset;
  if (h.recordCount === 0) {
    q.add(hole(from, to, 'empty-batch', segBase, `retained empty batch ${h.baseOffset}..${h.lastOffset} at position ${h.position} (recordsCount 0)${h.isControl ? ', control' : ''}${h.isTransactional ? `, transactional, producer ${h.producerId}` : ''}`, h.position));
    return;
  }
  let records: KafkaRecord[] | null = null;
  const decode = (): KafkaRecord[] | null => {
    try {
      return recordsOf(e);
    } catch (err) {
      const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
      if (k.code === 'decompression-limit') q.add(hole(from, to, 'not-checked', segBase, `the records of batch ${h.baseOffset}..${h.lastOffset} at position ${h.position} were not read: ${k.reason}`, h.position));
      else q.add(hole(from, to, 'corrupt-region', segBase, `the records of batch ${h.baseOffset}..${h.lastOffset} at position ${h.position} cannot be decoded: ${k.reason}`, h.position));
      return null;
    }
  };
  if (h.isControl) {
    records = decode();
    if (records === null) return;
    const type = markerTypeOf(h, records);
    if (type !== null) q.resolve(h.producerId, type === 'ABORT');
    const kinds = [...new Set(records.map((r) => r.control?.type ?? 'UNKNOWN'))].join(', ');
    const what = type !== null ? `${type} marker of producer ${h.producerId} (transaction marker)` : `control record (${kinds})`;
    q.add(hole(from, to, 'control-record', segBase, `${what} at position ${h.position}`, h.position));
    return;
  }
  let inner: OffsetHole[] = [];
  if (!isDenseBatch(h)) {
    records = decode();
    if (records === null) return;
    inner = innerHoles(h, records, from, to, segBase);
  }
  if (h.magic === 2 && h.isTransactional && h.producerId >= 0n) {
    q.addPending({
      kind: 'pending',
      producerId: h.producerId,
      asAborted: hole(from, to, 'aborted-transaction', segBase, `data of an aborted transaction of producer ${h.producerId} (batch ${h.baseOffset}..${h.lastOffset} at position ${h.position}): on disk, never delivered to read_committed consumers`, h.position),
      inner,
      state: 'open',
    });
  } else for (const x of inner) q.add(x);
}

/** The hole between the end of the segment before `next` (`prev`) and `next`'s base offset, if any; moves the cursor to `next`'s base. */
function gapBetweenSegments(prev: LogSegment, next: LogSegment, st: WalkState, logEnd: bigint, compacted: boolean, q: HoleSink): void {
  const tail = st.tail;
  if (next.baseOffset > st.cursor && st.cursor < logEnd) {
    const to = (next.baseOffset < logEnd ? next.baseOffset : logEnd) - 1n;
    if (tail) q.add(hole(st.cursor, to, 'truncated-tail', prev.baseOffset, `${tail.size} bytes at position ${tail.position} of ${tail.file} are not batches (${tail.reason}); the offsets up to the next segment ${next.baseOffset} are not on disk`, tail.position));
    else if (compacted) q.add(hole(st.cursor, to, 'compacted-between-batches', prev.baseOffset, `between the last batch of segment ${prev.baseOffset} and segment ${next.baseOffset}: removed by compaction`));
    else q.add(hole(st.cursor, to, 'missing-segment', prev.baseOffset, `no segment holds these offsets: between segment ${prev.baseOffset} (ends at ${st.cursor}) and segment ${next.baseOffset} (a deleted or missing segment)`));
    st.cursor = next.baseOffset;
  } else if (tail) {
    q.add(hole(st.cursor, st.cursor - 1n, 'truncated-tail', prev.baseOffset, `${tail.size} bytes at position ${tail.position} of ${tail.file} are not batches (${tail.reason})`, tail.position));
  }
}

/** The holes before the first segment's walk: offsets below the log start offset. */
function belowLogStart(log: PartitionLog, q: HoleSink): void {
  const firstBase = log.segments[0]!.baseOffset;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  if (logStart > firstBase) {
    const to = (logStart < logEnd ? logStart : logEnd) - 1n;
    if (to >= firstBase) q.add(hole(firstBase, to, 'below-log-start', firstBase, `below logStartOffset ${logStart}: still on disk but not readable (DeleteRecords or log-start-offset-checkpoint); retention deletes a segment once the next one starts at or below it`));
  }
}

/** The holes after the last segment walked (`current`): up to the log end, and the claimed offsets of a cut batch in its tail. */
function afterLastSegment(current: LogSegment, st: WalkState, logEnd: bigint, compacted: boolean, q: HoleSink, cleanShutdown: boolean, topic: string): void {
  const tail = st.tail;
  if (st.cursor < logEnd) {
    q.add(hole(st.cursor, logEnd - 1n, tail ? 'truncated-tail' : compacted ? 'compacted-between-batches' : 'missing-segment', current.baseOffset, `no batch holds these offsets up to the log end offset ${logEnd}`));
    st.cursor = logEnd;
  }
  if (tail) {
    const claimed = claimedOffsets(tail, st.cursor);
    // After a clean shutdown a broker does not recover the segment (LogLoader.recoverLog): see unrecovered-tail.ts for the whole sequence.
    const atLoad = cleanShutdown ? brokerTailAtLoad(tail.file, tail.position, tail.position + tail.size) : null;
    const kept = atLoad && atLoad.kind !== 'ignored'
      ? `; after the clean shutdown ${unrecoveredTailText(tail.file, tail.position, tail.position + tail.size, logEnd, topic, false)}`
      : atLoad
      ? `; after the clean shutdown a broker keeps them and writes its next batch after them (FileRecords.append), and a read from before them frames them with that batch's first bytes (FileRecords.searchForOffsetWithSize, FileLogInputStream.nextBatch), so a fetch at offset ${logEnd} does not get that batch as written, and the next start after a crash cuts the segment at byte ${tail.position} (LogLoader.recoverLog, LogSegment.recover), losing it: klx verify says what these bytes make`
      : '';
    const what = `${tail.size} bytes at position ${tail.position} of ${tail.file} are not batches (${tail.reason})${kept}`;
    if (claimed) q.add(hole(claimed.from, claimed.to, 'truncated-tail', current.baseOffset, `${what}; the cut batch claims offsets ${claimed.from}..${claimed.to}, past the log end offset ${logEnd}`, tail.position));
    else q.add(hole(st.cursor, st.cursor - 1n, 'truncated-tail', current.baseOffset, what, tail.position));
  }
}

/**
 * Streams the holes of a partition in offset order (see the module comment).
 * @throws KlxError `cancelled` when `opts.signal` is aborted; `io-error` when a file cannot be read.
 */
export async function* scanHoles(log: PartitionLog, opts: HolesOptions = {}): AsyncGenerator<OffsetHole> {
  const segs = log.segments;
  if (segs.length === 0) return;
  const logEnd = log.logEndOffset;
  const compacted = log.config.config['cleanup.policy'].includes('compact');
  const merger = new HoleMerger();
  const queue = new HoleQueue(merger);
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `find holes of ${log.topic}-${log.partition}`, total: log.logSize });
  belowLogStart(log, queue);
  const st: WalkState = { cursor: log.logStartOffset, tail: null, corrupt: null, batchesInSegment: 0 };
  let current: LogSegment | null = null;
  walk: for (const e of walkLog(log, { fromOffset: log.logStartOffset, reuseWindows: true })) {
    if (e.type === 'segment') {
      if (current !== null) gapBetweenSegments(current, e.segment, st, logEnd, compacted, queue);
      current = e.segment;
      st.tail = null;
      st.corrupt = null;
      st.batchesInSegment = 0;
      for (const x of merger.take()) yield x;
      continue;
    }
    if (e.type === 'batch') await pacer.step(e.header.size);
    if (stepEntry(e, st, logEnd, queue) === 'stop') break walk;
    if (e.type === 'batch') for (const x of merger.take()) yield x;
  }
  queue.finish();
  if (current !== null) afterLastSegment(current, st, logEnd, compacted, queue, log.startupCleanShutdown, log.topic);
  merger.flush();
  pacer.finish();
  for (const h of merger.take()) yield h;
}

// ---------------------------------------------------------------------------------------------
// The same walk split over segments (issue 16)

/** What a segment's walk put in its queue, in order: holes, batches whose transaction it did not see end, and markers. */
export type SegmentHoleItem =
  | { kind: 'holes'; holes: OffsetHole[] }
  | { kind: 'pending'; batch: PendingBatch }
  | { kind: 'marker'; producerId: bigint; aborted: boolean };

/**
 * The queue of one segment's walk: a transactional batch whose marker comes later in the segment
 * becomes its holes in place (as the partition walk's queue would decide it at that marker); one
 * whose marker is not in the segment stays pending, and every marker is kept, for the merge to decide
 * the batches of earlier segments.
 */
class SegmentHoleRecorder implements HoleSink {
  readonly items: SegmentHoleItem[] = [];
  private readonly open = new Map<bigint, number[]>();

  add(h: OffsetHole): void {
    const last = this.items[this.items.length - 1];
    if (last?.kind === 'holes') last.holes.push(h);
    else this.items.push({ kind: 'holes', holes: [h] });
  }

  addPending(p: PendingBatch): void {
    const list = this.open.get(p.producerId);
    if (list) list.push(this.items.length);
    else this.open.set(p.producerId, [this.items.length]);
    this.items.push({ kind: 'pending', batch: p });
  }

  resolve(producerId: bigint, aborted: boolean): number {
    const list = this.open.get(producerId) ?? [];
    for (const i of list) {
      const p = (this.items[i] as { batch: PendingBatch }).batch;
      this.items[i] = { kind: 'holes', holes: aborted ? [p.asAborted] : p.inner };
    }
    this.open.delete(producerId);
    this.items.push({ kind: 'marker', producerId, aborted });
    return list.length;
  }
}

/** Arguments of {@link holesSegmentTask}. */
export interface HolesSegmentArgs {
  dir: string;
  /** Index of the segment in the partition and its base offset (checked). */
  index: number;
  baseOffset: bigint;
  /** The walk's cursor when the segment starts, and the byte position to read it from. */
  cursor: bigint;
  position: number;
  /** The partition's log end offset as the walk reads it. */
  logEnd: bigint;
}

/** What {@link holesSegmentTask} found. */
export interface HolesSegmentResult {
  items: SegmentHoleItem[];
  /** The cursor after the segment. */
  cursor: bigint;
  tail: Damage | null;
  /** The walk ended in this segment (a batch at or past the log end offset). */
  stopped: boolean;
  /** Bytes of batches walked. */
  bytes: number;
}

/**
 * The holes walk over ONE segment of the partition at `a.dir` (on a scan-pool thread), from the
 * cursor the walk has there.
 * @throws KlxError `not-found` when the partition no longer has that segment, `cancelled`, `io-error`.
 */
export async function holesSegmentTask(a: HolesSegmentArgs, run: { signal?: AbortSignal; onBytes?: (bytes: number) => void }): Promise<HolesSegmentResult> {
  const log = PartitionLog.open(a.dir);
  const segment = log.segments[a.index];
  if (!segment || segment.baseOffset !== a.baseOffset) throw new KlxError('not-found', `segment ${a.baseOffset} of ${a.dir} is gone: the partition changed while its holes were being read`, { file: a.dir });
  const pacer = new Pacer({ signal: run.signal, onProgress: run.onBytes ? (p) => run.onBytes!(p.done) : undefined, phase: `find holes of ${log.topic}-${log.partition}`, total: Math.max(0, segment.size) });
  const logEnd = a.logEnd;
  const rec = new SegmentHoleRecorder();
  const st: WalkState = { cursor: a.cursor, tail: null, corrupt: null, batchesInSegment: 0 };
  let stopped = false;
  let bytes = 0;
  for (const entry of scanSegmentFrom(segment, a.position, { reuseWindows: true })) {
    const e = entry.type === 'batch' ? Object.assign(entry, { segment, segmentIndex: a.index }) : Object.assign(entry, { segment, segmentIndex: a.index, file: segment.files.log });
    if (e.type === 'batch') {
      bytes += e.header.size;
      await pacer.step(e.header.size);
    }
    if (stepEntry(e, st, logEnd, rec) === 'stop') {
      stopped = true;
      break;
    }
  }
  pacer.finish();
  return { items: rec.items, cursor: st.cursor, tail: st.tail, stopped, bytes };
}

/**
 * {@link scanHoles}, its segments walked on `opts.runner`'s threads when that pays (`splitPays`):
 * the same holes in the same order. Each segment is walked from the segment's base offset (the
 * first from the log start offset); the merge adds the holes between segments, decides the
 * transactional batches a later segment's marker ends, and walks a segment again from the true
 * cursor when the segments before it reach past its base offset (overlapping segments).
 * Memory: the holes of at most `threads` segments are held at once.
 * @throws KlxError `cancelled`, `io-error`, `not-found` (the partition changed while being read).
 */
export async function* scanHolesInParallel(log: PartitionLog, opts: HolesOptions & ParallelScanOptions = {}): AsyncGenerator<OffsetHole> {
  const runner = opts.runner;
  if (!runner || !splitPays(log, opts)) {
    yield* scanHoles(log, opts);
    return;
  }
  const segs = log.segments;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const compacted = log.config.config['cleanup.policy'].includes('compact');
  const merger = new HoleMerger();
  const queue = new HoleQueue(merger);
  const phase = `find holes of ${log.topic}-${log.partition}`;
  const total = log.logSize;
  if (opts.signal?.aborted) throw new KlxError('cancelled', `${phase}: cancelled`);
  belowLogStart(log, queue);
  const first = segmentIndexFor(log, logStart);
  const argsOf = (i: number, cursor: bigint): HolesSegmentArgs => ({ dir: log.dir, index: i, baseOffset: segs[i]!.baseOffset, cursor, position: i === first ? segs[i]!.positionFor(logStart) : 0, logEnd });
  const assumed = (i: number) => (i === first ? logStart : segs[i]!.baseOffset);
  const st: WalkState = { cursor: logStart, tail: null, corrupt: null, batchesInSegment: 0 };
  let current: LogSegment | null = null;
  let walked = 0;
  const tasks = inSegmentOrder(segs.length - first, (k, signal, onBytes) => runner.run<HolesSegmentResult>('holesSegment', argsOf(first + k, assumed(first + k)), { signal, onBytes }), {
    threads: runner.threads,
    signal: opts.signal,
    onProgress: (done) => opts.onProgress?.({ phase, done, total, bytes: done }),
  });
  let i = first;
  for await (let r of tasks) {
    const seg = segs[i]!;
    if (current !== null) gapBetweenSegments(current, seg, st, logEnd, compacted, queue);
    if (st.cursor !== assumed(i)) r = await runner.run<HolesSegmentResult>('holesSegment', argsOf(i, st.cursor), { signal: opts.signal ?? new AbortController().signal, onBytes: () => {} });
    current = seg;
    for (const item of r.items) {
      if (item.kind === 'holes') for (const h of item.holes) queue.add(h);
      else if (item.kind === 'pending') queue.addPending(item.batch);
      else queue.resolve(item.producerId, item.aborted);
    }
    st.cursor = r.cursor;
    st.tail = r.tail;
    walked += r.bytes;
    i++;
    for (const x of merger.take()) yield x;
    if (r.stopped) break;
  }
  queue.finish();
  if (current !== null) afterLastSegment(current, st, logEnd, compacted, queue, log.startupCleanShutdown, log.topic);
  merger.flush();
  opts.onProgress?.({ phase, done: walked, total, bytes: walked });
  for (const h of merger.take()) yield h;
}

/**
 * All holes of a partition with totals per cause.
 * @throws KlxError `cancelled`, `io-error` (see {@link scanHoles}).
 */
export async function findHoles(log: PartitionLog, opts: HolesOptions = {}): Promise<HolesReport> {
  const totals = Object.fromEntries(HOLE_CAUSES.map((c) => [c, { ranges: 0, offsets: 0n }])) as HolesReport['totals'];
  const holes: OffsetHole[] = [];
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  let missing = 0n;
  for await (const h of scanHoles(log, opts)) {
    holes.push(h);
    totals[h.cause].ranges++;
    totals[h.cause].offsets += h.count;
    const lo = h.from > logStart ? h.from : logStart;
    const hi = h.to < logEnd - 1n ? h.to : logEnd - 1n;
    if (hi >= lo) missing += hi - lo + 1n;
  }
  return { holes, totals, missingOffsets: missing, firstSegmentBaseOffset: log.segments[0]?.baseOffset ?? null, logStartOffset: logStart, logEndOffset: logEnd, offsetSpan: logEnd - logStart };
}
