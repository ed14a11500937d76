/**
 * The cleaner's decisions, one row per record, batch or segment a retention or compaction plan
 * touches, each with its reason and the evidence behind it ("superseded by offset 4 (key k1)",
 * "tombstone kept until its delete horizon …", "segment deleted: max timestamp 1.28 h old >
 * retention.ms 2 h? yes"). The CLI (`klx compact|retention --explain`), the API and the teaching view
 * all read the same rows.
 *
 * What the rows follow in Kafka: record rows mirror `Cleaner.shouldRetainRecord` (a later offset for
 * the key in the offset map, keyless records, tombstones against the batch's delete horizon) and
 * `LogCleaner`'s batch retention (`checkBatchRetention`: aborted data, discardable transaction
 * markers, empty batches kept for a still-active producer or at the first uncleanable offset);
 * segment rows mirror `UnifiedLog.deleteOldSegments` (`deletableSegments` walks the segments oldest
 * first and stops at the first that does not qualify).
 *
 * Memory is bounded: the first `limit` rows (default {@link DEFAULT_DECISION_LIMIT}) are kept in
 * full; after that, record rows are folded into one `range` row per segment, reason and verdict
 * (first and last offset, count). Rows are streamed through `onRow` as soon as they are final (at
 * the end of each compaction round, since the round may leave a source segment in place after its
 * records were decided), and the same capped list is attached to the report.
 */
import { int64Json } from '../format/batch-json.ts';

/** Detailed rows kept per plan before rows are folded into per-range summaries. */
export const DEFAULT_DECISION_LIMIT = 10_000;

/** What a decision is about. */
export type DecisionSubject = 'record' | 'batch' | 'segment' | 'range';

/** What happens to the subject. */
export type DecisionVerdict = 'keep' | 'remove';

/** Why (a stable code; `evidence` says it in words with the figures). */
export type DecisionReason =
  // compaction, records
  | 'latest-for-key'
  | 'superseded'
  | 'beyond-map'
  | 'keyless'
  | 'tombstone-until-horizon'
  | 'tombstone-horizon-passed'
  | 'aborted'
  | 'marker-until-horizon'
  | 'marker-guards-data'
  | 'marker-horizon-passed'
  | 'left-in-place'
  // compaction, batches
  | 'batch-copied'
  | 'batch-rebuilt'
  | 'batch-dropped'
  | 'empty-batch-kept'
  // retention, segments
  | 'retention-log-start'
  | 'retention-size'
  | 'retention-time'
  | 'prefix-stop'
  | 'after-prefix'
  | 'below-log-start';

/** One decision. Offsets are bigint in the engine (see {@link decisionJson} for the wire form). */
export interface CleanerDecision {
  subject: DecisionSubject;
  /** The record's offset; for a batch, segment or range its first offset. */
  offset: bigint;
  /** Batch, segment or range: the last offset (inclusive). */
  lastOffset?: bigint;
  /** Base offset of the segment the subject lives in. */
  segment: bigint;
  /** The record key as text (UTF-8 when printable, else `0x…` hex; at most 64 characters), null when keyless or not a record. */
  key: string | null;
  /** The record value as text (same rules), null for a tombstone; absent for batches and segments. */
  value?: string | null;
  /** Record timestamp (ms). */
  timestamp?: bigint;
  decision: DecisionVerdict;
  reason: DecisionReason;
  /** One sentence with the figures the decision used. */
  evidence: string;
  /** Range rows: how many records the row stands for. */
  count?: number;
  /** Compaction: the cleaning round (1-based). */
  pass?: number;
}

/** The decisions attached to a report. */
export interface DecisionList {
  /** Rows in the order they were decided (records and their batch, segment by segment). */
  rows: CleanerDecision[];
  /** Record/batch/segment decisions made in all (the detailed ones plus those folded into ranges). */
  total: number;
  /** True when rows beyond the limit were folded into `range` rows. */
  summarized: boolean;
  limit: number;
}

/** How to collect decisions. */
export interface ExplainOptions {
  /** Detailed rows before folding into ranges (default {@link DEFAULT_DECISION_LIMIT}). */
  limit?: number;
  /** Receives every row once final (streaming). */
  onRow?: (row: CleanerDecision) => void;
}

const MAX_TEXT = 64;

