/**
 * JSON-safe domain types of the explorer's read side (`log.*` methods): partitions, segments,
 * batches, records, offset holes, findings and search matches, as zod schemas (the contract's
 * building blocks) with their TypeScript types.
 *
 * Wire conventions (see `wire.ts`): offsets, timestamps (ms since the epoch) and producer ids are
 * int64 decimal strings; byte strings are base64; byte positions and sizes are plain numbers.
 * Field names are Kafka's (baseOffset, lastOffset, logStartOffset, logEndOffset, highWatermark...).
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */
import { z } from 'zod';
import { HOLE_CAUSES } from './hole-causes.ts';
import { base64, count, int64, isoTime, jsonValue } from './wire.ts';

/**
 * An int64 as a decimal string, checked by syntax only (no BigInt range check): used for the
 * fields of bulk rows (records, holes, batches), where `int64`'s range refinement would cost more
 * than reading the page. Values are produced from bigints by the main process, so always in range.
 */
export const offsetText = z.string().regex(/^-?(0|[1-9][0-9]{0,18})$/, 'expected a 64-bit integer as a decimal string');

// ---------------------------------------------------------------------------------------------
// Findings and problems

/** How bad a finding is: `error` (data or an index a reader trusts is wrong), `warning` (a broker repairs or tolerates it), `info`. */
export const severity = z.enum(['error', 'warning', 'info']);

/** One problem or fact about a partition's files (from `quickCheckPartition` / `verifyPartition`). `file` absolute, `position` a byte position in it. */
export const finding = z.object({
  severity,
  /** A finding code of the engine's verifier, e.g. `crc-mismatch`, `missing-index`, `leftover-file`. */
  code: z.string(),
  file: z.string(),
  position: count.optional(),
  reason: z.string(),
  details: z.record(z.string(), jsonValue),
});

/** A problem noticed while opening (an unreadable checkpoint, a leftover or orphan file). */
export const openProblem = z.object({ code: z.string(), file: z.string(), position: count.optional(), reason: z.string() });

/** Damage met while reading records or batches: bytes that are not batches, undecodable batches. */
export const readProblem = z.object({ code: z.string(), file: z.string(), position: count, size: count, reason: z.string() });

// ---------------------------------------------------------------------------------------------
// Partitions

/** One topic config value and where it came from (Kafka name, value as text). */
export const configEntry = z.object({
  key: z.string(),
  value: z.string(),
  source: z.enum(['default', 'inferred', 'sidecar', 'override']),
});

/**
 * The dirty ratio of a compacted partition (spec §13.2): `cleanableBytes / (cleanBytes + cleanableBytes)`,
 * from `.log` sizes and the cleaner checkpoint (Kafka `LogCleanerManager.cleanableOffsets`). The first
 * uncleanable offset is bounded by the active segment and the high watermark (Kafka takes the last
 * stable offset, which would need a walk of the log and can only be lower, and with
 * `min.compaction.lag.ms` > 0 also the first segment newer than that lag, `findFirstUncleanableSegment`,
 * which is not applied here: with that setting the ratio shown can be above the broker's).
 */
export const dirtyRatio = z.object({
  /** The cleaner checkpoint, or logStartOffset when absent or out of [logStartOffset, logEndOffset]. */
  firstDirtyOffset: int64,
  /** True when the checkpoint was outside [logStartOffset, logEndOffset] and reset (a broker rewrites it to the log start offset when the cleaner next looks for a log to clean: LogCleanerManager.grabFilthiestCompactedLog, forceUpdateCheckpoint of cleanableOffsets). */
  checkpointReset: z.boolean(),
  /** Rounded down to a segment base offset. */
  firstUncleanableOffset: int64,
  uncleanableBound: z.enum(['active-segment', 'high-watermark']),
  /** Bytes of segments below the first dirty offset. */
  cleanBytes: count,
  /** Bytes of segments from the one holding the first dirty offset up to the first uncleanable one. */
  cleanableBytes: count,
  /** 0..1; 0 when both byte counts are 0. */
  ratio: z.number().min(0).max(1),
  /** The topic's min.cleanable.dirty.ratio. */
  minCleanableRatio: z.number(),
  /** ratio > min.cleanable.dirty.ratio (strict, as the broker compares: LogCleanerManager.grabFilthiestCompactedLog). */
  aboveMinimum: z.boolean(),
});

