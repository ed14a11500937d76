/**
 * JSON-safe domain types of the Cleanup API (`cleanup.*` methods): retention and compaction plans
 * and measured results, per partition, as zod schemas (the contract's building blocks) with their
 * TypeScript types. They mirror the engine's `CleanerReport` (`src-main/engine/cleaner/cleaner-plan.ts`)
 * and trash entries (`trash.ts`).
 *
 * Wire conventions (see `wire.ts`): offsets and timestamps (ms since the epoch) are int64 decimal
 * strings; byte sizes, record and batch counts are plain numbers; offset ranges are inclusive
 * `{first, last}` pairs. Field names are Kafka's (baseOffset, logStartOffset, logEndOffset,
 * highWatermark, cleanup.policy...).
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */
import { z } from 'zod';
import { count, errorInfoSchema, int64, isoTime, pathText } from './wire.ts';
import { offsetText } from './log-types.ts';

/** Why records were removed (the engine's `RemovalReason`), in the order reports list them. */
export const REMOVAL_REASONS = ['retention', 'superseded', 'tombstone', 'keyless', 'aborted', 'marker'] as const;
export const removalReason = z.enum(REMOVAL_REASONS);
export type RemovalReason = z.infer<typeof removalReason>;

/** What each removal reason means, in a sentence for people (Kafka's terms). */
export const REMOVAL_REASON_TEXT: Record<RemovalReason, string> = {
  retention: 'whole segments deleted by retention (retention.ms, retention.bytes or the log start offset)',
  superseded: 'a later record with the same key exists (compaction keeps the latest value per key)',
  tombstone: 'tombstones (null value) past their delete horizon (delete.retention.ms)',
  // Cleaner.shouldRetainRecord drops a keyless record and counts it in CleanerStats.invalidMessage.
  keyless: 'records without a key (a compacted topic cannot keep them; Kafka counts them as invalid)',
  aborted: 'data of aborted transactions',
  marker: 'transaction markers that no longer guard any data, past their delete horizon',
};

/** The two rule sets of the compactor: Kafka ≥ 3.1, or the textbook model. */
export const CLEANER_RULES = ['kafka', 'classic'] as const;
export const cleanerRules = z.enum(CLEANER_RULES);

/** The cleanup operations. */
export const cleanupOperation = z.enum(['retention', 'compaction']);
/** What made a trash entry: a cleanup run, or a `klx repair` / the Verify view's repair (its replaced files kept for Undo). */
export const trashOperation = z.enum(['retention', 'compaction', 'repair']);
export type CleanupOperation = z.infer<typeof cleanupOperation>;

/** An inclusive range of offsets `[first, last]`. */
export const offsetRange = z.object({ first: offsetText, last: offsetText });

/** One segment named in a report: its `.log` file, bytes, records and batches (counted from batch headers). */
export const cleanupSegment = z.object({
  baseOffset: offsetText,
  /** `.log` file name. */
  file: z.string(),
  /** `.log` bytes. */
  bytes: count,
  records: count,
  batches: count,
  /** Offset span `[first batch's baseOffset, last batch's lastOffset]`, null when empty. */
  firstOffset: offsetText.nullable(),
  lastOffset: offsetText.nullable(),
  /** Retention: the rule of UnifiedLog.deleteOldSegments that deletes this segment, and its evidence. */
  deletedBy: z.object({ rule: z.enum(['log-start-offset', 'retention.bytes', 'retention.ms']), evidence: z.string() }).optional(),
});

/** Totals over a set of segments. */
export const cleanupTotals = z.object({ segments: count, bytes: count, records: count, batches: count });

/** Records removed for one reason, with their offsets as inclusive ranges (at most 10,000 ranges; counts exact). */
export const removedRecords = z.object({
  reason: removalReason,
  records: count,
  ranges: z.array(offsetRange),
  /** More ranges than listed (the count stays exact). */
  truncated: z.boolean(),
});

