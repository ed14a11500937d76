/**
 * THE API contract between the renderer and the main process: one object, {@link contract}, from
 * which everything else is derived — the method-name list, the request/response TypeScript types,
 * the typed client {@link KlxApi}, the preload's exposed functions, the IPC channels, the HTTP
 * routes of the bridge and the handler registry's completeness check. Nothing is written twice.
 *
 * Each entry is made with {@link call} (answers at once) or {@link job} (long work: answers
 * `{jobId}` at once, then reports `job.progress` events and one `job.end` event carrying the result
 * described by `result`, or an {@link ErrorInfo}). Every entry states:
 * - `request`: zod schema of the argument (strict objects: unknown keys are refused);
 * - `response`: zod schema of the answer (for jobs always {@link jobStarted});
 * - `write`: true when the method changes files on disk; refused when the app/bridge is read-only;
 * - `job`: true for long work run by the job manager (cancellable through `job.cancel`).
 *
 * Adding a method: add one entry here, then its handler in `src-main/api/<domain>/<domain>.ts` (the domain
 * is the part of the name before the dot); TypeScript then refuses to compile until it exists.
 *
 * All schemas are JSON-safe by construction (see `wire.ts`; checked at compile time below and by
 * `test/api/contract.test.ts`). No Node or DOM imports here.
 */
import { z } from 'zod';
import type { ErrorInfo } from './errors.ts';
import { base64, count, errorInfoSchema, int64, isoTime, jsonValue, pathText, type Json } from './wire.ts';
import { cleanupOutcome, cleanupPartitionOutcome, cleanupRunRecord, holeRunCause, cleanupPlanRequest, cleanupRunRequest, trashEntry, undoableRun, undoneEntry } from './cleanup-types.ts';
import { batchRow, finding, holeBucket, holeRow, holeTotal, logDirSummary, partitionRef, partitionSummary, readProblem, searchMatch, segmentRow, tableRow } from './log-types.ts';
import { DEFAULT_SQL_LIMIT, MAX_SQL_LIMIT, sqlExportFormat, sqlExportResult, sqlOpenResult, sqlQueryResult } from './sql-types.ts';
import { commitHistoryResult, groupDescribeResult, groupsListResult, groupsOptions, partitionCommitsResult } from './groups-types.ts';
import { editAppendRequest, editAppendResult, editPreview, editPreviewRequest, editRollResult } from './edit-types.ts';
import { labInfo, lessonOutcome, lessonStateWire } from './lessons-types.ts';
import { folderChangedEvent, recentFolder, sessionClosedEvent } from './folder-types.ts';
import { folderVerifyRow, repairPlan } from './repair-types.ts';
import { choicesOfFolder, decodedRecord, decodeSide, formatChoices, formatInfo, formatName, userSchema } from './decode-types.ts';

/** The shape of one contract entry (what {@link call} and {@link job} build). */
export interface MethodSpec {
  /** One sentence for people: what the method does. */
  readonly doc: string;
  readonly request: z.ZodType;
  readonly response: z.ZodType;
  /** The final result of a job method (absent for plain calls). */
  readonly result?: z.ZodType;
  readonly write: boolean;
  readonly job: boolean;
}

/** A method that answers directly with `response`. */
function call<Q extends z.ZodType, S extends z.ZodType>(spec: {
  doc: string;
  request: Q;
  response: S;
  write: boolean;
}): { doc: string; request: Q; response: S; write: boolean; job: false } {
  return { ...spec, job: false };
}

/** A long-running method: answers {@link jobStarted} at once; `result` arrives in the `job.end` event. */
function job<Q extends z.ZodType, R extends z.ZodType>(spec: {
  doc: string;
  request: Q;
  result: R;
  write: boolean;
}): { doc: string; request: Q; response: typeof jobStarted; result: R; write: boolean; job: true } {
  return { ...spec, response: jobStarted, job: true };
}

/** A job identifier (opaque; a UUID today). */
export const jobId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'not a job id');

/** What a job method answers at once. */
export const jobStarted = z.object({ jobId });

/** The progress of a job: `done` of `total` units (`total` null when unknown) in phase `phase`, `bytes` read or written so far. */
export const jobProgress = z.object({
  phase: z.string().max(200),
  done: count,
  total: count.nullable(),
  bytes: count,
});

/** The state of a job in `job.list`. */
export const jobState = z.enum(['running', 'succeeded', 'failed', 'cancelled']);

/** One job as listed by `job.list`: its latest progress, timestamps and, once failed or cancelled, its error. */
export const jobSummary = z.object({
  jobId,
  method: z.string(),
  state: jobState,
  ...jobProgress.shape,
  startedAt: isoTime,
  endedAt: isoTime.nullable(),
  error: errorInfoSchema.nullable(),
});

/** A folder as suggested by `fs.complete`: its name and its full path (no trailing separator). */
export const dirEntry = z.object({ name: z.string(), path: z.string() });

const empty = z.strictObject({});

/** The contract. See the file comment for the meaning of each field. */
/** A lab id (see `src-main/engine/lessons/labs.ts`). */
const labIdText = z.string().regex(/^[a-z0-9-]{1,40}$/);

