/**
 * {@link verifyPartition} over a partition's segments on several threads (issue 16), with exactly
 * the one-thread report: same findings in the same order with the same texts, same counts and totals.
 *
 * Each segment is scanned on a worker thread ({@link verifySegmentTask}) as if it were the first
 * one: no offset seen before it and no transaction open. The merge, in segment order, then settles
 * what the scan of a segment takes from the ones before it (`ScanContext`):
 * - offsets: a segment whose first CRC-valid batch starts above every offset seen before (the normal
 *   case) is checked exactly as the one-thread scan checks it; otherwise (segments that overlap, or
 *   a first batch whose lastOffsetDelta is negative) the segment is scanned again, on a thread, from
 *   the true context, which is the one-thread scan itself;
 * - transactions still open at the roll (LogSegment.roll does not close them, so a transaction's
 *   batches and its marker may lie in different segments): the ABORT markers' first offsets and last
 *   stable offsets (ProducerStateManager / ProducerAppendInfo) are corrected from the transactions
 *   open before the segment and the order of the segment's markers (`TxnTrace`), and only then are
 *   the `.txnindex` findings made;
 * - the log end (the active segment's last valid batch) and the checkpoints, as in the one-thread scan.
 * Progress is the bytes of `.log` read by every thread; cancelling stops every thread.
 */
import type { AbortedTxn } from '../files/txn-index.ts';
import { startupRecoveryOf, type StartupRecovery } from './corruption-consequences.ts';
import { countFindings, type Finding } from './findings.ts';
import type { PartitionLog } from './partition-log.ts';
import { checkpointFindings, folderFindings, segmentRefs, type SegmentFilesRef } from './quick-check.ts';
import { inSegmentOrder, splitPays, type ParallelScanOptions } from './segment-tasks.ts';
import { newScanContext, scanSegment, txnIndexFindings, verifyPartition, type AbortMarker, type ScanContext, type TxnTrace, type VerifyOptions, type VerifyReport } from './verify.ts';

/** Arguments of {@link verifySegmentTask} (structured-cloned to the thread). */
export interface VerifySegmentArgs {
  ref: SegmentFilesRef;
  /** The log directory had a clean-shutdown marker (as a broker reads it: PartitionLog.startupCleanShutdown). */
  cleanShutdown: boolean;
  /** What a broker does with this segment at startup (for the CRC findings' texts). */
  startup: StartupRecovery;
  deep: boolean;
  /** The context before the segment when known; null: scan it as the first segment (see the module comment). */
  before: { prevLastOffset: bigint | null; prevFile: string | null; openTxns: Map<bigint, bigint> } | null;
}

/** What {@link verifySegmentTask} returns: the segment's scan without its index files, and the context after it. */
export interface VerifySegmentResult {
  findings: Finding[];
  logSize: number;
  validBatches: number;
  damagedBatches: number;
  damagedRecords: number;
  records: number;
  nextOffset: bigint | null;
  firstValid: { baseOffset: bigint; lastOffset: bigint } | null;
  abortMarkers: AbortMarker[];
  trace: TxnTrace;
  /** The `.txnindex` entries (for its findings, made at the merge). */
  txnEntries: AbortedTxn[];
  after: { prevLastOffset: bigint | null; prevFile: string | null; openTxns: Map<bigint, bigint> };
}

/**
 * One segment's part of a verification, on a worker thread: `scanSegment` from `a.before` (or as the
 * first segment), its `.txnindex` findings left to the merge.
 * @throws KlxError `cancelled`, `not-found` / `io-error` as `scanSegment`.
 */
export async function verifySegmentTask(a: VerifySegmentArgs, run: { signal?: AbortSignal; onBytes?: (bytes: number) => void }): Promise<VerifySegmentResult> {
  const trace: TxnTrace = { closes: 0, firstClose: new Map(), aborts: [] };
  const ctx: ScanContext = { ...newScanContext(a.cleanShutdown), txnTrace: trace };
  if (a.before) Object.assign(ctx, { prevLastOffset: a.before.prevLastOffset, prevFile: a.before.prevFile, openTxns: new Map(a.before.openTxns) });
  const scan = await scanSegment(a.ref, ctx, { deep: a.deep, startup: a.startup, signal: run.signal, onBytes: run.onBytes, deferTxnFindings: true });
  return {
    findings: scan.findings,
    logSize: scan.logSize,
    validBatches: scan.validBatches,
    damagedBatches: scan.damagedBatches,
    damagedRecords: scan.damagedRecords,
    records: scan.records,
    nextOffset: scan.nextOffset,
    firstValid: scan.firstValid,
    abortMarkers: scan.abortMarkers,
    trace,
    txnEntries: scan.indexes.txnindex?.entries ?? [],
    after: { prevLastOffset: ctx.prevLastOffset, prevFile: ctx.prevFile, openTxns: ctx.openTxns },
  };
}

/**
 * The ABORT markers of a segment scanned without the transactions `unseen` that were open before it,
 * as a scan that saw them gives them, and the transactions open after the segment.
 * A transaction open before the segment stays open up to its producer's first marker in the segment:
 * that marker's transaction starts where it started, and until then it holds back the last stable
 * offset of every other producer's ABORT (ProducerStateManager: the first unstable offset is the
 * earliest open transaction's first offset).
 */
