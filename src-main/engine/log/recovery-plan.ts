/**
 * Startup recovery of a partition folder, planned without touching anything (spec §10.3, §10.4;
 * Kafka's `LogLoader.load`, `removeTempFilesAndCollectSwapFiles`, `loadSegmentFiles`, `recoverLog`
 * and `LogSegment.recover`). {@link planRecovery} reads the folder and returns the explicit list of
 * actions that `applyRecovery` (recovery.ts) executes, in an order that is safe to interrupt.
 *
 * What a broker does, and what the plan does:
 * 1. Leftovers (pass 1): delete `*.deleted`; delete the `.swap` files of an incomplete split (base
 *    offset ≥ the smallest `.cleaned` base), then every `.cleaned` file. Also stale `*.tmp` files
 *    (klx's own tidying: a broker leaves them and overwrites them at its next write, `CheckpointFile.write`).
 * 2. Swaps (pass 2): a remaining `N.log.swap` is complete cleaner/split output. Files of old segments
 *    whose base offset lies in `[min swap base, max swap end)` are deleted, then the swaps are renamed
 *    to their final names — in **descending** base order, so that after a crash the range computed
 *    from the swaps still left never covers a segment already renamed. Index `.swap` files are
 *    deleted and the indexes rebuilt from the new `.log` (they are derived data; a broker since
 *    Kafka 3.0 renames them instead, before 3.0 it deleted them too). A `.swap` holding no batch
 *    replaces nothing and is deleted, keeping the segment of its name (a broker renames it over
 *    that segment, emptying it). The classification is pending-swaps.ts's, shared with the notices.
 * 3. Orphan indexes (pass 3) are deleted; a segment with a missing, corrupt, stale or untrimmed
 *    index gets its indexes rebuilt.
 * 4. Which segments a broker recovers (`LogLoader.recoverLog`, `LogLoader.loadSegmentFiles`):
 *    without `.kafka_cleanshutdown`, every segment from the one holding the recovery point
 *    (`recovery-point-offset-checkpoint`; none: 0) on; after a clean shutdown none. Also, whatever
 *    the marker, a segment whose `.index` file is missing (`LogSegment.sanityCheck` throws
 *    `NoSuchFileException`, and `loadSegmentFiles` recovers that segment alone, keeping the later
 *    ones). A recovered segment is re-validated and its indexes rebuilt as a broker writes them
 *    (`buildOffsetIndexEntries`, `buildTimeIndexEntries` with the final entry, trimmed). Every
 *    segment is read here so that damage a broker would not notice is reported too.
 * 5. Truncation (`LogSegment.recover`: it stops at the first batch that fails
 *    `RecordBatch.ensureValid`, which checks only the size and the CRC, so a complete batch of an
 *    unknown magic with a valid CRC is kept). By default a segment is cut only where a broker would
 *    cut it and nothing valid is lost: a recovered segment whose bytes from the first invalid batch
 *    to the end are not batches (a partial or zeroed tail), and only when it is the last segment (a
 *    cut with later segments kept would leave an offset gap; a broker recovering it deletes them,
 *    `LogLoader.recoverLog`). Everything else is reported in `unresolved` with what a broker would
 *    do: cut and delete the later segments (recovered segment), or not notice it at all (below the
 *    recovery point, or after a clean shutdown: consumers then stop at that offset, `CompletedFetch`;
 *    for the last segment's tail after a clean shutdown, what `LogSegment.readNextOffset` makes of it
 *    and what the next append does: see unrecovered-tail.ts).
 *    Offsets going backwards are no `ensureValid` failure: a broker keeps such a batch unless an index
 *    entry it rebuilds goes backwards (`OffsetIndex.append` / `TimeIndex.maybeAppend` throw
 *    `InvalidOffsetException`), and then `LogLoader.recoverLog` empties the whole segment and deletes
 *    the later ones (see {@link offsetDisorderAtRecovery}); the plan says which, and cuts nothing by default.
 *    `truncateAtCorruption` cuts at the first invalid batch and deletes every later segment (their
 *    records are counted in the plan): the broker's behaviour for a recovered segment, the user's
 *    choice for any other.
 * 6. An empty segment is created at the log start offset when none is left; leader-epoch entries
 *    starting after the new log end offset and producer snapshots beyond it are removed.
 *
 * Action order (each action is atomic, and a crash between two actions leaves a folder whose next
 * plan finishes the job): temp/leftover deletes → incomplete swaps before `.cleaned` → old segments
 * replaced by swaps → swap renames (descending) → orphan indexes → later segments (newest first, only
 * with `truncateAtCorruption`) → index rebuilds (computed from the batches that stay, so they are
 * already right for the truncated file) → truncations → empty segment → leader epochs → snapshots.
 */
import { refusedLinkReason } from '../files/symlinks.ts';
import { consumerStopsAt, framingConsequence } from './corruption-consequences.ts';
import { framingAt, framingPlace } from './broker-framing.ts';
import { unrecoveredTailText } from './unrecovered-tail.ts';
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { crc32c } from '../format/crc.ts';
import { FileSource, MAX_ENTRY_BYTES, scanLogFile } from '../format/log-reader.ts';
import { LOG_OVERHEAD, V2_HEADER_SIZE } from '../format/types.ts';
import { parseSegmentFileName, segmentFileName } from '../files/file-names.ts';
import { readFileBytes } from '../files/fsync-write.ts';
import { buildOffsetIndexEntries, encodeOffsetIndex, type IndexableBatch, type OffsetIndexEntry } from '../files/offset-index.ts';
import { buildTimeIndexEntries, encodeTimeIndex, type TimeIndexEntry } from '../files/time-index.ts';
import { encodeTxnIndex, type AbortedTxn } from '../files/txn-index.ts';
import type { EpochEntry as LeaderEpochEntry } from '../files/checkpoint.ts';
import { PartitionLog, tpKey } from './partition-log.ts';
import { expectedTxnEntries, newScanContext, scanSegment, type SegmentScan } from './verify.ts';
import type { SegmentFilesRef } from './quick-check.ts';

