/**
 * Compaction of one partition: cleaning rounds as a broker's cleaner runs them, previewed, crash-safe
 * and undoable (spec §13; Kafka's `Cleaner.doClean`, `cleanSegments`, `cleanInto`,
 * `groupSegmentsBySize`, `growBuffersOrFail`, and `LogCleanerManager` for the range).
 *
 * A round:
 * 1. load the producer state (active producers, open transactions → last stable offset) and the
 *    cleanable range `[firstDirtyOffset, firstUncleanableOffset)` (`cleanable-range.ts`); in
 *    "like the broker" mode also require the dirty ratio or max.compaction.lag.ms
 *    (LogCleanerManager.grabFilthiestCompactedLog);
 * 2. build the offset map over the dirty section (`map-builder.ts`); `endOffset = latestOffset + 1`
 *    (below firstUncleanableOffset when the map filled up: another round follows);
 * 3. group every segment with base offset < endOffset (the clean section too) into groups whose
 *    `.log` bytes ≤ segment.bytes, offset-index and time-index bytes ≤ segment.index.bytes each, and
 *    offsets within int32 of the group's base;
 * 4. clean each group into one `.cleaned` segment named after its first segment, reading each source
 *    segment one I/O chunk at a time (262 144 bytes of whole batches, grown for a larger batch as
 *    Kafka grows its buffers, Cleaner.growBuffersOrFail) and appending each chunk's survivors as one append (`compactor.ts`,
 *    `cleaned-segment.ts`); the transaction state runs across the whole round;
 * 5. replace the old segments through `.cleaned → .swap → final` in one commit for all groups
 *    (`segment-swap.ts`), after linking them into the trash; then write the cleaner-offset-checkpoint
 *    entry = endOffset.
 * After the last round, retention runs when cleanup.policy also has `delete`.
 *
 * Two deliberate differences from a broker, both about files, never about which records survive:
 * - a group of one segment whose cleaned bytes equal its current bytes is left in place (a broker
 *   rewrites it with identical batches, and before Kafka 4.0 sparser indexes: LogSegment.append indexes per batch since KAFKA-806);
 * - in the last replaced group, trailing source segments that produce no output at all (every record
 *   superseded, keyless or expired) are left in place unchanged when the new segment would end below
 *   them: a broker's startup recovery only deletes old segments inside the offset range the new
 *   `.swap` segments cover, so after a crash between the swap and their deletion they would come
 *   back next to the new segment; keeping them keeps every crash state whole. A later round cleans them.
 *
 * Plans run the same rounds with counting sinks (nothing written). When more than one round is
 * needed (the map fills up) or retention follows, a plan runs the whole operation on a clone of the
 * partition made of symbolic links in the OS temp folder (the partition itself is never touched) and
 * reports what happened there.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { KlxError } from '../errors.ts';
import { CLEANER_OFFSET_CHECKPOINT_FILE, parseSegmentFileName, segmentFileName } from '../files/file-names.ts';
import { acquireLock, WRITER_LOCK_FILE } from '../log/log-lock.ts';
import { PartitionLog } from '../log/partition-log.ts';
import type { TopicConfig } from '../log/topic-config.ts';
import type { LogSegment } from '../segment/log-segment.ts';
import { CleanedSegment, type CleanedSegmentResult } from './cleaned-segment.ts';
import { cleanableRange } from './cleanable-range.ts';
import { holesOf, OffsetRangeList, totalsOf, type CleanableInfo, type CleanerReport, type OffsetRange, type RemovalReason, type RemovedRecords, type RunContext, type SegmentSummary } from './cleaner-plan.ts';
import type { CleanerRulesName } from './cleaner-rules.ts';
import { readCheckpointEntry, setCheckpointEntry } from './checkpoint-entries.ts';
import { rulesNamed } from './classic-rules.ts';
import { filterBatch, SegmentStats, type CompactionReason, type FilteredBatch } from './compactor.ts';
import { FileSteps, ioErrorOf, isOsError, SimulatedCrash } from './file-steps.ts';
import { buildOffsetMap, type StartMapBuildWorker } from './map-builder.ts';
import type { KeyHashAlgorithm } from './key-hash.ts';
import { DEFAULT_DEDUPE_BUFFER_SIZE, DEFAULT_LOAD_FACTOR, SkimpyOffsetMap } from './offset-map.ts';
import { DEFAULT_PRODUCER_ID_EXPIRATION_MS, loadProducerState, type ProducerState } from './producer-state.ts';
import { SupersededOffsets } from './superseded-offsets.ts';
import { decideRetention, executeRetention, retentionReport } from './retention.ts';
import { segmentMtimeMs } from './segment-times.ts';
import { assertNoInterruptedSwap, completeSwap, replaceSegments, rollbackSwap, segmentFiles } from './segment-swap.ts';
import { sourceBatches, withSegmentFile } from './source-batches.ts';
import { TrashEntry } from './trash.ts';
import type { SymlinkPolicy } from '../files/symlinks.ts';
import { DecisionLog, type ExplainOptions } from './decisions.ts';
import { CleanedTransactionMetadata, collectAbortedTransactions } from './txn-metadata.ts';

/** Kafka's cleaner read buffer: `log.cleaner.io.buffer.size` (524 288) / threads (1) / 2 (LogCleaner builds each Cleaner so). */
export const DEFAULT_IO_BUFFER_SIZE = 262_144;
/** Kafka's `message.max.bytes` default, the cleaner's largest buffer unless a batch is larger. */
export const DEFAULT_MAX_IO_BUFFER_SIZE = 1_048_588;

