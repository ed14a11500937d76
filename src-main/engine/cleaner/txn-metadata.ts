/**
 * Transaction state while the cleaner walks a log (spec §13.7; Kafka's `CleanedTransactionMetadata`,
 * `AbortedTransactionMetadata` and `UnifiedLog.collectAbortedTransactions`).
 *
 * Aborted transactions come from the `.txnindex` files; an aborted transaction becomes ongoing once
 * the walk reaches its first offset. Then:
 * - a transactional data batch of a producer with an ongoing aborted transaction is aborted
 *   (discarded whole, never in the offset map); any other transactional batch marks its producer's
 *   transaction as ongoing-committed;
 * - an ABORT marker ends the producer's aborted transaction: it is kept (and its index entry
 *   re-appended to the new segment's `.txnindex`) when a batch of that transaction was seen in this
 *   walk, else it is discardable;
 * - a COMMIT marker is discardable unless a transactional batch of its producer was seen since the
 *   previous marker;
 * - an empty control batch is discardable; other control types (KRaft) are kept.
 */
import { CONTROL_ABORT, CONTROL_COMMIT } from '../format/control.ts';
import type { AbortedTxn } from '../files/txn-index.ts';
import { collectAbortedTxns } from '../files/txn-index.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { LogSegment } from '../segment/log-segment.ts';

/**
 * Kafka `UnifiedLog.collectAbortedTransactions(start, upperBound)`: the aborted transactions
 * overlapping `[start, upperBound)`, read from the `.txnindex` of the segment holding `start` and of
 * the later segments until one says its list is complete (an ABORT marker may sit in a later
 * segment than its data, even in the active segment).
 */
export function collectAbortedTransactions(log: PartitionLog | readonly LogSegment[], start: bigint, upperBound: bigint): AbortedTxn[] {
  const segs = Array.isArray(log) ? (log as readonly LogSegment[]) : (log as PartitionLog).segments;
  let i = 0;
  for (let j = 0; j < segs.length; j++) if (segs[j]!.baseOffset <= start) i = j;
  const out: AbortedTxn[] = [];
  for (; i < segs.length; i++) {
    const idx = segs[i]!.txnIndex();
    if (!idx) continue;
    const r = collectAbortedTxns(idx.entries, start, upperBound);
    out.push(...r.abortedTransactions);
    if (r.isComplete) break;
  }
  return out;
}

/** The batch facts the transaction state needs. */
export interface TxnBatchInfo {
  producerId: bigint;
  isTransactional: boolean;
  lastOffset: bigint;
  /** Control batches: the type id of the first record, or null for an empty control batch. */
  controlType?: number | null;
}

/** Kafka's `CleanedTransactionMetadata` (see the module comment). */
export class CleanedTransactionMetadata {
  private readonly ongoingCommitted = new Set<bigint>();
  private readonly ongoingAborted = new Map<bigint, { txn: AbortedTxn; lastObservedBatchOffset: bigint | null }>();
  /** Min-heap by firstOffset (a sorted array is enough: few aborted transactions). */
  private pending: AbortedTxn[] = [];
  /** Aborted transactions whose markers were kept: the new segment's `.txnindex` entries. */
  cleanedIndex: AbortedTxn[] | null = null;

  /** Adds aborted transactions found in the indexes (duplicates are harmless). */
  addAbortedTransactions(txns: readonly AbortedTxn[]): void {
    if (txns.length === 0) return;
    this.pending.push(...txns);
    this.pending.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  private consumeUpTo(offset: bigint): void {
    let n = 0;
    while (n < this.pending.length && this.pending[n]!.firstOffset <= offset) {
      const t = this.pending[n]!;
      if (!this.ongoingAborted.has(t.producerId)) this.ongoingAborted.set(t.producerId, { txn: t, lastObservedBatchOffset: null });
      n++;
    }
    if (n > 0) this.pending = this.pending.slice(n);
  }

  /**
   * A control batch was read.
   * @returns true when it can be discarded (subject to its delete horizon).
   */
  onControlBatchRead(b: TxnBatchInfo): boolean {
    this.consumeUpTo(b.lastOffset);
    if (b.controlType === null || b.controlType === undefined) return true;
    if (b.controlType === CONTROL_ABORT) {
      const m = this.ongoingAborted.get(b.producerId);
      this.ongoingAborted.delete(b.producerId);
      if (m && m.lastObservedBatchOffset !== null) {
        this.cleanedIndex?.push(m.txn);
        return false;
      }
      return true;
    }
    if (b.controlType === CONTROL_COMMIT) return !this.ongoingCommitted.delete(b.producerId);
    return false;
  }

  /**
   * A data batch was read.
   * @returns true when it belongs to an aborted transaction (discard it whole).
   */
  onBatchRead(b: TxnBatchInfo): boolean {
    this.consumeUpTo(b.lastOffset);
    if (!b.isTransactional) return false;
    const m = this.ongoingAborted.get(b.producerId);
    if (m) {
      m.lastObservedBatchOffset = b.lastOffset;
      return true;
    }
    this.ongoingCommitted.add(b.producerId);
    return false;
  }
}
