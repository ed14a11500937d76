/**
 * Retention: which whole segments a broker deletes, and deleting them crash-safely and undoably
 * (spec §12; Kafka's `UnifiedLog.deleteOldSegments`, `deletableSegments`, `deleteSegments`,
 * `deleteRetentionMsBreachedSegments`, `deleteRetentionSizeBreachedSegments`,
 * `deleteLogStartOffsetBreachedSegments`, `maybeIncrementLogStartOffset`,
 * `LeaderEpochFileCache.truncateFromStart`).
 *
 * Rules, applied in Kafka's order, each on what the previous step left:
 * 1. log start offset (always): a segment goes when the *next* segment's base offset ≤ logStartOffset
 *    ("delete records before offset N" first raises logStartOffset to N, refused above the high
 *    watermark, B10);
 * 2. size (policy includes `delete`, `retention.bytes` ≥ 0): when the partition's `.log` bytes are at
 *    least `retention.bytes`, `excess = size − retention.bytes`; oldest first, a segment goes while
 *    `excess − its size ≥ 0`, reducing the excess;
 * 3. time (policy includes `delete`, `retention.ms` ≥ 0): a segment goes when
 *    `now − largestTimestamp > retention.ms` (strictly; see `segment-times.ts`).
 * This is the order of UnifiedLog.deleteOldSegments since Kafka 3.0 (UnifiedLog.scala, later
 * UnifiedLog.java: deleteLogStartOffsetBreachedSegments, then deleteRetentionSizeBreachedSegments,
 * then deleteRetentionMsBreachedSegments; checked in the 3.0.0 to 3.5.0 tags and October 2024 trunk); Kafka 2.x
 * (Log.deleteOldSegments, 2.8.0) ran time, size, then log start offset. Each deleted segment records the rule whose step took it (`deletedBy`), and a
 * "X retention stops at segment S" note is dropped when a later rule deletes S.
 * Common to all: only a prefix of segments goes (the walk stops at the first segment that fails, so
 * a future timestamp blocks its segment and every later one, B08); a segment qualifies only if its
 * upper bound (next base offset, or the log end offset) ≤ the high watermark; an empty last segment
 * never goes; when every segment goes, an empty active segment is first rolled at the log end offset
 * (B19). The log start offset then becomes the base of the first remaining segment.
 *
 * Run order (crash-safe: before step 4 the folder holds the old state, after it the new one):
 * 1. the trash entry gets hard links of every file that will go (segments, producer snapshots at
 *    their base offsets, the `leader-epoch-checkpoint`), and its manifest;
 * 2. the empty active segment is created when the roll is needed;
 * 3. (nothing is deleted yet);
 * 4. `log-start-offset-checkpoint` gets the new log start offset — the commit point: records below it
 *    are no longer readable, whatever files are still there;
 * 5. `leader-epoch-checkpoint` is truncated from the start;
 * 6. the old segments are renamed to `.deleted` and removed (a crash in between leaves files below
 *    the log start offset, which a broker's retention removes first: UnifiedLog.deleteLogStartOffsetBreachedSegments;
 *    leftover `.deleted` files go at its next start, LogLoader.removeTempFilesAndCollectSwapFiles);
 * 7. the trash entry is committed.
 *
 * Differences from a broker, on purpose: the partition's `log-start-offset-checkpoint` entry is
 * always written (a broker drops it when it equals the first segment's base offset,
 * LogManager.checkpointLogStartOffsetsInDir; both read the same), and `.deleted` files are removed at once
 * instead of after `file.delete.delay.ms` (LocalLog.deleteSegmentFiles).
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KlxError } from '../errors.ts';
import { formatLeaderEpochCheckpoint, type LeaderEpochEntry } from '../files/checkpoint.ts';
import { LEADER_EPOCH_CHECKPOINT_FILE, LOG_START_OFFSET_CHECKPOINT_FILE, segmentFileName } from '../files/file-names.ts';
import { encodeOffsetIndex } from '../files/offset-index.ts';
import { encodeTimeIndex } from '../files/time-index.ts';
import { crc32c } from '../format/crc.ts';
import { scanLogFile } from '../format/log-reader.ts';
import { decodeV2Records } from '../format/record-batch.ts';
import { acquireLock, WRITER_LOCK_FILE } from '../log/log-lock.ts';
import { PartitionLog } from '../log/partition-log.ts';
import type { TopicConfig } from '../log/topic-config.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import { OffsetRangeList, summarizeLogFile, totalsOf, type CleanerReport, type RetentionRule, type RunContext, type SegmentSummary } from './cleaner-plan.ts';
import { readCheckpointEntry, setCheckpointEntry } from './checkpoint-entries.ts';
import { FileSteps, ioErrorOf, SimulatedCrash } from './file-steps.ts';
import { largestTimestamp } from './segment-times.ts';
import { assertNoInterruptedSwap, deleteSegmentFiles, segmentFiles } from './segment-swap.ts';
import { TrashEntry } from './trash.ts';
import { DecisionLog, durationText, timeText, type DecisionReason, type ExplainOptions } from './decisions.ts';

/** Options of a retention plan or run. */
export interface RetentionOptions {
  /** The clock, ms since the epoch (default: the wall clock). */
  now?: number;
  /** Topic config overrides (`retention.ms`, `retention.bytes`, `cleanup.policy`...). */
  config?: Partial<TopicConfig>;
  /** "Delete records before offset N": raise logStartOffset to N (Kafka's DeleteRecords). */
  deleteBeforeOffset?: bigint;
  /** Collect a decision per segment walked (`decisions.ts`); the report gets `decisions`. */
  explain?: ExplainOptions;
  /** Add the segment decisions to this log (compaction followed by retention). */
  decisions?: DecisionLog;
}

