/**
 * JSON-safe wire types of the `edit.*` methods (appending records, rolling segments), as zod
 * schemas with their TypeScript types. The main process drives the engine's crash-safe writer
 * (`src-main/engine/log/partition-writer.ts`) with them; the renderer's Edit view builds them.
 *
 * Wire conventions (see `wire.ts`): offsets and timestamps (ms since the epoch) are int64 decimal
 * strings; byte strings travel either as UTF-8 text (`{text}`) or as standard base64 (`{base64}`);
 * sizes and positions are plain numbers of bytes.
 *
 * Size limits (checked by the handler before anything is decoded, see {@link EDIT_LIMITS}): at most
 * 16 MiB of key + value + header bytes per record, 64 MiB per request, 10,000 records per batch.
 * The topic's own `max.message.bytes` (Kafka's default 1 MiB) usually refuses far smaller batches;
 * the preview says so. The loopback bridge (browser transport) caps an HTTP request body at 90 MiB
 * (`MAX_BODY_BYTES`), enough for 64 MiB as base64.
 *
 * No Node or DOM imports: shared by the main process and the renderer.
 */
import { z } from 'zod';
import { count, int64, pathText } from './wire.ts';

/** The request limits of `edit.preview` / `edit.append`, in bytes (decoded) and records. */
export const EDIT_LIMITS = Object.freeze({
  /** Key + value + header keys and values of one record, decoded: 16 MiB. */
  recordBytes: 16 * 1024 * 1024,
  /** All records of one request, decoded: 64 MiB. */
  requestBytes: 64 * 1024 * 1024,
  /** Records in one batch. */
  records: 10_000,
  /** Headers of one record. */
  headers: 1_000,
});

/** Longest base64 text that can hold {@link EDIT_LIMITS.recordBytes} bytes (schema bound; the exact byte check comes later). */
const MAX_BASE64_CHARS = Math.ceil(EDIT_LIMITS.recordBytes / 3) * 4;