/** Options of a compaction plan or run. */
export interface CompactionOptions {
  /** The clock, ms since the epoch (default: the wall clock). */
  now?: number;
  /** Topic config overrides (delete.retention.ms, min.compaction.lag.ms, segment.bytes, cleanup.policy...). */
  config?: Partial<TopicConfig>;
  /** 'kafka' (default) or 'classic' (see `cleaner-rules.ts`). */
  rules?: CleanerRulesName;
  /** Clean only when a broker would: dirty ratio above min.cleanable.dirty.ratio, or past max.compaction.lag.ms (LogCleanerManager.grabFilthiestCompactedLog). */
  likeBroker?: boolean;
  /** Bytes of the offset map (Kafka's `log.cleaner.dedupe.buffer.size`, default 128 MiB). */
  dedupeBufferSize?: number;
  /**
   * The key digest of the offset map (`key-hash.ts`): MurmurHash3 x86_128 by default; `md5` hashes
   * as Kafka's `SkimpyOffsetMap` does. The survivors differ only if two keys share a 128-bit digest.
   */
  keyHash?: KeyHashAlgorithm;
  /** Which symlinks in the partition folder are read (`files/symlinks.ts`; default: only those staying inside it). */
  symlinks?: SymlinkPolicy;
  /** Kafka's `log.cleaner.io.buffer.load.factor` (0.9). */
  loadFactor?: number;
  /** Kafka's `producer.id.expiration.ms` (1 day). */
  producerIdExpirationMs?: number;
  /** Read chunk in bytes (262 144). */
  ioBufferSize?: number;
  /** Largest read chunk before a batch forces a larger one (1 048 588). */
  maxIoBufferSize?: number;
  /** Run retention after compaction (default: when cleanup.policy is `compact,delete`). */
  retentionAfter?: boolean;
  /** At most this many cleaning rounds (default: until the cleanable range is clean). */
  maxPasses?: number;
  /** Collect the decision of every record and batch (`decisions.ts`); the report gets `decisions`. */
  explain?: ExplainOptions;
  /**
   * Starts the offset-map build's worker thread (`map-builder.ts`: the second and later dirty
   * segments are read and their keys digested there while this thread puts); without it, one thread.
   * The map is the same either way.
   */
  mapWorker?: StartMapBuildWorker;
  /** Dirty bytes from which `mapWorker` is used (default `THREADED_MAP_MIN_BYTES`, 32 MiB). */
  threadedMapFromBytes?: number;
  /** `free-core` (default): `mapWorker` only while a core is free (`map-builder.ts` `hasFreeCore`); `always`. */
  mapWorkerWhen?: 'free-core' | 'always';
}

/** One cleaned group of a round. */
interface GroupResult {
  sources: LogSegment[];
  stats: SegmentStats[];
  cleaned: CleanedSegmentResult;
  sink: CleanedSegment;
  /** Sources left in place (trailing, no output), counted from the end of `sources`. */
  keptTrailing: number;
  /** The group is left as it is (one segment, cleaned bytes equal to its bytes). */
  unchanged: boolean;
}

interface RoundResult {
  range: CleanableInfo;
  endOffset: bigint;
  mapFull: boolean;
  mapKeys: number;
  groups: GroupResult[];
}

interface RoundEnv {
  write: boolean;
  steps: FileSteps;
  map: SkimpyOffsetMap;
  signal?: AbortSignal;
  onProgress?: RunContext['onProgress'];
  /** The plan's decisions, when asked for. */
  decisions?: DecisionLog;
}

function checkDone(signal: AbortSignal | undefined, dir: string): void {
  if (signal?.aborted) throw new KlxError('cancelled', 'compaction cancelled: nothing was changed', { file: dir });
}

/**
 * Why nothing is cleanable, or null. The bounds are `LogCleanerManager.cleanableOffsets`'s; the last
 * stable offset is `UnifiedLog.lastStableOffset`: the first offset of the earliest open transaction
 * when below the high watermark, else the high watermark itself (`openTxn` says which).
 */
function nothingCleanable(log: PartitionLog, r: CleanableInfo, likeBroker: boolean, openTxn: { producerId: bigint; firstOffset: bigint } | null): string | null {
  if (likeBroker && r.brokerNeverCompacts) return `a broker never compacts this topic: ${r.brokerNeverCompacts}`;
  if (r.firstUncleanableOffset <= r.firstDirtyOffset) {
    const active = log.activeSegment!;
    if (r.uncleanableReason === 'active-segment' || r.firstDirtyOffset >= active.baseOffset) {
      return log.segments.length === 1 ? 'nothing cleanable: the only segment is the active segment, which is never cleaned' : `nothing cleanable: the dirty data (from offset ${r.firstDirtyOffset}) is all in the active segment, which is never cleaned`;
    }
    if (r.uncleanableReason === 'min-compaction-lag') return `nothing cleanable: segment ${r.firstUncleanableOffset} is younger than min.compaction.lag.ms, which fences it and every later segment`;
    if (openTxn && openTxn.firstOffset === r.lastStableOffset) {
      return `nothing cleanable: an open transaction of producer ${openTxn.producerId} starts at offset ${openTxn.firstOffset}, the last stable offset; a broker never cleans at or past it (UnifiedLog.lastStableOffset)`;
    }
    return `nothing cleanable: the high watermark (replication-offset-checkpoint) is ${r.lastStableOffset}, inside segment ${r.firstUncleanableOffset}; a broker never cleans at or past it (UnifiedLog.lastStableOffset)`;
  }
  // LogCleanerManager.grabFilthiestCompactedLog: only logs whose cleanup.policy has compact (LogConfig.compact), then
  // overdue (max.compaction.lag.ms) with cleanable bytes, or ratio above the minimum.
  if (likeBroker && !r.brokerWouldClean) {
    return `a broker would not clean it now: dirty ratio ${r.dirtyRatio.toFixed(3)} is not above min.cleanable.dirty.ratio ${r.minCleanableDirtyRatio} and max.compaction.lag.ms has not passed`;
  }
  return null;
}