// ---------------------------------------------------------------------------------------------
// Plan types

/** Why a file is deleted. */
export type DeleteReason = 'temp' | 'deleted' | 'incomplete-swap' | 'cleaned' | 'replaced-by-swap' | 'swap-index' | 'orphan-index' | 'stale-snapshot';

/** Delete one file (absolute path). `size` is its size in bytes when planned. */
export interface DeleteFileAction {
  type: 'delete-file';
  file: string;
  size: number;
  why: DeleteReason;
  reason: string;
}

/** Rename a completed swap file to its final name (`N.log.swap` → `N.log`). */
export interface RenameAction {
  type: 'rename';
  from: string;
  to: string;
  reason: string;
}

/** Delete a whole segment (only with `truncateAtCorruption`): its index files first, then the `.log`. */
export interface DeleteSegmentAction {
  type: 'delete-segment';
  baseOffset: bigint;
  /** Files to delete, in order (absolute paths). */
  files: string[];
  /** Valid batches and records the segment holds (what is dropped). */
  batches: number;
  records: number;
  reason: string;
}

/** Rewrite some of a segment's index files, trimmed, from the entries computed at plan time. */
export interface RebuildIndexesAction {
  type: 'rebuild-indexes';
  baseOffset: bigint;
  /** The segment's `.log` (final name). */
  log: string;
  /** Size of the `.log` in bytes when planned; applying checks it is unchanged. */
  logSize: number;
  index?: { file: string; entries: OffsetIndexEntry[] };
  timeindex?: { file: string; entries: TimeIndexEntry[] };
  txnindex?: { file: string; entries: AbortedTxn[] };
  /**
   * Whether a broker rebuilds these indexes at startup (its recovery of the segment, a missing
   * `.index`, a cut or a swap it makes: LogLoader); false where it would not (LogSegment.sanityCheck
   * checks only that the `.index` exists): the user's choice.
   */
  byBroker: boolean;
  reason: string;
}

/** Cut a `.log` to `toBytes` bytes. */
export interface TruncateLogAction {
  type: 'truncate-log';
  file: string;
  baseOffset: bigint;
  fromBytes: number;
  toBytes: number;
  /** `invalid-tail`: only bytes that are not batches go; `corruption`: valid batches after the first invalid one go too. */
  kind: 'invalid-tail' | 'corruption';
  /** Valid batches and records dropped (0 for an invalid tail). */
  droppedBatches: number;
  droppedRecords: number;
  /** Log end offset of this segment after the cut. */
  nextOffset: bigint;
  /** Whether a broker makes this cut at startup (it recovers the segment: LogLoader.recoverLog, LogSegment.recover); false: the user's choice. */
  byBroker: boolean;
  reason: string;
}

/** Create an empty segment (`.log`, `.index`, `.timeindex`, all 0 bytes). */
export interface CreateSegmentAction {
  type: 'create-segment';
  baseOffset: bigint;
  files: { log: string; index: string; timeindex: string };
  reason: string;
}

/** Rewrite `leader-epoch-checkpoint` without entries that start after the log end. */
export interface WriteLeaderEpochsAction {
  type: 'write-leader-epochs';
  file: string;
  entries: LeaderEpochEntry[];
  removed: LeaderEpochEntry[];
  reason: string;
}

/** One step of a recovery plan. */
export type RecoveryAction = DeleteFileAction | RenameAction | DeleteSegmentAction | RebuildIndexesAction | TruncateLogAction | CreateSegmentAction | WriteLeaderEpochsAction;

/** Something the plan reports but does not change. */
export interface PlanNote {
  /**
   * `needs-truncate-flag`: damage in a segment a broker recovers, left because cutting it would drop
   * valid records or leave an offset gap; `not-recovered-by-broker`: damage a broker would not
   * notice at startup (below the recovery point, after a clean shutdown, or a batch that passes
   * `RecordBatch.ensureValid`); `kafka-differs`: a broker would do more; `cannot-rebuild`: offsets
   * do not allow an index; `symlink-outside`: a file of the folder is a link klx does not read, so
   * nothing is planned for the partition (its view of the segments is incomplete).
   */
  kind: 'needs-truncate-flag' | 'not-recovered-by-broker' | 'kafka-differs' | 'cannot-rebuild' | 'symlink-outside';
  file: string;
  position?: number;
  reason: string;
}

/** The result of {@link planRecovery}. Applying it is `applyRecovery(plan)`. */
export interface RecoveryPlan {
  dir: string;
  topic: string;
  partition: number;
  /** The log directory had `.kafka_cleanshutdown`. */
  cleanShutdown: boolean;
  /** From `recovery-point-offset-checkpoint` (null: none, a broker then uses 0: LogManager.loadLogs). */
  recoveryPoint: bigint | null;
  truncateAtCorruption: boolean;
  actions: RecoveryAction[];
  /** Damage the plan leaves in place (see {@link PlanNote}); empty when the folder ends up clean. */
  unresolved: PlanNote[];
  /** Where Kafka itself would act differently. */
  notes: PlanNote[];
  logEndOffsetBefore: bigint;
  logEndOffsetAfter: bigint;
  /** Segments read while planning, and their errors/warnings. */
  segmentsScanned: number;
  findingCounts: { error: number; warning: number; info: number };
}