/** The facts behind a partition's health badge. */
export const partitionHealth = z.object({
  /** The worst finding: `ok` when there is none. */
  level: z.enum(['ok', 'info', 'warning', 'error']),
  errors: count,
  warnings: count,
  infos: count,
  /** CRCs are only known after a verify in this session (`unknown` before). */
  crc: z.enum(['unknown', 'ok', 'errors']),
  crcErrors: count,
  /** Findings about `.index` / `.timeindex` / `.txnindex` files (missing, corrupt, untrimmed, stale). */
  indexProblems: count,
  /** Leftover `.deleted` / `.cleaned` / `.swap` / `.tmp` files and orphan indexes. */
  leftoverFiles: count,
  /** When the last verify of this session ended, or null. */
  verifiedAt: isoTime.nullable(),
  /** The quick check's findings (and a verify's, once run), worst first; at most 200. */
  findings: z.array(finding),
  /** True when `findings` was cut at 200. */
  findingsTruncated: z.boolean(),
});

/** Record counts of a partition, once a `log.countRecords` job has run in this session. */
export const recordCounts = z.object({
  records: count,
  controlRecords: count,
  batches: count,
  emptyBatches: count,
});

/**
 * Leftovers of an interrupted cleaner, segment split or retention (`.swap`, `.cleaned`, `.deleted`)
 * and what a broker does with them at startup (Kafka's `LogLoader.load`): the explorer shows the
 * segments on disk, the pre-swap ones, until `klx repair` completes the swap.
 */
export const pendingSwaps = z.object({
  /** What is pending, what a broker does with it, what is shown meanwhile: one paragraph. */
  notice: z.string(),
  /** Valid `.log.swap` file names a broker renames to `.log` (LogLoader.load). */
  swapFiles: z.array(z.string()),
  /** Base offsets of the segments shown now that a broker deletes for the swaps (LogLoader.load, its second pass). */
  replacedSegments: z.array(int64),
  /** [from, to): the offsets whose segment files a broker deletes (LogLoader.load); null without a valid `.log.swap`. */
  range: z.object({ from: int64, to: int64 }).nullable(),
  /** `.swap` / `.cleaned` / `.deleted` file names a broker deletes (LogLoader.removeTempFilesAndCollectSwapFiles). */
  deletedFiles: z.array(z.string()),
});

/** A partition folder as listed by `log.open` and `log.partition`. */
export const partitionSummary = z.object({
  /** Absolute real path of the partition folder (pass it to the other `log.*` methods). */
  dir: z.string(),
  /** Folder name, e.g. `orders-3`. */
  name: z.string(),
  topic: z.string(),
  partition: count,
  /** `normal`, or a `-delete` / `-future` / `-stray` folder (spec §1.2). */
  kind: z.enum(['normal', 'delete', 'future', 'stray']),
  segmentCount: count,
  /** Sum of `.log` sizes, bytes. */
  logSize: count,
  /** Bytes of every file in the folder. */
  sizeOnDisk: count,
  logStartOffset: int64,
  logEndOffset: int64,
  /** Base offset of the first segment (below logStartOffset after DeleteRecords), or null without segments. */
  firstSegmentBaseOffset: int64.nullable(),
  highWatermark: int64.nullable(),
  recoveryPoint: int64.nullable(),
  cleanerCheckpoint: int64.nullable(),
  topicId: z.string().nullable(),
  policy: z.array(z.enum(['delete', 'compact'])),
  config: z.array(configEntry),
  /** Why values were inferred (e.g. "__consumer_offsets is compacted by the broker"). */
  configNotes: z.array(z.string()),
  leaderEpochs: z.array(z.object({ epoch: z.number().int(), startOffset: int64 })),
  problems: z.array(openProblem),
  /** Null when the folder holds no `.swap`, `.cleaned` or `.deleted` file. */
  pendingSwaps: pendingSwaps.nullable(),
  health: partitionHealth,
  /** Compacted topics only. */
  dirtyRatio: dirtyRatio.nullable(),
  /** Null until counted in this session (`log.countRecords`). */
  counts: recordCounts.nullable(),
});

