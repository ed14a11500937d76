/**
 * What the explorer shows about a partition before reading any record: the summary of a partition
 * (offsets, checkpoints, config with sources, health badge facts, dirty ratio) and one row per
 * segment (offsets, timestamps, index files and their health).
 *
 * Sources: `PartitionLog` (names, sizes, checkpoints; spec §10, §11), `quickCheckPartition` and the
 * verifier's index checks (Kafka's `OffsetIndex/TimeIndex/TransactionIndex.sanityCheck`, `LogLoader`
 * passes 1–3), and spec §13.2 for the dirty ratio (Kafka's `LogCleanerManager.cleanableOffsets` and
 * `LogToClean`). Nothing here reads a whole `.log`: per segment only the first batch header and the
 * batches after the last offset-index entry are read (a whole segment only when it has no index).
 */
import { basename } from 'node:path';
import type { MetaProperties } from '../../engine/files/meta-properties.ts';
import type { LogDirectory } from '../../engine/log/log-dir.ts';
import type { PartitionLog } from '../../engine/log/partition-log.ts';
import { parsePartitionDirName } from '../../engine/files/file-names.ts';
import { formatConfigValue, type TopicConfigKey } from '../../engine/log/topic-config.ts';
import { indexFactsOrThrow, quickCheckPartition, readSegmentIndexes, segmentIndexFacts, segmentRefs, tailCheckPartition, type SegmentIndexesRead } from '../../engine/log/quick-check.ts';
import type { Finding as EngineFinding } from '../../engine/log/findings.ts';
import { KlxError } from '../../engine/errors.ts';
import type { DirtyRatio, Finding, IndexFileInfo, LogDirSummary, PartitionHealth, PartitionSummary, PendingSwaps, SegmentRow, Severity } from '../../../src-shared/log-types.ts';
import type { CountFacts, VerifyFacts } from '../core/log-cache.ts';
import { findingOf, openProblemOf, s, sn } from './log-wire.ts';

/** At most this many findings travel with a summary. */
export const MAX_SUMMARY_FINDINGS = 200;

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Sorts findings worst first (stable within a severity). */
export function worstFirst<T extends { severity: Severity }>(findings: T[]): T[] {
  return findings.map((f, i) => ({ f, i })).sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i).map((x) => x.f);
}

const INDEX_CODE = /index|untrimmed|stale/;
const LEFTOVER_CODES = new Set(['leftover-file', 'orphan-index', 'temp-file']);

/**
 * The quick check plus the tail check of every segment (a cut, garbage or zeroed tail, a CRC failure
 * near the end, reported as verify reports them), never throwing: an unreadable file becomes an
 * error finding naming it. `indexes`: the index files as read once for the call (`readPartitionIndexes`).
 */
function quickCheck(log: PartitionLog, indexes?: readonly SegmentIndexesRead[]): EngineFinding[] {
  try {
    return [...quickCheckPartition(log, indexes), ...tailCheckPartition(log)];
  } catch (err) {
    const k = err instanceof KlxError ? err : new KlxError('io-error', String(err));
    return [{ severity: 'error', code: 'corrupt-index', file: k.file ?? log.dir, reason: `the quick check could not read an index file: ${k.reason}`, details: {}, ...(k.position !== undefined ? { position: k.position } : {}) }];
  }
}

/**
 * Health badge facts from the quick check plus, when there was one, this session's verify. Before a
 * verify, the CRC failures the records pages met (`crcSeen`) are findings too: the badge never says
 * "CRC not checked" beside a row the table flags. `indexes`: the segments' index files as read once
 * for the call (`readPartitionIndexes`), read here when absent.
 */