export const contract = {
  'app.info': call({
    doc: 'Application name, version, platform, transport, read-only flag and the demo folder, if any.',
    request: empty,
    response: z.object({
      name: z.string(),
      version: z.string(),
      /** Node's `process.platform` of the main process (`linux`, `darwin`, `win32`...). */
      platform: z.string(),
      transport: z.enum(['electron', 'bridge']),
      readOnly: z.boolean(),
      /** Absolute path of the bundled demo log directory, or null. */
      demoDir: z.string().nullable(),
      /** The bridge's fixed roots (`klx serve DIR`): only paths inside them are reachable. Empty when not fixed. */
      fixedRoots: z.array(z.string()),
    }),
    write: false,
  }),

  'app.decompressionBound': call({
    doc: "The bound on what one batch's records area may inflate to (bytes) for this app and its worker threads: null is the default (recordsCount × max.message.bytes, at most 256 MiB). A batch past it is reported as not checked, never as damage (a broker has no such bound). With `maxInflatedBytes` it sets the bound first (null: back to the default); reads, verifies and SQL tables made afterwards use it (cached SQL tables are rebuilt). Out of 1..2 GiB: `invalid-argument`.",
    request: z.strictObject({ maxInflatedBytes: count.nullable().optional() }),
    response: z.object({
      /** The bound set (bytes), or null for the default. */
      maxInflatedBytes: count.nullable(),
      /** The default's ceiling (268435456 bytes). */
      defaultCeilingBytes: count,
      /** The largest bound that may be set (2147483648 bytes). */
      maxBytes: count,
    }),
    write: false,
  }),

  'fs.complete': call({
    doc: 'Completes a partly typed folder path: the sub-folders of its directory whose names start with its last part. Lists directories only.',
    request: z.strictObject({
      /** What the user typed: absolute, `~`-relative or relative to the home folder. Ending with a separator lists that folder. */
      partial: pathText,
      /** At most this many entries (default 200). */
      limit: z.number().int().min(1).max(1000).default(200),
      /** Include names starting with a dot (default: only when the typed part starts with a dot). */
      hidden: z.boolean().default(false),
    }),
    response: z.object({
      /** The absolute folder that was listed, or null when it does not exist or cannot be read. */
      dir: z.string().nullable(),
      entries: z.array(dirEntry),
      /** True when more than `limit` entries matched. */
      truncated: z.boolean(),
    }),
    write: false,
  }),

  'session.open': call({
    doc: 'Opens a folder in this session: later path arguments must lie inside an opened folder. Adds it to the recent folders.',
    request: z.strictObject({ path: pathText }),
    response: z.object({
      /** The real path (symlinks resolved) of the opened folder. */
      path: z.string(),
      /** All folders opened in this session, in opening order. */
      opened: z.array(z.string()),
    }),
    write: false,
  }),

  'session.folders': call({
    doc: 'The folders opened in this session and the recent folders (most recent first).',
    request: empty,
    /**
     * `writeMode`: whether "Open for writing" is on (see session.setWriteMode). `recentFolders`: the
     * recent folders (as `recent`) with whether each can be opened now and why not.
     */
    response: z.object({ opened: z.array(z.string()), recent: z.array(z.string()), recentFolders: z.array(recentFolder), writeMode: z.boolean() }),
    write: false,
  }),

  'session.close': call({
    doc: 'Closes an opened folder: stops watching it, forgets what was cached about its partitions and emits `session.closed`; later path arguments inside it are refused (unless a fixed root holds them). Nothing on disk changes. Not opened: `not-found`.',
    request: z.strictObject({ path: pathText }),
    /** `opened`: the folders still opened, in opening order. */
    response: z.object({ opened: z.array(z.string()) }),
    write: false,
  }),

  'session.reload': call({
    doc: 'Reads an opened folder again: forgets what was cached about its partitions (opened segments and indexes, decoders, SQL tables, consumer groups) and takes a fresh listing for the folder watcher; the caller then reloads its views (log.open). Not opened: `not-found`.',
    request: z.strictObject({ path: pathText }),
    /** `dirs`: the partition folders under it whose caches were dropped. */
    response: z.object({ path: z.string(), dirs: z.array(z.string()) }),
    write: false,
  }),

  'session.setWriteMode': call({
    doc: 'Switches "Open for writing" for this session: write methods (cleanup.run, edit.append, ...) are refused with `read-only` until it is on. Refused with `read-only` when the app or bridge itself is read-only; switching it off is always allowed.',
    request: z.strictObject({ enabled: z.boolean() }),
    response: z.object({ enabled: z.boolean() }),
    write: false,
  }),

  'job.cancel': call({
    doc: 'Asks a running job to stop; it then ends with the error code `cancelled`. Unknown job: `not-found`.',
    request: z.strictObject({ jobId }),
    /** `cancelled` is false when the job had already ended. */
    response: z.object({ cancelled: z.boolean() }),
    write: false,
  }),

  'job.list': call({
    doc: 'Running jobs and the most recently ended ones, oldest first.',
    request: empty,
    response: z.object({ jobs: z.array(jobSummary) }),
    write: false,
  }),

  'demo.sleepJob': job({
    doc: 'A job that ticks `ticks` times, `intervalMs` apart, reporting progress (1 KiB of "bytes" per tick); for tests of the job machinery. `failAt` makes it fail at that tick.',
    request: z.strictObject({
      ticks: z.number().int().min(1).max(10_000).default(5),
      intervalMs: z.number().int().min(0).max(60_000).default(100),
      failAt: z.number().int().min(1).optional(),
    }),
    result: z.object({ ticks: count }),
    write: false,
  }),

  'demo.touch': call({
    doc: 'Sets the modification time of an existing file or folder inside an opened folder to now; the smallest write method, for tests of read-only mode, the write gate and path checks. Like every write it needs "Open for writing" (session.setWriteMode): else `read-only`.',
    request: z.strictObject({ path: pathText }),
    response: z.object({ path: z.string() }),
    write: true,
  }),

  // -------------------------------------------------------------------------------------------
  // log.*: the explorer's read side (handlers in src-main/api/log/log.ts; types in log-types.ts).
  // `dir` is always a partition folder inside an opened folder (the `dir` of a partition summary).

  'log.open': call({
    doc: 'Opens a log directory, a partition folder or a folder of log directories read-only (registering it in the session like session.open) and summarizes every partition: offsets, checkpoints, config, health facts, dirty ratio.',
    request: z.strictObject({
      path: pathText,
      /**
       * When the folder holds more partitions than this, answer without reading any partition
       * folder: every partition is listed in its log directory's `pending` (name, topic, partition)
       * for `log.summaries` to fill in. Default: every partition is summarized.
       */
      lazyAbove: count.optional(),
    }),
    response: z.object({
      /** The real path registered in the session. */
      root: z.string(),
      /** All folders opened in this session. */
      opened: z.array(z.string()),
      logDirs: z.array(logDirSummary),
    }),
    write: false,
  }),

  'log.summaries': call({
    doc: 'The summaries of up to 100 partitions of opened folders (what log.open gives for each: offsets, checkpoints, config, health facts, dirty ratio), for a tree opened with lazyAbove; a partition that cannot be read is listed in failed with the reason.',
    request: z.strictObject({ dirs: z.array(pathText).min(1).max(100) }),
    response: z.object({
      partitions: z.array(partitionSummary),
      /** Partitions that could not be read (removed since listed, unreadable) and the error. */
      failed: z.array(z.object({ dir: z.string(), error: errorInfoSchema })),
    }),
    write: false,
  }),

  'log.partition': call({
    doc: 'One partition: its summary and one row per segment (offsets, size, first/last timestamp, active or closed, index and time-index entries and health).',
    request: z.strictObject({ dir: pathText }),
    response: z.object({ partition: partitionSummary, segments: z.array(segmentRow) }),
    write: false,
  }),

  'log.batches': call({
    doc: 'A page of the batches of one segment from a byte position: position, offsets, codec, producer, flags, CRC state; bytes that are not batches as damage rows.',
    request: z.strictObject({
      dir: pathText,
      /** The segment's base offset. */
      segment: int64,
      /** Byte position of the first entry to list (a batch start; default 0). */
      fromPosition: count.default(0),
      limit: z.number().int().min(1).max(2000).default(200),
    }),
    response: z.object({
      segment: int64,
      file: z.string(),
      /** `.log` bytes. */
      fileSize: count,
      rows: z.array(batchRow),
      /** Position of the next page, or null at the end of the segment. */
      nextPosition: count.nullable(),
    }),
    write: false,
  }),

  'log.records': call({
    doc: 'A page of the records table: records (control records and aborted data flagged) with hole rows naming the cause of every absent offset, and cursors for the next page both ways.',
    request: z.strictObject({
      dir: pathText,
      /** Forward: the first offset wanted; backward: the offset the page ends before. `start` = logStartOffset, `end` = logEndOffset. */
      from: z.union([int64, z.enum(['start', 'end'])]).default('start'),
      direction: z.enum(['forward', 'backward']).default('forward'),
      /** Records per page (hole rows come on top). */
      limit: z.number().int().min(1).max(500).default(200),
      isolation: z.enum(['read_uncommitted', 'read_committed']).default('read_uncommitted'),
      /** Bytes of each key, value and header value sent as a preview. */
      previewBytes: z.number().int().min(0).max(4096).default(256),
    }),
    response: z.object({
      /** In offset order. */
      rows: z.array(tableRow),
      /** The resolved `from`. */
      from: int64,
      /** Where the next forward page starts (`from` of a forward call), or null at the read limit. */
      nextCursor: int64.nullable(),
      /** Where the previous page ends (`from` of a backward call), or null at the start of the log. */
      prevCursor: int64.nullable(),
      atStart: z.boolean(),
      atEnd: z.boolean(),
      logStartOffset: int64,
      logEndOffset: int64,
      firstSegmentBaseOffset: int64.nullable(),
      /** Reading stops here: the log end offset, or the last stable offset for read_committed. */
      readLimit: int64,
      /** Damage met while reading, with file and byte position. */
      problems: z.array(readProblem),
    }),
    write: false,
  }),

  'log.recordValue': call({
    doc: "Up to maxBytes bytes (default 1 MiB) of one record's key, value or header value from byte `start`, as base64, with the full size.",
    request: z.strictObject({
      dir: pathText,
      offset: int64,
      part: z.enum(['key', 'value', 'header']),
      headerIndex: z.number().int().min(0).optional(),
      start: count.default(0),
      maxBytes: z.number().int().min(1).max(16 * 1024 * 1024).default(1024 * 1024),
    }),
    response: z.object({
      offset: int64,
      part: z.enum(['key', 'value', 'header']),
      headerKey: z.string().nullable(),
      /** The key/value is null (a tombstone's value, a keyless record's key). */
      isNull: z.boolean(),
      totalSize: count,
      start: count,
      base64,
      /** More bytes follow this chunk. */
      truncated: z.boolean(),
    }),
    write: false,
  }),

  'log.seekTimestamp': call({
    doc: 'The first offset whose record has a timestamp at or after the given one, as a broker answers a ListOffsets without isolation level (a replica\'s: every record up to the log end offset, as the tables show them; Kafka Partition.fetchOffsetForTimestamp); −2 earliest, −1 latest = the log end offset; found false when none. A consumer\'s answer stops at the high watermark: klx offset-for-time.',
    request: z.strictObject({ dir: pathText, timestamp: int64 }),
    response: z.object({
      found: z.boolean(),
      offset: int64.nullable(),
      timestamp: int64.nullable(),
      segmentBaseOffset: int64.nullable(),
      leaderEpoch: z.number().int().nullable(),
    }),
    write: false,
  }),

  'log.countRecords': job({
    doc: 'Counts the records, control records and batches of a partition and of each segment (batch headers only).',
    request: z.strictObject({ dir: pathText }),
    result: z.object({
      records: count,
      controlRecords: count,
      batches: count,
      emptyBatches: count,
      /** Bytes of `.log` walked. */
      bytes: count,
      /** logEndOffset − logStartOffset: not the record count on a compacted log. */
      offsetSpan: int64,
      logStartOffset: int64,
      logEndOffset: int64,
      segments: z.array(z.object({ baseOffset: int64, records: count, controlRecords: count, batches: count, emptyBatches: count, bytes: count })),
    }),
    write: false,
  }),

  'log.holes': job({
    doc: 'Every offset hole of a partition with its cause (the first `limit` listed), totals per cause, and the offset range in buckets for the hole map.',
    request: z.strictObject({
      dir: pathText,
      limit: z.number().int().min(0).max(1_000_000).default(10_000),
      buckets: z.number().int().min(1).max(8192).default(1024),
    }),
    result: z.object({
      holes: z.array(holeRow),
      /** More holes than `limit` (totals and buckets still count them all). */
      truncated: z.boolean(),
      totals: z.array(holeTotal),
      /** Offsets of [logStartOffset, logEndOffset) that hold no deliverable record. */
      missingOffsets: int64,
      offsetSpan: int64,
      logStartOffset: int64,
      logEndOffset: int64,
      firstSegmentBaseOffset: int64.nullable(),
      cleanerCheckpoint: int64.nullable(),
      highWatermark: int64.nullable(),
      /** Each segment's offset range [baseOffset, nextOffset). */
      segments: z.array(z.object({ baseOffset: int64, nextOffset: int64 })),
      buckets: z.array(holeBucket),
    }),
    write: false,
  }),

  'log.verify': job({
    doc: 'Verifies a partition: every batch (CRC, framing, offsets, records with deep), every index entry, leftovers and checkpoints; findings name file, byte position and reason.',
    request: z.strictObject({
      dir: pathText,
      deep: z.boolean().default(true),
      limit: z.number().int().min(1).max(100_000).default(5_000),
    }),
    result: z.object({
      findings: z.array(finding),
      truncated: z.boolean(),
      counts: z.object({ error: count, warning: count, info: count }),
      stats: z.object({ segments: count, batches: count, records: count, bytes: count }),
      logStartOffset: int64,
      logEndOffset: int64,
    }),
    write: false,
  }),

  'log.verifyFolder': job({
    doc: 'Verifies every partition of the opened folder holding `dir` (CRCs, framing, offsets, indexes, checkpoints; records decoded with `deep`) and plans its default repair: one row per partition with its errors, warnings and notes, its worst finding and what a repair would do (actions a broker does at startup, actions that are your choice, damage left in place). Progress in bytes over the whole folder; cancellable; touches nothing.',
    request: z.strictObject({ dir: pathText, deep: z.boolean().default(false) }),
    result: z.object({
      root: z.string(),
      partitions: z.array(folderVerifyRow),
      /** Findings about the log directories themselves (unparsable checkpoints...). */
      logDirFindings: z.array(finding),
      totals: z.object({ partitions: count, errors: count, warnings: count, infos: count, bytes: count }),
    }),
    write: false,
  }),

  'log.search': job({
    doc: 'Streams through a partition, every partition of its topic (`scope: topic`) or every partition of the opened folder (`scope: folder`) and returns the first `limit` data records whose key, value or a header contains the text (raw UTF-8 bytes, or with `decoded` the decoded key/value text) and that satisfy the `condition` on the decoded key/value (`value.amount > 10`, `key.data.group == "g1"`; a condition that does not parse is `invalid-argument` naming the character), with progress; cancellable. Each match names its partition and offset.',
    request: z.strictObject({
      dir: pathText,
      /** Text to find ('' = none: then `condition` must be given). */
      text: z.string().max(1000).default(''),
      in: z.array(z.enum(['key', 'value', 'header'])).min(1).default(['key', 'value', 'header']),
      ignoreCase: z.boolean().default(true),
      /** Also match the text in the decoded key/value (the records table's decoded text). */
      decoded: z.boolean().default(true),
      /** A condition on the decoded key/value and the record (see engine/decode/decoded-condition.ts). */
      condition: z.string().max(2000).optional(),
      /** `partition`: `dir` only; `topic`: every partition of `dir`'s topic in the opened folder; `folder`: every partition of the opened folder holding `dir`. */
      scope: z.enum(['partition', 'topic', 'folder']).default('partition'),
      limit: z.number().int().min(1).max(1000).default(100),
      /** Continue a topic/folder search from this partition (`nextDir` of the previous answer). */
      fromDir: pathText.optional(),
      fromOffset: int64.optional(),
      previewBytes: z.number().int().min(0).max(4096).default(256),
    }),
    result: z.object({
      matches: z.array(searchMatch),
      scannedRecords: count,
      scannedBytes: count,
      /** Partitions searched (wholly or in part). */
      partitions: count,
      /** The whole scope (from `fromDir`/`fromOffset`) was searched. */
      complete: z.boolean(),
      /** Where to continue when `limit` was reached, else null: the partition and the offset. */
      nextDir: z.string().nullable(),
      nextOffset: int64.nullable(),
    }),
    write: false,
  }),

  'log.copyRecords': call({
    doc: 'The records of one partition in the offset range [from, to] as clipboard text: `json` (an array of the export objects), `ndjson` and `csv` (the columns of log.export, as sql.export writes them), `kcat` (lines as `kcat -C -f \'Topic %t[%p], offset: %o, key: %k, payload: %S bytes: %s\\n\'` prints them, keys and values as decoded text) or `append` (`klx append --records` lines; control records left out). At most maxRecords records and about 8 MiB of text: `truncated` says more were in the range.',
    request: z.strictObject({
      dir: pathText,
      from: int64,
      /** Last offset, inclusive. */
      to: int64,
      format: z.enum(['json', 'ndjson', 'csv', 'kcat', 'append']),
      isolation: z.enum(['read_uncommitted', 'read_committed']).default('read_uncommitted'),
      maxRecords: z.number().int().min(1).max(10_000).default(10_000),
    }),
    response: z.object({
      text: z.string(),
      /** Records in the text. */
      records: count,
      /** Control records left out (`append`). */
      skipped: count,
      truncated: z.boolean(),
    }),
    write: false,
  }),

  'log.export': job({
    doc: "Writes records to a NEW file the user chose (never inside an opened folder, never over an existing file) as CSV, NDJSON or Parquet (through DuckDB's COPY): the whole partition `dir`, the offsets [from, to], the times [fromTime, toTime) (as ListOffsets finds them: from the first offset at or after fromTime to before the first at or after toTime), or a list of records (a selection or a search result, each naming its partition). Columns as `klx export`: raw key, value and headers beside the decoded key and value (the folder's format choices). Progress in offsets passed; cancel removes the partial file.",
    request: z.strictObject({
      dir: pathText,
      scope: z.enum(['partition', 'range', 'time', 'records']).default('partition'),
      from: int64.optional(),
      /** Last offset, inclusive. */
      to: int64.optional(),
      /** ms since the epoch. */
      fromTime: int64.optional(),
      toTime: int64.optional(),
      records: z.array(z.object({ dir: pathText, offset: int64 })).max(10_000).optional(),
      format: z.enum(['csv', 'ndjson', 'parquet']),
      /** The file to write: absolute or `~`-relative; its folder must exist. */
      out: pathText,
      isolation: z.enum(['read_uncommitted', 'read_committed']).default('read_uncommitted'),
    }),
    result: z.object({
      /** The real path written. */
      out: z.string(),
      format: z.enum(['csv', 'ndjson', 'parquet']),
      records: count,
      bytes: count,
      partitions: count,
      /** The offsets the export covered (a time scope resolved), inclusive; null for `records`. */
      from: int64.nullable(),
      to: int64.nullable(),
      elapsedMs: z.number(),
      /**
       * read_committed: per partition whose export stopped at its last stable offset because a transaction is
       * open (as a read_committed consumer stops: UnifiedLog, FetchIsolation.TXN_COMMITTED), that offset, the
       * open transaction's producer and first offset, the records at or after it left out, and the sentence
       * `klx export` prints for it. Empty otherwise.
       */
      lastStableStops: z.array(
        z.object({ topic: z.string(), partition: z.number().int(), lastStableOffset: int64, producerId: int64, producerEpoch: z.number().int(), firstOffset: int64, recordsNotRead: count, text: z.string() }),
      ),
      /**
       * Each damaged region or batch in the range whose records are not in the file (`damage`), and each
       * batch past the decompression bound (`not-checked`): the `.log` file, byte position, and the
       * sentence `klx export` prints for it. Empty when every record of the range was written.
       */
      notExported: z.array(z.object({ topic: z.string(), partition: z.number().int(), file: z.string(), position: count, kind: z.enum(['damage', 'not-checked']), text: z.string() })),
    }),
    write: false,
  }),

  // -------------------------------------------------------------------------------------------
  // cleanup.*: retention and compaction from the app (handlers in src-main/api/cleanup/cleanup.ts).
  // CLEANUP-ENTRIES

  'cleanup.plan': job({
    doc: 'Previews retention or compaction of a partition folder (or of every partition under a log directory) without touching anything: segments deleted/rewritten/created, records removed per reason with their offset ranges, the new holes, bytes before/after, the notes explaining the decisions, and a planId fingerprinting the files it looked at. Runs in a worker thread; cancellable.',
    request: cleanupPlanRequest,
    result: cleanupOutcome.extend({
      /** Files fingerprinted (partition files plus checkpoint entries). */
      fingerprintFiles: count,
    }),
    write: false,
  }),

  'cleanup.run': job({
    doc: 'Runs the previewed retention or compaction (same request plus the planId of the preview): refused with `invalid-argument` (details.reason `plan-stale`) when the files or the settings changed since the preview. Crash-safe; replaced files go to the trash for Undo; progress and cancel (nothing changed when cancelled before the commit point). Emits log.changed. Needs "Open for writing".',
    request: cleanupRunRequest,
    result: cleanupOutcome.extend({
      /** Groups the trash entries of this run (cleanup.undo reverses it whole). */
      runId: z.string(),
      /** The reports measured after the run (`dryRun: false`). */
      partitions: z.array(cleanupPartitionOutcome),
      /** Partition folders whose files changed (or may have, for a failed partition). */
      changedDirs: z.array(z.string()),
      /** Trash entries written. */
      trashEntries: z.array(z.string()),
    }),
    write: true,
  }),

  'cleanup.repairPlan': job({
    doc: "Previews the repair of a partition folder: the startup recovery `klx repair` runs (Kafka's LogLoader: leftovers, swaps, orphan indexes, damaged tails, index rebuilds), each action with its files and bytes and whether it is what a broker does at startup or your choice (`truncateAtCorruption` cuts valid batches after the first invalid one; rewriting an unparsable log-directory checkpoint, offered when the log directory is inside an opened folder). Reads every .log with progress; cancellable; touches nothing. The signature ties a later `cleanup.repair` to this preview.",
    request: z.strictObject({ dir: pathText, truncateAtCorruption: z.boolean().default(false) }),
    result: z.object({ plan: repairPlan, signature: z.string(), trashDir: z.string() }),
    write: false,
  }),

  'cleanup.repair': job({
    doc: 'Runs the previewed repair (same request plus the signature of the preview): refused with `invalid-argument` (details.reason `plan-stale`, nothing touched) when the plan differs now. Crash-safe action by action; every file it deletes, replaces or cuts goes to the trash first, so `cleanup.undo` puts the bytes back. Emits log.changed. Needs "Open for writing".',
    request: z.strictObject({ dir: pathText, truncateAtCorruption: z.boolean().default(false), signature: z.string().max(10_000_000) }),
    result: z.object({ runId: z.string(), plan: repairPlan, done: z.array(z.string()), trashEntries: z.array(z.string()) }),
    write: true,
  }),

  'cleanup.undo': call({
    doc: 'Undoes the latest cleanup run on a partition folder or log directory: puts back, byte for byte, the files it replaced (from the trash) and removes the ones it created. Refused, touching nothing, when the partition changed since the run. Emits log.changed. Needs "Open for writing".',
    request: z.strictObject({ dir: pathText }),
    response: z.object({ runId: z.string(), entries: z.array(undoneEntry) }),
    write: true,
  }),

  'cleanup.history': call({
    doc: "The run history of a partition folder (kept with the trash, kept when it is emptied): every cleanup run that changed it, oldest first, with when, the rules, the clock its decisions used, what went per reason and whether it was undone; with `offsets`, the run that removed each of them and why (\"removed by the compaction of 2026-12-01 10:02 UTC (superseded by offset 4 (key k1))\").",
    request: z.strictObject({ dir: pathText, offsets: z.array(int64).max(2000).optional() }),
    response: z.object({
      runs: z.array(cleanupRunRecord),
      /** One per asked offset that a run of the history (not undone) removed. */
      causes: z.array(holeRunCause),
      /** Lines of the history file that could not be read. */
      notes: z.array(z.string()),
    }),
    write: false,
  }),

  'cleanup.horizons': call({
    doc: "The delete horizons of a partition's batches (KIP-534: a v2 batch with attribute bit 6 set holds in baseTimestamp the time after which a clean drops its tombstones and discardable markers): the earliest, and the clock just after it (earliest + 1 ms) that the Cleanup form offers as `now`. Reads batch headers only.",
    request: z.strictObject({ dir: pathText }),
    response: z.object({
      /** The earliest delete horizon, ms since the epoch, or null when no batch carries one. */
      earliest: int64.nullable(),
      /** earliest + 1 ms: a clean at this clock drops that batch's tombstones (Kafka's `Cleaner.shouldRetainRecord` keeps them while the horizon is after the clock). */
      justAfter: int64.nullable(),
      /** Batches carrying a delete horizon. */
      stamped: count,
    }),
    write: false,
  }),

  'cleanup.trash': call({
    doc: 'Lists the trash entries of partitions inside the opened folders (undo is possible until the trash is emptied), and the latest run under `dir` that cleanup.undo would reverse.',
    request: z.strictObject({ dir: pathText.optional() }),
    response: z.object({
      trashDir: z.string(),
      /** Oldest first; only partitions inside the opened folders (and under `dir` when given). */
      entries: z.array(trashEntry),
      /** Bytes of the listed entries. */
      bytes: count,
      /** The run cleanup.undo would reverse for `dir`, or null. */
      lastRun: undoableRun.nullable(),
      /** Entries not listed (other folders, unreadable manifests). */
      otherEntries: count,
    }),
    write: false,
  }),

  'cleanup.emptyTrash': call({
    doc: 'Deletes trash entries for good (their runs can no longer be undone): the given ids, else every entry of partitions inside the opened folders (under `dir` when given). Needs "Open for writing".',
    request: z.strictObject({ ids: z.array(z.string().max(300)).max(10_000).optional(), dir: pathText.optional() }),
    response: z.object({ removed: z.array(z.string()), bytes: count }),
    write: true,
  }),

  // -------------------------------------------------------------------------------------------
  // edit.*: appending records and rolling segments (handlers in src-main/api/edit/edit.ts).
  // EDIT-ENTRIES
  'edit.preview': call({
    doc: 'What appending one batch of records to a partition would do, exactly as edit.append then does it: offsets, bytes, whether a new segment is rolled first and why (segment.bytes, segment.ms, index full), the segment file, the new logEndOffset, and a fingerprint of the state it was computed from. Limits: 16 MiB per record, 64 MiB per request. Touches nothing.',
    request: editPreviewRequest,
    response: editPreview,
    write: false,
  }),

  'edit.append': call({
    doc: "Appends one batch through the engine's crash-safe writer, as previewed: refused (invalid-argument, details.stale) when the partition changed since the preview with this fingerprint, `locked` when another writer holds it. Pass the preview's `now`. No undo: records leave a log only by retention from its start. Emits log.changed.",
    request: editAppendRequest,
    response: editAppendResult,
    write: true,
  }),

  'edit.rollPreview': call({
    doc: "What rolling the partition's active segment now would do: the new segment's base offset (= logEndOffset) and file, the closed segment's final time-index entry; nothing when the active segment is empty. Touches nothing.",
    request: z.strictObject({ dir: pathText }),
    response: editRollResult,
    write: false,
  }),

  'edit.roll': call({
    doc: 'Rolls the active segment as previewed (Kafka UnifiedLog.roll): refused (invalid-argument, details.stale) when the partition changed since the preview with this fingerprint. Emits log.changed.',
    request: z.strictObject({ dir: pathText, fingerprint: z.string().min(1).max(200) }),
    response: editRollResult,
    write: true,
  }),


  // -------------------------------------------------------------------------------------------
  // sql.*: SQL over the opened folder with DuckDB (handlers in src-main/api/sql/sql.ts).
  // SQL-ENTRIES
  // `path` is an opened folder or a partition folder inside one; its tables are a cache in the
  // user's cache folder (never written next to the logs), so none of these methods is a write.

  'sql.open': job({
    doc: 'Prepares the SQL tables of a folder (built from the logs with progress, or reused from the cache while the folder is unchanged) and lists them with their columns, types and row counts.',
    request: z.strictObject({ path: pathText }),
    result: sqlOpenResult,
    write: false,
  }),

  'sql.query': job({
    doc: 'Runs one read-only SQL statement (DuckDB) over the tables of a folder, rebuilding them first if its files changed; returns the first `limit` rows as JSON-safe cells. Refused statements: `read-only`; DuckDB errors keep their message with details.line/position.',
    request: z.strictObject({
      path: pathText,
      sql: z.string().min(1).max(1_000_000),
      limit: z.number().int().min(1).max(MAX_SQL_LIMIT).default(DEFAULT_SQL_LIMIT),
    }),
    result: sqlQueryResult,
    write: false,
  }),

  'sql.export': job({
    doc: 'Runs one read-only SQL statement and writes its FULL result (no row limit) as CSV or NDJSON, the format of `klx query`, to a temporary file in the cache folder; fetch it with sql.exportRead.',
    request: z.strictObject({ path: pathText, sql: z.string().min(1).max(1_000_000), format: sqlExportFormat }),
    result: sqlExportResult,
    write: false,
  }),

  'sql.exportRead': call({
    doc: 'Up to maxBytes bytes (default 4 MiB) of a file written by sql.export, from byte `start`, as base64, with the file size and whether the chunk reaches its end. Unknown or expired export: `not-found`.',
    request: z.strictObject({
      exportId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
      start: count.default(0),
      maxBytes: z.number().int().min(1).max(16 * 1024 * 1024).default(4 * 1024 * 1024),
    }),
    response: z.object({ base64, start: count, total: count, eof: z.boolean() }),
    write: false,
  }),

  'sql.exportDiscard': call({
    doc: 'Deletes an exported file once it has been saved (exports also expire after an hour).',
    request: z.strictObject({ exportId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) }),
    response: z.object({ discarded: z.boolean() }),
    write: false,
  }),

  // -------------------------------------------------------------------------------------------
  // groups.*: consumer groups loaded from the folder's __consumer_offsets partitions (handlers in
  // src-main/api/groups/groups.ts). Nothing is written.

  'groups.list': job({
    doc: 'Loads the consumer groups of an opened folder from its __consumer_offsets partitions (as the group coordinator does: GroupMetadataManager.replay) and lists them with type, state, members, topics and total lag; names the absent __consumer_offsets partitions and the records that could not be read.',
    request: z.strictObject(groupsOptions),
    result: groupsListResult,
    write: false,
  }),

  'groups.describe': job({
    doc: "One group's committed offsets (kafka-consumer-groups.sh --describe columns plus record lag, next offset, diagnosis, expiry) and members. A group not there: not-found naming the __consumer_offsets partition it would live in.",
    request: z.strictObject({ ...groupsOptions, group: z.string().max(32_767) }),
    result: groupDescribeResult,
    write: false,
  }),

  'groups.history': job({
    doc: 'Every commit of a group for one partition (committed offset over time, transactional commits resolved), read from its __consumer_offsets partition; thinned evenly beyond maxPoints.',
    request: z.strictObject({ ...groupsOptions, group: z.string().max(32_767), topic: z.string().min(1).max(249), partition: z.number().int().min(0).max(2_147_483_647), maxPoints: z.number().int().min(2).max(100_000).default(5000) }),
    result: commitHistoryResult,
    write: false,
  }),

  'groups.partitionCommits': job({
    doc: 'The committed offsets of every group in one partition folder of the opened folder (the hole map marks them).',
    request: z.strictObject({ ...groupsOptions, dir: pathText }),
    result: partitionCommitsResult,
    write: false,
  }),

  // lessons.*: the course labs, played into the app's own data folder (never a user's logs; handlers
  // in src-main/api/lessons/lessons.ts). They write only there, so none of them is a write method.
  'lessons.labs': call({
    doc: 'Every built-in lab with its steps, the question each step asks and the answer a broker gives, and the data folder lessons are created in.',
    request: z.strictObject({}),
    response: z.object({ labs: z.array(labInfo), dataDir: z.string() }),
    write: false,
  }),
  'lessons.create': call({
    doc: "Creates (or resets) a lab's lesson: a fresh folder in the app's data folder with the writes, rolls and timestamps of its first step. Unknown lab: `invalid-argument`.",
    request: z.strictObject({ labId: labIdText }),
    response: z.object({ state: lessonStateWire }),
    write: false,
  }),
  'lessons.state': call({
    doc: 'The lesson of a lab as it is on disk (its log dir and the step to run next), or null when it was never created.',
    request: z.strictObject({ labId: labIdText }),
    response: z.object({ state: lessonStateWire.nullable() }),
    write: false,
  }),
  'lessons.preview': call({
    doc: "Plans the lesson's current step with every decision; a compaction step under both rule sets (kafka and classic) for the side-by-side view. Nothing changes.",
    request: z.strictObject({ labId: labIdText }),
    response: z.object({ kafka: lessonOutcome.nullable(), classic: lessonOutcome.nullable() }),
    write: false,
  }),
  'lessons.run': call({
    doc: "Runs the lesson's current step (retention or compaction with the step's clock, rules and config; its replaced files go to the lesson's own trash), then writes what the next step needs.",
    request: z.strictObject({ labId: labIdText }),
    response: z.object({ outcome: lessonOutcome.nullable(), state: lessonStateWire }),
    write: false,
  }),

  // decode.*: main's decode layer (issue 11) for the renderer and the bridge (handlers in
  // src-main/api/decode/decode.ts). Choices are kept in the app's own settings, never in the opened
  // folder, so none of them is a write method.
  'decode.formats': call({
    doc: 'Every format the decode layer knows (auto first), in the order auto breaks ties.',
    request: z.strictObject({}),
    response: z.object({ formats: z.array(formatInfo) }),
    write: false,
  }),
  'decode.record': call({
    doc: "One record's key and value decoded by main: the format used and why, the decoded JSON (int64 exact), the one-line text, the schema id/subject/version, or the typed reason it did not decode with the raw bytes. Absent formats: the topic's choice. Errors: `not-found` (no record at that offset), `offset-out-of-range`, `invalid-argument` (unknown format).",
    request: z.strictObject({
      dir: pathText,
      offset: int64,
      keyFormat: formatName.optional(),
      valueFormat: formatName.optional(),
    }),
    response: decodedRecord,
    write: false,
  }),
  'decode.choices': call({
    doc: 'The format chosen per topic and per side (key/value) for the opened folder holding `path` (absent = auto), as persisted in the app settings.',
    request: z.strictObject({ path: pathText }),
    response: choicesOfFolder,
    write: false,
  }),
  'decode.setChoice': call({
    doc: "Chooses the format of a topic's keys or values in the opened folder holding `path` (`auto` removes the choice); persisted in the app settings per opened folder, used by the records table, the inspector and SQL. Unknown format: `invalid-argument`.",
    request: z.strictObject({ path: pathText, topic: z.string().min(1).max(249), side: decodeSide, format: formatName }),
    response: choicesOfFolder,
    write: false,
  }),
  'decode.setSchema': call({
    doc: "Gives schema files (their names and texts: `.avsc`, `.proto`, `.json` JSON Schema; the first is the schema, the others what it imports) for a topic's keys or values in the opened folder holding `path`, or removes them (`schema: null`). Kept with the format choices in the app settings (never in the opened folder); plain Avro of that topic side and Confluent-framed records whose schema id no `_schemas` topic knows are read with it, in the table, inspector, search and SQL. Errors: `invalid-argument` naming the file when it does not compile, is over 1 MiB, or is not imported by the `.proto` schema (it would never be read).",
    request: z.strictObject({ path: pathText, topic: z.string().min(1).max(249), side: decodeSide, schema: userSchema.nullable() }),
    response: choicesOfFolder,
    write: false,
  }),
} as const satisfies Record<string, MethodSpec>;

