/**
 * The explorer's long reads, run as jobs (progress, cancel): counting records (per segment too),
 * finding every hole with its cause (plus a per-bucket summary for the hole map), verifying a
 * partition, and searching keys, values and headers for a text and/or a condition on the decoded
 * key/value, in one partition, a topic's partitions or a whole opened folder.
 *
 * Each wraps an engine scanner (`countRecords`, `scanHoles`, `verifyPartition`, `walkLog`) and
 * reports its progress in bytes of `.log` walked; cancelling aborts the scanner, which stops within
 * a few tens of milliseconds. Memory stays bounded: holes beyond `limit` are only counted (totals and
 * buckets stay exact), findings beyond `limit` likewise, and a search keeps at most `limit` matches.
 */
import { KlxError } from '../../engine/errors.ts';
import { Pacer, countRecords, streamRecordsOf, walkLog, type RecordCounts } from '../../engine/log/fetch.ts';
import type { LongReadOptions } from '../../engine/log/log-walk.ts';
import { PartitionLog } from '../../engine/log/partition-log.ts';
import type { LogSegment } from '../../engine/segment/log-segment.ts';
import { HOLE_CAUSES, scanHolesInParallel } from '../../engine/log/holes.ts';
import { abortedTxnsFromIndexes, AbortedTransactionFilter, isAbortMarker } from '../../engine/log/transactions.ts';
import { verifyPartitionInParallel } from '../../engine/log/verify-parallel.ts';
import { inSegmentOrder, splitPays, type ParallelScanOptions, type SegmentTaskRunner } from '../../engine/log/segment-tasks.ts';
import { countFindings } from '../../engine/log/findings.ts';
import { recoveryNeededFinding } from '../../engine/log/quick-check.ts';
import { DecodedCondition } from '../../engine/decode/decoded-condition.ts';
import type { Decoded } from '../../engine/decode/format.ts';
import type { RecordDecoder } from '../../engine/decode/record-decoder.ts';
import type { JobResult, ParsedReq } from '../../../src-shared/contract.ts';
import type { HoleBucket, HoleRow } from '../../../src-shared/log-types.ts';
import { rangeView, type LogCache } from '../core/log-cache.ts';
import { worstFirst } from './log-summary.ts';
import { findingOf, holeRowOf, n, preview, s, sn } from './log-wire.ts';
import { summaryOf } from './log-records.ts';
import type { JobContext } from '../core/types.ts';
import type { KafkaRecord } from '../../engine/format/types.ts';

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

/** Folds ASCII letters to lower case (so a search ignores case without touching other UTF-8 bytes). */
function foldAscii(b: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(b.byteLength);
  for (let i = 0; i < b.byteLength; i++) {
    const c = b[i]!;
    out[i] = c >= 65 && c <= 90 ? c + 32 : c;
  }
  return out;
}

/** One partition a search walks, with the decoder of its opened folder. */
export interface SearchTarget {
  log: PartitionLog;
  decoder: RecordDecoder;
}

/**
 * `log.search`: the first `limit` data records of `targets` (in order; from `fromDir`/`fromOffset`,
 * default each partition's logStartOffset) that match:
 * - the text, when given: contained in the key, value or a header (key or value) as UTF-8 bytes
 *   (ASCII case folded with `ignoreCase`), or, with `decoded`, in the decoded key/value text (the
 *   records table's decoded summary, same folding). Keys/values are decoded for this only when their
 *   bytes did not already match and are binary (text bytes decode to the same words);
 * - the condition, when given (see `decoded-condition.ts`): only the sides it reads are decoded.
 * Control records are not data and are skipped; aborted data is found and flagged.
 * Memory: at most `limit` matches kept; one record decoded at a time.
 * @throws KlxError `invalid-argument` for neither text nor condition, or a condition that does not
 *   parse (details name the character); `offset-out-of-range` for a start outside
 *   [logStartOffset, logEndOffset]; `not-found` for a `fromDir` not among the targets; `cancelled`.
 */
export async function searchJob(targets: SearchTarget[], req: ParsedReq<'log.search'>, job: JobContext): Promise<JobResult<'log.search'>> {
  const condition = req.condition !== undefined && req.condition.trim() !== '' ? DecodedCondition.parse(req.condition) : null;
  if (req.text === '' && condition === null) throw new KlxError('invalid-argument', 'give a text to search for, a condition on decoded values, or both');
  let start = 0;
  if (req.fromDir !== undefined) {
    start = targets.findIndex((t) => t.log.dir === req.fromDir);
    if (start < 0) throw new KlxError('not-found', `${req.fromDir} is not one of the partitions searched`, { file: req.fromDir });
  }
  const total = targets.slice(start).reduce((a, t) => a + t.log.logSize, 0);
  const out: SearchState = { matches: [], scannedRecords: 0, walked: 0, next: null };
  job.progress({ phase: 'searching', done: 0, total, bytes: 0 });
  let partitions = 0;
  for (let i = start; i < targets.length && out.next === null; i++) {
    partitions++;
    const from = i === start && req.fromOffset !== undefined ? BigInt(req.fromOffset) : undefined;
    await searchPartition(targets[i]!, from, req, condition, job, out, total);
  }
  return {
    matches: out.matches,
    scannedRecords: out.scannedRecords,
    scannedBytes: n(out.walked),
    partitions,
    complete: out.next === null,
    nextDir: out.next?.dir ?? null,
    nextOffset: sn(out.next?.offset ?? null),
  };
}