export function healthOf(log: PartitionLog, verify: VerifyFacts | undefined, crcSeen: readonly Finding[] = [], indexes?: readonly SegmentIndexesRead[]): PartitionHealth {
  const tail = quickCheck(log, indexes).map(findingOf);
  const quick = verify ? tail : [...tail, ...crcSeen.filter((c) => !tail.some((q) => q.code === c.code && q.file === c.file && q.position === c.position))];
  // A verify repeats the quick check's index findings: keep the verify's list when there is one.
  const all: Finding[] = verify ? [...verify.findings, ...quick.filter((q) => !verify.findings.some((v) => v.code === q.code && v.file === q.file && v.position === q.position))] : quick;
  const sorted = worstFirst(all);
  const count = (sev: Severity) => all.filter((f) => f.severity === sev).length;
  const errors = verify ? Math.max(verify.errors, count('error')) : count('error');
  const warnings = verify ? Math.max(verify.warnings, count('warning')) : count('warning');
  const infos = verify ? Math.max(verify.infos, count('info')) : count('info');
  return {
    level: errors > 0 ? 'error' : warnings > 0 ? 'warning' : infos > 0 ? 'info' : 'ok',
    errors,
    warnings,
    infos,
    // Before a verify, a CRC failure the tail check met is already an error (never "not checked").
    crc: verify ? (verify.crcErrors > 0 ? 'errors' : 'ok') : quick.some((f) => f.code === 'crc-mismatch') ? 'errors' : 'unknown',
    crcErrors: verify?.crcErrors ?? quick.filter((f) => f.code === 'crc-mismatch').length,
    indexProblems: all.filter((f) => INDEX_CODE.test(f.code) && f.severity !== 'info').length,
    leftoverFiles: all.filter((f) => LEFTOVER_CODES.has(f.code)).length,
    verifiedAt: verify?.endedAt ?? null,
    findings: sorted.slice(0, MAX_SUMMARY_FINDINGS),
    findingsTruncated: sorted.length > MAX_SUMMARY_FINDINGS,
  };
}

/**
 * The dirty ratio of a compacted partition (spec §13.1–§13.2), or null for a topic that is not
 * compacted. The first uncleanable offset is min(high watermark (LEO when unknown), active segment
 * base offset), raised to the first dirty offset and rounded down to a segment base. The last stable
 * offset and `min.compaction.lag.ms` could only lower it further (they need a walk of the log and
 * the wall clock); the figure shown is therefore the broker's upper bound.
 */
export function dirtyRatioOf(log: PartitionLog): DirtyRatio | null {
  const cfg = log.config.config;
  if (!cfg['cleanup.policy'].includes('compact')) return null;
  const segs = log.segments;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const cp = log.cleanerCheckpoint;
  const reset = cp !== null && (cp < logStart || cp > logEnd);
  const firstDirty = cp === null || reset ? logStart : cp;
  const active = log.activeSegment?.baseOffset ?? logEnd;
  const hw0 = log.highWatermark ?? logEnd;
  const hw = hw0 > logEnd ? logEnd : hw0;
  let uncleanable = hw < active ? hw : active;
  const bound: DirtyRatio['uncleanableBound'] = hw < active ? 'high-watermark' : 'active-segment';
  if (uncleanable < firstDirty) uncleanable = firstDirty;
  const holder = log.segmentFor(uncleanable);
  if (holder) uncleanable = holder.baseOffset;
  // Kafka's UnifiedLog.logSegments(from, to): the segment holding `from` and every later one whose base < to.
  const sizeIn = (from: bigint, to: bigint): number => {
    if (from >= to) return 0;
    let total = 0;
    const first = log.segmentFor(from);
    for (const seg of segs) {
      if (seg.baseOffset >= to) break;
      if (first ? seg.baseOffset >= first.baseOffset : true) total += seg.size;
    }
    return total;
  };
  const cleanBytes = sizeIn(-1n, firstDirty);
  const cleanableBytes = sizeIn(firstDirty, uncleanable > firstDirty ? uncleanable : firstDirty);
  const ratio = cleanBytes + cleanableBytes === 0 ? 0 : cleanableBytes / (cleanBytes + cleanableBytes);
  const min = cfg['min.cleanable.dirty.ratio'];
  return {
    firstDirtyOffset: s(firstDirty),
    checkpointReset: reset,
    firstUncleanableOffset: s(uncleanable),
    uncleanableBound: bound,
    cleanBytes,
    cleanableBytes,
    ratio,
    minCleanableRatio: min,
    aboveMinimum: ratio > min,
  };
}

/**
 * The summary of one partition (see `partitionSummary` in log-types.ts). `indexes`: the segments'
 * index files as read once for the call (`readPartitionIndexes`, shared with `segmentRowsOf`).
 */