/** The decision behind a retention report. */
export interface RetentionDecision {
  log: PartitionLog;
  now: number;
  /** Segments that go, oldest first (the active one included when rolled). */
  deleted: LogSegment[];
  /** Per segment of `deleted` (same order): the rule whose step takes it, and that rule's evidence. */
  deletedBy: { rule: RetentionRule; evidence: string }[];
  /** An empty active segment must be rolled at `logEndOffset` first. */
  roll: boolean;
  logStartOffsetBefore: bigint;
  logStartOffsetAfter: bigint;
  logEndOffset: bigint;
  highWatermark: bigint;
  notes: string[];
  /** The segment decisions, when asked for. */
  decisions?: DecisionLog;
}

function describeMs(ms: bigint): string {
  const abs = ms < 0n ? -ms : ms;
  const day = 86_400_000n;
  const s = abs >= day ? `${(Number(abs) / 86_400_000).toFixed(2)} days` : abs >= 3_600_000n ? `${(Number(abs) / 3_600_000).toFixed(2)} h` : `${abs} ms`;
  return ms < 0n ? `−${s}` : s;
}

/**
 * Decides what retention does to a partition now (spec §12), touching nothing.
 * @throws KlxError `invalid-config` when `deleteBeforeOffset` is given on a compact-only topic (a broker's
 *   DeleteRecords refuses it: Partition.deleteRecordsOnLeader); `offset-out-of-range` when `deleteBeforeOffset` is above the high watermark (as
 *   Kafka's DeleteRecords refuses it); `not-found` / `io-error` when a file cannot be read.
 */