/** The compaction range of a partition (spec §13.1–§13.2) as the plan computed it. */
export const cleanableInfo = z.object({
  firstDirtyOffset: offsetText,
  /** The checkpointed first dirty offset was outside [logStartOffset, logEndOffset] and was reset. */
  checkpointReset: z.boolean(),
  firstUncleanableOffset: offsetText,
  /** What bounds the cleanable range. */
  uncleanableReason: z.enum(['active-segment', 'last-stable-offset', 'min-compaction-lag']),
  lastStableOffset: offsetText,
  /** `.log` bytes below the first dirty offset. */
  cleanBytes: count,
  /** `.log` bytes of the cleanable (dirty) section. */
  cleanableBytes: count,
  /** cleanableBytes / (cleanBytes + cleanableBytes). */
  dirtyRatio: z.number(),
  minCleanableDirtyRatio: z.number(),
  /** How long past max.compaction.lag.ms the oldest dirty segment is, ms (0: not overdue). */
  maxCompactionDelayMs: z.number(),
  /** max.compaction.lag.ms forces a clean now, whatever the ratio. */
  mustCleanNow: z.boolean(),
  /** A broker's cleaner would pick this log now (LogCleanerManager.grabFilthiestCompactedLog). */
  brokerWouldClean: z.boolean(),
  /** Why a broker never compacts this topic (its cleanup.policy has no `compact`: LogCleanerManager.grabFilthiestCompactedLog), or null. */
  brokerNeverCompacts: z.string().nullable(),
});

/** The report of a retention or compaction plan (`dryRun: true`) or run (measured afterwards) for one partition. */
export const cleanupReport = z.object({
  operation: cleanupOperation,
  dryRun: z.boolean(),
  partitionDir: z.string(),
  topic: z.string(),
  partition: count,
  /** The clock the decisions used, ms since the epoch. */
  now: int64,
  /** Compaction only. */
  rules: cleanerRules.nullable(),
  /** Nothing would be (or was) deleted, rewritten or created. */
  nothingToDo: z.boolean(),
  /** Why: sentences explaining the decisions. */
  notes: z.array(z.string()),
  segments: z.object({ deleted: z.array(cleanupSegment), rewritten: z.array(cleanupSegment), created: z.array(cleanupSegment) }),
  /** Totals over the affected segments only: deleted + rewritten before, created after. */
  before: cleanupTotals,
  after: cleanupTotals,
  log: z.object({
    /** Whole-partition `.log` bytes (what retention.bytes measures). */
    bytesBefore: count,
    bytesAfter: count,
    logStartOffsetBefore: offsetText,
    logStartOffsetAfter: offsetText,
    logEndOffset: offsetText,
    highWatermark: offsetText,
  }),
  /** Per reason, in {@link REMOVAL_REASONS} order; only reasons that removed something. */
  removed: z.array(removedRecords),
  /** Records removed, all reasons. */
  removedTotal: count,
  /** Offsets that held a record and hold none afterwards, inside the log (compaction; retention removes a prefix). */
  holes: z.array(offsetRange),
  holesTruncated: z.boolean(),
  /** Compaction only. */
  cleanable: cleanableInfo.nullable(),
  /** Compaction only: cleaning rounds (more than one when the offset map fills up). */
  passes: count.nullable(),
  /** Compaction only: keyless records removed (Kafka's "invalid messages"). */
  invalidMessages: count.nullable(),
  /** Compaction only: the cleaner-offset-checkpoint entry before and after. */
  cleanerCheckpoint: z.object({ before: offsetText.nullable(), after: offsetText.nullable() }).nullable(),
  /** Checkpoint files of the log directory the run writes (or wrote). */
  checkpointsWritten: z.array(z.string()),
  /** Run only: the trash entries holding the replaced files (Undo restores them). */
  trashEntries: z.array(z.string()),
});

/**
 * One cleaner decision (the engine's `CleanerDecision`, `src-main/engine/cleaner/decisions.ts`): a
 * record, batch, segment or folded range of records with its verdict, reason code (e.g.
 * `superseded`, `tombstone-until-horizon`, `retention-time`) and one evidence sentence with the
 * figures used.
 */
export const cleanerDecision = z.object({
  subject: z.enum(['record', 'batch', 'segment', 'range']),
  offset: int64,
  lastOffset: int64.nullable(),
  segment: int64,
  key: z.string().nullable(),
  /** Records: the value as text (null for a tombstone). */
  value: z.string().nullable(),
  timestamp: int64.nullable(),
  decision: z.enum(['keep', 'remove']),
  reason: z.string(),
  evidence: z.string(),
  /** Range rows: how many records the row stands for. */
  count: count.nullable(),
});
export type CleanerDecisionWire = z.infer<typeof cleanerDecision>;

