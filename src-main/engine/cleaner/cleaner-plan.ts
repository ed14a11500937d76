/**
 * The report of a cleaner operation (retention or compaction), as a plan (before anything is
 * touched) and as the result of a run (the same figures, measured afterwards). One shape for both,
 * so that a test, the CLI and the UI can put a plan and its run side by side.
 *
 * What the figures cover:
 * - `segments.deleted`: segments removed whole (retention); `segments.rewritten`: segments replaced by
 *   the compactor; `segments.created`: segments the run writes (cleaned segments, or the empty active
 *   segment a retention roll creates). Sizes are `.log` bytes; records and batches are counted from
 *   the batch headers (v2 `recordsCount`, legacy messages).
 * - `before` / `after`: totals over the affected segments only (deleted + rewritten before, created
 *   after), so they are exact without reading untouched segments. `log` gives whole-partition bytes
 *   (the `.log` sizes, what `retention.bytes` measures) and the log start / end offsets.
 * - `removed`: per reason, the number of records removed and their offsets as inclusive ranges
 *   (`[first, last]`, merged only across consecutive offsets, so a range never claims an offset that
 *   held no record). Retention removes whole segments: its ranges are the segments' offset spans.
 * - `holes`: offsets that held a record before and hold none after, inside the log (compaction).
 *   Retention removes a prefix and creates no hole.
 * - `retained`: the offsets of the records kept in the affected range, as ranges; for retention the
 *   range from the new log start offset to the log end offset (holes that existed before are not
 *   listed there, as the untouched segments are not read).
 * Range lists are capped at {@link MAX_RANGES} entries (`truncated: true`); counts are always exact.
 *
 * Offsets are `bigint` in the engine; {@link reportJson} turns a report into JSON-safe values (int64
 * as numbers when exact, else decimal strings).
 */
import { statSync } from 'node:fs';
import { int64Json } from '../format/batch-json.ts';
import { scanLogFile } from '../format/log-reader.ts';
import { decisionJson, type DecisionList } from './decisions.ts';

/** Most ranges kept per list; counts stay exact beyond it. */
export const MAX_RANGES = 10_000;

/** An inclusive range of offsets `[first, last]`. */
export interface OffsetRange {
  first: bigint;
  last: bigint;
}

/**
 * Builds a list of inclusive offset ranges from offsets given in increasing order. Offsets are kept
 * as numbers inside (the cleaner's offsets are below 2^53) and handed out as bigint ranges.
 */
export class OffsetRangeList {
  private firsts: number[] = [];
  private lasts: number[] = [];
  /** Number of offsets (records) added. */
  count = 0;
  /** True once more than `limit` ranges were needed (later ones are dropped, counts stay exact). */
  truncated = false;
  private lastLast = -2;

  constructor(private readonly limit = MAX_RANGES) {}

  /** Adds one offset (strictly above every offset added before). */
  add(offset: bigint): void {
    this.addNumber(Number(offset));
  }

  /** {@link add} for an offset given as a number. */
  addNumber(offset: number): void {
    this.count++;
    this.extend(offset, offset);
  }

  /**
   * Adds `[first, last]`, holding `records` records (a dense batch: `last − first + 1`; a retention
   * segment span: its record count, which may be smaller).
   */
  addRange(first: bigint, last: bigint, records: number): void {
    this.count += records;
    this.extend(Number(first), Number(last));
  }

  private extend(first: number, last: number): void {
    if (!this.truncated && first === this.lastLast + 1 && this.firsts.length > 0) {
      this.lasts[this.lasts.length - 1] = last;
    } else if (this.firsts.length >= this.limit) {
      this.truncated = true;
    } else if (!this.truncated) {
      this.firsts.push(first);
      this.lasts.push(last);
    }
    this.lastLast = last;
  }

  /** Appends every range and count of `other` (whose offsets all come after this list's). */
  append(other: OffsetRangeList): void {
    const rs = other.ranges;
    for (const r of rs) this.extend(Number(r.first), Number(r.last));
    this.count += other.count;
    if (other.truncated) this.truncated = true;
  }

  /** The ranges, as bigints. */
  get ranges(): OffsetRange[] {
    return this.firsts.map((f, i) => ({ first: BigInt(f), last: BigInt(this.lasts[i]!) }));
  }
}