export function decideRetention(log: PartitionLog, opts: RetentionOptions = {}): RetentionDecision {
  const now = opts.now ?? Date.now();
  const cfg = log.config.config;
  const policy = cfg['cleanup.policy'];
  const notes: string[] = [];
  const leo = log.logEndOffset;
  const hwCheckpoint = log.highWatermark;
  const logStartBefore = log.logStartOffset;
  let hw = hwCheckpoint === null ? leo : hwCheckpoint < leo ? hwCheckpoint : leo;
  if (hw < logStartBefore) hw = logStartBefore;
  // No checkpointed high watermark: a broker starts at 0 (Partition.createLogIfNotExists → updateHighWatermark), and a
  // single-replica leader raises it to the log end offset as soon as it leads (Partition.maybeIncrementLeaderHW).
  if (hwCheckpoint === null) notes.push(`no high watermark in replication-offset-checkpoint: the log end offset ${leo} is used (a single replica)`);
  let logStart = logStartBefore;

  if (opts.deleteBeforeOffset !== undefined) {
    const n = opts.deleteBeforeOffset;
    // Partition.deleteRecordsOnLeader: PolicyViolationException when the policy lacks delete (Kafka ≤ 4.1
    // also for an empty policy; 4.2 and later only when it is compact without delete).
    if (policy.includes('compact') && !policy.includes('delete')) {
      throw new KlxError('invalid-config', `Records of partition ${log.topic}-${log.partition} can not be deleted due to the configured policy (cleanup.policy=${policy.join(',')}): a broker refuses DeleteRecords unless the policy includes delete (Partition.deleteRecordsOnLeader)`, {
        file: log.dir,
        details: { cleanupPolicy: policy.join(','), requested: n.toString() },
      });
    }
    if (policy.length === 0) notes.push('cleanup.policy is empty: a Kafka 4.2+ broker accepts DeleteRecords here, an earlier one refuses it (Partition.deleteRecordsOnLeader)');
    // UnifiedLog.maybeIncrementLogStartOffset: OffsetOutOfRangeException above the high watermark.
    if (n > hw) {
      throw new KlxError('offset-out-of-range', `Cannot increment the log start offset to ${n} of partition ${log.topic}-${log.partition} since it is larger than the high watermark ${hw}`, {
        file: log.dir,
        details: { requested: n.toString(), highWatermark: hw.toString() },
      });
    }
    if (n > logStart) {
      notes.push(`delete records before offset ${n}: the log start offset rises from ${logStart} to ${n}`);
      logStart = n;
    } else notes.push(`delete records before offset ${n}: the log start offset is already ${logStart}`);
  }

  let remaining: (LogSegment | null)[] = [...log.segments]; // null = the rolled empty segment
  const deleted: LogSegment[] = [];
  let roll = false;
  const sizeOf = (s: LogSegment | null) => (s ? s.size : 0);
  const baseOf = (s: LogSegment | null) => (s ? s.baseOffset : leo);

  // Decisions: which rule took each deleted segment, and why each rule stopped where it did.
  const takenBy = new Map<LogSegment, { reason: DecisionReason; evidence: string }>();
  const stops = new Map<LogSegment, string[]>();
  const stopAt = (seg: LogSegment, why: string) => {
    const l = stops.get(seg) ?? [];
    l.push(why);
    stops.set(seg, l);
  };
  // "X retention stops at segment S" notes, kept only if no later rule deletes S (else the note would
  // say a segment stays that goes: size stopping at S while time then takes S and every later one).
  const stopNotes: { seg: LogSegment; at: number }[] = [];
  const stopNote = (seg: LogSegment, text: string) => {
    stopNotes.push({ seg, at: notes.length });
    notes.push(text);
  };
  const step = (name: string, pred: (seg: LogSegment, next: LogSegment | null | undefined, index: number) => { ok: boolean; why?: string; evidence?: string }): void => {
    const take: LogSegment[] = [];
    const reason: DecisionReason = name === 'time' ? 'retention-time' : name === 'size' ? 'retention-size' : 'retention-log-start';
    for (let i = 0; i < remaining.length; i++) {
      const seg = remaining[i]!;
      if (seg === null) break; // the rolled segment is empty and last
      const next = remaining[i + 1];
      const isLastAndEmpty = next === undefined && seg.size === 0;
      const upper = next !== undefined ? baseOf(next) : leo;
      if (isLastAndEmpty) {
        if (take.length > 0 || name === 'time') stopNote(seg, `${name} retention stops at segment ${seg.baseOffset}: an empty last segment is never deleted`);
        stopAt(seg, `${name} retention: an empty last segment is never deleted`);
        break;
      }
      if (hw < upper) {
        const r = pred(seg, next, i);
        if (r.ok) stopNote(seg, `${name} retention stops at segment ${seg.baseOffset}: its records run to offset ${upper - 1n}, at or beyond the high watermark ${hw}`);
        stopAt(seg, r.ok ? `${name} retention: ${r.evidence ?? 'it qualifies'}, but its records run to offset ${upper - 1n}, at or beyond the high watermark ${hw}` : `${name} retention: ${r.evidence ?? r.why ?? 'it does not qualify'}`);
        break;
      }
      const r = pred(seg, next, i);
      if (!r.ok) {
        if (r.why) stopNote(seg, `${name} retention stops at segment ${seg.baseOffset}: ${r.why}`);
        stopAt(seg, `${name} retention: ${r.evidence ?? r.why ?? 'it does not qualify'}`);
        break;
      }
      take.push(seg);
      takenBy.set(seg, { reason, evidence: r.evidence ?? `${name} retention` });
    }
    if (take.length === 0) return;
    if (take.length === remaining.length) {
      roll = true;
      remaining = [null];
      notes.push(`every segment goes, so an empty active segment is rolled at the log end offset ${leo} first`);
    } else remaining = remaining.slice(take.length);
    deleted.push(...take);
    const newStart = baseOf(remaining[0]!);
    if (newStart > logStart) logStart = newStart;
  };

  step('log-start-offset', (_seg, next) => {
    const ok = next !== undefined && baseOf(next) <= logStart;
    return { ok, evidence: next === undefined ? `it is the last segment (log start offset ${logStart})` : `next segment's base offset ${baseOf(next)} ≤ log start offset ${logStart}? ${ok ? 'yes' : 'no'}` };
  });

  const hasDelete = policy.includes('delete');
  if (!hasDelete) {
    if (cfg['retention.ms'] >= 0n || cfg['retention.bytes'] >= 0n) {
      notes.push(`cleanup.policy is ${policy.join(',')} (${log.config.sources['cleanup.policy']}): only the log-start-offset rule applies; time and size retention need cleanup.policy=delete or compact,delete`);
    }
  } else {
    const retentionBytes = cfg['retention.bytes'];
    if (retentionBytes >= 0n) {
      const size = BigInt(remaining.reduce((s, x) => s + sizeOf(x), 0));
      if (size >= retentionBytes) {
        let diff = size - retentionBytes;
        step('size', (seg) => {
          const ok = diff - BigInt(seg.size) >= 0n;
          const evidence = `excess ${diff} bytes over retention.bytes ${retentionBytes} − its ${seg.size} bytes ≥ 0? ${ok ? 'yes' : 'no'}`;
          if (ok) diff -= BigInt(seg.size);
          return { ok, why: `deleting its ${seg.size} bytes would take the partition below retention.bytes ${retentionBytes} (excess left: ${diff} bytes)`, evidence };
        });
      } else notes.push(`size retention: the partition holds ${size} bytes, below retention.bytes ${retentionBytes}`);
    }
    const retentionMs = cfg['retention.ms'];
    if (retentionMs >= 0n) {
      const nowB = BigInt(now);
      step('time', (seg, next) => {
        const lt = largestTimestamp(seg, next === undefined);
        const age = nowB - lt.timestamp;
        const ok = age > retentionMs;
        const src = lt.source === 'mtime' ? ' (no record timestamps: the file mtime)' : lt.source === 'log' ? ' (read from the .log)' : '';
        return {
          ok,
          evidence: timeEvidence(lt.timestamp, age, retentionMs, src),
          why: age < 0n
            ? `its largest timestamp ${lt.timestamp}${src} is ${describeMs(-age)} in the future, which blocks it and every later segment`
            : `now − largest timestamp ${lt.timestamp}${src} = ${describeMs(age)}, not above retention.ms ${retentionMs}`,
        };
      });
    }
  }
  const goneLater = new Set(stopNotes.filter((x) => takenBy.has(x.seg)).map((x) => x.at));
  const keptNotes = notes.filter((_n, i) => !goneLater.has(i));
  notes.length = 0;
  notes.push(...keptNotes);
  const rules = new Map<RetentionRule, number>();
  for (const seg of deleted) {
    const rule = RULE_OF[takenBy.get(seg)!.reason as keyof typeof RULE_OF];
    rules.set(rule, (rules.get(rule) ?? 0) + 1);
  }
  if (rules.size > 1) notes.push(`segments deleted by rule, in UnifiedLog.deleteOldSegments' order: ${[...rules].map(([r, c]) => `${r} ${c}`).join(', ')} (each line above names its rule)`);
  const decisions = opts.decisions ?? (opts.explain ? new DecisionLog(opts.explain) : undefined);
  if (decisions) {
    const rm = cfg['retention.ms'];
    let stopSeg: LogSegment | null = null;
    log.segments.forEach((seg, i) => {
      const upper = i + 1 < log.segments.length ? log.segments[i + 1]!.baseOffset - 1n : leo - 1n;
      const span = { offset: seg.baseOffset, lastOffset: upper < seg.baseOffset ? seg.baseOffset : upper, segment: seg.baseOffset, key: null };
      const taken = takenBy.get(seg);
      if (taken) {
        decisions.add({ subject: 'segment', ...span, decision: 'remove', reason: taken.reason, evidence: `segment deleted: ${taken.evidence}` });
        return;
      }
      if (stopSeg === null) {
        stopSeg = seg;
        const why = stops.get(seg) ?? [hasDelete ? 'no rule deletes it' : `cleanup.policy ${policy.join(',')}: only the log-start-offset rule applies`];
        decisions.add({ subject: 'segment', ...span, decision: 'keep', reason: 'prefix-stop', evidence: `prefix stops at segment ${seg.baseOffset}: ${why.join('; ')}` });
        return;
      }
      let evidence = `kept: after segment ${(stopSeg as LogSegment).baseOffset}, where the prefix stops (only a prefix of segments is ever deleted)`;
      if (hasDelete && rm >= 0n) {
        const lt = largestTimestamp(seg, i === log.segments.length - 1);
        evidence += `; ${timeEvidence(lt.timestamp, BigInt(now) - lt.timestamp, rm, lt.source === 'mtime' ? ' (file mtime)' : '')}`;
      }
      decisions.add({ subject: 'segment', ...span, decision: 'keep', reason: 'after-prefix', evidence });
    });
  }
  const deletedBy = deleted.map((seg) => {
    const t = takenBy.get(seg)!;
    return { rule: RULE_OF[t.reason as keyof typeof RULE_OF], evidence: t.evidence };
  });
  return { log, now, deleted, deletedBy, roll, logStartOffsetBefore: logStartBefore, logStartOffsetAfter: logStart, logEndOffset: leo, highWatermark: hw, notes, ...(decisions ? { decisions } : {}) };
}