/** Options of {@link planRecovery}. */
export interface PlanRecoveryOptions {
  /** Broker behaviour: truncate at the first invalid batch even when valid batches follow, and delete later segments
   * (LogSegment.recover, LogLoader.recoverLog). */
  truncateAtCorruption?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { bytesDone: number; bytesTotal: number; file: string }) => void;
}

// ---------------------------------------------------------------------------------------------
// Planning

/**
 * The batches an index is rebuilt from: the CRC-valid batches of `log` before byte `limit`, in file
 * order (damaged regions skipped). Streams the file; nothing is kept.
 */
export function* validBatchesOf(log: string, limit: number): Generator<IndexableBatch> {
  for (const e of scanLogFile(log, { verifyCrc: true, end: limit })) {
    if (e.type === 'batch' && e.header.crcValid !== false) {
      yield { position: e.header.position, size: e.header.size, lastOffset: e.header.lastOffset, maxTimestamp: e.header.maxTimestamp };
    }
  }
}

/**
 * What a consumer reading in order meets at bytes that are not a batch at `position` of the segment file
 * `file` (base offset `base`; the next segment's base `nextBase`), by how a broker frames them
 * (FileLogInputStream.nextBatch: see framingConsequence), reached at offset `failAt`.
 */
function damageConsumerText(log: PartitionLog, file: string, base: bigint, nextBase: bigint | null, position: number, fileSize: number, failAt: bigint): string {
  const f = framingAt(file, position, fileSize);
  const i = log.segments.findIndex((s) => s.baseOffset === base);
  const place = i >= 0 ? framingPlace(log, i, position, failAt) : { failAt, indexResumeAt: null, nextSegmentAt: nextBase };
  return framingConsequence(f, place, log.topic);
}

/**
 * When the bytes at `position` of `log` are a complete batch whose magic is above 2 with a valid
 * CRC-32C, the sentence saying so; else null. Kafka reads any magic ≥ 2 as a v2 batch
 * (`FileLogInputStream.nextBatch`) and `DefaultRecordBatch.ensureValid` checks only its size and
 * CRC, so `LogSegment.recover` keeps such a batch.
 */
function brokerAcceptedBatch(log: string, position: number, fileSize: number): string | null {
  if (fileSize - position < V2_HEADER_SIZE) return null;
  const head = readRange(log, position, V2_HEADER_SIZE);
  const total = head.readInt32BE(8) + LOG_OVERHEAD;
  const magic = head.readInt8(16);
  if (magic <= 2 || total < V2_HEADER_SIZE || position + total > fileSize || total > MAX_ENTRY_BYTES) return null;
  const bytes = readRange(log, position, total);
  if (crc32c(bytes.subarray(21)) >>> 0 !== bytes.readUInt32BE(17)) return null;
  return `It is a complete batch of magic ${magic} (${total} bytes) whose CRC-32C is valid`;
}

/**
 * What a broker's `LogSegment.recover` meets in a segment whose offsets are out of order (a batch not
 * above the previous one): it checks each batch's CRC (`RecordBatch.ensureValid`) and that its last
 * offset fits the segment (`ensureOffsetInRange`), not that offsets increase. It rebuilds the indexes
 * as it reads: at each batch more than `index.interval.bytes` past the last indexed one,
 * `OffsetIndex.append(lastOffset, position)` throws `InvalidOffsetException` when the offset is not
 * above the previous entry's, and `TimeIndex.maybeAppend(maxTimestampSoFar, its offset)` when that
 * offset is below the previous time entry's (once more after the last batch).
 * - `invalid-offset`: an index append throws; `LogLoader.recoverLog` catches it and empties the whole
 *   segment (`LogSegment.truncateTo(baseOffset)`), then deletes every later segment;
 *   `LogLoader.loadSegmentFiles` (a segment recovered alone, its `.index` missing) does not catch it.
 * - `overflow`: a last offset below the segment's base or more than 2^31−1 above it:
 *   `LogSegmentOffsetOverflowException`, which `LogLoader.retryOnOffsetOverflow` answers by splitting
 *   the segment (`LocalLog.splitOverflowedSegment`) and retrying.
 * - `kept`: nothing throws; the broker keeps every batch (the same in Kafka 2.8 `Log.recoverLog` and
 *   3.x/4.x `LogLoader.recoverLog`).
 * Reads the `.log` from the start to its end or its first batch failing the CRC or unreadable bytes
 * (where `LogSegment.recover` stops anyway).
 * @param log the `.log` path; `baseOffset` its segment's base offset; `indexIntervalBytes` the topic's `index.interval.bytes`.
 */
export type OffsetDisorderAtRecovery =
  | { kind: 'kept' }
  | { kind: 'invalid-offset'; index: 'offset' | 'time'; position: number; offset: bigint; previous: bigint; segmentBytes: number }
  | { kind: 'overflow'; position: number; lastOffset: bigint };

