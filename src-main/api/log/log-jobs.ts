/**
 * The explorer's long reads, run as jobs (progress, cancel): counting records (per segment too),
 * finding every hole with its cause (plus a per-bucket summary for the hole map) and verifying a
 * partition. Searching is `log-search.ts`.
 *
 * Each wraps an engine scanner (`countRecords`, `scanHoles`, `verifyPartition`) and
 * reports its progress in bytes of `.log` walked; cancelling aborts the scanner, which stops within
 * a few tens of milliseconds. Memory stays bounded: holes beyond `limit` are only counted (totals and
 * buckets stay exact), findings beyond `limit` likewise.
 */
import { KlxError } from '../../engine/errors.ts';
import { countRecords, type RecordCounts } from '../../engine/log/fetch.ts';
import type { LongReadOptions } from '../../engine/log/log-walk.ts';
import { PartitionLog } from '../../engine/log/partition-log.ts';
import type { LogSegment } from '../../engine/segment/log-segment.ts';
import { HOLE_CAUSES, scanHolesInParallel } from '../../engine/log/holes.ts';
import { verifyPartitionInParallel } from '../../engine/log/verify-parallel.ts';
import { inSegmentOrder, splitPays, type ParallelScanOptions, type SegmentTaskRunner } from '../../engine/log/segment-tasks.ts';
import { countFindings } from '../../engine/log/findings.ts';
import { recoveryNeededFinding } from '../../engine/log/quick-check.ts';
import type { JobResult, ParsedReq } from '../../../src-shared/contract.ts';
import type { HoleBucket, HoleRow } from '../../../src-shared/log-types.ts';
import { rangeView, type LogCache } from '../core/log-cache.ts';
import { worstFirst } from './log-summary.ts';
import { findingOf, holeRowOf, s, sn } from './log-wire.ts';
import type { JobContext } from '../core/types.ts';

/** What {@link countSegmentTask} counts: segment `index` of the partition at `dir` (base offset `baseOffset`), offsets [from, to). */
export interface CountSegmentArgs {
  dir: string;
  index: number;
  baseOffset: bigint;
  from: bigint;
  to: bigint;
}

/** The counts of one segment (the engine's `countRecords` over a view holding only it). @throws KlxError `cancelled`. */
export function countSegment(log: PartitionLog, seg: LogSegment, from: bigint, to: bigint, opts: LongReadOptions): Promise<RecordCounts> {
  return countRecords(rangeView(log, from, to, [seg]), opts);
}

/**
 * A segment's counts on a scan-pool thread (`scan-tasks.ts`): the partition opened there.
 * @throws KlxError `not-found` when the partition no longer has that segment (its files changed), `cancelled`.
 */
export function countSegmentTask(a: CountSegmentArgs, opts: LongReadOptions): Promise<RecordCounts> {
  const log = PartitionLog.open(a.dir);
  const seg = log.segments[a.index];
  if (!seg || seg.baseOffset !== a.baseOffset) throw new KlxError('not-found', `segment ${a.baseOffset} of ${a.dir} is gone: the partition changed while it was being counted`, { file: a.dir });
  return countSegment(log, seg, a.from, a.to, opts);
}

/**
 * `log.countRecords`: counts of the whole partition and of each segment (header-only walk).
 * With `split.runner` a partition of `split.minBytes` or more is counted segment by segment on its
 * threads (`countSegment` tasks; the same answer: segments are counted apart either way).
 */