/** The Kafka config name of each retention decision reason. */
const RULE_OF = { 'retention-log-start': 'log-start-offset', 'retention-size': 'retention.bytes', 'retention-time': 'retention.ms' } as const satisfies Partial<Record<DecisionReason, RetentionRule>>;

/** "max timestamp 1.28 h old > retention.ms 2 h? no" (Kafka's `deleteRetentionMsBreachedSegments` test). */
function timeEvidence(ts: bigint, age: bigint, retentionMs: bigint, src: string): string {
  return `max timestamp ${timeText(ts)}${src} is ${durationText(age)} old > retention.ms ${retentionMs} (${durationText(retentionMs)})? ${age > retentionMs ? 'yes' : 'no'}`;
}

/** Records of a segment with offset in [from, to), counted from headers (decoding only batches that straddle a bound). */
function countRecordsIn(seg: LogSegment, from: bigint, to: bigint, ranges: OffsetRangeList): void {
  for (const e of scanLogFile(seg.files.log, { verifyCrc: false, start: seg.positionFor(from) })) {
    if (e.type !== 'batch') continue;
    const h = e.header;
    if (h.lastOffset < from) continue;
    if (h.baseOffset >= to) break;
    const dense = BigInt(h.recordCount) === h.lastOffset - h.baseOffset + 1n;
    if (h.baseOffset >= from && h.lastOffset < to && dense) {
      if (h.recordCount > 0) ranges.addRange(h.baseOffset, h.lastOffset, h.recordCount);
      continue;
    }
    let recs: { offset: bigint }[];
    try {
      recs = e.records ?? decodeV2Records(h, e.bytes);
    } catch {
      // Undecodable: count it by its header span.
      const first = h.baseOffset > from ? h.baseOffset : from;
      const last = h.lastOffset < to - 1n ? h.lastOffset : to - 1n;
      ranges.addRange(first, last, Number(last - first + 1n));
      continue;
    }
    for (const r of recs) if (r.offset >= from && r.offset < to) ranges.add(r.offset);
  }
}