/** Why records were removed. */
export type RemovalReason =
  /** Retention: the whole segment is older than retention.ms, beyond retention.bytes or below the log start offset. */
  | 'retention'
  /** Compaction: a later offset for the same key exists in the offset map (§13.5). */
  | 'superseded'
  /** Compaction: a record without a key (Kafka drops them and counts invalid messages: Cleaner.shouldRetainRecord, B07). */
  | 'keyless'
  /** Compaction: a tombstone whose delete horizon has passed (§13.6), or under the classic rules one older than delete.retention.ms. */
  | 'tombstone'
  /** Compaction: data of an aborted transaction (§13.7). */
  | 'aborted'
  /** Compaction: a transaction marker that no longer guards any data, past its delete horizon (§13.7). */
  | 'marker';

/** The reasons compaction removes a record (every removal reason but retention's). */
export type CompactionReason = Exclude<RemovalReason, 'retention'>;

/** Records removed for one reason. */
export interface RemovedRecords {
  records: number;
  ranges: OffsetRange[];
  truncated: boolean;
}

/** One segment named in a report. */
export interface SegmentSummary {
  baseOffset: bigint;
  /** `.log` file name. */
  file: string;
  /** `.log` bytes. */
  bytes: number;
  records: number;
  batches: number;
  /** Offset span `[baseOffset of the first batch, lastOffset of the last batch]`, or null when empty. */
  firstOffset: bigint | null;
  lastOffset: bigint | null;
  /**
   * Retention only: the rule that deletes this segment (`log-start-offset`, `retention.bytes`,
   * `retention.ms`: the first of UnifiedLog.deleteOldSegments' steps whose prefix takes it) and that
   * rule's evidence ("max timestamp … is 3.00 days old > retention.ms … ? yes").
   */
  deletedBy?: { rule: RetentionRule; evidence: string };
}

/** The rules of UnifiedLog.deleteOldSegments, by Kafka's config names. */
export type RetentionRule = 'log-start-offset' | 'retention.bytes' | 'retention.ms';

/** Totals over a set of segments. */
export interface Totals {
  segments: number;
  bytes: number;
  records: number;
  batches: number;
}

/** The compaction range of spec §13.1–§13.2, as computed for the plan. */
export interface CleanableInfo {
  firstDirtyOffset: bigint;
  /** True when the checkpointed first dirty offset was outside [logStartOffset, logEndOffset] and was reset. */
  checkpointReset: boolean;
  /**
   * The warning a broker logs when it resets the checkpoint (`LogCleanerManager.cleanableOffsets`),
   * or null: none, or a reset below the log start on a compact,delete topic, which it makes silently.
   */
  checkpointWarning: string | null;
  firstUncleanableOffset: bigint;
  /** What bounds the cleanable range: the active segment, the last stable offset, or min.compaction.lag.ms. */
  uncleanableReason: 'active-segment' | 'last-stable-offset' | 'min-compaction-lag';
  lastStableOffset: bigint;
  cleanBytes: number;
  cleanableBytes: number;
  /** cleanableBytes / (cleanBytes + cleanableBytes), 0 when both are 0. */
  dirtyRatio: number;
  minCleanableDirtyRatio: number;
  /** How long past max.compaction.lag.ms the oldest dirty segment is (0: not overdue). */
  maxCompactionDelayMs: number;
  /** max.compaction.lag.ms forces a clean now (ignoring the ratio). */
  mustCleanNow: boolean;
  /** Whether a broker's cleaner would pick this log now (ratio above the minimum, or must clean now: LogCleanerManager.grabFilthiestCompactedLog). */
  brokerWouldClean: boolean;
  /**
   * Why a broker never compacts this log, or null when its cleanup.policy has `compact` (`compact`
   * or `compact,delete`): `LogCleanerManager.grabFilthiestCompactedLog` only considers logs whose
   * `LogConfig.compact` is true; a `delete`-only log is left to retention (`UnifiedLog.deleteOldSegments`).
   */
  brokerNeverCompacts: string | null;
}