export async function countJob(log: PartitionLog, job: JobContext, cache: Pick<LogCache, 'setCounts'>, split: ParallelScanOptions = {}): Promise<JobResult<'log.countRecords'>> {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const total = log.logSize;
  const segments: JobResult<'log.countRecords'>['segments'] = [];
  const sum = { records: 0, controlRecords: 0, batches: 0, emptyBatches: 0, bytes: 0 };
  job.progress({ phase: 'counting records', done: 0, total, bytes: 0 });
  const ranges = log.segments.map((seg, i) => {
    const segEnd = i === log.segments.length - 1 ? logEnd : seg.nextOffset();
    return { seg, from: seg.baseOffset > logStart ? seg.baseOffset : logStart, to: segEnd };
  });
  const add = (i: number, c: RecordCounts | null) => {
    const row = { baseOffset: s(ranges[i]!.seg.baseOffset), records: 0, controlRecords: 0, batches: 0, emptyBatches: 0, bytes: 0 };
    if (c) {
      Object.assign(row, { records: c.records, controlRecords: c.controlRecords, batches: c.batches, emptyBatches: c.emptyBatches, bytes: c.bytes });
      for (const k of ['records', 'controlRecords', 'batches', 'emptyBatches', 'bytes'] as const) sum[k] += c[k];
    }
    segments.push(row);
  };
  const runner = split.runner;
  if (runner && splitPays(log, split)) {
    const counted = inSegmentOrder(
      ranges.length,
      async (i, signal, onBytes) => {
        const r = ranges[i]!;
        if (r.to <= r.from) return null;
        const c = await runner.run<RecordCounts>('countSegment', { dir: log.dir, index: i, baseOffset: r.seg.baseOffset, from: r.from, to: r.to } satisfies CountSegmentArgs, { signal, onBytes });
        onBytes(Math.max(0, r.seg.size));
        return c;
      },
      { threads: runner.threads, signal: job.signal, onProgress: (done) => job.progress({ phase: 'counting records', done: Math.min(total, done), total, bytes: done }) },
    );
    let i = 0;
    for await (const c of counted) add(i++, c);
    job.progress({ phase: 'counting records', done: total, total, bytes: total });
  } else {
    let before = 0;
    for (let i = 0; i < ranges.length; i++) {
      const { seg, from, to } = ranges[i]!;
      let c: RecordCounts | null = null;
      if (to > from) {
        // One segment at a time: the engine's counter over a view holding only this segment.
        c = await countSegment(log, seg, from, to, {
          signal: job.signal,
          onProgress: (p) => job.progress({ phase: 'counting records', done: Math.min(total, before + p.done), total, bytes: before + p.bytes }),
        });
      }
      add(i, c);
      before += Math.max(0, seg.size);
      job.progress({ phase: 'counting records', done: Math.min(total, before), total, bytes: before });
    }
  }
  cache.setCounts(log, { records: sum.records, controlRecords: sum.controlRecords, batches: sum.batches, emptyBatches: sum.emptyBatches });
  return { ...sum, offsetSpan: s(logEnd - logStart), logStartOffset: s(logStart), logEndOffset: s(logEnd), segments };
}

/** Splits [base, end) into at most `wanted` buckets of near-equal offset width. */
class Buckets {
  readonly bounds: bigint[];
  readonly absent: Map<string, number>[];

  constructor(readonly base: bigint, readonly end: bigint, wanted: number) {
    const span = end > base ? end - base : 0n;
    const count = span === 0n ? 0 : Number(span < BigInt(wanted) ? span : BigInt(wanted));
    this.bounds = [];
    for (let i = 0; i <= count; i++) this.bounds.push(base + (span * BigInt(i)) / BigInt(Math.max(1, count)));
    this.absent = Array.from({ length: count }, () => new Map());
  }