/**
 * A partition folder listed but not read yet (`log.open` with `lazyAbove`): what its name says. Its
 * summary comes from `log.summaries` or `log.partition`.
 */
export const partitionRef = z.object({
  /** Absolute real path of the partition folder. */
  dir: z.string(),
  /** Folder name, e.g. `orders-3`. */
  name: z.string(),
  topic: z.string(),
  partition: count,
  kind: z.enum(['normal', 'delete', 'future', 'stray']),
});

/** A log directory (one entry of `log.dirs`) and its partitions. */
export const logDirSummary = z.object({
  path: z.string(),
  /** From `meta.properties`, when readable. */
  meta: z.object({ version: z.number().int().nullable(), clusterId: z.string().nullable(), nodeId: z.number().int().nullable() }).nullable(),
  cleanShutdown: z.boolean(),
  /** Unreadable checkpoint or meta.properties files. */
  problems: z.array(openProblem),
  /** Root entries klx does not open as partitions, and why (the reason says what a broker does with each: LogManager.loadLogs). */
  ignored: z.array(z.object({ name: z.string(), reason: z.string() })),
  partitions: z.array(partitionSummary),
  /** Partition folders not read yet (only from `log.open` with `lazyAbove`), in name order; empty otherwise. */
  pending: z.array(partitionRef),
});

// ---------------------------------------------------------------------------------------------
// Segments and batches

/** An index file of a segment: presence, size, entries, and its problems (from Kafka's sanity checks: OffsetIndex/TimeIndex/TransactionIndex.sanityCheck). */
export const indexFileInfo = z.object({
  file: z.string(),
  exists: z.boolean(),
  /** Bytes (0 when missing). */
  size: count,
  /** Real entries (the valid prefix; zero slots of a preallocated file excluded). */
  entries: count,
  health: z.enum(['ok', 'info', 'warning', 'error']),
  problems: z.array(finding),
});

/** One segment of a partition (spec §10.1). */
export const segmentRow = z.object({
  baseOffset: int64,
  /** Last offset of the last batch, or null for an empty segment. */
  lastOffset: int64.nullable(),
  /** Base offset of the first batch (above baseOffset after compaction), or null. */
  firstBatchOffset: int64.nullable(),
  /** `.log` bytes. */
  size: count,
  /** The `.log` file. */
  file: z.string(),
  modifiedAt: isoTime,
  /** maxTimestamp of the first batch (Kafka's segment "first batch timestamp", LogSegment.getFirstBatchTimestamp, spec §10.2), ms; null when empty or none. */
  firstTimestamp: int64.nullable(),
  /** Largest timestamp: the time index's last entry on a closed segment, else the last batch's maxTimestamp; ms or null. */
  lastTimestamp: int64.nullable(),
  lastTimestampSource: z.enum(['time-index', 'last-batch']).nullable(),
  active: z.boolean(),
  /** The whole segment lies below logStartOffset (not readable; retention deletes it). */
  belowLogStart: z.boolean(),
  index: indexFileInfo,
  timeIndex: indexFileInfo,
  txnIndex: indexFileInfo,
});

/** One entry of a `.log`: a v2 batch or a legacy message (flags and CRC state), or bytes that are not a batch. */
export const batchRow = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('batch'),
    position: count,
    /** Bytes on disk (12 + batchLength). */
    size: count,
    magic: z.number().int(),
    baseOffset: offsetText,
    lastOffset: offsetText,
    lastOffsetDelta: z.number().int(),
    recordCount: z.number().int(),
    compression: z.string(),
    timestampType: z.enum(['CreateTime', 'LogAppendTime', 'NoTimestampType']),
    baseTimestamp: offsetText,
    maxTimestamp: offsetText,
    producerId: offsetText,
    producerEpoch: z.number().int(),
    baseSequence: z.number().int(),
    partitionLeaderEpoch: z.number().int(),
    transactional: z.boolean(),
    control: z.boolean(),
    deleteHorizon: z.boolean(),
    /** Stored CRC (uint32). */
    crc: z.number().int().nonnegative(),
    crcValid: z.boolean(),
    /** CRC computed over the batch's bytes (uint32; Kafka's "computed crc", DefaultRecordBatch.ensureValid / LegacyRecord.ensureValid), null when not computed. */
    computedCrc: z.number().int().nonnegative().nullable(),
    /** The algorithm of `crc`: CRC-32C for magic 2 (`DefaultRecordBatch`), CRC-32 for magic 0/1 (`LegacyRecord`). */
    crcAlgorithm: z.enum(['CRC-32C', 'CRC-32']),
  }),
  z.object({
    kind: z.literal('damage'),
    position: count,
    size: count,
    /** `invalid-tail` (nothing valid follows) or `corrupt-region`. */
    type: z.enum(['invalid-tail', 'corrupt-region']),
    code: z.string(),
    reason: z.string(),
    /** Every byte is zero (a preallocated or crashed tail). */
    zeros: z.boolean(),
  }),
]);