interface SearchState {
  matches: JobResult<'log.search'>['matches'];
  scannedRecords: number;
  /** Bytes of `.log` walked so far over every partition. */
  walked: number;
  next: { dir: string; offset: bigint } | null;
}

/**
 * Whether bytes read as text already (no control byte other than tab, LF, CR): then the table shows
 * them as they are and their decoded text (a string, or JSON re-printed) holds the same words, so a
 * text search need not decode them. Binary bytes (framing, Avro, Protobuf, integers, internal topics)
 * are decoded for the text match.
 */
function looksLikeText(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
}

/** Lower-cases ASCII letters only (as {@link foldAscii} does to bytes). */
function foldAsciiText(t: string): string {
  return t.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** The first record of `records` (an array of at most one), without reading the others. */
function firstOf(records: Iterable<KafkaRecord>): KafkaRecord[] {
  for (const r of records) return [r];
  return [];
}

async function searchPartition(target: SearchTarget, fromOffset: bigint | undefined, req: ParsedReq<'log.search'>, condition: DecodedCondition | null, job: JobContext, out: SearchState, total: number): Promise<void> {
  const { log, decoder } = target;
  const logStart = log.logStartOffset;
  const logEnd = log.logEndOffset;
  const from = fromOffset ?? logStart;
  if (from < logStart || from > logEnd) {
    throw new KlxError('offset-out-of-range', `search start ${from} is outside [${logStart}, ${logEnd}] of ${log.topic}-${log.partition}`, { file: log.dir });
  }
  const topic = log.topic;
  const text = req.text;
  const needle = Buffer.from(req.ignoreCase ? text.toLowerCase() : text, 'utf8');
  const needleText = req.ignoreCase ? foldAsciiText(text) : text;
  const where = new Set(req.in);
  const has = (b: Uint8Array | null): boolean => {
    if (b === null || b.byteLength < needle.length) return false;
    const hay = req.ignoreCase ? foldAscii(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return hay.indexOf(needle) >= 0;
  };
  /** The decoded text holds the text (only binary bytes are decoded for this; see {@link looksLikeText}). */
  const decodedHas = (side: 'key' | 'value', b: Uint8Array | null, key: Uint8Array | null): Decoded | null => {
    if (!req.decoded || b === null || looksLikeText(b)) return null;
    const d = decoder.decode(topic, side, b, key);
    return hasText(d) ? d : null;
  };
  const hasText = (d: Decoded): boolean => {
    const t = d.text;
    if (t === null) return false;
    return (req.ignoreCase ? foldAsciiText(t) : t).includes(needleText);
  };
  const before = out.walked;
  const phase = `searching ${topic}-${log.partition}`;
  const pacer = new Pacer({ signal: job.signal, phase, total, onProgress: (p) => job.progress({ phase, done: Math.min(total, before + p.done), total, bytes: before + p.bytes }) });
  const aborted = abortedTxnsFromIndexes(log).abortedTransactions;
  let filter: AbortedTransactionFilter | null = null;
  outer: for (const e of walkLog(log, { fromOffset: from })) {
    if (e.type !== 'batch') continue;
    const h = e.header;
    out.walked += h.size;
    await pacer.step(h.size);
    if (h.lastOffset < from) continue;
    if (h.baseOffset >= logEnd) break;
    let records: Iterable<KafkaRecord>;
    try {
      // One record object at a time: a batch may hold millions.
      records = streamRecordsOf(e);
    } catch {
      continue; // undecodable batch: reported by the records table and verify, not a search hit
    }
    if (aborted.length > 0 && filter === null) filter = new AbortedTransactionFilter(aborted, h.baseOffset);
    const isAborted = filter !== null && filter.isAborted(h, h.isControl && isAbortMarker(h, firstOf(records)));
    if (h.isControl) continue;
    for (const r of records) {
      if (r.offset < from || r.offset < logStart || r.offset >= logEnd) continue;
      if (out.matches.length >= req.limit) {
        out.next = { dir: log.dir, offset: r.offset };
        break outer;
      }
      out.scannedRecords++;
      let key: Decoded | null = null;
      let value: Decoded | null = null;
      const hit: ('key' | 'value' | 'header')[] = [];
      if (text !== '') {
        if (where.has('key') && (has(r.key) || (key = decodedHas('key', r.key, null)) !== null)) hit.push('key');
        if (where.has('value') && (has(r.value) || (value = decodedHas('value', r.value, r.key)) !== null)) hit.push('value');
        if (where.has('header') && r.headers.some((x) => has(Buffer.from(x.key, 'utf8')) || has(x.value))) hit.push('header');
        if (hit.length === 0) continue;
      }
      if (condition !== null) {
        if (condition.usesKey) key ??= decoder.decode(topic, 'key', r.key);
        if (condition.usesValue) value ??= decoder.decode(topic, 'value', r.value, r.key);
        const ok = condition.test({ key: key?.json, value: value?.json, offset: r.offset, timestamp: r.timestamp, partition: log.partition, topic });
        if (!ok) continue;
      }
      key ??= decoder.decode(topic, 'key', r.key);
      value ??= decoder.decode(topic, 'value', r.value, r.key);
      out.matches.push({
        dir: log.dir,
        topic,
        partition: log.partition,
        offset: s(r.offset),
        timestamp: s(r.timestamp),
        in: hit,
        key: preview(r.key, req.previewBytes),
        value: preview(r.value, req.previewBytes),
        segmentBaseOffset: s(e.segment.baseOffset),
        aborted: isAborted,
        keyDecoded: summaryOf(key),
        valueDecoded: summaryOf(value),
      });
    }
  }
  pacer.finish();
}