/**
 * Builds the report of a decision (reads the headers of the segments that go).
 * @param measured for a run: the partition reopened afterwards (its figures replace the predicted ones).
 */
export function retentionReport(d: RetentionDecision, dryRun: boolean, measured?: { log: PartitionLog; planned: CleanerReport }): CleanerReport {
  const log = d.log;
  const oldStart = d.logStartOffsetBefore;
  const newStart = d.logStartOffsetAfter;
  let deletedSummaries: SegmentSummary[];
  let removedRecords: CleanerReport['removed'];
  if (measured) {
    deletedSummaries = measured.planned.segments.deleted;
    removedRecords = measured.planned.removed;
  } else {
    deletedSummaries = d.deleted.map((s, i) => ({ ...summarizeLogFile(s.files.log, s.baseOffset, segmentFileName(s.baseOffset, '.log')), deletedBy: d.deletedBy[i]! }));
    const removed = new OffsetRangeList();
    d.deleted.forEach((seg, i) => {
      const sum = deletedSummaries[i]!;
      if (sum.firstOffset === null || sum.lastOffset === null || sum.lastOffset < oldStart) return;
      if (sum.firstOffset >= oldStart) removed.addRange(sum.firstOffset, sum.lastOffset, sum.records);
      else countRecordsIn(seg, oldStart, sum.lastOffset + 1n, removed);
    });
    // Records hidden inside the first kept segment by a log start offset raised into it.
    const keptFirst = log.segments.find((s) => !d.deleted.includes(s));
    if (keptFirst && newStart > keptFirst.baseOffset && newStart > oldStart) {
      countRecordsIn(keptFirst, oldStart > keptFirst.baseOffset ? oldStart : keptFirst.baseOffset, newStart, removed);
    }
    removedRecords = removed.count > 0 || removed.ranges.length > 0 ? { retention: { records: removed.count, ranges: removed.ranges, truncated: removed.truncated } } : {};
  }
  const created: SegmentSummary[] = d.roll ? [{ baseOffset: d.logEndOffset, file: segmentFileName(d.logEndOffset, '.log'), bytes: 0, records: 0, batches: 0, firstOffset: null, lastOffset: null }] : [];
  const bytesBefore = log.logSize;
  const bytesAfter = measured ? measured.log.logSize : bytesBefore - deletedSummaries.reduce((s, x) => s + x.bytes, 0);
  const logStartAfter = measured ? measured.log.logStartOffset : newStart;
  const leo = measured ? measured.log.logEndOffset : d.logEndOffset;
  const nothingToDo = d.deleted.length === 0 && newStart === oldStart;
  const notes = [...d.notes];
  if (nothingToDo) notes.push('nothing to delete');
  return {
    operation: 'retention',
    dryRun,
    partitionDir: log.dir,
    topic: log.topic,
    partition: log.partition,
    now: d.now,
    nothingToDo,
    notes,
    segments: { deleted: deletedSummaries, rewritten: [], created },
    before: totalsOf(deletedSummaries),
    after: totalsOf(created),
    log: { bytesBefore, bytesAfter, logStartOffsetBefore: oldStart, logStartOffsetAfter: logStartAfter, logEndOffset: leo, highWatermark: d.highWatermark },
    removed: removedRecords,
    holes: [],
    holesTruncated: false,
    retained: leo > logStartAfter ? [{ first: logStartAfter, last: leo - 1n }] : [],
    retainedTruncated: false,
    checkpointsWritten: nothingToDo ? [] : [LOG_START_OFFSET_CHECKPOINT_FILE, ...(log.leaderEpochs.length > 0 && newStart > oldStart ? [LEADER_EPOCH_CHECKPOINT_FILE] : [])],
    ...(d.decisions ? { decisions: d.decisions.list() } : {}),
  };
}