// ---------------------------------------------------------------------------------------------
// Records and holes

/** The first bytes of a key, value or header value (base64) and its full size in bytes. */
export const bytesPreview = z.object({ base64, size: count });

/** Every cause of an offset hole (the holes module's vocabulary; the list lives in `hole-causes.ts`). */
export { HOLE_CAUSES };
export const holeCause = z.enum(HOLE_CAUSES);

/** A range of offsets holding no deliverable record, with its cause (`count` 0 for damage that takes no offset). */
export const holeRow = z.object({
  kind: z.literal('hole'),
  from: offsetText,
  /** Inclusive; from − 1 when `count` is 0. */
  to: offsetText,
  count: offsetText,
  cause: holeCause,
  detail: z.string(),
  segmentBaseOffset: offsetText.nullable(),
  /** Byte position in that segment's `.log`, when it applies. */
  position: count.optional(),
});

/** A control record's decoded key (and transaction marker fields). */
export const controlInfo = z.object({
  type: z.string(),
  typeId: z.number().int(),
  coordinatorEpoch: z.number().int().optional(),
});

/**
 * A key or value as the decode layer read it (main decodes; the renderer shows): the format used,
 * a one-line text (at most 512 characters; null when nothing decoded), the reason when it did not
 * decode (`unknown schema id 12`, `too large`), the Confluent schema id when framed.
 */
export const decodedSummary = z.object({
  format: z.string(),
  text: z.string().nullable(),
  error: z.string().optional(),
  schemaId: z.number().int().optional(),
});

/** A record as the records table shows it. */
export const recordRow = z.object({
  kind: z.literal('record'),
  offset: offsetText,
  timestamp: offsetText,
  timestampType: z.enum(['CreateTime', 'LogAppendTime', 'NoTimestampType']),
  key: bytesPreview.nullable(),
  value: bytesPreview.nullable(),
  headers: z.array(z.object({ key: z.string(), value: bytesPreview.nullable() })),
  /** Bytes the record takes in its (decompressed) batch. */
  size: count,
  batchBaseOffset: offsetText,
  batchLastOffset: offsetText,
  /** Byte position of the batch in its `.log`. */
  position: count,
  batchSize: count,
  segmentBaseOffset: offsetText,
  magic: z.number().int(),
  compression: z.string(),
  transactional: z.boolean(),
  producerId: offsetText,
  producerEpoch: z.number().int(),
  partitionLeaderEpoch: z.number().int(),
  crcValid: z.boolean().nullable(),
  /** The batch's stored CRC (uint32). */
  crc: z.number().int().nonnegative(),
  /** The CRC computed over the batch's bytes (uint32), null when not checked. */
  computedCrc: z.number().int().nonnegative().nullable(),
  /** CRC-32C for magic 2, CRC-32 for magic 0/1. */
  crcAlgorithm: z.enum(['CRC-32C', 'CRC-32']),
  /** Set on control records (COMMIT/ABORT markers, KRaft control records): never data. */
  control: controlInfo.nullable(),
  /** Data of an aborted transaction (read_uncommitted shows it; read_committed never returns it). */
  aborted: z.boolean(),
  /**
   * The batch's delete horizon in ms (KIP-534: a v2 batch with attribute bit 6 keeps it in its
   * baseTimestamp, set by the cleaner's first clean of its tombstones or marker); absent otherwise.
   */
  deleteHorizonMs: offsetText.optional(),
  /** The key and value decoded with the topic's formats (absent on control records). */
  keyDecoded: decodedSummary.optional(),
  valueDecoded: decodedSummary.optional(),
});

