/**
 * Transactions of a partition: which transactional data is aborted, which transactions are still
 * open, and the last stable offset (spec §7, §9.3, §9.4; Kafka's `TransactionIndex` /
 * `UnifiedLog.collectAbortedTransactions`, `ProducerStateManager` (ongoing transactions,
 * `lastStableOffset`, `firstUnstableOffset`) and the consumer's `CompletedFetch` aborted-batch
 * filter). Shared by fetch (read_committed), holes and the cleaner.
 *
 * Facts used:
 * - A transaction of producer P is every transactional data batch of P (attribute bit 4, not a
 *   control batch) after P's previous marker, up to P's next COMMIT or ABORT marker (a control batch
 *   whose single record has key type 1 or 0). Its first offset is the base offset of its first batch.
 * - Aborted transactions are indexed in the `.txnindex` of the segment that holds the ABORT marker:
 *   `{producerId, firstOffset, lastOffset = marker offset, lastStableOffset}`. A transaction with
 *   no data (an ABORT marker with nothing before it) is never indexed (B15).
 * - `lastStableOffset` stored with an abort = first offset of the earliest other open transaction,
 *   else marker offset + 1. The partition's LSO = first offset of the earliest open transaction
 *   (the "first unstable offset") if below the high watermark, else the high watermark (LEO when the
 *   log dir has no replication-offset-checkpoint entry).
 * - The open transactions at offset M are in the producer snapshot `M.snapshot`
 *   (`currentTxnFirstOffset`); replaying the batches from M gives them at the log end.
 * - A read_committed consumer drops a batch when it is transactional and its producer is in the
 *   set of "aborted producers": a producer joins the set when an aborted transaction's firstOffset
 *   is ≤ the current batch's lastOffset, and leaves it at its ABORT marker.
 *
 * Sources of the aborted list ({@link TxnSource}):
 * - `txnindex`: the `.txnindex` files only (what a broker serves);
 * - `markers`: a header-only walk of the whole log, reading the markers (exact even when an index
 *   file is missing; reads every byte of the log);
 * - `auto` (default): markers from the newest usable producer snapshot on (the whole log when there
 *   is none), `.txnindex` entries for the part before it. Abort markers the replay finds but no
 *   `.txnindex` lists are reported as `txnindex-missing-entry` problems.
 */
import { join } from 'node:path';
import { KlxError } from '../errors.ts';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import type { BatchHeader, KafkaRecord } from '../format/types.ts';
import { readProducerSnapshot } from '../files/producer-snapshot.ts';
import { collectAbortedTxns, type AbortedTxn } from '../files/txn-index.ts';
import { Pacer, recordsOf, walkLog, type LongReadOptions } from './log-walk.ts';
import type { PartitionLog } from './partition-log.ts';

export type { AbortedTxn };

/** Where aborted transactions are taken from (see the module comment). */
export type TxnSource = 'auto' | 'txnindex' | 'markers';

/** A transaction with data but no marker yet. */
export interface OpenTransaction {
  producerId: bigint;
  producerEpoch: number;
  /** Base offset of its first batch. */
  firstOffset: bigint;
}

/** A transaction closed by a marker. */
export interface CompletedTransaction {
  producerId: bigint;
  producerEpoch: number;
  firstOffset: bigint;
  /** Offset of the marker. */
  lastOffset: bigint;
  aborted: boolean;
  /** LSO right after the marker: first offset of the earliest other open transaction, else lastOffset + 1. */
  lastStableOffset: bigint;
}

/** Something wrong noticed while loading transaction state. Reported, never thrown. */
export interface TxnProblem {
  kind: 'txnindex-missing-entry' | 'txnindex-corrupt' | 'snapshot-unusable' | 'unreadable-marker' | 'damaged-log';
  file: string;
  /** Byte position in `file`, when known. */
  position?: number;
  reason: string;
}

/**
 * Follows transactions through batches given in offset order (Kafka `ProducerStateManager` reduced
 * to transactions): data batches open a transaction, markers close it.
 */
export class TransactionTracker {
  private readonly ongoing = new Map<bigint, OpenTransaction>();

  /** @param open transactions already open where the walk starts (from a producer snapshot). */
  constructor(open: Iterable<OpenTransaction> = []) {
    for (const t of open) this.ongoing.set(t.producerId, { ...t });
  }

