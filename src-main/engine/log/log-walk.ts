/**
 * The forward walk over a partition's segments that every reader is built on (fetch, transactions,
 * holes, time lookup, the SQL tables, the explorer's long jobs), and the pacing of long walks
 * (cancellation and progress).
 *
 * Its own module so that `fetch.ts` and `transactions.ts`, which both walk the log and one of which
 * uses the other, do not import each other.
 *
 * Units: offsets are `bigint` (int64); positions and sizes are bytes (`number`).
 */
import { errorAt, KlxError } from '../errors.ts';
import type { BatchEntry, DamageEntry, LogEntry } from '../format/log-reader.ts';
import { decodeV2Records, streamV2Records } from '../format/record-batch.ts';
import type { BatchHeader, KafkaRecord } from '../format/types.ts';
import { lastEntryAtOrBelow } from '../files/index-file.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import type { PartitionLog } from './partition-log.ts';

// ---------------------------------------------------------------------------------------------
// Pacing of long walks: cancellation and progress

/** Progress of a long read; the shape of a job's progress (`done` of `total` bytes). */
export interface ReadProgress {
  phase: string;
  /** Bytes of `.log` walked so far. */
  done: number;
  /** Bytes to walk in all, or null when unknown. */
  total: number | null;
  /** Bytes read from disk so far. */
  bytes: number;
}

/** Options shared by every long read: a cancel signal and a progress callback. */
export interface LongReadOptions {
  /** Aborting it stops the read with a KlxError `cancelled`. */
  signal?: AbortSignal;
  /** Called every ~50 ms while the read runs, and once at the end. */
  onProgress?: (progress: ReadProgress) => void;
}

/**
 * Cooperative pacing of a synchronous walk run inside an async function: every ~20 ms it yields to
 * the event loop (so a cancel request or other I/O can run), checks the signal and reports progress.
 */
export class Pacer {
  private done = 0;
  private steps = 0;
  private lastYield = Date.now();
  private lastReport = 0;

  constructor(
    private readonly opts: LongReadOptions & { phase: string; total: number | null },
  ) {
    this.throwIfCancelled();
  }

  /**
   * Accounts `bytes` of work; now and then yields to the event loop.
   * @throws KlxError `cancelled` when the signal was aborted.
   */
  async step(bytes: number): Promise<void> {
    this.done += bytes;
    if ((++this.steps & 63) !== 0) return;
    const now = Date.now();
    if (now - this.lastYield < 20) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.lastYield = Date.now();
    this.throwIfCancelled();
    if (this.opts.onProgress && this.lastYield - this.lastReport >= 50) {
      this.lastReport = this.lastYield;
      this.report();
    }
  }

  /** Sends a final progress report. */
  finish(): void {
    this.report();
  }

  /** @throws KlxError `cancelled` when the signal was aborted. */
  throwIfCancelled(): void {
    const s = this.opts.signal;
    if (s?.aborted) throw new KlxError('cancelled', `${this.opts.phase}: cancelled`, { cause: s.reason });
  }

  private report(): void {
    this.opts.onProgress?.({ phase: this.opts.phase, done: this.done, total: this.opts.total, bytes: this.done });
  }
}

// ---------------------------------------------------------------------------------------------
// The forward walk over a partition's segments

/** A batch met by {@link walkLog}, with the segment holding it. */
export interface WalkedBatch extends BatchEntry {
  segment: LogSegment;
  segmentIndex: number;
}

/** Bytes that are not a batch, met by {@link walkLog}. `file` is the segment's `.log` path. */
export interface WalkedDamage extends DamageEntry {
  segment: LogSegment;
  segmentIndex: number;
  file: string;
}

/** Start of a segment (sent before its entries, also for empty segments). */
export interface WalkedSegmentStart {
  type: 'segment';
  segment: LogSegment;
  segmentIndex: number;
  /** Byte position where reading of this segment starts. */
  position: number;
}

export type WalkEvent = WalkedBatch | WalkedDamage | WalkedSegmentStart;

/** Index in `log.segments` of the segment holding `offset` (the last whose base ≤ offset), or 0. */
export function segmentIndexFor(log: PartitionLog, offset: bigint): number {
  return Math.max(0, lastEntryAtOrBelow(log.segments, offset, baseOffsetOf));
}

const baseOffsetOf = (s: LogSegment): bigint => s.baseOffset;