/** See {@link OffsetDisorderAtRecovery}. */
export function offsetDisorderAtRecovery(log: string, baseOffset: bigint, indexIntervalBytes: number): OffsetDisorderAtRecovery {
  let lastIndexEntry = 0;
  let lastOffsetEntry: bigint | null = null;
  let timeEntry: { ts: bigint; offset: bigint } | null = null;
  let maxTs = -1n;
  let maxTsOffset = -1n;
  let segmentBytes = 0;
  const timeAppend = (position: number): OffsetDisorderAtRecovery | null => {
    if (timeEntry !== null && maxTsOffset < timeEntry.offset) return { kind: 'invalid-offset', index: 'time', position, offset: maxTsOffset, previous: timeEntry.offset, segmentBytes: 0 };
    if (maxTs > (timeEntry?.ts ?? -1n)) timeEntry = { ts: maxTs, offset: maxTsOffset };
    return null;
  };
  let result: OffsetDisorderAtRecovery | null = null;
  let stopped = false;
  for (const e of scanLogFile(log, { verifyCrc: true })) {
    if (e.type !== 'batch') {
      segmentBytes += e.size;
      stopped = true;
      continue;
    }
    const h = e.header;
    segmentBytes += h.size;
    if (h.crcValid === false) stopped = true;
    if (result !== null || stopped) continue;
    if (h.lastOffset < baseOffset || h.lastOffset - baseOffset > 2147483647n) {
      result = { kind: 'overflow', position: h.position, lastOffset: h.lastOffset };
      continue;
    }
    if (h.maxTimestamp > maxTs) {
      maxTs = h.maxTimestamp;
      maxTsOffset = h.lastOffset;
    }
    if (h.position - lastIndexEntry > indexIntervalBytes) {
      if (lastOffsetEntry !== null && h.lastOffset <= lastOffsetEntry) {
        result = { kind: 'invalid-offset', index: 'offset', position: h.position, offset: h.lastOffset, previous: lastOffsetEntry, segmentBytes: 0 };
        continue;
      }
      lastOffsetEntry = h.lastOffset;
      result = timeAppend(h.position);
      lastIndexEntry = h.position;
    }
  }
  // The time index's final entry (LogSegment.recover appends it after the loop).
  if (result === null) result = timeAppend(-1) ?? { kind: 'kept' };
  return result.kind === 'invalid-offset' ? { ...result, segmentBytes } : result;
}

/**
 * What a broker does at startup with the out-of-order offsets `d` found in a segment it recovers
 * (`alone`: recovered only because its `.index` is missing), as a sentence naming Kafka's classes.
 * @param later how many segments follow this one; `base` the segment's base offset.
 */
export function offsetDisorderText(d: OffsetDisorderAtRecovery, base: bigint, later: number, alone: boolean): string {
  const checks = "A broker's recovery does not check that offsets increase (LogSegment.recover checks each batch's CRC and that its last offset fits the segment)";
  if (d.kind === 'kept') {
    return `${checks}, and no index entry it rebuilds goes backwards (OffsetIndex.append, TimeIndex.maybeAppend), so it keeps the batch and cuts nothing; a consumer reads past it, skipping records below its position (Kafka CompletedFetch.nextFetchedRecord)`;
  }
  if (d.kind === 'overflow') {
    return `A broker's LogSegment.recover throws LogSegmentOffsetOverflowException at the batch at byte ${d.position} (its last offset ${d.lastOffset} does not fit segment ${base}: ensureOffsetInRange), and LogLoader.retryOnOffsetOverflow splits the segment (LocalLog.splitOverflowedSegment) and retries instead of cutting it`;
  }
  const where = d.position < 0 ? 'the final .timeindex entry it writes after the last batch' : `the ${d.index === 'offset' ? '.index' : '.timeindex'} entry it writes at the batch at byte ${d.position}`;
  const thrower = d.index === 'offset' ? 'OffsetIndex.append' : 'TimeIndex.maybeAppend';
  const head = `${checks}, but ${where} names offset ${d.offset}, ${d.index === 'offset' ? 'not above' : 'below'} the previous entry's ${d.previous}: ${thrower} throws InvalidOffsetException`;
  if (alone) return `${head}, which LogLoader.loadSegmentFiles (recovering this segment alone, its .index missing) does not catch: the broker fails to load the log`;
  return `${head}, and LogLoader.recoverLog then empties the whole segment (LogSegment.truncateTo(${base}): all ${d.segmentBytes} bytes)${later === 0 ? '' : ` and deletes the ${later} later segment${later === 1 ? '' : 's'}`}`;
}

/** `length` bytes of `file` from `position`. */
function readRange(file: string, position: number, length: number): Buffer {
  const src = new FileSource(file);
  try {
    return src.read(position, length);
  } finally {
    src.close();
  }
}

function sameBytes(a: Uint8Array | null, b: Uint8Array): boolean {
  return a !== null && Buffer.compare(a, b) === 0;
}

function fileBytesOrNull(path: string | null): Buffer | null {
  if (!path) return null;
  try {
    return readFileBytes(path);
  } catch (err) {
    if (err instanceof KlxError && err.code === 'not-found') return null;
    throw err;
  }
}

/**
 * Plans the recovery of one partition folder. Reads every `.log` once (CRC, framing, offsets) plus
 * the index files; touches nothing.
 * @param target an opened partition, or the path of a partition folder.
 * @returns the plan; `actions` is empty for a folder that needs nothing.
 * @throws KlxError `not-found` / `not-a-log-dir` for a bad path (see `PartitionLog.open`);
 *   `cancelled` when `opts.signal` aborts; `io-error` when a file cannot be read.
 */