  /** Index of the bucket holding `offset` (clamped). */
  private indexOf(offset: bigint): number {
    let lo = 0;
    let hi = this.absent.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.bounds[mid]! <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Adds the absent offsets [from, to] of `cause`, clipped to the buckets' range. */
  add(from: bigint, to: bigint, cause: string): void {
    if (this.absent.length === 0) return;
    const lo = from > this.base ? from : this.base;
    const hi = to < this.end - 1n ? to : this.end - 1n;
    if (hi < lo) return;
    for (let i = this.indexOf(lo); i < this.absent.length; i++) {
      const bFrom = this.bounds[i]!;
      const bTo = this.bounds[i + 1]! - 1n;
      if (bFrom > hi) break;
      const a = lo > bFrom ? lo : bFrom;
      const b = hi < bTo ? hi : bTo;
      if (b >= a) {
        const m = this.absent[i]!;
        m.set(cause, (m.get(cause) ?? 0) + Number(b - a + 1n));
      }
    }
  }

  rows(): HoleBucket[] {
    return this.absent.map((m, i) => ({ from: s(this.bounds[i]!), to: s(this.bounds[i + 1]!), absent: Object.fromEntries(m) }));
  }
}

/**
 * `log.holes`: every hole (the first `limit` listed), totals per cause, and the hole map's buckets.
 * With `split.runner` a partition of `split.minBytes` or more is walked segment by segment on its threads (same answer: `scanHolesInParallel`).
 */
export async function holesJob(log: PartitionLog, req: ParsedReq<'log.holes'>, job: JobContext, split: ParallelScanOptions = {}): Promise<JobResult<'log.holes'>> {
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const firstBase = log.segments[0]?.baseOffset ?? logStart;
  const base = firstBase < logStart ? firstBase : logStart;
  const buckets = new Buckets(base, logEnd, req.buckets);
  const totals = new Map(HOLE_CAUSES.map((c) => [c, { ranges: 0, offsets: 0n, offsetsInSpan: 0n }]));
  const holes: HoleRow[] = [];
  let truncated = false;
  let missing = 0n;
  job.progress({ phase: 'finding holes', done: 0, total: log.logSize, bytes: 0 });
  for await (const h of scanHolesInParallel(log, { ...split, signal: job.signal, onProgress: (p) => job.progress({ phase: 'finding holes', done: Math.min(p.done, log.logSize), total: log.logSize, bytes: p.bytes }) })) {
    const t = totals.get(h.cause)!;
    t.ranges++;
    t.offsets += h.count;
    if (h.count > 0n) {
      buckets.add(h.from, h.to, h.cause);
      const lo = h.from > logStart ? h.from : logStart;
      const hi = h.to < logEnd - 1n ? h.to : logEnd - 1n;
      if (hi >= lo) {
        missing += hi - lo + 1n;
        t.offsetsInSpan += hi - lo + 1n;
      }
    }
    if (holes.length < req.limit) holes.push(holeRowOf(h));
    else truncated = true;
  }
  return {
    holes,
    truncated,
    totals: [...totals].filter(([, t]) => t.ranges > 0).map(([cause, t]) => ({ cause, ranges: t.ranges, offsets: s(t.offsets), offsetsInSpan: s(t.offsetsInSpan) })),
    missingOffsets: s(missing),
    offsetSpan: s(logEnd - logStart),
    logStartOffset: s(logStart),
    logEndOffset: s(logEnd),
    firstSegmentBaseOffset: sn(log.segments[0]?.baseOffset),
    cleanerCheckpoint: sn(log.cleanerCheckpoint),
    highWatermark: sn(log.highWatermark),
    segments: log.segments.map((seg, i) => ({ baseOffset: s(seg.baseOffset), nextOffset: s(i === log.segments.length - 1 ? logEnd : seg.nextOffset()) })),
    buckets: buckets.rows(),
  };
}

/**
 * `log.verify`: the verifier's findings (worst first, the first `limit`), counts and totals; remembered for the health badge.
 * With `split.runner` a partition of `split.minBytes` or more is verified segment by segment on its threads (same answer: `verify-parallel.ts`).
 */
export async function verifyJob(log: PartitionLog, req: ParsedReq<'log.verify'>, job: JobContext, cache: Pick<LogCache, 'setVerify'>, split: { runner: SegmentTaskRunner | null; minBytes?: number } = { runner: null }): Promise<JobResult<'log.verify'>> {
  const total = log.logSize;
  job.progress({ phase: 'verifying', done: 0, total, bytes: 0 });
  const report = await verifyPartitionInParallel(log, {
    ...split,
    deep: req.deep,
    signal: job.signal,
    onProgress: (p) => job.progress({ phase: 'verifying', done: Math.min(total, p.bytesDone), total, bytes: p.bytesDone }),
  });
  // The verifier checks the files; whether a broker would recover them at startup is the quick
  // check's note (LogLoader.recoverLog), listed here too so Verify says what the health badge says.
  const recovery = recoveryNeededFinding(log);
  const engineFindings = recovery ? [...report.findings, recovery] : report.findings;
  const counts = countFindings(engineFindings);
  const sorted = worstFirst(engineFindings.map(findingOf));
  cache.setVerify(log, {
    endedAt: new Date().toISOString(),
    crcErrors: report.findings.filter((f) => f.code === 'crc-mismatch').length,
    errors: counts.error,
    warnings: counts.warning,
    infos: counts.info,
    findings: sorted.slice(0, 200),
  });
  return {
    findings: sorted.slice(0, req.limit),
    truncated: sorted.length > req.limit,
    counts: { ...counts },
    stats: { ...report.stats },
    logStartOffset: s(report.logStartOffset),
    logEndOffset: s(report.logEndOffset),
  };
}