/** Kafka `groupSegmentsBySize`. */
export function groupSegmentsBySize(segs: readonly LogSegment[], maxSize: number, maxIndexSize: number, firstUncleanableOffset: bigint): LogSegment[][] {
  const groups: LogSegment[][] = [];
  const idxSize = (s: LogSegment) => s.offsetIndex().entries.length * 8;
  const timeSize = (s: LogSegment) => s.timeIndex().entries.length * 12;
  let i = 0;
  while (i < segs.length) {
    const group = [segs[i]!];
    let logSize = segs[i]!.size;
    let indexSize = idxSize(segs[i]!);
    let timeIndexSize = timeSize(segs[i]!);
    i++;
    while (i < segs.length) {
      const s = segs[i]!;
      const lastOffsetEstimate = i + 1 < segs.length ? segs[i + 1]!.baseOffset - 1n : firstUncleanableOffset - 1n;
      const fits =
        logSize + s.size <= maxSize &&
        indexSize + idxSize(s) <= maxIndexSize &&
        timeIndexSize + timeSize(s) <= maxIndexSize &&
        (s.size === 0 || lastOffsetEstimate - group[group.length - 1]!.baseOffset <= 2147483647n);
      if (!fits) break;
      group.push(s);
      logSize += s.size;
      indexSize += idxSize(s);
      timeIndexSize += timeSize(s);
      i++;
    }
    groups.push(group);
  }
  return groups;
}

/** One round (see the module comment); returns null with a reason when nothing is cleanable. */
function cleanRound(log: PartitionLog, opts: CompactionOptions, env: RoundEnv): { round: RoundResult | null; range: CleanableInfo; reason: string | null } {
  const now = opts.now ?? Date.now();
  const producers = loadProducerState(log, now, opts.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS);
  const leo = log.logEndOffset;
  const hwCp = log.highWatermark;
  const hw = hwCp === null || hwCp > leo ? leo : hwCp;
  const lso = producers.firstUnstableOffset !== null && producers.firstUnstableOffset < hw ? producers.firstUnstableOffset : hw;
  const range = cleanableRange(log, now, lso);
  let openTxn: { producerId: bigint; firstOffset: bigint } | null = null;
  for (const [producerId, firstOffset] of producers.openTransactions) if (firstOffset === lso) openTxn = { producerId, firstOffset };
  const reason = nothingCleanable(log, range, opts.likeBroker ?? false, openTxn);
  if (reason) return { round: null, range, reason };

  return cleanMapped(log, opts, env, range, producers, SupersededOffsets.forRange(Number(range.firstDirtyOffset), Number(range.firstUncleanableOffset)));
}