/** The contract's type. */
export type Contract = typeof contract;

/** Every method name, e.g. `'app.info'`. */
export type MethodName = keyof Contract & string;

/** The method names, in contract order (derived from {@link contract}). */
export const METHOD_NAMES = Object.freeze(Object.keys(contract)) as readonly MethodName[];

/** Names of the job methods (those answering `{jobId}`). */
export type JobMethodName = { [M in MethodName]: Contract[M]['job'] extends true ? M : never }[MethodName];

/** The request a caller sends (defaults not yet applied). */
export type Req<M extends MethodName> = z.input<Contract[M]['request']>;

/** The request a handler receives (validated, defaults applied). */
export type ParsedReq<M extends MethodName> = z.output<Contract[M]['request']>;

/** The answer of a method (for job methods `{jobId}`). */
export type Res<M extends MethodName> = z.output<Contract[M]['response']>;

/** The final result of a job method, carried by its `job.end` event. */
export type JobResult<M extends JobMethodName> = z.output<Contract[M]['result']>;

/** The typed client: one function per method, resolving with the answer or rejecting with a `KlxApiError`. */
export type KlxApi = { readonly [M in MethodName]: (req: Req<M>) => Promise<Res<M>> };

/** Whether `name` is a method of the contract (own keys only: `toString` or `__proto__` are not). */
export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(contract, name);
}