export function partitionSummaryOf(log: PartitionLog, facts: { verify?: VerifyFacts; counts?: CountFacts; crcSeen?: Finding[] } = {}, indexes?: readonly SegmentIndexesRead[]): PartitionSummary {
  const cfg = log.config;
  return {
    dir: log.dir,
    name: basename(log.dir),
    topic: log.topic,
    partition: log.partition,
    kind: log.kind,
    segmentCount: log.segments.length,
    logSize: log.logSize,
    sizeOnDisk: log.sizeOnDisk,
    logStartOffset: s(log.logStartOffset),
    logEndOffset: s(log.logEndOffset),
    firstSegmentBaseOffset: sn(log.segments[0]?.baseOffset),
    highWatermark: sn(log.highWatermark),
    recoveryPoint: sn(log.recoveryPoint),
    cleanerCheckpoint: sn(log.cleanerCheckpoint),
    topicId: log.topicId,
    policy: [...cfg.config['cleanup.policy']],
    config: (Object.keys(cfg.config) as TopicConfigKey[]).map((key) => ({ key, value: formatConfigValue(key, cfg.config[key]), source: cfg.sources[key] })),
    configNotes: [...cfg.notes],
    leaderEpochs: log.leaderEpochs.map((e) => ({ epoch: e.epoch, startOffset: s(e.startOffset) })),
    problems: log.problems.map(openProblemOf),
    pendingSwaps: pendingSwapsSummaryOf(log),
    health: healthOf(log, facts.verify, facts.crcSeen, indexes),
    dirtyRatio: dirtyRatioOf(log),
    counts: facts.counts ? { ...facts.counts } : null,
  };
}

/**
 * The partition's leftovers of an interrupted cleaner, split or retention and what a broker does
 * with them (`PartitionLog.pendingSwaps`, Kafka's `LogLoader.load`), or null when there are none.
 * A `.log.swap` that cannot be read is said so in the notice (never thrown).
 */
export function pendingSwapsSummaryOf(log: PartitionLog): PendingSwaps | null {
  try {
    const p = log.pendingSwaps;
    if (!p) return null;
    return {
      notice: p.notice,
      swapFiles: p.swaps.map((x) => x.name),
      replacedSegments: p.replacedSegments.map(s),
      range: p.range ? { from: s(p.range.from), to: s(p.range.to) } : null,
      deletedFiles: [...p.incompleteSplit, ...p.cleaned, ...p.deleted].map((f) => f.name),
    };
  } catch (err) {
    const k = err instanceof KlxError ? err : new KlxError('io-error', String(err));
    const swaps = log.listing.transient.filter((t) => t.suffix === 'swap').map((t) => t.name);
    return { notice: `Leftover .swap files of an interrupted cleaner or split (${swaps.join(', ')}) that could not be read (${k.reason}): what a broker does with them at startup (LogLoader.load) is not known; the records shown are those of the segments on disk.`, swapFiles: swaps, replacedSegments: [], range: null, deletedFiles: [] };
  }
}

function metaOf(meta: MetaProperties | null): LogDirSummary['meta'] {
  if (!meta) return null;
  return { version: meta.version, clusterId: meta.clusterId ?? null, nodeId: meta.nodeId ?? meta.brokerId ?? null };
}

/** The summary of a log directory and its partitions. */
export function logDirSummaryOf(d: LogDirectory, factsOf: (dir: string) => { verify?: VerifyFacts; counts?: CountFacts; crcSeen?: Finding[] }): LogDirSummary {
  return {
    path: d.path,
    meta: metaOf(d.meta),
    cleanShutdown: d.checkpoints.cleanShutdown,
    problems: d.checkpoints.problems.map(openProblemOf),
    ignored: d.ignored.map((i) => ({ name: i.name, reason: i.reason })),
    partitions: d.partitions.map((p) => partitionSummaryOf(p, factsOf(p.dir))),
    pending: d.unopened.flatMap((dir) => {
      const n = parsePartitionDirName(basename(dir));
      return n ? [{ dir, name: basename(dir), topic: n.topic, partition: n.partition, kind: n.kind }] : [];
    }),
  };
}