function cleanMapped(log: PartitionLog, opts: CompactionOptions, env: RoundEnv, range: CleanableInfo, producers: ProducerState, superseded: SupersededOffsets | undefined): { round: RoundResult | null; range: CleanableInfo; reason: string | null } {
  const now = opts.now ?? Date.now();
  const cfg = log.config.config;
  const dir = log.dir;
  const totalDirty = range.cleanableBytes;
  let mapped = 0;
  env.onProgress?.({ phase: 'build offset map', done: 0, total: totalDirty, bytes: 0 });
  const built = buildOffsetMap(log, range.firstDirtyOffset, range.firstUncleanableOffset, env.map, {
    ...(superseded ? { superseded } : {}),
    ...(env.signal ? { signal: env.signal } : {}),
    ...(opts.mapWorker ? { startWorker: opts.mapWorker } : {}),
    ...(opts.threadedMapFromBytes !== undefined ? { threadedFromBytes: opts.threadedMapFromBytes } : {}),
    ...(opts.mapWorkerWhen ? { workerWhen: opts.mapWorkerWhen } : {}),
    onBytes: (n) => {
      mapped += n;
      if ((mapped & 0xfffff) < n) env.onProgress?.({ phase: 'build offset map', done: mapped, total: totalDirty, bytes: mapped });
    },
  });
  const endOffset = BigInt(env.map.latestOffset) + 1n;
  const deleteRetentionMs = cfg['delete.retention.ms'];
  const clean = log.segments.filter((s) => s.baseOffset < range.firstDirtyOffset);
  const legacyDeleteHorizon = clean.length > 0 ? segmentMtimeMs(clean[clean.length - 1]!) - deleteRetentionMs : 0n;
  const toClean = log.segments.filter((s) => s.baseOffset < endOffset && s !== log.activeSegment);
  const groups = groupSegmentsBySize(toClean, cfg['segment.bytes'], cfg['segment.index.bytes'], range.firstUncleanableOffset);
  const txn = new CleanedTransactionMetadata();
  const rules = rulesNamed(opts.rules ?? 'kafka');
  const nowB = BigInt(now);
  const results: GroupResult[] = [];
  env.decisions?.beginRound(env.decisions.pass + 1);
  const totalClean = toClean.reduce((a, s) => a + s.size, 0);
  let cleanedBytes = 0;
  const sinks: CleanedSegment[] = [];
  try {
    for (const group of groups) {
      checkDone(env.signal, dir);
      const sink = new CleanedSegment(dir, group[0]!.baseOffset, env.write, cfg['index.interval.bytes'], env.steps);
      sinks.push(sink);
      txn.cleanedIndex = sink.abortedTxns;
      const stats: SegmentStats[] = [];
      for (let gi = 0; gi < group.length; gi++) {
        const seg = group[gi]!;
        const upper = gi + 1 < group.length ? group[gi + 1]!.baseOffset : seg.nextOffset();
        txn.addAbortedTransactions(collectAbortedTransactions(log, seg.baseOffset, upper));
        const st = new SegmentStats();
        stats.push(st);
        cleanInto(seg, sink, {
          map: env.map,
          now: nowB,
          deleteRetentionMs,
          rules,
          txn,
          activeProducers: producers.active,
          upperBoundOffsetOfRound: range.firstUncleanableOffset,
          retainLegacyDeletes: segmentMtimeMs(seg) > legacyDeleteHorizon,
          stats: st,
          ...(superseded ? { superseded, recordsWalked: built.verified.has(seg.baseOffset) } : {}),
          ...(env.decisions
            ? { explain: { decisions: env.decisions, segment: seg.baseOffset, rules, now: nowB, deleteRetentionMs, latestOffset: env.map.latestOffset, retainLegacyDeletes: segmentMtimeMs(seg) > legacyDeleteHorizon } }
            : {}),
        }, opts, env, cfg['max.message.bytes'], !built.verified.has(seg.baseOffset));
        env.decisions?.endSegment(seg.baseOffset);
        cleanedBytes += seg.size;
        env.onProgress?.({ phase: 'clean', done: cleanedBytes, total: totalClean, bytes: mapped + cleanedBytes });
      }
      const cleaned = sink.finish(Number(segmentMtimeMs(group[group.length - 1]!)));
      const unchanged = group.length === 1 && stats[0]!.unchanged && sameTxnEntries(group[0]!, cleaned);
      results.push({ sources: group, stats, cleaned, sink, keptTrailing: 0, unchanged });
    }
  } catch (err) {
    if (err instanceof SimulatedCrash) throw err;
    for (const s of sinks) s.abort();
    if (isOsError(err)) throw ioErrorOf(err, dir, 'writing the cleaned segments (nothing was changed)');
    throw err;
  }
  applyTrailingRule(results);
  return { round: { range, endOffset, mapFull: built.full, mapKeys: env.map.size, groups: results }, range, reason: null };
}

function sameTxnEntries(seg: LogSegment, cleaned: CleanedSegmentResult): boolean {
  const old = seg.txnIndex()?.entries ?? [];
  if (old.length !== cleaned.abortedTxns.length) return false;
  return old.every((t, i) => {
    const n = cleaned.abortedTxns[i]!;
    return t.producerId === n.producerId && t.firstOffset === n.firstOffset && t.lastOffset === n.lastOffset && t.lastStableOffset === n.lastStableOffset;
  });
}

/** Streams a round's decisions, restating those of the sources the round leaves in place. */
function settleDecisions(round: RoundResult, decisions: DecisionLog | undefined): void {
  if (!decisions) return;
  const left = new Set<bigint>();
  for (const g of round.groups) {
    const from = g.unchanged ? 0 : g.sources.length - g.keptTrailing;
    for (let i = from; i < g.sources.length; i++) left.add(g.sources[i]!.baseOffset);
  }
  decisions.endRound(left, (seg) => `kept: segment ${seg} is left in place this round (it would produce no output and ends past the last cleaned segment; a later round cleans it)`);
}

/** Leaves in place the trailing no-output sources of the last replaced group (see the module comment). */
function applyTrailingRule(groups: GroupResult[]): void {
  for (;;) {
    const replaced = groups.filter((g) => !g.unchanged && g.keptTrailing < g.sources.length);
    if (replaced.length === 0) return;
    const last = replaced[replaced.length - 1]!;
    const next = last.cleaned.lastOffset !== null ? last.cleaned.lastOffset + 1n : last.cleaned.baseOffset;
    let maxSwap = next;
    for (const g of replaced) {
      const n = g.cleaned.lastOffset !== null ? g.cleaned.lastOffset + 1n : g.cleaned.baseOffset;
      if (n > maxSwap) maxSwap = n;
    }
    let changed = false;
    while (last.keptTrailing < last.sources.length) {
      const idx = last.sources.length - 1 - last.keptTrailing;
      const seg = last.sources[idx]!;
      if (seg.baseOffset < maxSwap || last.stats[idx]!.bytesWritten > 0) break;
      last.keptTrailing++;
      changed = true;
    }
    if (last.keptTrailing === last.sources.length) {
      last.unchanged = true;
      changed = true;
    }
    if (!changed) return;
  }
}