/** A row of the records table. */
export const tableRow = z.discriminatedUnion('kind', [recordRow, holeRow]);

/** Totals of holes per cause. */
export const holeTotal = z.object({
  cause: holeCause,
  ranges: count,
  /** Every offset of the cause's holes (a cut tail may claim offsets past logEndOffset; `below-log-start` lies before logStartOffset). */
  offsets: int64,
  /** Those inside [logStartOffset, logEndOffset): the totals' sum is `missingOffsets`. */
  offsetsInSpan: int64,
});

/** A bucket of the hole map: offsets [from, to) and how many of them are absent, per cause. */
export const holeBucket = z.object({
  from: offsetText,
  to: offsetText,
  /** Absent offsets per cause (only causes present). */
  absent: z.record(z.string(), count),
});

/** A search hit. */
export const searchMatch = z.object({
  /** The partition folder holding the record, its topic and partition number. */
  dir: z.string(),
  topic: z.string(),
  partition: z.number().int(),
  offset: offsetText,
  timestamp: offsetText,
  /** Where the text was found. */
  in: z.array(z.enum(['key', 'value', 'header'])),
  key: bytesPreview.nullable(),
  value: bytesPreview.nullable(),
  segmentBaseOffset: offsetText,
  aborted: z.boolean(),
  /** The key and value decoded with the topic's formats. */
  keyDecoded: decodedSummary.optional(),
  valueDecoded: decodedSummary.optional(),
});

export type Finding = z.infer<typeof finding>;
export type Severity = z.infer<typeof severity>;
export type OpenProblem = z.infer<typeof openProblem>;
export type ReadProblem = z.infer<typeof readProblem>;
export type DirtyRatio = z.infer<typeof dirtyRatio>;
export type PartitionHealth = z.infer<typeof partitionHealth>;
export type PendingSwaps = z.infer<typeof pendingSwaps>;
export type RecordCounts = z.infer<typeof recordCounts>;
export type PartitionSummary = z.infer<typeof partitionSummary>;
export type PartitionRef = z.infer<typeof partitionRef>;
export type LogDirSummary = z.infer<typeof logDirSummary>;
export type IndexFileInfo = z.infer<typeof indexFileInfo>;
export type SegmentRow = z.infer<typeof segmentRow>;
export type BatchRow = z.infer<typeof batchRow>;
export type BytesPreview = z.infer<typeof bytesPreview>;
export type HoleCause = z.infer<typeof holeCause>;
export type HoleRow = z.infer<typeof holeRow>;
export type RecordRow = z.infer<typeof recordRow>;
export type DecodedSummary = z.infer<typeof decodedSummary>;
export type TableRow = z.infer<typeof tableRow>;
export type HoleTotal = z.infer<typeof holeTotal>;
export type HoleBucket = z.infer<typeof holeBucket>;
export type SearchMatch = z.infer<typeof searchMatch>;

/** What each hole cause means, in a sentence a support engineer can act on. */
export const HOLE_CAUSE_TEXT: Record<HoleCause, string> = {
  'below-log-start': 'below logStartOffset: still on disk, not readable (DeleteRecords or retention)',
  'compacted-between-batches': 'removed by compaction (whole batches)',
  'compacted-in-batch': 'removed by compaction inside a batch (base and last offsets kept)',
  'control-record': 'taken by a control record (transaction marker)',
  'aborted-transaction': 'data of an aborted transaction',
  'empty-batch': 'a retained empty batch',
  'missing-segment': 'no segment holds these offsets (deleted or missing segment)',
  'corrupt-region': 'bytes that are not batches (damage)',
  'not-checked': "a batch not read: its records inflate past this tool's decompression bound (--max-inflated-bytes); not damage, a consumer reads it (CompletedFetch)",
  'truncated-tail': 'a cut batch at the end of a segment (crash or copy)',
};