export async function planRecovery(target: PartitionLog | string, opts: PlanRecoveryOptions = {}): Promise<RecoveryPlan> {
  const log = typeof target === 'string' ? PartitionLog.open(target) : target;
  const dir = log.dir;
  const l = log.listing;
  const truncateAtCorruption = opts.truncateAtCorruption ?? false;
  const cleanShutdown = log.startupCleanShutdown;
  const interval = log.config.config['index.interval.bytes'];
  const key = tpKey(log.topic, log.partition);

  // A file klx does not read (a symlink out of the folder, files/symlinks.ts) hides part of the partition:
  // a plan made without it could delete that segment's indexes as orphans or cut the wrong last segment.
  // A broker follows the link (FileRecords.openChannel opens whatever the path resolves to), so nothing
  // klx could plan here is what a broker does: plan nothing and say so.
  if (l.refusedLinks.length > 0) {
    const rp0 = log.startupRecoveryPoint;
    return {
      dir,
      topic: log.topic,
      partition: log.partition,
      cleanShutdown,
      recoveryPoint: rp0,
      truncateAtCorruption,
      actions: [],
      unresolved: l.refusedLinks.map((k) => ({
        kind: 'symlink-outside' as const,
        file: k.link,
        reason: `${refusedLinkReason(k.target)}; a broker would follow it, so klx plans nothing for this partition without it (with --follow-symlinks repair reads it, and writes through it if it must)`,
      })),
      notes: [],
      logEndOffsetBefore: log.logEndOffset,
      logEndOffsetAfter: log.logEndOffset,
      segmentsScanned: 0,
      findingCounts: { error: 0, warning: 0, info: 0 },
    };
  }

  // The folder as it will be after each step: name → size.
  const present = new Map<string, number>();
  for (const s of l.segments) for (const f of [s.log, s.index, s.timeindex, s.txnindex]) if (f) present.set(f.name, f.size);
  for (const f of [...l.orphanIndexes, ...l.snapshots, ...l.transient, ...l.kraftSnapshots, ...l.metadata]) present.set(f.name, f.size);

  const early: RecoveryAction[] = [];
  const del = (name: string, why: DeleteReason, reason: string) => {
    early.push({ type: 'delete-file', file: join(dir, name), size: present.get(name) ?? 0, why, reason });
    present.delete(name);
  };

  // Pass 1: temp files, .deleted, incomplete swaps, .cleaned.
  for (const t of l.transient.filter((t) => t.suffix === 'tmp')) del(t.name, 'temp', 'partially written replacement left by an interrupted write (the real file is intact)');
  for (const t of l.transient.filter((t) => t.suffix === 'deleted')) del(t.name, 'deleted', 'already removed from the log; a broker deletes .deleted files at startup (LogLoader.removeTempFilesAndCollectSwapFiles)');
  // LogLoader.removeTempFilesAndCollectSwapFiles and the swap range: shared with the notices (pending-swaps.ts).
  const pending = log.pendingSwaps;
  const minCleaned = pending?.minCleaned ?? null;
  for (const s of pending?.incompleteSplit ?? []) del(s.name, 'incomplete-swap', `part of an incomplete split: base offset ≥ ${minCleaned}, the smallest .cleaned base (the original segment is still there)`);
  for (const c of pending?.cleaned ?? []) del(c.name, 'cleaned', 'incomplete cleaner or split output (the original segments are still there)');
  const validSwaps = [...(pending?.indexSwaps ?? []), ...l.transient.filter((t) => t.kind === 'log' && pending?.swaps.some((s) => s.name === t.name))];

  // Pass 2: complete the valid swaps.
  const renamed = new Set<bigint>();
  const logSwaps = validSwaps.filter((s) => s.kind === 'log' && s.baseOffset !== undefined);
  const range = pending?.range ?? null;
  if (range) {
    for (const name of [...present.keys()].sort()) {
      const p = parseSegmentFileName(name);
      if (!p || p.transient) continue;
      if (p.baseOffset >= range.from && p.baseOffset < range.to) del(name, 'replaced-by-swap', `replaced by the cleaned/split segments covering offsets ${range.from}..${range.to - 1n} (a broker deletes it before completing the swap, LogLoader.load)`);
    }
  }
  for (const s of validSwaps.filter((s) => s.kind !== 'log')) del(s.name, 'swap-index', 'index of a swapped-in segment: deleted and written again from its .log (a broker renames it to its final name instead, LogLoader.load; Kafka before 3.0 deleted it too)');
  const renames: RenameAction[] = [];
  for (const s of [...logSwaps].sort((a, b) => (a.baseOffset! > b.baseOffset! ? -1 : 1))) {
    const finalName = s.name.slice(0, -'.swap'.length);
    if (present.has(finalName)) {
      // An empty swap covers no offsets, so no old segment fell in its range: renaming it would
      // replace a segment that still holds data (Kafka's rename would). Keep the data instead.
      del(s.name, 'incomplete-swap', `holds no batch, so it replaces nothing; ${finalName} is kept (a broker would rename the empty swap over it, LogLoader.load)`);
      continue;
    }
    renames.push({ type: 'rename', from: join(dir, s.name), to: join(dir, finalName), reason: 'complete the swap of cleaner/split output (descending base order)' });
    present.set(finalName, present.get(s.name) ?? 0);
    present.delete(s.name);
    renamed.add(s.baseOffset!);
  }
  early.push(...renames);

  // Pass 3: segments as they will be; orphan indexes.
  const bases = [...present.keys()]
    .map((n) => ({ n, p: parseSegmentFileName(n) }))
    .filter((x) => x.p && !x.p.transient && x.p.kind === 'log')
    .map((x) => x.p!.baseOffset)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const baseSet = new Set(bases);
  for (const name of [...present.keys()].sort()) {
    const p = parseSegmentFileName(name);
    if (p && !p.transient && (p.kind === 'index' || p.kind === 'timeindex' || p.kind === 'txnindex') && !baseSet.has(p.baseOffset)) {
      del(name, 'orphan-index', `${p.kind} file without ${segmentFileName(p.baseOffset, '.log')}: a broker deletes it at startup (LogLoader.loadSegmentFiles)`);
    }
  }
  const refs: SegmentFilesRef[] = bases.map((b, i) => {
    const name = (suffix: string) => segmentFileName(b, suffix);
    const has = (suffix: string) => (present.has(name(suffix)) ? join(dir, name(suffix)) : null);
    return {
      baseOffset: b,
      log: renamed.has(b) ? join(dir, name('.log.swap')) : join(dir, name('.log')),
      index: has('.index'),
      timeindex: has('.timeindex'),
      txnindex: has('.txnindex'),
      indexPath: join(dir, name('.index')),
      timeindexPath: join(dir, name('.timeindex')),
      txnindexPath: join(dir, name('.txnindex')),
      isActive: i === bases.length - 1,
    };
  });

  // Pass 4: validate, decide truncations and rebuilds.
  const rp = log.startupRecoveryPoint;
  let recoverFrom = 0;
  for (let i = 0; i < bases.length; i++) if (bases[i]! <= (rp ?? 0n)) recoverFrom = i;
  const ctx = newScanContext(cleanShutdown);
  const bytesTotal = refs.reduce((s, r) => s + (present.get(segmentFileName(r.baseOffset, '.log')) ?? 0), 0);
  let bytesBefore = 0;
  const laterDeletes: DeleteSegmentAction[] = [];
  const rebuilds: RebuildIndexesAction[] = [];
  const truncations: TruncateLogAction[] = [];
  const unresolved: PlanNote[] = [];
  const notes: PlanNote[] = [];
  const counts = { error: 0, warning: 0, info: 0 };
  let cutAt: number | null = null;
  let logEndBefore: bigint | null = null;
  let logEndAfter: bigint | null = null;
  let scanned = 0;

  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    const finalLog = join(dir, segmentFileName(ref.baseOffset, '.log'));
    if (cutAt !== null) {
      // Broker behaviour after a truncation: every later segment goes.
      let batches = 0;
      let records = 0;
      let next: bigint | null = null;
      for (const e of scanLogFile(ref.log, { verifyCrc: true })) {
        if (e.type === 'batch' && e.header.crcValid !== false) {
          batches++;
          records += e.header.recordCount;
          next = e.header.lastOffset + 1n;
        }
      }
      if (ref.isActive) logEndBefore = next ?? ref.baseOffset;
      const files = [ref.txnindex, ref.timeindex, ref.index].filter((f): f is string => f !== null);
      files.push(finalLog);
      laterDeletes.unshift({
        type: 'delete-segment',
        baseOffset: ref.baseOffset,
        files,
        batches,
        records,
        reason: `after the truncation of segment ${refs[cutAt]!.baseOffset}, a broker deletes every later segment (LogLoader.recoverLog; ${batches} valid batch${batches === 1 ? '' : 'es'}, ${records} record${records === 1 ? '' : 's'} dropped)`,
      });
      continue;
    }
    const scan: SegmentScan = await scanSegment(ref, ctx, {
      signal: opts.signal,
      onBytes: (b) => opts.onProgress?.({ bytesDone: bytesBefore + b, bytesTotal, file: ref.log }),
    });
    scanned++;
    bytesBefore += scan.logSize;
    for (const f of scan.findings) counts[f.severity]++;
    if (ref.isActive) logEndBefore = scan.nextOffset ?? ref.baseOffset;
    // LogLoader.recoverLog: segments from the one holding the recovery point on, unless clean shutdown.
    const recovered = !cleanShutdown && i >= recoverFrom;
    // LogLoader.loadSegmentFiles: a missing .index makes a broker recover this segment alone.
    const recoveredAlone = !recovered && ref.index === null;
    const fi = scan.firstInvalid;
    let truncateTo: number | null = null;
    let kind: TruncateLogAction['kind'] = 'invalid-tail';
    /** What a broker does instead when the first problem is offsets going backwards (see offsetDisorderAtRecovery). */
    let offsetOutcome: string | null = null;
    if (fi) {
      const later = refs.length - 1 - i;
      const tailOnly = scan.validBatchesAfterInvalid === 0;
      const accepted = fi.kind === 'damage' ? brokerAcceptedBatch(ref.log, fi.position, scan.logSize) : null;
      const follows = tailOnly ? 'nothing valid follows it' : `${scan.validBatchesAfterInvalid} valid batch${scan.validBatchesAfterInvalid === 1 ? '' : 'es'} (${scan.recordsAfterInvalid} records) follow it`;
      const failAt = scan.nextOffsetBeforeInvalid ?? ref.baseOffset;
      const laterText = later === 0 ? '' : ` and delete the ${later} later segment${later === 1 ? '' : 's'} (LogLoader.recoverLog)`;
      if (truncateAtCorruption) {
        truncateTo = fi.position;
        kind = tailOnly ? 'invalid-tail' : 'corruption';
      } else if (accepted !== null) {
        unresolved.push({
          kind: 'not-recovered-by-broker',
          file: finalLog,
          position: fi.position,
          reason: `${fi.reason}; ${follows}: left in place. ${accepted}, so a broker's recovery keeps it (LogSegment.recover: RecordBatch.ensureValid checks only the size and the CRC); ${consumerStopsAt(failAt, undefined, false, log.topic)}. Cutting it is your choice (--truncate-at-corruption), not the broker's`,
        });
      } else if (!recovered && !recoveredAlone) {
        // What consumers meet: a valid batch with impossible offsets is read past (CompletedFetch skips records below
        // the position); a partial or garbage tail of the active segment lies past the log end a broker computes
        // (LogSegment.readNextOffset reads complete batches only) until an append lands after it; else a consumer stops.
        const consumerText =
          fi.kind === 'offset'
            ? 'a consumer reads past it, skipping records below its position (Kafka CompletedFetch.nextFetchedRecord)'
            : fi.kind === 'damage' && tailOnly && later === 0
              ? unrecoveredTailText(ref.log, fi.position, scan.logSize, failAt, log.topic, false)
              : fi.kind === 'damage'
                ? damageConsumerText(log, ref.log, ref.baseOffset, refs[i + 1]?.baseOffset ?? null, fi.position, scan.logSize, failAt)
                : consumerStopsAt(failAt, undefined, fi.kind === 'crc', log.topic);
        const why = cleanShutdown
          ? 'the log directory had a clean shutdown (.kafka_cleanshutdown), so a broker recovers no segment at startup'
          : `the segment lies below the recovery point ${rp ?? 0n} (recovery-point-offset-checkpoint), and a broker recovers only the segments from the one holding it on`;
        unresolved.push({
          kind: 'not-recovered-by-broker',
          file: finalLog,
          position: fi.position,
          reason: `${fi.reason}; ${follows}: left in place. A broker would not notice it at startup: ${why} (LogLoader.recoverLog); ${consumerText}. Cutting the segment here is your choice (--truncate-at-corruption), not the broker's`,
        });
      } else if (fi.kind === 'offset') {
        // LogSegment.recover does not stop at offsets going backwards: what it does depends on the indexes it rebuilds.
        const d = offsetDisorderAtRecovery(ref.log, ref.baseOffset, interval);
        offsetOutcome = offsetDisorderText(d, ref.baseOffset, later, !recovered);
        const ask = `cutting the segment at byte ${fi.position}${later === 0 ? '' : ' and deleting every later segment'} is your choice (--truncate-at-corruption)`;
        unresolved.push({
          kind: d.kind === 'kept' ? 'not-recovered-by-broker' : 'needs-truncate-flag',
          file: finalLog,
          position: fi.position,
          reason: `${fi.reason}; ${follows}: left in place (no valid record is dropped by default). ${offsetOutcome}; ${ask}`,
        });
      } else if (tailOnly && later === 0) {
        truncateTo = fi.position;
      } else {
        const brokerDoes = recovered
          ? `A broker would cut the segment at byte ${fi.position} (LogSegment.recover)${laterText}`
          : `Its .index is missing, so a broker would recover this segment alone and cut it at byte ${fi.position} (LogLoader.loadSegmentFiles, LogSegment.recover)${later === 0 ? '' : `, keeping the ${later} later segment${later === 1 ? '' : 's'} and leaving an offset gap before ${refs[i + 1]?.baseOffset ?? failAt}`}`;
        const klxKeeps = tailOnly ? 'klx keeps the later segments and leaves no offset gap' : 'no valid record is dropped by default';
        unresolved.push({
          kind: 'needs-truncate-flag',
          file: finalLog,
          position: fi.position,
          reason: `${fi.reason}; ${follows}: left in place (${klxKeeps}). ${brokerDoes}; ask for the cut${later === 0 ? '' : ' and the deletion of every later segment'} with --truncate-at-corruption`,
        });
      }
    }
    const segNextAfter = truncateTo !== null ? (scan.nextOffsetBeforeInvalid ?? ref.baseOffset) : (scan.nextOffset ?? ref.baseOffset);
    if (truncateTo !== null) {
      truncations.push({
        type: 'truncate-log',
        file: finalLog,
        baseOffset: ref.baseOffset,
        fromBytes: scan.logSize,
        toBytes: truncateTo,
        kind,
        droppedBatches: kind === 'corruption' ? scan.validBatchesAfterInvalid : 0,
        droppedRecords: kind === 'corruption' ? scan.recordsAfterInvalid : 0,
        nextOffset: segNextAfter,
        byBroker: (recovered || recoveredAlone) && offsetOutcome === null && fi!.kind !== 'offset',
        reason:
          (kind === 'corruption'
            ? `${fi!.reason}: cut at the first invalid batch, dropping ${scan.validBatchesAfterInvalid} valid batches (${scan.recordsAfterInvalid} records) after it`
            : `${scan.logSize - truncateTo} bytes from position ${truncateTo} are not a valid batch (${fi!.reason}); no valid batch follows`) +
          (fi!.kind === 'offset' && (recovered || recoveredAlone)
            ? ` (your choice: ${offsetDisorderText(offsetDisorderAtRecovery(ref.log, ref.baseOffset, interval), ref.baseOffset, refs.length - 1 - i, !recovered)})`
            : recovered ? ' (a broker does the same: LogSegment.recover)' : recoveredAlone ? ' (a broker does the same: its .index is missing, LogLoader.loadSegmentFiles)' : ' (your choice: a broker would not recover this segment at startup, LogLoader.recoverLog)'),
      });
      if (i < refs.length - 1) cutAt = i;
    }
    // Index rebuilds.
    const isIdx = (f: string) => f === ref.indexPath || f === ref.index;
    const isTix = (f: string) => f === ref.timeindexPath || f === ref.timeindex;
    const isTxn = (f: string) => f === ref.txnindexPath || f === ref.txnindex;
    const bad = (pred: (f: string) => boolean) => scan.findings.some((f) => pred(f.file) && f.severity !== 'info');
    const touched = recovered || truncateTo !== null || renamed.has(ref.baseOffset);
    const needIdx = touched || !ref.index || bad(isIdx);
    const needTix = touched || !ref.timeindex || bad(isTix);
    const needTxn = touched || bad(isTxn);
    if (needIdx || needTix || needTxn) {
      const limit = truncateTo ?? scan.logSize;
      try {
        const action: RebuildIndexesAction = { type: 'rebuild-indexes', baseOffset: ref.baseOffset, log: finalLog, logSize: scan.logSize, byBroker: true, reason: '' };
        const why: string[] = [];
        if (needIdx) {
          const entries = buildOffsetIndexEntries(ref.baseOffset, validBatchesOf(ref.log, limit), interval);
          if (!sameBytes(fileBytesOrNull(ref.index), encodeOffsetIndex(ref.baseOffset, entries))) {
            action.index = { file: ref.indexPath, entries };
            why.push(`.index (${entries.length} entries)`);
          }
        }
        if (needTix) {
          const entries = buildTimeIndexEntries(ref.baseOffset, validBatchesOf(ref.log, limit), { indexIntervalBytes: interval });
          if (!sameBytes(fileBytesOrNull(ref.timeindex), encodeTimeIndex(ref.baseOffset, entries))) {
            action.timeindex = { file: ref.timeindexPath, entries };
            why.push(`.timeindex (${entries.length} entries)`);
          }
        }
        if (needTxn) {
          const entries = expectedTxnEntries(scan).filter((e) => e.lastOffset < segNextAfter);
          const existing = fileBytesOrNull(ref.txnindex);
          const want = encodeTxnIndex(ref.baseOffset, entries);
          if (existing ? !sameBytes(existing, want) : entries.length > 0) {
            action.txnindex = { file: ref.txnindexPath, entries };
            why.push(`.txnindex (${entries.length} entries)`);
          }
        }
        if (why.length > 0) {
          const cause = renamed.has(ref.baseOffset)
            ? 'segment swapped in'
            : truncateTo !== null
              ? 'segment truncated'
              : recovered
                ? 'unclean shutdown: segment at/after the recovery point, recovered by a broker (LogLoader.recoverLog)'
                : recoveredAlone
                  ? 'its .index is missing: a broker recovers the segment and rebuilds it (LogLoader.loadSegmentFiles)'
                  : null;
          action.byBroker = cause !== null;
          action.reason = `rebuild ${why.join(', ')} from the .log as a broker writes them, trimmed (${cause ?? 'index missing or inconsistent with the .log; a broker at startup would not rebuild it (LogSegment.sanityCheck checks only that the .index exists)'})`;
          rebuilds.push(action);
        }
      } catch (err) {
        if (!(err instanceof KlxError) || err.code !== 'invalid-argument') throw err;
        unresolved.push({ kind: 'cannot-rebuild', file: finalLog, reason: `indexes not rebuilt: ${err.reason}` });
      }
    }
    logEndAfter = segNextAfter;
  }

  const actions: RecoveryAction[] = [...early, ...laterDeletes, ...rebuilds, ...truncations];
  const remaining = cutAt !== null ? refs.slice(0, cutAt + 1) : refs;
  const logStartCp = log.checkpoints.logStartOffset.get(key);
  if (remaining.length === 0) {
    const b = logStartCp ?? 0n;
    const name = (s: string) => join(dir, segmentFileName(b, s));
    actions.push({ type: 'create-segment', baseOffset: b, files: { log: name('.log'), index: name('.index'), timeindex: name('.timeindex') }, reason: `no segment left: create an empty active segment at the log start offset ${b}, as a broker does (LogLoader.recoverLog)` });
    logEndAfter = b;
  }
  const leo = logEndAfter ?? logStartCp ?? 0n;
  if (logStartCp !== undefined && logStartCp > leo) {
    notes.push({ kind: 'kafka-differs', file: join(log.dir, '..', 'log-start-offset-checkpoint'), reason: `the log start offset ${logStartCp} is above the log end offset ${leo}: a broker would delete every segment and start empty at ${logStartCp} (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd); klx keeps them` });
  }
  if (present.has('leader-epoch-checkpoint') && log.leaderEpochs.some((e) => e.startOffset > leo)) {
    const kept = log.leaderEpochs.filter((e) => e.startOffset <= leo);
    const removed = log.leaderEpochs.filter((e) => e.startOffset > leo);
    actions.push({ type: 'write-leader-epochs', file: join(dir, 'leader-epoch-checkpoint'), entries: kept, removed, reason: `remove ${removed.length} leader epoch(s) starting after the log end offset ${leo} (a broker truncates the epoch cache when it loads the log: LogLoader.load, LeaderEpochFileCache.truncateFromEnd removes every epoch starting at or after the log end; klx keeps one starting exactly at the log end, which a broker drops and writes again when it next leads, Partition.makeLeader)` });
  }
  for (const s of l.snapshots) {
    if (present.has(s.name) && s.baseOffset > leo) {
      actions.push({ type: 'delete-file', file: join(dir, s.name), size: s.size, why: 'stale-snapshot', reason: `producer snapshot at offset ${s.baseOffset} is after the log end offset ${leo} (a broker deletes it: ProducerStateManager.truncateAndReload)` });
    }
  }
  return {
    dir,
    topic: log.topic,
    partition: log.partition,
    cleanShutdown,
    recoveryPoint: rp,
    truncateAtCorruption,
    actions,
    unresolved,
    notes,
    logEndOffsetBefore: logEndBefore ?? log.logStartOffset,
    logEndOffsetAfter: leo,
    segmentsScanned: scanned,
    findingCounts: counts,
  };
}

/** One line describing an action, for people (paths relative to `base` when given). */
export function describeAction(a: RecoveryAction, rel: (p: string) => string = (p) => p): string {
  switch (a.type) {
    case 'delete-file':
      return `delete ${rel(a.file)} (${a.size} bytes): ${a.reason}`;
    case 'rename':
      return `rename ${rel(a.from)} -> ${rel(a.to)}: ${a.reason}`;
    case 'delete-segment':
      return `delete segment ${a.baseOffset} (${a.files.map(rel).join(', ')}): ${a.reason}`;
    case 'rebuild-indexes':
      return `${rel(a.log)}: ${a.reason}`;
    case 'truncate-log':
      return `truncate ${rel(a.file)} from ${a.fromBytes} to ${a.toBytes} bytes (segment log end ${a.nextOffset}): ${a.reason}`;
    case 'create-segment':
      return `create ${rel(a.files.log)}, ${rel(a.files.index)}, ${rel(a.files.timeindex)} (empty): ${a.reason}`;
    case 'write-leader-epochs':
      return `rewrite ${rel(a.file)} with ${a.entries.length} entr${a.entries.length === 1 ? 'y' : 'ies'}: ${a.reason}`;
  }
}