/** Whether `name` is a job method. */
export function isJobMethod(name: MethodName): name is JobMethodName {
  return contract[name].job;
}

// ---------------------------------------------------------------------------------------------
// Events (main → renderer): job progress, job end, folder opened (e.g. from the app menu) or closed,
// write mode switched, partition files changed (by the app, or on disk: `folder.changed`).

/** A job's progress; sent at most every few tens of milliseconds per job, and on each phase change. */
export const jobProgressEvent = z.object({
  type: z.literal('job.progress'),
  jobId,
  method: z.string(),
  ...jobProgress.shape,
});

/** A job's end: `ok: true` with its result (shape: the method's `result` schema) or `ok: false` with the error. */
export const jobEndEvent = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('job.end'), jobId, method: z.string(), ok: z.literal(true), result: jsonValue }),
  z.object({ type: z.literal('job.end'), jobId, method: z.string(), ok: z.literal(false), error: errorInfoSchema }),
]);

/** A folder was opened in the session (by `session.open` or by the main process' menu). */
export const sessionOpenedEvent = z.object({ type: z.literal('session.opened'), path: z.string() });

/** "Open for writing" was switched on or off (see `session.setWriteMode`). */
export const sessionWriteModeEvent = z.object({ type: z.literal('session.writeMode'), enabled: z.boolean() });