/** The decisions of one plan or run: the first rows one by one, the rest folded into per-segment, per-reason ranges (`summarized`). */
export const decisionList = z.object({
  rows: z.array(cleanerDecision),
  /** Decisions made in all (rows kept one by one plus those folded into ranges). */
  total: count,
  summarized: z.boolean(),
});
export type DecisionListWire = z.infer<typeof decisionList>;

/** Decisions a `cleanup.plan` or `cleanup.run` with `explain` lists one by one per partition before folding the rest into ranges. */
export const CLEANUP_DECISION_LIMIT = 5000;

/** The outcome for one partition: its report, or why it could not be handled (left as it was unless the message says otherwise). */
export const cleanupPartitionOutcome = z.object({
  partitionDir: z.string(),
  /** Path relative to the folder the operation was given (`.` for the folder itself). */
  rel: z.string(),
  topic: z.string(),
  partition: count,
  report: cleanupReport.nullable(),
  error: errorInfoSchema.nullable(),
  /** With `explain`: the decision of every record, batch and segment the plan (or run) touched; null otherwise or on error. */
  decisions: decisionList.nullable(),
});

/** Topic config overrides as the user typed them: Kafka name → value text (validated by the engine's parser). */
export const configOverrides = z.record(z.string().max(100), z.string().max(200));

/** The request of `cleanup.plan` (and, extended with `planId`, of `cleanup.run`). Unknown fields are refused. */
export const cleanupPlanRequest = z.strictObject({
  /** A partition folder, or a log directory / folder of log directories for all its partitions. */
  dir: pathText,
  operation: cleanupOperation,
  /** Topic config overrides (`retention.ms`, `delete.retention.ms`, `cleanup.policy`...); invalid values are refused with `invalid-config` naming the key. */
  config: configOverrides.default({}),
  /** The clock, ms since the epoch (default: now at preview time). */
  now: int64.optional(),
  /** Compaction: `kafka` (default) or `classic`. */
  rules: cleanerRules.optional(),
  /** Retention: raise logStartOffset to this offset first (Kafka's DeleteRecords). */
  deleteBeforeOffset: int64.optional(),
  /** Compaction: clean only when a broker would (dirty ratio, max.compaction.lag.ms). */
  likeBroker: z.boolean().optional(),
  /**
   * Compaction: bytes of the offset map (log.cleaner.dedupe.buffer.size, default 128 MiB); at least
   * 48 and at most 2147483647, the cap Kafka's `LogCleaner` puts on one cleaner thread's map.
   */
  dedupeBufferSize: z
    .number()
    .int()
    .min(48, { message: 'dedupeBufferSize must be at least 48 bytes (two offset-map entries)' })
    .max(2147483647, { message: 'dedupeBufferSize must be at most 2147483647 bytes: Kafka caps one cleaner thread\'s offset map (log.cleaner.dedupe.buffer.size / log.cleaner.threads) at Int.MaxValue' })
    .optional(),
  /**
   * Compaction: the offset map's key digest, `murmur3` (MurmurHash3 x86_128, the default, cheaper) or
   * `md5` (Kafka's `SkimpyOffsetMap`). MurmurHash3 has seed-independent multicollisions: keys crafted
   * to collide under it could make the default drop a record a broker keeps; with `md5` the survivors
   * are a broker's whatever the keys.
   */
  keyHash: z.enum(['murmur3', 'md5']).optional(),
  /** Also list the cleaner's decisions per record, batch and segment (at most {@link CLEANUP_DECISION_LIMIT} rows one by one per partition, the rest summarised per segment and reason). */
  explain: z.boolean().optional(),
});

/** The request of `cleanup.run`: the previewed request and the preview's `planId` (refused as stale when the files or settings changed since). */
export const cleanupRunRequest = cleanupPlanRequest.extend({ planId: z.string().min(1).max(200) });