/**
 * The output batches of one read chunk of a source segment, appended to the sink as one chunk
 * (Kafka's `LogSegment.append` per `cleanInto` read). A class rather than a closure per segment, so
 * that the cleaning loop calls one function whatever the segment (a new closure per segment made
 * the optimised loop give up its code at every segment).
 */
class ChunkAppender {
  private chunk: FilteredBatch[] = [];
  private chunkBytes = 0;
  /** Byte position in the source segment where the chunk's read starts, −1 when none is open. */
  chunkStart = -1;

  constructor(
    private readonly seg: LogSegment,
    private readonly sink: CleanedSegment,
  ) {}

  /** Adds an output batch already staged in the sink. */
  add(out: FilteredBatch): void {
    this.chunk.push(out);
    this.chunkBytes += out.bytes.length;
  }

  /** Appends the open chunk's batches (if any) and closes it. */
  flush(): void {
    if (this.chunkStart < 0) return;
    const chunk = this.chunk;
    if (chunk.length > 0) {
      let maxOffset = -1n;
      let maxTs = -1n;
      let offOfMax = -1n;
      let records = 0;
      for (const b of chunk) {
        if (b.maxOffset > maxOffset) maxOffset = b.maxOffset;
        if (b.maxTimestamp > maxTs) {
          maxTs = b.maxTimestamp;
          offOfMax = b.offsetOfMaxTimestamp;
        }
        records += b.records;
      }
      try {
        this.sink.appendChunk(chunk.length, this.chunkBytes, maxOffset, maxTs, offOfMax, records, chunk[0]!.baseOffset, chunk[chunk.length - 1]!.lastOffset);
      } catch (err) {
        // The source bytes that do not fit: the chunk read from chunkStart in this segment.
        throw withSegmentFile(err, this.seg, this.chunkStart);
      }
    }
    this.chunk = [];
    this.chunkBytes = 0;
    this.chunkStart = -1;
  }
}

/** Kafka's `Cleaner.cleanInto` for one source segment: chunked reads, filtered, appended per chunk. */
function cleanInto(seg: LogSegment, sink: CleanedSegment, ctx: Parameters<typeof filterBatch>[1], opts: CompactionOptions, env: RoundEnv, maxMessageSize: number, verifyCrc: boolean): void {
  let cap = opts.ioBufferSize ?? DEFAULT_IO_BUFFER_SIZE;
  const maxIo = opts.maxIoBufferSize ?? DEFAULT_MAX_IO_BUFFER_SIZE;
  const chunk = new ChunkAppender(seg, sink);
  let n = 0;
  // Read windows are reused: each output batch is copied into the sink's write buffer (stage) before the next batch is read.
  for (const entry of sourceBatches(seg, 0, verifyCrc, true)) {
    const h = entry.header;
    if (chunk.chunkStart >= 0 && h.position + h.size - chunk.chunkStart > cap) chunk.flush();
    if (chunk.chunkStart < 0) {
      if ((++n & 15) === 0) checkDone(env.signal, seg.dir);
      chunk.chunkStart = h.position;
      while (h.size > cap) {
        // growBuffersOrFail / growBuffers
        const maxSize = cap >= maxMessageSize ? h.size : maxMessageSize;
        const maxBufferSize = Math.max(maxSize, maxIo);
        if (cap >= maxBufferSize) throw new KlxError('batch-length-out-of-range', `this log contains a batch of ${h.size} bytes, larger than the maximum allowable size of ${maxBufferSize}`, { file: seg.files.log, position: h.position });
        cap = Math.min(cap * 2, maxBufferSize);
      }
    }
    let out: FilteredBatch | null;
    try {
      out = filterBatch(entry, ctx);
    } catch (err) {
      throw withSegmentFile(err, seg, entry.header.position);
    }
    if (out) {
      sink.stage(out.bytes);
      chunk.add(out);
    }
  }
  chunk.flush();
}

// ---------------------------------------------------------------------------------------------
// Reports

interface Accumulated {
  rewritten: SegmentSummary[];
  /** Segments created by this run and still present, by base offset. */
  created: Map<bigint, SegmentSummary>;
  removed: Record<CompactionReason, OffsetRange[]>;
  removedCounts: Record<CompactionReason, number>;
  removedTruncated: boolean;
  retained: OffsetRangeList;
  invalid: number;
  passes: number;
  notes: string[];
  firstRange: CleanableInfo | null;
  checkpointBefore: bigint | null;
  checkpointAfter: bigint | null;
  trashEntries: string[];
}

function newAccumulated(log: PartitionLog): Accumulated {
  return {
    rewritten: [],
    created: new Map(),
    removed: { superseded: [], keyless: [], tombstone: [], aborted: [], marker: [] },
    removedCounts: { superseded: 0, keyless: 0, tombstone: 0, aborted: 0, marker: 0 },
    removedTruncated: false,
    retained: new OffsetRangeList(),
    invalid: 0,
    passes: 0,
    notes: [],
    firstRange: null,
    checkpointBefore: log.cleanerCheckpoint,
    checkpointAfter: log.cleanerCheckpoint,
    trashEntries: [],
  };
}

function summaryOfSource(seg: LogSegment, st: SegmentStats): SegmentSummary {
  return { baseOffset: seg.baseOffset, file: segmentFileName(seg.baseOffset, '.log'), bytes: seg.size, records: st.recordsRead, batches: st.batchesRead, firstOffset: st.firstOffset, lastOffset: st.lastOffset };
}