/**
 * Files of these partition folders changed (a cleanup ran or was undone, records were appended, a
 * segment rolled): views showing them reload. `dirs` are real partition folder paths.
 */
export const logChangedEvent = z.object({
  type: z.literal('log.changed'),
  dirs: z.array(z.string()),
  reason: z.string().max(200),
  /**
   * True when the folder watcher or `session.reload` sent it (files changed outside the app, or a
   * reload): main's caches drop the partitions, and the renderer refreshes its views from the
   * `folder.changed` event (or the reload it asked for) instead of this one.
   */
  external: z.boolean().optional(),
});

/** The format choices of an opened folder changed (`decode.setChoice`): tables and the inspector decode again. */
export const decodeChoicesEvent = z.object({ type: z.literal('decode.choices'), root: z.string(), choices: formatChoices });

/** Any event the main process sends to the renderer. */
export const klxEvent = z.union([jobProgressEvent, jobEndEvent, sessionOpenedEvent, sessionClosedEvent, sessionWriteModeEvent, logChangedEvent, folderChangedEvent, decodeChoicesEvent]);

export type JobProgress = z.infer<typeof jobProgress>;
export type JobSummary = z.infer<typeof jobSummary>;
export type JobProgressEvent = z.infer<typeof jobProgressEvent>;
export type JobEndEvent = z.infer<typeof jobEndEvent>;
export type SessionOpenedEvent = z.infer<typeof sessionOpenedEvent>;
export type SessionWriteModeEvent = z.infer<typeof sessionWriteModeEvent>;
export type LogChangedEvent = z.infer<typeof logChangedEvent>;
export type DecodeChoicesEvent = z.infer<typeof decodeChoicesEvent>;
export type { FolderChangedEvent, FolderChange, SessionClosedEvent, RecentFolder } from './folder-types.ts';
export type KlxEvent = z.infer<typeof klxEvent>;
export type { ErrorInfo };

// ---------------------------------------------------------------------------------------------
// Compile-time check: every request, response and job result is JSON. A method whose types are
// not (a bigint, a Uint8Array, a Date...) makes the line below fail, naming the method.

type ResultOf<S> = S extends { result: infer R extends z.ZodType } ? z.output<R> : null;
type NotJsonSafe = {
  [M in MethodName]: [z.input<Contract[M]['request']>, z.output<Contract[M]['request']>, Res<M>, ResultOf<Contract[M]>] extends [Json, Json, Json, Json]
    ? never
    : M;
}[MethodName];
const jsonSafe: [NotJsonSafe] extends [never] ? true : { notJsonSafe: NotJsonSafe } = true;
void jsonSafe;