/**
 * Kafka's `LeaderEpochFileCache.truncateFromStart`: entries whose start offset ≤ the new log start
 * offset are dropped, the newest of them kept with its start offset raised to it.
 */
export function truncateEpochsFromStart(entries: readonly LeaderEpochEntry[], startOffset: bigint): LeaderEpochEntry[] {
  const removed = entries.filter((e) => e.startOffset <= startOffset);
  const kept = entries.filter((e) => e.startOffset > startOffset);
  if (removed.length === 0) return [...entries];
  return [{ epoch: removed[removed.length - 1]!.epoch, startOffset }, ...kept];
}

/** The plan of a retention run: what {@link runRetention} will do, touching nothing. */
export function planRetention(partitionDir: string, opts: RetentionOptions = {}): CleanerReport {
  const log = PartitionLog.open(partitionDir, { config: opts.config });
  return retentionReport(decideRetention(log, opts), true);
}

/**
 * Applies retention to a partition folder (see the module comment for the order of the steps).
 * @returns the report measured after the run (`trashEntries` names the undo entry).
 * @throws KlxError `locked` (another writer), `invalid-argument` (leftovers of an interrupted clean),
 *   `offset-out-of-range`, `cancelled` (the folder is left as it was), `io-error` (before the commit
 *   point the folder is left as it was; after it the run is completed as far as possible and the
 *   message says what is left); {@link SimulatedCrash} from a fault hook, with no clean-up.
 */