/** Standard base64 (RFC 4648 §4, padded), as `log.recordValue` returns it. */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A byte string as the composer sends it: UTF-8 text, standard base64 (for binary data), or null
 * (a record without key, a tombstone's value, a header without value).
 */
export const editBytes = z.union([
  z.null(),
  z.strictObject({ text: z.string().max(EDIT_LIMITS.recordBytes) }),
  z.strictObject({
    base64: z
      .string()
      .max(MAX_BASE64_CHARS)
      .refine((s) => BASE64_PATTERN.test(s), 'not valid base64 (standard alphabet A–Z a–z 0–9 + /, padded with =)'),
  }),
]);

/** One record header: a UTF-8 key (never null, as in Kafka: RecordHeader) and a value. */
export const editHeader = z.strictObject({ key: z.string().max(EDIT_LIMITS.recordBytes), value: editBytes });

/** One record of the batch to append. */
export const editRecord = z.strictObject({
  /** null: a record without key (a compacted topic refuses it, as a broker does: LogValidator.validateKey). */
  key: editBytes,
  /** null: a tombstone (set `tombstone` too, to say so). */
  value: editBytes,
  headers: z.array(editHeader).max(EDIT_LIMITS.headers).default([]),
  /** CreateTime in ms since the epoch (−1 = none); absent: the request's `now`. Ignored by LogAppendTime topics. */
  timestamp: int64.optional(),
  /** A delete marker: the value must then be null. */
  tombstone: z.boolean().default(false),
});

/** Codecs of a v2 batch (Kafka's `CompressionType`, codec-id order). */
export const editCompression = z.enum(['none', 'gzip', 'snappy', 'lz4', 'zstd']);

/** How a batch's timestamps are stamped (topic config `message.timestamp.type`). */
export const editTimestampType = z.enum(['CreateTime', 'LogAppendTime']);

/** Idempotent-producer fields of the batch (without them: producerId −1, no sequence). */
export const editProducer = z.strictObject({
  producerId: int64,
  producerEpoch: z.number().int().min(0).max(32767).default(0),
  baseSequence: z.number().int().min(0).max(2147483647).default(0),
});

/** The request of `edit.preview` (and, extended with `fingerprint`, of `edit.append`): one batch. Unknown fields are refused. */
export const editPreviewRequest = z.strictObject({
  /** The partition folder (the `dir` of a partition summary). */
  dir: pathText,
  records: z.array(editRecord).min(1).max(EDIT_LIMITS.records),
  compression: editCompression.default('none'),
  /**
   * One-off override of the topic's `message.timestamp.type` for this batch (as `klx append --config
   * message.timestamp.type=…`); absent: the topic's value.
   */
  timestampType: editTimestampType.optional(),
  producer: editProducer.optional(),
  /**
   * The writer's clock in ms: the timestamp of records without one, and the append time of a
   * LogAppendTime batch. Absent: the time of the call. `edit.preview` answers the value it used;
   * send it back with `edit.append` so the append writes exactly what was previewed.
   */
  now: int64.optional(),
  /**
   * Write a CreateTime outside [now − message.timestamp.before.max.ms, now + message.timestamp.after.max.ms], which a
   * broker refuses (LogValidator.validateTimestamp; after = 1 h by default since Kafka 4.0), as `klx append
   * --allow-timestamp-out-of-range` does. Absent or false: such a batch is refused (`invalid-record`).
   */
  allowTimestampOutOfRange: z.boolean().optional(),
});

/** The request of `edit.append`: the previewed batch and the preview's `fingerprint` (refused as stale when the partition changed since). */
export const editAppendRequest = editPreviewRequest.extend({ fingerprint: z.string().min(1).max(200) });

/** Why a new segment is rolled before the batch (Kafka `LogSegment.shouldRoll`, checked in this order). */
export const rollReason = z.enum(['segment.bytes', 'segment.ms', 'max.compaction.lag.ms', 'index-full', 'time-index-full', 'offset-overflow', 'explicit']);

/** Who holds the partition's writer lock (`klx-writer.lock`) right now, as a sentence; `stale` when its process is gone (it is taken over). */
export const lockState = z.object({ holder: z.string(), stale: z.boolean() });

/** Where an appended batch goes (or went): what `edit.preview` and `edit.append` both answer. */
const batchPlacement = z.object({
  /** The partition folder. */
  dir: z.string(),
  /** First offset of the batch (= logEndOffset before the append). */
  baseOffset: int64,
  lastOffset: int64,
  recordCount: count,
  /** Batch size in bytes (12 + batchLength), after compression: the bytes written to the `.log`. */
  size: count,
  /** Byte position of the batch in its segment's `.log`. */
  position: count,
  /** The segment receiving the batch: base offset, `.log` path (absolute) and file name. */
  segmentBaseOffset: int64,
  segmentFile: z.string(),
  segmentName: z.string(),
});

/** What `edit.preview` answers: exactly what `edit.append` will do with the same request. */
export const editPreview = batchPlacement.extend({
  topic: z.string(),
  partition: count,
  /** True when a new segment is created first (rolled, or the partition has none). */
  newSegment: z.boolean(),
  /** Why the active segment is rolled first, or null. */
  rollReason: rollReason.nullable(),
  /** The roll rule in words with the numbers it compared (null when no roll). */
  rollExplanation: z.string().nullable(),
  logEndOffsetBefore: int64,
  logEndOffset: int64,
  /** The active segment before the append (null: the partition has no segment yet). */
  activeSegment: z.object({ baseOffset: int64, name: z.string(), size: count }).nullable(),
  timestampType: editTimestampType,
  /** Where `timestampType` comes from: the topic config, or this request's override. */
  timestampTypeSource: z.enum(['topic', 'request']),
  /** The batch's maxTimestamp (ms). */
  maxTimestamp: int64,
  /** The clock the append uses (ms): send it back with `edit.append`. */
  now: int64,
  compression: editCompression,
  partitionLeaderEpoch: z.number().int(),
  /** An offset-index entry `(lastOffset → position)` is added (Kafka: more than index.interval.bytes since the last one, LogSegment.append). */
  indexEntry: z.boolean(),
  /** A `leader-epoch-checkpoint` entry added by this batch (a fresh log's first batch). */
  leaderEpochEntry: z.object({ epoch: z.number().int(), startOffset: int64 }).nullable(),
  /** The log dir's `.kafka_cleanshutdown` is removed first (a broker then recovers the segments from the recovery point on: LogLoader.recoverLog). */
  removesCleanShutdownMarker: z.boolean(),
  /** Set when `allowTimestampOutOfRange` let through a CreateTime a broker refuses: which brokers refuse the batch and why (LogValidator.validateTimestamp). */
  brokerRefusal: z.string().nullable(),
  /** The topic limits the batch was checked against (bytes, ms). */
  limits: z.object({ segmentBytes: count, maxMessageBytes: count, segmentMs: int64, indexIntervalBytes: count, cleanupPolicy: z.array(z.string()) }),
  /** Set when another writer holds the lock now: the append would be refused with `locked` (unless `stale`). */
  lock: lockState.nullable(),
  /** Identifies the partition's state and this exact request; `edit.append` refuses another state ("preview again"). */
  fingerprint: z.string(),
});

/** What `edit.append` answers once the batch is fsynced and the checkpoints updated. */
export const editAppendResult = batchPlacement.extend({
  /** A new segment was created first. */
  rolled: z.boolean(),
  rollReason: rollReason.nullable(),
  logEndOffset: int64,
  maxTimestamp: int64,
  /** When a stale lock (its process gone) was taken over: whose it was. */
  tookOverStaleLock: z.string().nullable(),
});

/** What `edit.rollPreview` and `edit.roll` answer (Kafka `UnifiedLog.roll`). */
export const editRollResult = z.object({
  dir: z.string(),
  /** False when nothing is (or was) rolled: the active segment is empty (see `note`). */
  rolled: z.boolean(),
  note: z.string().nullable(),
  /** The segment that was active before, or null without segments. */
  previousSegmentBaseOffset: int64.nullable(),
  previousSegmentName: z.string().nullable(),
  /** The new active segment: base offset = logEndOffset, its `.log` path and name. */
  segmentBaseOffset: int64,
  segmentFile: z.string(),
  segmentName: z.string(),
  /** The previous segment's final time-index entry (its largest timestamp and the offset holding it). */
  finalTimeIndexEntry: z.object({ timestamp: int64, offset: int64 }).nullable(),
  logEndOffset: int64,
  removesCleanShutdownMarker: z.boolean(),
  lock: lockState.nullable(),
  /** `edit.rollPreview` only (empty after `edit.roll`): pass it to `edit.roll`. */
  fingerprint: z.string(),
  tookOverStaleLock: z.string().nullable(),
});

export type EditBytes = z.infer<typeof editBytes>;
export type EditHeader = z.input<typeof editHeader>;
export type EditRecord = z.input<typeof editRecord>;
export type EditCompression = z.infer<typeof editCompression>;
export type EditTimestampType = z.infer<typeof editTimestampType>;
export type RollReason = z.infer<typeof rollReason>;
export type EditPreview = z.infer<typeof editPreview>;
export type EditAppendResult = z.infer<typeof editAppendResult>;
export type EditRollResult = z.infer<typeof editRollResult>;