/** Each reason in general words (range rows, legends). */
export const REASON_TEXT: Record<DecisionReason, string> = {
  'latest-for-key': 'the latest offset of its key in the offset map',
  superseded: 'a later offset of the same key is in the offset map',
  'beyond-map': "past the offset map's last offset, not cleaned this round",
  // Cleaner.shouldRetainRecord drops a keyless record and counts it in CleanerStats.invalidMessage.
  keyless: 'a record without a key (dropped and counted invalid by Kafka, kept by the classic rules)',
  'tombstone-until-horizon': 'a tombstone before its delete horizon',
  'tombstone-horizon-passed': 'a tombstone past its delete horizon',
  aborted: 'data of an aborted transaction',
  'marker-until-horizon': 'a transaction marker with no data left, before its horizon',
  'marker-guards-data': 'a transaction marker whose transaction had data in this round',
  'marker-horizon-passed': 'a transaction marker with no data left, past its horizon',
  'left-in-place': 'a source segment left in place this round',
  'batch-copied': 'a batch copied byte for byte',
  'batch-rebuilt': 'a batch rebuilt with its surviving records',
  'batch-dropped': 'a batch with nothing left',
  'empty-batch-kept': 'an empty batch header kept',
  'retention-log-start': 'below the log start offset',
  'retention-size': 'beyond retention.bytes',
  'retention-time': 'older than retention.ms',
  'prefix-stop': 'where the deletable prefix stops',
  'after-prefix': 'after the deletable prefix',
  'below-log-start': 'below the log start offset',
};

/** A key or value as short display text: UTF-8 when printable, else hex. */
export function bytesText(b: Uint8Array | null, start = 0, length = b ? b.length - start : -1): string | null {
  if (b === null || length < 0) return null;
  const slice = Buffer.from(b.buffer, b.byteOffset + start, Math.min(length, 256));
  const s = slice.toString('utf8');
  // eslint-disable-next-line no-control-regex
  const printable = !s.includes('\uFFFD') && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(s);
  const text = printable ? s : '0x' + slice.toString('hex');
  const full = printable && length <= 256 ? text : text + (length > 256 ? '…' : '');
  return full.length > MAX_TEXT ? full.slice(0, MAX_TEXT - 1) + '…' : full;
}

/**
 * A timestamp for evidence: `YYYY-MM-DD HH:MM:SS.mmm` (UTC) for real clocks; small lab clocks
 * (below 10^11 ms, before 1973) as `t=N ms`.
 */