export function runRetention(partitionDir: string, opts: RetentionOptions, ctx: RunContext): CleanerReport {
  const probe = PartitionLog.open(partitionDir, { config: opts.config });
  const lock = acquireLock(join(probe.dir, WRITER_LOCK_FILE), { purpose: 'klx retention', what: `partition ${probe.topic}-${probe.partition}` });
  try {
    assertNoInterruptedSwap(probe.dir);
    const log = PartitionLog.open(partitionDir, { config: opts.config });
    const d = decideRetention(log, opts);
    const planned = retentionReport(d, false);
    if (planned.nothingToDo) return planned;
    if (ctx.signal?.aborted) throw new KlxError('cancelled', 'retention cancelled before it changed anything', { file: log.dir });
    const trashEntries = executeRetention(d, ctx);
    const after = PartitionLog.open(partitionDir, { config: opts.config });
    const report = retentionReport(d, false, { log: after, planned });
    report.trashEntries = trashEntries;
    return report;
  } finally {
    lock.release();
  }
}

/**
 * Executes a retention decision on disk (the caller holds the partition's writer lock).
 * @returns the trash entry ids (one, or none when only the log start offset moved without files).
 */
export function executeRetention(d: RetentionDecision, ctx: RunContext): string[] {
  const log = d.log;
  const dir = log.dir;
  const logDir = dirname(dir);
  const steps = new FileSteps(ctx.fault);
  const progress = (phase: string, done: number, total: number) => ctx.onProgress?.({ phase, done, total, bytes: 0 });
  const epochPath = join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
  const newStart = d.logStartOffsetAfter;
  const epochsAfter = newStart > d.logStartOffsetBefore && log.leaderEpochs.length > 0 ? truncateEpochsFromStart(log.leaderEpochs, newStart) : null;
  const epochText = epochsAfter ? formatLeaderEpochCheckpoint(epochsAfter) : null;
  const epochChanged = epochText !== null && existsSync(epochPath) && readFileSync(epochPath, 'utf8') !== epochText;

  let trash: TrashEntry | undefined;
  const created: string[] = [];
  let committed = false;
  try {
    trash = TrashEntry.create(ctx.trashDir, { runId: ctx.runId, operation: 'retention', partitionDir: dir, logDir, topic: log.topic, partition: log.partition, now: d.now }, steps);
    // 1. Hard links of everything that goes, before anything changes.
    progress('retention: trash', 0, d.deleted.length);
    const snapshotsOf = (seg: LogSegment) => [join(dir, segmentFileName(seg.baseOffset, '.snapshot'))].filter((p) => existsSync(p));
    for (const seg of d.deleted) {
      for (const p of [...segmentFiles(dir, seg.baseOffset), ...snapshotsOf(seg)]) trash.keep(p);
    }
    if (epochChanged) trash.keepMetadata(epochPath);
    trash.save();

    // 2. Roll an empty active segment at the log end offset when every segment goes.
    if (d.roll) {
      const base = d.logEndOffset;
      const files: [string, Buffer][] = [
        [join(dir, segmentFileName(base, '.log')), Buffer.alloc(0)],
        [join(dir, segmentFileName(base, '.index')), encodeOffsetIndex(base, [])],
        [join(dir, segmentFileName(base, '.timeindex')), encodeTimeIndex(base, [])],
      ];
      for (const [p, bytes] of files) {
        if (existsSync(p)) throw new KlxError('internal', 'the segment to roll already exists', { file: p });
        steps.writeFile('roll-segment', p, bytes);
        created.push(p);
        trash.manifest.created.push({ name: p.slice(dir.length + 1), size: bytes.length, mtimeMs: Date.now(), crc32c: crc32c(bytes) });
      }
      steps.fsyncDir(dir);
      trash.save();
    }
    if (ctx.signal?.aborted) throw new KlxError('cancelled', 'retention cancelled before it changed anything', { file: dir });
    const startBefore = readCheckpointEntry(logDir, LOG_START_OFFSET_CHECKPOINT_FILE, log.topic, log.partition);
    trash.manifest.pending = {
      checkpoint: { file: LOG_START_OFFSET_CHECKPOINT_FILE, topic: log.topic, partition: log.partition, before: startBefore === null ? null : startBefore.toString(), after: newStart.toString() },
      leaderEpochText: epochChanged ? epochText : null,
    };
    trash.save();

    // 4. Commit: the new log start offset.
    const change = setCheckpointEntry(logDir, LOG_START_OFFSET_CHECKPOINT_FILE, log.topic, log.partition, newStart, steps);
    committed = true;
    trash.manifest.checkpoints.push(change);
  } catch (err) {
    if (err instanceof SimulatedCrash) throw err;
    if (!committed) {
      for (const p of created) {
        try {
          steps.unlink('delete-file', p);
        } catch {
          /* best effort */
        }
      }
      trash?.discard();
      try {
        unlinkSync(join(logDir, LOG_START_OFFSET_CHECKPOINT_FILE + '.tmp'));
      } catch {
        /* not there */
      }
      if (err instanceof KlxError) throw err;
      throw ioErrorOf(err, dir, 'retention (nothing was changed)');
    }
    throw err;
  }

  // After the commit point: roll forward.
  const entry = trash!;
  const failures: string[] = [];
  const attempt = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof SimulatedCrash) throw err;
      failures.push(`${what}: ${(ioErrorOf(err, dir, what) as KlxError).message}`);
    }
  };
  if (epochChanged && epochText !== null) {
    attempt('leader-epoch-checkpoint', () => {
      steps.writeCheckpoint(epochPath, epochText);
      entry.manifest.metadataFiles.push({ name: LEADER_EPOCH_CHECKPOINT_FILE, afterCrc32c: crc32c(Buffer.from(epochText)), afterSize: Buffer.byteLength(epochText), existedBefore: true });
    });
  }
  progress('retention: delete', 0, d.deleted.length);
  d.deleted.forEach((seg, i) => {
    attempt(`deleting segment ${seg.baseOffset}`, () => deleteSegmentFiles(dir, seg.baseOffset, steps, [join(dir, segmentFileName(seg.baseOffset, '.snapshot'))]));
    progress('retention: delete', i + 1, d.deleted.length);
  });
  attempt('fsync of the partition folder', () => steps.fsyncDir(dir));
  attempt('trash manifest', () => entry.commit(`retention: ${d.deleted.length} segment(s) deleted, log start offset ${d.logStartOffsetBefore} → ${newStart}`));
  if (failures.length > 0) {
    // A broker removes them at its next retention check (UnifiedLog.deleteLogStartOffsetBreachedSegments).
    throw new KlxError('io-error', `retention committed (log start offset ${newStart}) but could not finish: ${failures.join('; ')}. The files left below the log start offset are no longer readable and a broker removes them.`, { file: dir });
  }
  return [entry.manifest.id];
}