/** The report of a retention or compaction plan or run. */
export interface CleanerReport {
  operation: 'retention' | 'compaction';
  /** True for a plan (nothing touched), false for the result of a run. */
  dryRun: boolean;
  partitionDir: string;
  topic: string;
  partition: number;
  /** The clock the decisions used, ms since the epoch. */
  now: number;
  /** Compaction only: 'kafka' or 'classic'. */
  rules?: 'kafka' | 'classic';
  /** True when the run changes nothing (no segment deleted, rewritten or created). */
  nothingToDo: boolean;
  /** Sentences explaining the decisions (why nothing is cleanable, which rule stopped retention...). */
  notes: string[];
  segments: { deleted: SegmentSummary[]; rewritten: SegmentSummary[]; created: SegmentSummary[] };
  before: Totals;
  after: Totals;
  log: {
    bytesBefore: number;
    bytesAfter: number;
    logStartOffsetBefore: bigint;
    logStartOffsetAfter: bigint;
    logEndOffset: bigint;
    highWatermark: bigint;
  };
  removed: Partial<Record<RemovalReason, RemovedRecords>>;
  holes: OffsetRange[];
  holesTruncated: boolean;
  retained: OffsetRange[];
  retainedTruncated: boolean;
  /** Compaction only. */
  cleanable?: CleanableInfo;
  /** Compaction only: cleaning rounds (more than one when the key map fills up). */
  passes?: number;
  /** Compaction only: keyless records removed (Kafka's "invalid messages"). */
  invalidMessages?: number;
  /** Compaction only: the cleaner-offset-checkpoint value before and after. */
  cleanerCheckpoint?: { before: bigint | null; after: bigint | null };
  /** Files of the log directory / partition folder the run writes or wrote (checkpoints). */
  checkpointsWritten: string[];
  /** Run only: the trash entries holding the replaced files (undo restores them). */
  trashEntries?: string[];
  /** When asked for (`explain`): the decision of every record, batch and segment touched (`decisions.ts`). */
  decisions?: DecisionList;
}

/** Sums the figures of segment summaries. */
export function totalsOf(segs: readonly SegmentSummary[]): Totals {
  return {
    segments: segs.length,
    bytes: segs.reduce((s, x) => s + x.bytes, 0),
    records: segs.reduce((s, x) => s + x.records, 0),
    batches: segs.reduce((s, x) => s + x.batches, 0),
  };
}

/** Merges the removed ranges of every reason into the sorted list of holes. */
export function holesOf(removed: Partial<Record<RemovalReason, RemovedRecords>>): { holes: OffsetRange[]; truncated: boolean } {
  const all = Object.values(removed).flatMap((r) => r!.ranges);
  all.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const out = new OffsetRangeList();
  for (const r of all) out.addRange(r.first, r.last, Number(r.last - r.first + 1n));
  return { holes: out.ranges, truncated: out.truncated || Object.values(removed).some((r) => r!.truncated) };
}

function rangesJson(rs: readonly OffsetRange[]): [number | string, number | string][] {
  return rs.map((r) => [int64Json(r.first), int64Json(r.last)]);
}

function segJson(s: SegmentSummary): Record<string, unknown> {
  return {
    baseOffset: int64Json(s.baseOffset),
    file: s.file,
    bytes: s.bytes,
    records: s.records,
    batches: s.batches,
    firstOffset: s.firstOffset === null ? null : int64Json(s.firstOffset),
    lastOffset: s.lastOffset === null ? null : int64Json(s.lastOffset),
    ...(s.deletedBy ? { deletedBy: s.deletedBy.rule, deletedByEvidence: s.deletedBy.evidence } : {}),
  };
}

/**
 * The JSON form of a report (what `klx retention|compact --json` prints): int64 values as numbers
 * when exact, else strings; ranges as `[first, last]` pairs.
 */