/** What `cleanup.plan` and `cleanup.run` both answer: the plan (or the run) of one folder. */
export const cleanupOutcome = z.object({
  /** Identifies the preview and the files it saw (names, sizes, mtimes, checkpoint entries); `cleanup.run` needs it. */
  planId: z.string(),
  /** The real folder previewed (or run). */
  dir: z.string(),
  operation: cleanupOperation,
  /** The clock the plan used, ms since the epoch (the run uses the same). */
  now: int64,
  /** Where a run keeps the replaced files for Undo. */
  trashDir: z.string(),
  /** One outcome per partition: planned by `cleanup.plan`, measured after `cleanup.run`. */
  partitions: z.array(cleanupPartitionOutcome),
});

/** One run of a partition folder's history (kept with the trash; `src-main/engine/cleaner/run-history.ts`). */
export const cleanupRunRecord = z.object({
  runId: z.string(),
  /** When the run finished (wall clock). */
  at: isoTime,
  operation: cleanupOperation,
  rules: cleanerRules.nullable(),
  /** The clock its decisions used, ms since the epoch. */
  now: int64,
  /** What changed, e.g. "2 segment(s) (10 records) → 1 segment(s) (5 records)". */
  summary: z.string(),
  logStartOffsetBefore: offsetText,
  logStartOffsetAfter: offsetText,
  /** Records removed per reason (counted from the ranges the history kept). */
  removed: z.array(z.object({ reason: removalReason, records: count })),
  /** The removed offsets as inclusive ranges (at most 50 listed; `removedRanges` counts them all). */
  ranges: z.array(offsetRange.extend({ reason: removalReason })),
  removedRanges: count,
  /** A later undo reversed it. */
  undone: z.boolean(),
});
export type CleanupRunRecord = z.infer<typeof cleanupRunRecord>;

/** The run that removed an offset, per the history: "removed by the compaction of 2026-12-01 10:02 UTC (superseded by offset 4 (key k1))". */
export const holeRunCause = z.object({
  offset: offsetText,
  runId: z.string(),
  at: isoTime,
  operation: cleanupOperation,
  reason: removalReason,
  /** The record's evidence when the run collected its decisions. */
  evidence: z.string().nullable(),
  text: z.string(),
});
export type HoleRunCause = z.infer<typeof holeRunCause>;

/** One trash entry: the files a run replaced in one partition, kept so Undo can put them back. */
export const trashEntry = z.object({
  id: z.string(),
  runId: z.string(),
  operation: trashOperation,
  /** `committed` once the run changed the partition; `prepared` for a run that did not finish. */
  state: z.enum(['prepared', 'committed']),
  partitionDir: z.string(),
  topic: z.string(),
  partition: count,
  createdAt: isoTime,
  /** Bytes of the kept files. */
  bytes: count,
  /** Files kept. */
  files: count,
  /** What the run did, e.g. "retention: 2 segment(s) deleted, log start offset 0 → 120". */
  summary: z.string(),
});

/** The latest run under a folder, which `cleanup.undo` would reverse. */
export const undoableRun = z.object({
  runId: z.string(),
  operation: trashOperation,
  createdAt: isoTime,
  partitionDirs: z.array(z.string()),
  /** Bytes the trash holds for it. */
  bytes: count,
});

/** One undone trash entry. */
export const undoneEntry = z.object({
  id: z.string(),
  operation: trashOperation,
  partitionDir: z.string(),
  /** Files put back into the partition folder. */
  restored: z.array(z.string()),
  /** Files of the run removed from the partition folder. */
  removed: z.array(z.string()),
  /** Checkpoint entries put back (`file: after → before`). */
  checkpoints: z.array(z.string()),
  notes: z.array(z.string()),
});

/** Progress phases a cleanup job reports (besides the engine's own: `build offset map`, `clean`, `swap`, `retention: …`). */
export const PLAN_PHASE = 'planning';

export type OffsetRange = z.infer<typeof offsetRange>;
export type CleanupSegment = z.infer<typeof cleanupSegment>;
export type CleanupTotals = z.infer<typeof cleanupTotals>;
export type RemovedRecords = z.infer<typeof removedRecords>;
export type CleanableInfo = z.infer<typeof cleanableInfo>;
export type CleanupReport = z.infer<typeof cleanupReport>;
export type CleanupPartitionOutcome = z.infer<typeof cleanupPartitionOutcome>;
export type TrashEntry = z.infer<typeof trashEntry>;
export type UndoableRun = z.infer<typeof undoableRun>;
export type UndoneEntry = z.infer<typeof undoneEntry>;