  /** Feeds a data batch (control batches go to {@link onMarker}). */
  onBatch(h: BatchHeader): void {
    if (h.magic !== 2 || !h.isTransactional || h.isControl || h.producerId < 0n) return;
    if (!this.ongoing.has(h.producerId)) this.ongoing.set(h.producerId, { producerId: h.producerId, producerEpoch: h.producerEpoch, firstOffset: h.baseOffset });
  }

  /**
   * Feeds a COMMIT or ABORT marker of `producerId` at `markerOffset`.
   * @returns the transaction it closes, or null when the producer had none open (an empty transaction).
   */
  onMarker(producerId: bigint, producerEpoch: number, aborted: boolean, markerOffset: bigint): CompletedTransaction | null {
    const txn = this.ongoing.get(producerId);
    if (!txn) return null;
    let lso = markerOffset + 1n;
    let earliest: bigint | null = null;
    for (const t of this.ongoing.values()) if (t.producerId !== producerId && (earliest === null || t.firstOffset < earliest)) earliest = t.firstOffset;
    if (earliest !== null) lso = earliest;
    this.ongoing.delete(producerId);
    return { producerId, producerEpoch, firstOffset: txn.firstOffset, lastOffset: markerOffset, aborted, lastStableOffset: lso };
  }

  /** The transactions still open, by first offset. */
  openTransactions(): OpenTransaction[] {
    return [...this.ongoing.values()].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /** First offset of the earliest open transaction, or null. */
  firstUnstableOffset(): bigint | null {
    let min: bigint | null = null;
    for (const t of this.ongoing.values()) if (min === null || t.firstOffset < min) min = t.firstOffset;
    return min;
  }
}

/** The marker type of a control batch: 'ABORT', 'COMMIT', or null for other control records (KRaft). */
export function markerTypeOf(h: BatchHeader, records: readonly KafkaRecord[]): 'ABORT' | 'COMMIT' | null {
  if (!h.isControl) return null;
  const t = records[0]?.control?.typeId;
  return t === CONTROL_ABORT ? 'ABORT' : t === CONTROL_COMMIT ? 'COMMIT' : null;
}

/** Kafka `CompletedFetch.containsAbortMarker`: a control batch whose first record is an ABORT marker. */
export function isAbortMarker(h: BatchHeader, records: readonly KafkaRecord[]): boolean {
  return markerTypeOf(h, records) === 'ABORT';
}

/** An {@link AbortedTxn} from a completed transaction. */
export function toAbortedTxn(t: CompletedTransaction): AbortedTxn {
  return { version: 0, producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset };
}

/**
 * The read_committed consumer's filter (Kafka `CompletedFetch`: `consumeAbortedTransactionsUpTo`,
 * `isBatchAborted`, `containsAbortMarker`). Feed it every batch in offset order from where reading
 * starts.
 */
export class AbortedTransactionFilter {
  private readonly queue: AbortedTxn[];
  private next = 0;
  private readonly abortedProducers = new Set<bigint>();

