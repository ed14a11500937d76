/**
 * What a consumer finds at given offsets of one partition: whether a record sits at the offset, the
 * offset it will actually continue at, and how many records are left to read from there — records,
 * not offsets: holes (compaction, gaps), control records (transaction markers) and aborted
 * transactional data are not counted (Kafka's consumer skips control batches, and a read_committed
 * consumer drops aborted data: `CompletedFetch`), so on compacted and transactional topics this is
 * the true backlog that `log end offset − committed offset` overstates.
 *
 * One forward walk answers every offset asked (sorted, from the lowest), so a partition read by many
 * groups is walked once. Header-only for dense batches; only batches straddling an asked offset that
 * are not dense (compacted) and control batches are decoded.
 */
import type { AbortedTxn } from '../files/txn-index.ts';
import type { KafkaRecord } from '../format/types.ts';
import { Pacer, isDenseBatch, recordsOf, walkLog, type LongReadOptions } from '../log/log-walk.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { AbortedTransactionFilter, isAbortMarker } from '../log/transactions.ts';

/** What {@link positionsIn} says about one offset. */
export interface PositionFacts {
  /** A record (data or control) sits exactly at the offset. */
  atRecord: boolean;
  /** The first offset ≥ the asked one holding a record the consumer returns (CompletedFetch.nextFetchedRecord); `end` when none before it. */
  nextOffset: bigint;
  /** Records the consumer returns from the offset up to `end` (exclusive; CompletedFetch skips control records and aborted data). */
  recordLag: number;
}

/**
 * Facts for each offset of `offsets` (each in [logStartOffset, end]).
 * @param end where reading stops: the log end offset (read_uncommitted) or the last stable offset (read_committed)
 * @param aborted aborted transactions of the partition (their data is not counted)
 * @returns a map from each asked offset to its facts
 * @throws KlxError `cancelled`, `io-error`
 */
export async function positionsIn(log: PartitionLog, offsets: readonly bigint[], end: bigint, aborted: readonly AbortedTxn[], opts: LongReadOptions = {}): Promise<Map<bigint, PositionFacts>> {
  const starts = [...new Set(offsets)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out = new Map<bigint, PositionFacts>();
  if (starts.length === 0) return out;
  const inRange = starts.filter((s) => s < end);
  for (const s of starts) if (s >= end) out.set(s, { atRecord: false, nextOffset: end, recordLag: 0 });
  if (inRange.length === 0) return out;

  const first = inRange[0]!;
  const filter = new AbortedTransactionFilter(aborted, first);
  /** Countable records met so far with offset ≥ first. */
  let counted = 0;
  /** For each start: countable records before it, whether a record sits at it; nextOffset when known. */
  const before = new Map<bigint, number>();
  const at = new Map<bigint, boolean>();
  const next = new Map<bigint, bigint>();
  const waitingNext: bigint[] = [];
  let idx = 0;
  const pacer = new Pacer({ signal: opts.signal, onProgress: opts.onProgress, phase: `count records left in ${log.topic}-${log.partition}`, total: null });

  for (const e of walkLog(log, { fromOffset: first })) {
    if (e.type !== 'batch') continue;
    const h = e.header;
    await pacer.step(h.size);
    if (h.lastOffset < first) continue;
    if (h.baseOffset >= end) break;
    let recs: KafkaRecord[] | null = null;
    const records = () => (recs ??= safeRecords(e));
    const abortMarker = h.isControl && h.magic === 2 && isAbortMarker(h, records());
    const abortedData = filter.isAborted(h, abortMarker);
    const countable = !h.isControl && !abortedData;
    const dense = isDenseBatch(h);
    // starts falling before or inside this batch
    while (idx < inRange.length && inRange[idx]! <= h.lastOffset) {
      const s = inRange[idx++]!;
      if (s < h.baseOffset) {
        at.set(s, false);
        before.set(s, counted);
        waitingNext.push(s);
        continue;
      }
      let present: boolean;
      let countBefore = 0;
      if (dense && h.magic === 2) {
        present = true;
        countBefore = Number(s - h.baseOffset);
      } else {
        const rs = records();
        present = rs.some((r) => r.offset === s);
        countBefore = rs.filter((r) => r.offset < s).length;
      }
      at.set(s, present);
      before.set(s, counted + (countable ? countBefore : 0));
      waitingNext.push(s);
    }
    if (!countable) continue;
    // countable records of this batch below `end`, and the first of them at or after each waiting start
    let n: number;
    const lastBelowEnd = h.lastOffset < end ? h.lastOffset : end - 1n;
    if (dense && h.magic === 2) {
      n = Number(lastBelowEnd - h.baseOffset + 1n);
      for (let i = waitingNext.length - 1; i >= 0; i--) {
        const s = waitingNext[i]!;
        const cand = s > h.baseOffset ? s : h.baseOffset;
        if (cand <= lastBelowEnd) {
          next.set(s, cand);
          waitingNext.splice(i, 1);
        }
      }
    } else {
      const rs = records().filter((r) => r.offset <= lastBelowEnd);
      n = rs.length;
      for (let i = waitingNext.length - 1; i >= 0; i--) {
        const s = waitingNext[i]!;
        const r = rs.find((x) => x.offset >= s);
        if (r) {
          next.set(s, r.offset);
          waitingNext.splice(i, 1);
        }
      }
    }
    counted += n;
    if (h.lastOffset >= end - 1n && idx >= inRange.length && waitingNext.length === 0) break;
  }
  pacer.finish();
  for (const s of inRange) {
    out.set(s, {
      atRecord: at.get(s) ?? false,
      nextOffset: next.get(s) ?? end,
      recordLag: counted - (before.get(s) ?? counted),
    });
  }
  return out;
}

function safeRecords(e: Parameters<typeof recordsOf>[0]): KafkaRecord[] {
  try {
    return recordsOf(e);
  } catch {
    return [];
  }
}