/**
 * Streams the entries of a partition from `fromOffset` (default: the first segment's start) to the
 * end of its last segment. The first segment is read from its offset-index position for
 * `fromOffset`, so batches ending before `fromOffset` may still be yielded: callers skip them. An
 * index entry that does not point at a batch start (a stale index after a crash) is ignored and the
 * segment is read from position 0.
 * @param opts.verifyCrc check batch CRCs (default true: without it a batch cut short in the middle of a
 *   file reads as a batch with a garbage header instead of as damage).
 * @param opts.reuseWindows read into two reused buffers (see `ScanOptions.reuseWindows`): an entry's
 *   bytes are then valid only until the next entry is asked for.
 * @yields a `segment` event at the start of each segment, then its batches and damage, in file order.
 * @throws KlxError `not-found` / `io-error` when a `.log` cannot be read.
 */
export function* walkLog(log: PartitionLog, opts: { fromOffset?: bigint; verifyCrc?: boolean; reuseWindows?: boolean } = {}): Generator<WalkEvent> {
  const segs = log.segments;
  const first = opts.fromOffset === undefined ? 0 : segmentIndexFor(log, opts.fromOffset);
  for (let i = first; i < segs.length; i++) {
    const segment = segs[i]!;
    const start = i === first && opts.fromOffset !== undefined ? segment.positionFor(opts.fromOffset) : 0;
    yield { type: 'segment', segment, segmentIndex: i, position: start };
    for (const e of scanSegmentFrom(segment, start, opts)) {
      if (e.type === 'batch') yield Object.assign(e, { segment, segmentIndex: i });
      else yield Object.assign(e, { segment, segmentIndex: i, file: segment.files.log });
    }
  }
}

/**
 * Streams one segment's entries from byte `start` (an offset-index position), checking CRCs unless
 * `verifyCrc` is false. When the first entry there is not a batch (a stale index entry after a
 * crash), reads the segment from position 0 instead.
 * @throws KlxError `not-found` / `io-error` when the `.log` cannot be read.
 */
export function* scanSegmentFrom(segment: LogSegment, start: number, opts: { verifyCrc?: boolean; end?: number; reuseWindows?: boolean } = {}): Generator<LogEntry> {
  let from = start;
  for (;;) {
    let firstEntry = true;
    let restart = false;
    for (const e of segment.scan({ start: from, end: opts.end, verifyCrc: opts.verifyCrc ?? true, reuseWindows: opts.reuseWindows })) {
      if (firstEntry && from > 0 && e.type !== 'batch') {
        restart = true;
        break;
      }
      firstEntry = false;
      yield e;
    }
    if (!restart) return;
    from = 0;
  }
}

/**
 * The records of a batch: those the reader decoded already (legacy entries), else decoded now.
 * @throws KlxError `corrupt-batch` (or `decompression-limit`, `unknown-codec`...) with the batch
 *   position when they cannot be decoded, and, for a batch met by {@link walkLog}, its segment's
 *   `.log` as `file` (issue 17, defect 10: every error names file and position).
 */
export function recordsOf(entry: BatchEntry | WalkedBatch): KafkaRecord[] {
  if (entry.records) return entry.records;
  try {
    return decodeV2Records(entry.header, entry.bytes);
  } catch (err) {
    throw placed(err, entry);
  }
}

/**
 * The records of a walked batch one at a time (`streamV2Records`: checked whole first, then one
 * lazy record per step), for scans that must not hold a record object per record of a batch of
 * millions; legacy entries come with their records already.
 * @throws KlxError as {@link recordsOf}, eagerly.
 */
export function streamRecordsOf(entry: BatchEntry | WalkedBatch): Iterable<KafkaRecord> {
  if (entry.records) return entry.records;
  try {
    return streamV2Records(entry.header, entry.bytes);
  } catch (err) {
    throw placed(err, entry);
  }
}

/** `err` naming the segment file of a walked batch and the batch position (`errorAt`); unchanged for a batch not met by a walk. */
function placed(err: unknown, entry: BatchEntry | WalkedBatch): unknown {
  return 'segment' in entry ? errorAt(err, { file: entry.segment.files.log, position: entry.header.position }) : err;
}

/** True when a batch holds a record at every offset of [baseOffset, lastOffset] (nothing compacted away inside it). */
export function isDenseBatch(h: BatchHeader): boolean {
  return BigInt(h.recordCount) === h.lastOffset - h.baseOffset + 1n;
}