export function reportJson(r: CleanerReport): Record<string, unknown> {
  const removed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.removed)) removed[k] = { records: v!.records, ranges: rangesJson(v!.ranges), truncated: v!.truncated };
  const out: Record<string, unknown> = {
    operation: r.operation,
    dryRun: r.dryRun,
    partitionDir: r.partitionDir,
    topic: r.topic,
    partition: r.partition,
    now: r.now,
    ...(r.rules ? { rules: r.rules } : {}),
    nothingToDo: r.nothingToDo,
    notes: r.notes,
    segments: { deleted: r.segments.deleted.map(segJson), rewritten: r.segments.rewritten.map(segJson), created: r.segments.created.map(segJson) },
    before: r.before,
    after: r.after,
    log: {
      bytesBefore: r.log.bytesBefore,
      bytesAfter: r.log.bytesAfter,
      logStartOffsetBefore: int64Json(r.log.logStartOffsetBefore),
      logStartOffsetAfter: int64Json(r.log.logStartOffsetAfter),
      logEndOffset: int64Json(r.log.logEndOffset),
      highWatermark: int64Json(r.log.highWatermark),
    },
    logStartOffset: int64Json(r.log.logStartOffsetAfter),
    removed,
    holes: rangesJson(r.holes),
    holesTruncated: r.holesTruncated,
    retained: rangesJson(r.retained),
    retainedTruncated: r.retainedTruncated,
    checkpointsWritten: r.checkpointsWritten,
  };
  if (r.cleanable) {
    const c = r.cleanable;
    out.cleanable = { ...c, firstDirtyOffset: int64Json(c.firstDirtyOffset), firstUncleanableOffset: int64Json(c.firstUncleanableOffset), lastStableOffset: int64Json(c.lastStableOffset) };
  }
  if (r.passes !== undefined) out.passes = r.passes;
  if (r.invalidMessages !== undefined) out.invalidMessages = r.invalidMessages;
  if (r.cleanerCheckpoint) {
    const cc = r.cleanerCheckpoint;
    out.cleanerCheckpoint = { before: cc.before === null ? null : int64Json(cc.before), after: cc.after === null ? null : int64Json(cc.after) };
  }
  if (r.trashEntries) out.trashEntries = r.trashEntries;
  if (r.decisions) out.decisions = { rows: r.decisions.rows.map(decisionJson), total: r.decisions.total, summarized: r.decisions.summarized, limit: r.decisions.limit };
  return out;
}

/**
 * Counts the batches and records of a `.log` from its batch headers (v2 `recordsCount`; legacy
 * messages, decoded by the reader) and the offset span they cover. Damage is skipped (the segment is
 * being summarised, not verified).
 * @throws KlxError `not-found` / `io-error` when the file cannot be read.
 */
export function summarizeLogFile(path: string, baseOffset: bigint, file: string): SegmentSummary {
  let records = 0;
  let batches = 0;
  let bytes = 0;
  let firstOffset: bigint | null = null;
  let lastOffset: bigint | null = null;
  for (const e of scanLogFile(path, { verifyCrc: false })) {
    if (e.type !== 'batch') continue;
    batches++;
    records += e.header.recordCount;
    if (firstOffset === null) firstOffset = e.header.baseOffset;
    lastOffset = e.header.lastOffset;
  }
  try {
    bytes = statSync(path).size;
  } catch {
    bytes = 0;
  }
  return { baseOffset, file, bytes, records, batches, firstOffset, lastOffset };
}

/** Progress of a run: `done` of `total` units of `phase` (bytes for reading phases), `bytes` read and written so far. */
export interface CleanerProgress {
  phase: string;
  done: number;
  total: number | null;
  bytes: number;
}

/** What every run needs besides its own options. */
export interface RunContext {
  /** Groups the trash entries of one command / API call (undo reverses a whole run). */
  runId: string;
  /** Trash folder (see `trash.ts`). */
  trashDir: string;
  /** Cancels the run; honoured until the run's commit point (the folder is then left as it was). */
  signal?: AbortSignal;
  onProgress?: (p: CleanerProgress) => void;
  /** Fault injection (tests): see `file-steps.ts`. */
  fault?: import('./file-steps.ts').CleanerFaultHook;
}

function n(x: number): string {
  return x.toLocaleString('en-US');
}

function rangesText(rs: readonly OffsetRange[], truncated: boolean, max = 8): string {
  const shown = rs.slice(0, max).map((r) => (r.first === r.last ? `${r.first}` : `${r.first}..${r.last}`));
  const more = rs.length > max || truncated ? ` … (${truncated ? 'more than ' : ''}${rs.length} ranges)` : '';
  return shown.length ? `[${shown.join(', ')}${more}]` : '[]';
}

/**
 * The human-readable lines of a report (what `klx retention|compact` prints without `--json`); a
 * report that changes nothing is one line: `<topic>-<partition>: <operation>: nothing to clean: <why>`.
 */
