/**
 * Why a read_committed read stopped short: the last stable offset (LSO) of a partition, the open
 * transaction that holds it there, and how many records at or after it such a read leaves out.
 *
 * A broker answers a read_committed fetch only up to the LSO (`UnifiedLog.fetchOffsetSnapshot` /
 * `UnifiedLog.read` with `FetchIsolation.TXN_COMMITTED`): the first offset of the earliest open
 * transaction (`ProducerStateManager.firstUnstableOffset`), else the high watermark. A consumer
 * therefore sees nothing past an open transaction, not even records of other producers or of no
 * transaction at all, until that transaction is committed or aborted. `klx export` and `klx fetch`
 * (and the app's export) keep that behaviour and say it with {@link lastStableStop}.
 */
import { KlxError } from '../errors.ts';
import { readForward } from './fetch.ts';
import type { PartitionLog } from './partition-log.ts';
import { loadTransactionState } from './transactions.ts';

/** A read_committed stop at an open transaction (offsets are Kafka offsets, int64). */
export interface LastStableStop {
  topic: string;
  partition: number;
  /** The last stable offset: the first offset a read_committed reader is not given. */
  lastStableOffset: bigint;
  /** The open transaction whose first offset is the LSO (the earliest open one). */
  openTransaction: { producerId: bigint; producerEpoch: number; firstOffset: bigint };
  /** Transactions open at the log end (the one above included). */
  openTransactions: number;
  /**
   * Data records in [lastStableOffset, upTo) that a read_uncommitted reader gets and that are not
   * of an aborted transaction: what the read left out because of the stop. Control records and
   * records of aborted transactions are not counted (read_committed never gives them).
   */
  recordsNotRead: number;
  /** The exclusive upper offset counted to (the log end offset unless a range ends earlier). */
  upTo: bigint;
}

/** Options of {@link lastStableStop}. */
export interface LastStableStopOptions {
  /** First offset the read asked for (default the log start offset); records below it are not counted. */
  from?: bigint;
  /** Exclusive upper offset of the read (default the log end offset). */
  upTo?: bigint;
  /** Only these offsets were asked for (a selection): count those at or after the LSO. */
  offsets?: readonly bigint[];
  signal?: AbortSignal;
}

const PAGE = 5000;

/**
 * The read_committed stop of `log`, or null when no transaction is open below the read's upper
 * bound (then the LSO is the high watermark, and nothing is held back by a transaction).
 * Reads the records from the LSO to `upTo` once (read_uncommitted) to count them.
 * @throws KlxError `cancelled`; what reading the log throws (`io-error`).
 */
export async function lastStableStop(log: PartitionLog, opts: LastStableStopOptions = {}): Promise<LastStableStop | null> {
  const state = await loadTransactionState(log, { signal: opts.signal });
  const unstable = state.firstUnstableOffset;
  const upTo = opts.upTo !== undefined && opts.upTo < log.logEndOffset ? opts.upTo : log.logEndOffset;
  if (unstable === null || state.lastStableOffset !== unstable || unstable >= upTo) return null;
  const open = state.openTxns.reduce((a, b) => (b.firstOffset < a.firstOffset ? b : a));
  const lso = state.lastStableOffset;
  const aborted = state.abortedTxns.filter((t) => t.lastOffset >= lso);
  const isAborted = (producerId: bigint, offset: bigint) => aborted.some((t) => t.producerId === producerId && t.firstOffset <= offset && offset <= t.lastOffset);
  const wanted = opts.offsets ? new Set(opts.offsets.filter((o) => o >= lso && o < upTo)) : null;
  let cursor = opts.from !== undefined && opts.from > lso ? opts.from : lso;
  if (cursor < log.logStartOffset) cursor = log.logStartOffset;
  let n = 0;
  while (cursor < upTo && (wanted === null || wanted.size > 0)) {
    if (opts.signal?.aborted) throw new KlxError('cancelled', 'cancelled');
    const page = await readForward(log, cursor, PAGE, { isolation: 'read_uncommitted', readUpTo: 'log-end', ...(opts.signal ? { signal: opts.signal } : {}) });
    for (const r of page.records) {
      if (r.offset >= upTo) break;
      if (wanted !== null && !wanted.has(r.offset)) continue;
      if (r.isControl || (r.isTransactional && isAborted(r.producerId, r.offset))) continue;
      n++;
    }
    if (page.atEnd || page.records.length === 0 || page.nextOffset <= cursor) break;
    cursor = page.nextOffset;
  }
  return { topic: log.topic, partition: log.partition, lastStableOffset: lso, openTransaction: { producerId: open.producerId, producerEpoch: open.producerEpoch, firstOffset: open.firstOffset }, openTransactions: state.openTxns.length, recordsNotRead: n, upTo };
}

/**
 * One line saying a stop, e.g. `payments-0: read_committed stops at the last stable offset 1:
 * producer 7 (epoch 3) has a transaction open since offset 1 (no COMMIT or ABORT marker yet), as a
 * read_committed consumer waits (UnifiedLog, FetchIsolation.TXN_COMMITTED); 3 records at offsets
 * 1..5 (data, not aborted) were not exported`. `verb` is what the command did (`exported`, `fetched`).
 */
export function lastStableStopText(s: LastStableStop, verb: string): string {
  const t = s.openTransaction;
  const others = s.openTransactions > 1 ? ` (${s.openTransactions} transactions are open; this one is the earliest)` : '';
  return (
    `${s.topic}-${s.partition}: read_committed stops at the last stable offset ${s.lastStableOffset}: producer ${t.producerId} (epoch ${t.producerEpoch}) has a transaction open since offset ${t.firstOffset}` +
    ` with no COMMIT or ABORT marker yet${others}, and a read_committed consumer gets nothing at or after it until one is written (UnifiedLog, FetchIsolation.TXN_COMMITTED);` +
    ` ${s.recordsNotRead} record${s.recordsNotRead === 1 ? '' : 's'} at offsets ${s.lastStableOffset}..${s.upTo - 1n} (data, not aborted) ${s.recordsNotRead === 1 ? 'was' : 'were'} not ${verb}`
  );
}