/** Merges a round into the accumulated report. */
function accumulate(acc: Accumulated, round: RoundResult): void {
  acc.passes++;
  acc.firstRange ??= round.range;
  acc.checkpointAfter = round.endOffset;
  const retained = new OffsetRangeList();
  const pushAll = (from: OffsetRangeList, into: OffsetRange[]) => into.push(...from.ranges);
  for (const g of round.groups) {
    const replacedCount = g.unchanged ? 0 : g.sources.length - g.keptTrailing;
    g.sources.forEach((seg, i) => {
      const st = g.stats[i]!;
      if (i < replacedCount) {
        for (const r of Object.keys(acc.removed) as CompactionReason[]) {
          pushAll(st.removed[r], acc.removed[r]);
          acc.removedCounts[r] += st.removed[r].count;
          if (st.removed[r].truncated) acc.removedTruncated = true;
        }
        acc.invalid += st.invalid;
        retained.append(st.retained);
        const mine = acc.created.get(seg.baseOffset);
        if (mine && mine.bytes === seg.size) acc.created.delete(seg.baseOffset);
        else acc.rewritten.push(summaryOfSource(seg, st));
      } else {
        // Left in place: all its records stay.
        const all = [...st.retained.ranges, ...(Object.keys(acc.removed) as CompactionReason[]).flatMap((r) => st.removed[r].ranges)].sort((a, b) => (a.first < b.first ? -1 : 1));
        for (const r of all) retained.addRange(r.first, r.last, 0);
        retained.count += st.recordsRead;
      }
    });
    if (!g.unchanged) {
      const c = g.cleaned;
      acc.created.set(c.baseOffset, { baseOffset: c.baseOffset, file: segmentFileName(c.baseOffset, '.log'), bytes: c.size, records: c.records, batches: c.batches, firstOffset: c.firstOffset, lastOffset: c.lastOffset });
    }
  }
  acc.retained = retained;
}

function mergeRanges(rs: OffsetRange[]): OffsetRange[] {
  const sorted = [...rs].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const out = new OffsetRangeList();
  for (const r of sorted) out.addRange(r.first, r.last, 0);
  return out.ranges;
}