export function reportText(r: CleanerReport): string[] {
  const lines: string[] = [];
  const what = r.operation === 'retention' ? 'retention' : `compaction (rules: ${r.rules ?? 'kafka'})`;
  if (r.nothingToDo && !r.trashEntries?.length) {
    // A run that changes nothing says so in one line (no trash entry, no "affected segments" figures).
    const why = r.notes.filter((x) => x !== 'nothing to delete').map((x) => x.replace(/^nothing cleanable: /, ''));
    if (r.cleanable && !r.cleanable.brokerNeverCompacts) why.push(`dirty ratio ${r.cleanable.dirtyRatio.toFixed(3)} (min.cleanable.dirty.ratio ${r.cleanable.minCleanableDirtyRatio})`);
    if (why.length === 0) why.push(r.operation === 'retention' ? 'no segment is due for deletion' : 'no record to remove');
    return [`${r.topic}-${r.partition}: ${what}: nothing to clean: ${why.join('; ')}`];
  }
  lines.push(`${r.topic}-${r.partition}: ${what}${r.dryRun ? ' — plan, nothing changed' : ''}`);
  const seg = (verb: string, s: SegmentSummary) =>
    `  ${verb} ${s.file}: ${n(s.bytes)} bytes, ${n(s.records)} records in ${n(s.batches)} batches${s.firstOffset !== null ? `, offsets ${s.firstOffset}..${s.lastOffset}` : ''}` +
    (s.deletedBy ? ` — by ${s.deletedBy.rule}: ${s.deletedBy.evidence}` : '');
  for (const s of r.segments.deleted) lines.push(seg(r.dryRun ? 'delete' : 'deleted', s));
  for (const s of r.segments.rewritten) lines.push(seg(r.dryRun ? 'rewrite' : 'rewrote', s));
  for (const s of r.segments.created) lines.push(seg(r.dryRun ? 'create' : 'created', s));
  if (r.cleanable) {
    const c = r.cleanable;
    lines.push(
      `  cleanable range ${c.firstDirtyOffset}..${c.firstUncleanableOffset} (bounded by the ${c.uncleanableReason.replace(/-/g, ' ')}), dirty ratio ${c.dirtyRatio.toFixed(3)} (min.cleanable.dirty.ratio ${c.minCleanableDirtyRatio})` +
        `${c.mustCleanNow ? `, overdue by ${n(c.maxCompactionDelayMs)} ms (max.compaction.lag.ms)` : ''}; ${c.brokerNeverCompacts ? 'a broker never compacts this topic (LogCleanerManager.grabFilthiestCompactedLog)' : `a broker would ${c.brokerWouldClean ? '' : 'not '}clean it now`}`,
    );
  }
  if (!r.nothingToDo) {
    lines.push(`  affected segments: ${n(r.before.segments)} → ${n(r.after.segments)}, ${n(r.before.bytes)} → ${n(r.after.bytes)} bytes, ${n(r.before.records)} → ${n(r.after.records)} records`);
  }
  lines.push(`  partition: ${n(r.log.bytesBefore)} → ${n(r.log.bytesAfter)} bytes; log start offset ${r.log.logStartOffsetBefore} → ${r.log.logStartOffsetAfter}; log end offset ${r.log.logEndOffset}`);
  for (const [reason, v] of Object.entries(r.removed)) lines.push(`  removed (${reason}): ${n(v!.records)} records ${rangesText(v!.ranges, v!.truncated)}`);
  if (r.holes.length) lines.push(`  new offset holes: ${rangesText(r.holes, r.holesTruncated)}`);
  if (r.retained.length) lines.push(`  retained offsets: ${rangesText(r.retained, r.retainedTruncated)}`);
  if (r.passes !== undefined && r.passes > 1) lines.push(`  cleaning passes: ${r.passes} (the key map filled up)`);
  if (r.cleanerCheckpoint) lines.push(`  cleaner-offset-checkpoint: ${r.cleanerCheckpoint.before ?? '(none)'} → ${r.cleanerCheckpoint.after ?? '(none)'}`);
  for (const note of r.notes) lines.push(`  note: ${note}`);
  if (r.trashEntries?.length) lines.push(`  replaced files kept in the trash (klx undo restores them): ${r.trashEntries.join(', ')}`);
  return lines;
}