export function timeText(ms: bigint | number): string {
  const n = Number(ms);
  if (Math.abs(n) < 1e11) return `t=${n} ms`;
  const d = new Date(n);
  if (Number.isNaN(d.getTime())) return `${n} ms`;
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** A duration for evidence: ms below 10 s, then s, min, h, days with two decimals. */
export function durationText(ms: bigint | number): string {
  const n = Number(ms);
  const a = Math.abs(n);
  const sign = n < 0 ? '−' : '';
  if (a < 10_000) return `${sign}${a} ms`;
  if (a < 120_000) return `${sign}${(a / 1000).toFixed(a % 1000 === 0 ? 0 : 2)} s`;
  if (a < 7_200_000) return `${sign}${(a / 60_000).toFixed(2)} min`;
  if (a < 172_800_000) return `${sign}${(a / 3_600_000).toFixed(2)} h`;
  return `${sign}${(a / 86_400_000).toFixed(2)} days`;
}

interface RangeBucket {
  row: CleanerDecision;
}

/**
 * Collects decisions with a cap (see the module comment). Compaction buffers a round's rows
 * ({@link beginRound} … {@link endRound}) so that sources left in place can be restated before the
 * rows are streamed.
 */
export class DecisionLog {
  readonly limit: number;
  private readonly onRow: ((row: CleanerDecision) => void) | undefined;
  private readonly kept: CleanerDecision[] = [];
  private pending: CleanerDecision[] = [];
  private buckets = new Map<string, RangeBucket>();
  private buffering = false;
  total = 0;
  private detailed = 0;
  summarized = false;
  /** The current round (compaction). */
  pass = 0;

  constructor(opts: ExplainOptions = {}) {
    this.limit = Math.max(0, opts.limit ?? DEFAULT_DECISION_LIMIT);
    this.onRow = opts.onRow;
  }

  /** True while rows are still kept one by one (callers may skip building evidence text otherwise for records). */
  get detailedNow(): boolean {
    return this.detailed < this.limit;
  }

  /** Adds one decision (a record, batch or segment). */
  add(row: CleanerDecision): void {
    this.total++;
    if (this.pass > 0) row.pass = this.pass;
    if (this.detailed < this.limit || row.subject === 'segment') {
      this.detailed++;
      this.emit(row);
      return;
    }
    this.summarized = true;
    if (row.subject === 'batch') return; // batches beyond the limit are counted only
    this.fold(row.segment, row.decision, row.reason, row.offset, 1, row.evidence);
  }

  /**
   * Adds a record decision that is past the limit without building its text (the caller checked
   * {@link detailedNow}); it is folded into its segment's range row.
   */
  addFolded(segment: bigint, decision: DecisionVerdict, reason: DecisionReason, offset: bigint, evidence: () => string): void {
    this.total++;
    this.summarized = true;
    this.fold(segment, decision, reason, offset, 1, evidence);
  }

  private fold(segment: bigint, decision: DecisionVerdict, reason: DecisionReason, offset: bigint, count: number, evidence: string | (() => string)): void {
    const k = `${segment}|${decision}|${reason}`;
    const b = this.buckets.get(k);
    if (b) {
      b.row.lastOffset = offset;
      b.row.count! += count;
      return;
    }
    void evidence;
    this.buckets.set(k, {
      row: { subject: 'range', offset, lastOffset: offset, segment, key: null, decision, reason, evidence: REASON_TEXT[reason], count, ...(this.pass > 0 ? { pass: this.pass } : {}) },
    });
  }

  /** Closes the range rows of a segment (called when the segment's records are all decided). */
  endSegment(segment: bigint): void {
    for (const [k, b] of this.buckets) {
      if (b.row.segment !== segment) continue;
      this.buckets.delete(k);
      const r = b.row;
      r.evidence = `${r.count} record${r.count === 1 ? '' : 's'} between ${r.offset} and ${r.lastOffset} ${r.decision === 'keep' ? 'kept' : 'removed'}: ${r.evidence}`;
      this.emit(r);
    }
  }

  /** Starts buffering a compaction round's rows. */
  beginRound(pass: number): void {
    this.pass = pass;
    this.buffering = true;
  }

  /**
   * Ends a round: rows of the segments `leftInPlace` (base offsets) are restated as kept (the
   * source stays as it is this round), then every buffered row is streamed.
   */
  endRound(leftInPlace: ReadonlySet<bigint>, why: (segment: bigint) => string): void {
    for (const [k, b] of this.buckets) {
      this.buckets.delete(k);
      this.pending.push(b.row);
    }
    const rows = this.pending;
    this.pending = [];
    this.buffering = false;
    for (const r of rows) {
      if (leftInPlace.has(r.segment) && r.decision === 'remove') {
        // Kafka's rules (Cleaner.shouldRetainRecord) remove it; klx leaves this segment in place.
        r.evidence = `${why(r.segment)} (a broker would remove it: ${r.evidence})`;
        r.decision = 'keep';
        r.reason = 'left-in-place';
      }
      this.emit(r);
    }
  }

  /** Drops a round's buffered rows (the round was not committed). */
  discardRound(): void {
    this.pending = [];
    this.buckets.clear();
    this.buffering = false;
  }

  private emit(row: CleanerDecision): void {
    if (this.buffering) {
      this.pending.push(row);
      return;
    }
    if (this.kept.length < this.limit + 4096 || row.subject !== 'record') this.kept.push(row);
    this.onRow?.(row);
  }

  /** The capped list for the report. */
  list(): DecisionList {
    for (const [k, b] of this.buckets) {
      this.buckets.delete(k);
      this.emit(b.row);
    }
    return { rows: this.kept, total: this.total, summarized: this.summarized, limit: this.limit };
  }
}

/** The JSON form of a decision (NDJSON row of `klx … --explain --json`): offsets as numbers when exact, else strings. */
export function decisionJson(d: CleanerDecision): Record<string, unknown> {
  return {
    offset: int64Json(d.offset),
    key: d.key,
    decision: d.decision,
    reason: d.reason,
    evidence: d.evidence,
    subject: d.subject,
    segment: int64Json(d.segment),
    ...(d.lastOffset !== undefined ? { lastOffset: int64Json(d.lastOffset) } : {}),
    ...(d.value !== undefined ? { value: d.value } : {}),
    ...(d.timestamp !== undefined ? { timestamp: int64Json(d.timestamp) } : {}),
    ...(d.count !== undefined ? { count: d.count } : {}),
    ...(d.pass !== undefined ? { pass: d.pass } : {}),
  };
}

/** One text line of a decision (what `klx … --explain` prints). */
export function decisionText(d: CleanerDecision): string {
  const where = d.lastOffset !== undefined && d.lastOffset !== d.offset ? `${d.offset}..${d.lastOffset}` : `${d.offset}`;
  const subj = d.subject === 'record' ? '' : `${d.subject} `;
  const kv = d.subject === 'record' ? ` ${d.key ?? '(no key)'}=${d.value === undefined ? '' : (d.value ?? 'null')}` : '';
  return `  ${d.decision === 'keep' ? 'keep  ' : 'remove'} ${subj}${where}${kv}: ${d.evidence}`;
}