function settleTransactions(r: VerifySegmentResult, unseen: ReadonlyMap<bigint, bigint>): { markers: AbortMarker[]; open: Map<bigint, bigint> } {
  if (unseen.size === 0) return { markers: r.abortMarkers, open: r.after.openTxns };
  const { firstClose, aborts } = r.trace;
  const markers = r.abortMarkers.map((m, k) => {
    const close = aborts[k]!.close;
    let first = m.firstOffset;
    const before = unseen.get(m.producerId);
    if (before !== undefined && firstClose.get(m.producerId) === close) first = before;
    if (first === null) return m;
    let lso = aborts[k]!.lsoCandidate;
    for (const [producerId, f] of unseen) {
      const closedAt = firstClose.get(producerId);
      if (producerId !== m.producerId && (closedAt === undefined || closedAt > close) && f < lso) lso = f;
    }
    return { ...m, firstOffset: first, lastStableOffset: lso };
  });
  const open = new Map(r.after.openTxns);
  for (const [producerId, f] of unseen) if (!firstClose.has(producerId)) open.set(producerId, f);
  return { markers, open };
}

/**
 * {@link verifyPartition}, its segments scanned on `opts.runner`'s threads when that pays
 * (`splitPays`; `indexFacts` always runs in one thread). Same report as the one-thread verification.
 * @throws KlxError `cancelled` when `opts.signal` aborts; `io-error` / `not-found` as {@link verifyPartition}.
 */
export async function verifyPartitionInParallel(log: PartitionLog, opts: VerifyOptions & ParallelScanOptions = {}): Promise<VerifyReport> {
  const runner = opts.runner;
  if (!runner || opts.indexFacts || !splitPays(log, opts)) return verifyPartition(log, opts);
  const findings = folderFindings(log);
  const refs = segmentRefs(log);
  const bases = refs.map((r) => r.baseOffset);
  const cleanShutdown = log.startupCleanShutdown;
  const deep = opts.deep ?? true;
  const bytesTotal = log.segments.reduce((s, x) => s + Math.max(0, x.size), 0);
  const argsOf = (i: number, before: VerifySegmentArgs['before']): VerifySegmentArgs => {
    const ref = refs[i]!;
    return { ref, cleanShutdown, startup: startupRecoveryOf(bases, i, cleanShutdown, log.startupRecoveryPoint, ref.index === null, log.topic), deep, before };
  };
  let file = refs[0]!.log;
  const progress = (done: number) => opts.onProgress?.({ bytesDone: done, bytesTotal, file });
  const ctx = { prevLastOffset: null as bigint | null, prevFile: null as string | null, openTxns: new Map<bigint, bigint>() };
  let batches = 0;
  let records = 0;
  let damagedBatches = 0;
  let damagedRecords = 0;
  let bytes = 0;
  let logEnd: bigint | null = null;
  const tasks = inSegmentOrder(refs.length, (i, signal, onBytes) => runner.run<VerifySegmentResult>('verifySegment', argsOf(i, null), { signal, onBytes }), {
    threads: runner.threads,
    signal: opts.signal,
    onProgress: progress,
  });
  let i = 0;
  for await (let r of tasks) {
    const ref = refs[i]!;
    file = ref.log;
    let unseen: ReadonlyMap<bigint, bigint> = ctx.openTxns;
    const p = ctx.prevLastOffset;
    const fv = r.firstValid;
    if (p !== null && fv !== null && !(p < fv.baseOffset && p <= fv.lastOffset)) {
      // Its first batch is not above what came before: scanned again from the true context.
      const abort = new AbortController();
      const stop = () => abort.abort();
      opts.signal?.addEventListener('abort', stop, { once: true });
      try {
        r = await runner.run<VerifySegmentResult>('verifySegment', argsOf(i, { ...ctx, openTxns: new Map(ctx.openTxns) }), { signal: abort.signal, onBytes: () => {} });
      } finally {
        opts.signal?.removeEventListener('abort', stop);
      }
      unseen = new Map();
    }
    const { markers, open } = settleTransactions(r, unseen);
    findings.push(...r.findings, ...txnIndexFindings(ref, markers, r.txnEntries));
    ctx.prevLastOffset = r.after.prevLastOffset ?? p;
    ctx.prevFile = r.after.prevFile ?? ctx.prevFile;
    ctx.openTxns = open;
    bytes += r.logSize;
    batches += r.validBatches + r.damagedBatches;
    records += r.records + r.damagedRecords;
    damagedBatches += r.damagedBatches;
    damagedRecords += r.damagedRecords;
    if (ref.isActive) logEnd = r.nextOffset ?? ref.baseOffset;
    i++;
  }
  const logEndOffset = logEnd ?? log.logStartOffset;
  findings.push(...checkpointFindings(log, logEndOffset, opts.logDirFindings ?? true));
  opts.onProgress?.({ bytesDone: bytes, bytesTotal, file });
  return {
    dir: log.dir,
    topic: log.topic,
    partition: log.partition,
    findings,
    counts: countFindings(findings),
    stats: { segments: refs.length, batches, records, damagedBatches, damagedRecords, bytes },
    logStartOffset: log.logStartOffset,
    logEndOffset,
  };
}