function buildReport(log: PartitionLog, acc: Accumulated, opts: CompactionOptions, dryRun: boolean, after: { bytes: number; logStartOffset: bigint; logEndOffset: bigint; highWatermark: bigint }, retention: CleanerReport | null): CleanerReport {
  const removed: Partial<Record<RemovalReason, RemovedRecords>> = {};
  for (const r of Object.keys(acc.removed) as CompactionReason[]) {
    if (acc.removedCounts[r] > 0) removed[r] = { records: acc.removedCounts[r], ranges: mergeRanges(acc.removed[r]), truncated: acc.removedTruncated };
  }
  const { holes, truncated } = holesOf(removed);
  const created = [...acc.created.values()].sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : 1));
  const deleted: SegmentSummary[] = [];
  if (retention) {
    for (const d of retention.segments.deleted) {
      const mine = created.findIndex((c) => c.baseOffset === d.baseOffset);
      if (mine >= 0) created.splice(mine, 1);
      else deleted.push(d);
    }
    if (retention.removed.retention) removed.retention = retention.removed.retention;
    created.push(...retention.segments.created);
  }
  const never = acc.firstRange?.brokerNeverCompacts ?? null;
  const neverNote = never !== null && !acc.notes.some((x) => x.includes(never)) ? [`not what a broker would do (LogCleanerManager.grabFilthiestCompactedLog): a broker never compacts this topic: ${never}`] : [];
  const notes = [...(acc.firstRange?.checkpointWarning ? [`${acc.firstRange.checkpointWarning} (cleaner-offset-checkpoint; a broker logs this and cleans from the log start)`] : []), ...acc.notes, ...(retention ? retention.notes.map((n) => `retention after compaction: ${n}`) : []), ...neverNote];
  const changedCheckpoint = acc.checkpointAfter !== acc.checkpointBefore;
  const nothingToDo = acc.rewritten.length === 0 && created.length === 0 && deleted.length === 0 && !changedCheckpoint;
  const before = [...acc.rewritten, ...deleted];
  return {
    operation: 'compaction',
    dryRun,
    partitionDir: log.dir,
    topic: log.topic,
    partition: log.partition,
    now: opts.now ?? Date.now(),
    rules: opts.rules ?? 'kafka',
    nothingToDo,
    notes,
    segments: { deleted, rewritten: acc.rewritten, created },
    before: totalsOf(before),
    after: totalsOf(created),
    log: { bytesBefore: log.logSize, bytesAfter: after.bytes, logStartOffsetBefore: log.logStartOffset, logStartOffsetAfter: after.logStartOffset, logEndOffset: after.logEndOffset, highWatermark: after.highWatermark },
    removed,
    holes,
    holesTruncated: truncated,
    retained: acc.retained.ranges,
    retainedTruncated: acc.retained.truncated,
    ...(acc.firstRange ? { cleanable: acc.firstRange } : {}),
    passes: acc.passes,
    invalidMessages: acc.invalid,
    cleanerCheckpoint: { before: acc.checkpointBefore, after: acc.checkpointAfter },
    checkpointsWritten: [...(changedCheckpoint ? [CLEANER_OFFSET_CHECKPOINT_FILE] : []), ...(retention ? retention.checkpointsWritten : [])],
    ...(acc.trashEntries.length ? { trashEntries: acc.trashEntries } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Commit

/** Swaps a round's groups in and writes the cleaner checkpoint (see the module comment, step 5). */
function commitRound(log: PartitionLog, round: RoundResult, ctx: RunContext, steps: FileSteps, opts: CompactionOptions): string {
  const dir = log.dir;
  const logDir = dirname(dir);
  const replaced = round.groups.filter((g) => !g.unchanged);
  for (const g of round.groups) if (g.unchanged) g.sink.abort();
  const newBases = replaced.map((g) => g.cleaned.baseOffset);
  const oldBases = replaced.flatMap((g) => g.sources.slice(0, g.sources.length - g.keptTrailing).map((s) => s.baseOffset));
  let trash: TrashEntry | undefined;
  let committed = false;
  try {
    trash = TrashEntry.create(ctx.trashDir, { runId: ctx.runId, operation: 'compaction', partitionDir: dir, logDir, topic: log.topic, partition: log.partition, now: opts.now ?? Date.now() }, steps);
    for (const b of oldBases) for (const p of segmentFiles(dir, b)) trash.keep(p);
    for (const g of replaced) trash.manifest.created.push(...g.cleaned.files);
    const checkpointBefore = readCheckpointEntry(logDir, CLEANER_OFFSET_CHECKPOINT_FILE, log.topic, log.partition);
    trash.manifest.pending = { checkpoint: { file: CLEANER_OFFSET_CHECKPOINT_FILE, topic: log.topic, partition: log.partition, before: checkpointBefore === null ? null : checkpointBefore.toString(), after: round.endOffset.toString() } };
    trash.save();
    checkDone(ctx.signal, dir);
    if (replaced.length > 0) {
      steps.fsyncDir(dir);
      replaceSegments(dir, newBases, oldBases, steps, () => {
        committed = true;
      });
    }
  } catch (err) {
    if (err instanceof SimulatedCrash) throw err;
    if (!committed) {
      for (const g of replaced) g.sink.abort();
      rollbackSwap(dir, newBases);
      trash?.discard();
      if (err instanceof KlxError) throw err;
      throw ioErrorOf(err, dir, 'compaction (nothing was changed)');
    }
    // Past the commit point: finish what is left, else recovery will.
    try {
      completeSwap(dir, newBases, oldBases, steps);
    } catch (again) {
      if (again instanceof SimulatedCrash) throw again;
      throw new KlxError('io-error', `compaction committed but could not finish replacing the segments: ${ioErrorOf(err, dir, 'replace').message}. Startup recovery (a broker, or the engine's recovery) completes it from the .swap files.`, { file: dir, cause: err });
    }
  }
  const entry = trash!;
  try {
    const change = setCheckpointEntry(logDir, CLEANER_OFFSET_CHECKPOINT_FILE, log.topic, log.partition, round.endOffset, steps);
    entry.manifest.checkpoints.push(change);
    entry.commit(`compaction: ${replaced.length} cleaned segment(s) replaced ${oldBases.length} segment(s); cleaner checkpoint ${change.before ?? '(none)'} → ${round.endOffset}`);
  } catch (err) {
    if (err instanceof SimulatedCrash) throw err;
    throw new KlxError('io-error', `compaction replaced the segments but could not write ${CLEANER_OFFSET_CHECKPOINT_FILE}: ${ioErrorOf(err, logDir, 'checkpoint').message}. The next clean starts from the old checkpoint and finds nothing new to remove.`, { file: join(logDir, CLEANER_OFFSET_CHECKPOINT_FILE), cause: err });
  }
  return entry.manifest.id;
}

// ---------------------------------------------------------------------------------------------
// Plan and run

function newMap(opts: CompactionOptions): SkimpyOffsetMap {
  return new SkimpyOffsetMap(opts.dedupeBufferSize ?? DEFAULT_DEDUPE_BUFFER_SIZE, opts.loadFactor ?? DEFAULT_LOAD_FACTOR, opts.keyHash);
}

/**
 * The plan of a compaction (see the module comment): touches nothing in the partition.
 * @throws KlxError for a damaged segment (the partition is uncleanable), `not-found` / `io-error`.
 */
export function planCompaction(partitionDir: string, opts: CompactionOptions = {}): CleanerReport {
  const now = opts.now ?? Date.now();
  const o = { ...opts, now };
  const log = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
  const retentionAfter = opts.retentionAfter ?? isCompactDelete(log);
  const acc = newAccumulated(log);
  const decisions = opts.explain ? new DecisionLog(opts.explain) : undefined;
  const env: RoundEnv = { write: false, steps: new FileSteps(), map: newMap(o), ...(decisions ? { decisions } : {}) };
  const { round, range, reason } = cleanRound(log, o, env);
  if (!round) {
    acc.firstRange = range;
    acc.notes.push(reason!);
    if (!retentionAfter) return withDecisions(buildReport(log, acc, o, true, { bytes: log.logSize, logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset, highWatermark: hwOf(log) }, null), decisions);
  } else if (!round.mapFull && !retentionAfter) {
    accumulate(acc, round);
    settleDecisions(round, decisions);
    const bytes = log.logSize - acc.rewritten.reduce((a, s) => a + s.bytes, 0) + [...acc.created.values()].reduce((a, s) => a + s.bytes, 0);
    return withDecisions(buildReport(log, acc, o, true, { bytes, logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset, highWatermark: hwOf(log) }, null), decisions);
  }
  decisions?.discardRound();
  return planOnClone(log, o);
}

/** Attaches the collected decisions to a report. */
function withDecisions(r: CleanerReport, decisions: DecisionLog | undefined): CleanerReport {
  if (decisions) r.decisions = decisions.list();
  return r;
}

/** cleanup.policy is compact,delete: retention follows compaction. */
function isCompactDelete(log: PartitionLog): boolean {
  const p = log.config.config['cleanup.policy'];
  return p.includes('compact') && p.includes('delete');
}

function hwOf(log: PartitionLog): bigint {
  const leo = log.logEndOffset;
  const hw = log.highWatermark;
  return hw === null || hw > leo ? leo : hw;
}

/** Runs the whole operation on a clone of symbolic links in the OS temp folder and reports it as a plan. */
function planOnClone(log: PartitionLog, opts: CompactionOptions): CleanerReport {
  const tmp = mkdtempSync(join(tmpdir(), 'klx-plan-'));
  try {
    const clone = join(tmp, 'logdir', basename(log.dir));
    mkdirSync(clone, { recursive: true });
    const refused = new Set(log.listing.refusedLinks.map((l) => basename(l.link)));
    for (const name of readdirSync(log.dir)) {
      const from = join(log.dir, name);
      if (refused.has(name)) continue;
      if (!statSync(from).isFile() || name === WRITER_LOCK_FILE) continue;
      const p = parseSegmentFileName(name);
      if (p && !p.transient) symlinkSync(from, join(clone, name));
      else copyFileSync(from, join(clone, name));
    }
    const logDir = dirname(log.dir);
    for (const f of ['cleaner-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint', 'recovery-point-offset-checkpoint']) {
      if (existsSync(join(logDir, f))) copyFileSync(join(logDir, f), join(tmp, 'logdir', f));
    }
    // The clone's links are ours: they lead back into the partition folder.
    const r = runCompaction(clone, { ...opts, symlinks: 'follow' }, { runId: 'plan', trashDir: join(tmp, 'trash') });
    const fix = (s: string) => s.split(clone).join(log.dir);
    return { ...r, dryRun: true, partitionDir: log.dir, notes: r.notes.map(fix), trashEntries: undefined } as CleanerReport;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Compacts a partition (see the module comment), then applies retention when the policy has
 * `delete`. Holds the partition's writer lock.
 * @returns the report measured after the run; `trashEntries` name the undo entries.
 * @throws KlxError `locked`, `invalid-argument` (leftovers of an interrupted clean), the damage of a
 *   corrupt segment (nothing changed), `cancelled` (nothing changed), `io-error`; SimulatedCrash.
 */
export function runCompaction(partitionDir: string, opts: CompactionOptions, ctx: RunContext): CleanerReport {
  const now = opts.now ?? Date.now();
  const o = { ...opts, now };
  const first = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
  const lock = acquireLock(join(first.dir, WRITER_LOCK_FILE), { purpose: 'klx compact', what: `partition ${first.topic}-${first.partition}` });
  try {
    assertNoInterruptedSwap(first.dir);
    const initial = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
    const acc = newAccumulated(initial);
    const steps = new FileSteps(ctx.fault);
    const decisions = opts.explain ? new DecisionLog(opts.explain) : undefined;
    const env: RoundEnv = { write: true, steps, map: newMap(o), ...(ctx.signal ? { signal: ctx.signal } : {}), ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}), ...(decisions ? { decisions } : {}) };
    const maxPasses = opts.maxPasses ?? Number.POSITIVE_INFINITY;
    while (acc.passes < maxPasses) {
      const log = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
      const { round, range, reason } = cleanRound(log, o, env);
      if (!round) {
        if (acc.passes === 0) {
          acc.firstRange = range;
          acc.notes.push(reason!);
        }
        break;
      }
      accumulate(acc, round);
      settleDecisions(round, decisions);
      env.onProgress?.({ phase: 'swap', done: 0, total: null, bytes: 0 });
      acc.trashEntries.push(commitRound(log, round, ctx, steps, o));
      if (!round.mapFull) break;
      acc.notes.push(`pass ${acc.passes}: the offset map filled up at ${round.mapKeys} keys; cleaned up to offset ${round.endOffset}`);
    }
    let retention: CleanerReport | null = null;
    const afterCompaction = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
    if (opts.retentionAfter ?? isCompactDelete(afterCompaction)) {
      const d = decideRetention(afterCompaction, { now, config: opts.config, ...(decisions ? { decisions } : {}) });
      const planned = retentionReport(d, false);
      if (!planned.nothingToDo) {
        acc.trashEntries.push(...executeRetention(d, ctx));
        retention = planned;
      } else retention = { ...planned, notes: [] };
    }
    const final = PartitionLog.open(partitionDir, { config: opts.config, ...(opts.symlinks ? { symlinks: opts.symlinks } : {}) });
    return withDecisions(buildReport(initial, acc, o, false, { bytes: final.logSize, logStartOffset: final.logStartOffset, logEndOffset: final.logEndOffset, highWatermark: hwOf(final) }, retention), decisions);
  } finally {
    lock.release();
  }
}