  /**
   * @param aborted aborted transactions (any order).
   * @param startOffset where reading starts: transactions whose marker is below it are ignored, as a
   *   broker only sends those with `lastOffset ≥ fetchOffset` (TransactionIndex.collectAbortedTxns).
   */
  constructor(aborted: readonly AbortedTxn[], startOffset: bigint) {
    this.queue = aborted.filter((t) => t.lastOffset >= startOffset).sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /**
   * Whether the data of this batch belongs to an aborted transaction. Control batches are never
   * "aborted data"; an ABORT marker removes its producer from the aborted set.
   * @param abortMarker the batch is an ABORT marker (see {@link isAbortMarker}).
   */
  isAborted(h: BatchHeader, abortMarker: boolean): boolean {
    if (h.magic !== 2 || h.producerId < 0n) return false;
    while (this.next < this.queue.length && this.queue[this.next]!.firstOffset <= h.lastOffset) this.abortedProducers.add(this.queue[this.next++]!.producerId);
    if (abortMarker) {
      this.abortedProducers.delete(h.producerId);
      return false;
    }
    return h.isTransactional && !h.isControl && this.abortedProducers.has(h.producerId);
  }
}

/** Result of {@link abortedTxnsFromIndexes}. */
export interface IndexedAbortedTxns {
  abortedTransactions: AbortedTxn[];
  problems: TxnProblem[];
}

/**
 * Kafka `UnifiedLog.collectAbortedTransactions(startOffset, upperBoundOffset)`: the aborted
 * transactions of the `.txnindex` files overlapping [startOffset, upperBoundOffset), from the segment
 * holding startOffset on, stopping at the first segment whose search is complete.
 * @param startOffset default: the first segment's base offset; @param upperBoundOffset default: LEO.
 * @returns entries in segment order (ascending lastOffset) and index files that could not be read.
 */
export function abortedTxnsFromIndexes(log: PartitionLog, startOffset?: bigint, upperBoundOffset?: bigint): IndexedAbortedTxns {
  const out: IndexedAbortedTxns = { abortedTransactions: [], problems: [] };
  const segs = log.segments;
  if (segs.length === 0) return out;
  const start = startOffset ?? segs[0]!.baseOffset;
  const upper = upperBoundOffset ?? log.logEndOffset;
  const first = log.segmentFor(start) ?? segs[0]!;
  for (let i = segs.indexOf(first); i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg.files.txnindexSize < 0) continue;
    let entries: AbortedTxn[];
    try {
      const idx = seg.txnIndex();
      if (!idx) continue;
      for (const p of idx.problems) if (p.kafkaCorrupt) out.problems.push({ kind: 'txnindex-corrupt', file: p.file, position: p.position, reason: p.reason });
      entries = idx.entries;
    } catch (err) {
      const k = err instanceof KlxError ? err : new KlxError('io-error', String(err));
      out.problems.push({ kind: 'txnindex-corrupt', file: seg.files.txnindex, position: k.position, reason: k.reason });
      continue;
    }
    const r = collectAbortedTxns(entries, start, upper);
    for (const t of r.abortedTransactions) out.abortedTransactions.push(t);
    if (r.isComplete) break;
  }
  return out;
}

/** Transaction facts of a partition at its log end. */
export interface TransactionState {
  source: TxnSource;
  /** Aborted transactions with data, ascending by marker offset. */
  abortedTxns: AbortedTxn[];
  /** Transactions open at the log end, by first offset. */
  openTxns: OpenTransaction[];
  /** First offset of the earliest open transaction, or null. */
  firstUnstableOffset: bigint | null;
  /** What read_committed readers stop at: firstUnstableOffset if below the high watermark, else the high watermark (LEO when unknown). */
  lastStableOffset: bigint;
  /** Offset the marker walk started from (a snapshot offset or the first segment's base offset). */
  replayedFrom: bigint;
  /** The producer snapshot the walk started from, or null. */
  snapshotFile: string | null;
  /** Markers met by the walk. `emptyAborts` are ABORT markers of transactions without data (not indexed). */
  markers: { commits: number; aborts: number; emptyAborts: number; emptyCommits: number };
  problems: TxnProblem[];
}

/** Options of {@link loadTransactionState}. */
export interface TransactionStateOptions extends LongReadOptions {
  /** Default 'auto'. */
  source?: TxnSource;
}

const stateCache = new WeakMap<PartitionLog, Map<TxnSource, TransactionState>>();

/**
 * Loads (once per opened log and source) the aborted and open transactions and the last stable
 * offset, as described in the module comment. Streaming: header-only walk; only control batches
 * (one small record each) are decoded.
 * @throws KlxError `cancelled`, `io-error`; `invalid-argument` for an unknown source.
 */
export async function loadTransactionState(log: PartitionLog, opts: TransactionStateOptions = {}): Promise<TransactionState> {
  const source = opts.source ?? 'auto';
  if (source !== 'auto' && source !== 'txnindex' && source !== 'markers') throw new KlxError('invalid-argument', `transaction source must be auto, txnindex or markers, got "${String(source)}"`);
  const cached = stateCache.get(log)?.get(source);
  if (cached) return cached;

  const problems: TxnProblem[] = [];
  const logEnd = log.logEndOffset;
  const firstBase = log.segments[0]?.baseOffset ?? log.logStartOffset;
  let replayedFrom = firstBase;
  let snapshotFile: string | null = null;
  let open: OpenTransaction[] = [];
  if (source !== 'markers') {
    const snaps = log.listing.snapshots.filter((s) => s.baseOffset <= logEnd);
    for (let i = snaps.length - 1; i >= 0; i--) {
      const path = join(log.dir, snaps[i]!.name);
      try {
        const snap = readProducerSnapshot(path);
        if (!snap.crcValid) {
          problems.push({ kind: 'snapshot-unusable', file: path, position: 2, reason: 'CRC-32C mismatch: a broker deletes this snapshot and loads the previous one, or with none left rebuilds producer state from the log start (ProducerStateManager.loadFromSnapshot)' });
          continue;
        }
        snapshotFile = path;
        replayedFrom = snap.offset > firstBase ? snap.offset : firstBase;
        open = snap.entries.filter((e) => e.currentTxnFirstOffset >= 0n).map((e) => ({ producerId: e.producerId, producerEpoch: e.producerEpoch, firstOffset: e.currentTxnFirstOffset }));
        break;
      } catch (err) {
        const k = err instanceof KlxError ? err : new KlxError('io-error', String(err));
        problems.push({ kind: 'snapshot-unusable', file: path, position: k.position, reason: k.reason });
      }
    }
  }

  const tracker = new TransactionTracker(open);
  const replayAborts: AbortedTxn[] = [];
  const markers = { commits: 0, aborts: 0, emptyAborts: 0, emptyCommits: 0 };
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `read transaction markers of ${log.topic}-${log.partition}`, total: log.logSize });
  if (replayedFrom < logEnd) {
    for (const e of walkLog(log, { fromOffset: replayedFrom })) {
      if (e.type === 'segment') continue;
      if (e.type !== 'batch') {
        problems.push({ kind: 'damaged-log', file: e.file, position: e.position, reason: e.reason });
        continue;
      }
      const h = e.header;
      await pacer.step(h.size);
      if (h.baseOffset < replayedFrom || h.magic !== 2 || h.producerId < 0n) continue;
      if (!h.isControl) {
        tracker.onBatch(h);
        continue;
      }
      let records: KafkaRecord[];
      try {
        records = recordsOf(e);
      } catch (err) {
        const k = err instanceof KlxError ? err : new KlxError('corrupt-batch', String(err));
        problems.push({ kind: 'unreadable-marker', file: e.segment.files.log, position: h.position, reason: k.reason });
        continue;
      }
      const type = markerTypeOf(h, records);
      if (type === null) continue;
      const done = tracker.onMarker(h.producerId, h.producerEpoch, type === 'ABORT', records[0]!.offset);
      if (type === 'ABORT') {
        if (done) {
          markers.aborts++;
          replayAborts.push(toAbortedTxn(done));
        } else markers.emptyAborts++;
      } else if (done) markers.commits++;
      else markers.emptyCommits++;
    }
  }
  pacer.finish();

  let abortedTxns: AbortedTxn[];
  if (source === 'markers') abortedTxns = replayAborts;
  else {
    const indexed = abortedTxnsFromIndexes(log, firstBase, logEnd + 1n);
    for (const p of indexed.problems) problems.push(p);
    if (source === 'txnindex') abortedTxns = indexed.abortedTransactions;
    else {
      abortedTxns = [...indexed.abortedTransactions.filter((t) => t.lastOffset < replayedFrom), ...replayAborts];
      const known = new Set(indexed.abortedTransactions.map((t) => `${t.producerId}/${t.lastOffset}`));
      for (const t of replayAborts) {
        if (known.has(`${t.producerId}/${t.lastOffset}`)) continue;
        const seg = log.segmentFor(t.lastOffset);
        problems.push({
          kind: 'txnindex-missing-entry',
          file: seg ? seg.files.txnindex : log.dir,
          reason: `the ABORT marker at offset ${t.lastOffset} closes a transaction of producer ${t.producerId} with data from offset ${t.firstOffset}, but no .txnindex lists it (a broker would serve that data to read_committed consumers until the index is rebuilt: the fetch's aborted transactions come from the .txnindex, UnifiedLog.collectAbortedTransactions)`,
        });
      }
    }
  }
  abortedTxns.sort((a, b) => (a.lastOffset < b.lastOffset ? -1 : a.lastOffset > b.lastOffset ? 1 : 0));

  const firstUnstableOffset = tracker.firstUnstableOffset();
  const hw = log.highWatermark;
  const upper = hw !== null && hw < logEnd ? hw : logEnd;
  const state: TransactionState = {
    source,
    abortedTxns,
    openTxns: tracker.openTransactions(),
    firstUnstableOffset,
    lastStableOffset: firstUnstableOffset !== null && firstUnstableOffset < upper ? firstUnstableOffset : upper,
    replayedFrom,
    snapshotFile,
    markers,
    problems,
  };
  let bySource = stateCache.get(log);
  if (!bySource) stateCache.set(log, (bySource = new Map()));
  bySource.set(source, state);
  return state;
}