function indexInfo(file: string, exists: boolean, size: number, entries: number, problems: Finding[]): IndexFileInfo {
  const worst = problems.reduce<Severity | null>((w, f) => (w === null || SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[w] ? f.severity : w), null);
  return { file, exists, size: Math.max(0, size), entries, health: worst ?? 'ok', problems };
}

function iso(ms: number): string {
  return new Date(Number.isFinite(ms) ? ms : 0).toISOString();
}

/**
 * One row per segment (see `segmentRow` in log-types.ts). Index problems come from Kafka's sanity
 * checks (OffsetIndex/TimeIndex/TransactionIndex.sanityCheck) and the shape checks of the verifier (missing, untrimmed, stale entries); an index file
 * that cannot be read at all is reported as an error on that file. `indexes`: the index files as
 * read once for the call (`readPartitionIndexes`, shared with `partitionSummaryOf`), read here when absent.
 */
export function segmentRowsOf(log: PartitionLog, indexes?: readonly SegmentIndexesRead[]): SegmentRow[] {
  const refs = segmentRefs(log);
  const logStart = log.logStartOffset;
  const cleanShutdown = log.startupCleanShutdown;
  return log.segments.map((seg, i) => {
    const ref = refs[i]!;
    let problems: Finding[] = [];
    let indexEntries = 0;
    let timeEntries = 0;
    let txnEntries = 0;
    let lastTimeIndexTs: bigint | null = null;
    let timeIndexSound = false;
    try {
      const read = indexes?.[i];
      const facts = read ? indexFactsOrThrow(read) : segmentIndexFacts(ref, readSegmentIndexes(ref), cleanShutdown);
      problems = facts.findings.map(findingOf);
      indexEntries = facts.indexEntries;
      timeEntries = facts.timeEntries;
      txnEntries = facts.txnEntries;
      lastTimeIndexTs = facts.lastTimeIndexTs;
      timeIndexSound = facts.timeIndexSound;
    } catch (err) {
      const k = err instanceof KlxError ? err : new KlxError('io-error', String(err));
      problems = [{ severity: 'error', code: 'corrupt-index', file: k.file ?? ref.indexPath, reason: `cannot read: ${k.reason}`, details: {}, ...(k.position !== undefined ? { position: k.position } : {}) }];
    }
    const forFile = (f: string) => problems.filter((p) => p.file === f);
    const first = seg.firstBatch();
    const last = seg.lastBatch();
    const active = i === log.segments.length - 1;
    let lastTimestamp: bigint | null = null;
    let lastSource: SegmentRow['lastTimestampSource'] = null;
    if (!active && timeIndexSound && lastTimeIndexTs !== null && (last === null || lastTimeIndexTs >= last.maxTimestamp)) {
      lastTimestamp = lastTimeIndexTs;
      lastSource = 'time-index';
    } else if (last !== null && last.maxTimestamp >= 0n) {
      lastTimestamp = last.maxTimestamp;
      lastSource = 'last-batch';
    }
    const next = last ? last.lastOffset + 1n : seg.baseOffset;
    return {
      baseOffset: s(seg.baseOffset),
      lastOffset: last ? s(last.lastOffset) : null,
      firstBatchOffset: first ? s(first.baseOffset) : null,
      size: seg.size,
      file: seg.files.log,
      modifiedAt: iso(seg.files.logModifiedMs),
      firstTimestamp: first && first.maxTimestamp >= 0n ? s(first.maxTimestamp) : null,
      lastTimestamp: lastTimestamp === null ? null : s(lastTimestamp),
      lastTimestampSource: lastSource,
      active,
      belowLogStart: !active && next <= logStart,
      index: indexInfo(ref.index ?? ref.indexPath, ref.index !== null, seg.files.indexSize, indexEntries, forFile(ref.index ?? ref.indexPath)),
      timeIndex: indexInfo(ref.timeindex ?? ref.timeindexPath, ref.timeindex !== null, seg.files.timeindexSize, timeEntries, forFile(ref.timeindex ?? ref.timeindexPath)),
      txnIndex: indexInfo(ref.txnindex ?? ref.txnindexPath, ref.txnindex !== null, seg.files.txnindexSize, txnEntries, forFile(ref.txnindex ?? ref.txnindexPath)),
    };
  });
}
