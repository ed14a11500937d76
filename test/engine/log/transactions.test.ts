/**
 * Transactions: commit markers take offsets (B14), read_committed filtering with an empty aborted
 * transaction and an open transaction bounding the last stable offset (B15 a, c); the three sources
 * of aborted transactions (.txnindex, markers, auto) and what happens when a .txnindex is missing;
 * producer snapshots as the start of the marker walk; the consumer's filter on its own.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchHeader } from '../../../src-main/engine/format/types.ts';
import { writeProducerSnapshot } from '../../../src-main/engine/files/producer-snapshot.ts';
import { countRecords, fetch, readBackward, seek, type FetchedRecord } from '../../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { AbortedTransactionFilter, TransactionTracker, abortedTxnsFromIndexes, loadTransactionState } from '../../../src-main/engine/log/transactions.ts';
import { buildPartition, markerBatch, rec, singles, tempDir, type BatchInput, type SegmentInput } from '../../support/log-builder.ts';

const offsets = (rs: FetchedRecord[]) => rs.map((r) => Number(r.offset));

/** A transactional data batch of producer `pid` at `baseOffset`. */
function txn(pid: number, baseOffset: number, ...keys: string[]): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: keys.map((k) => rec(k, `${k}-value`, 1000)) };
}

/** A COMMIT or ABORT marker of producer `pid` at `offset` (coordinator epoch 5, timestamp 1100). */
const marker = (pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput => markerBatch(pid, type, offset, { coordinatorEpoch: 5, timestamp: 1100 });

describe('B14: commit markers take offsets; position and lag skip control records', () => {
  const dir = buildPartition(tempDir(), { segments: [{ batches: [txn(7, 0, 'k1', 'k2'), marker(7, 'COMMIT', 2)] }] });
  const log = PartitionLog.open(dir);

  it('B14: both isolation levels return [0, 1]; the next position is 3 (LEO)', async () => {
    expect(log.logEndOffset).toBe(3n);
    for (const isolation of ['read_uncommitted', 'read_committed'] as const) {
      const r = await fetch(log, { offset: 0n, isolation });
      expect(offsets(r.records)).toEqual([0, 1]);
      expect(r.nextOffset).toBe(3n);
      expect(r.reachedLimit).toBe(true);
      expect(r.skippedControlRecords).toBe(1);
      expect(r.records.every((x) => !x.isControl && x.isTransactional && x.producerId === 7n)).toBe(true);
    }
  });

  it('B14: the control record is never data; with includeControl it is a flagged COMMIT marker', async () => {
    const r = await fetch(log, { offset: 0n, includeControl: true });
    expect(offsets(r.records)).toEqual([0, 1, 2]);
    expect(r.records[2]).toMatchObject({ offset: 2n, isControl: true, control: { type: 'COMMIT', typeId: 1, coordinatorEpoch: 5 } });
  });

  it('B14: browsing from 2 returns no data and moves to 3', async () => {
    for (const isolation of ['read_uncommitted', 'read_committed'] as const) {
      const r = await fetch(log, { offset: 2n, isolation });
      expect(r.records).toEqual([]);
      expect(r.nextOffset).toBe(3n);
    }
    expect(await seek(log, 2n)).toBe(3n);
  });

  it('B14: records remaining after committed offset 2 is 0, while LEO − committed is 1', async () => {
    const c = await countRecords(log, { fromOffset: 2n });
    expect(c.records).toBe(0);
    expect(c.controlRecords).toBe(1);
    expect(c.offsetSpan).toBe(1n);
    expect((await countRecords(log)).records).toBe(2);
  });

  it('B14: transaction state: one commit, nothing open, LSO = LEO', async () => {
    const s = await loadTransactionState(log);
    expect(s).toMatchObject({ abortedTxns: [], openTxns: [], firstUnstableOffset: null, lastStableOffset: 3n, markers: { commits: 1, aborts: 0, emptyAborts: 0, emptyCommits: 0 } });
  });
});

/** Closed seg@0 of B15 and the active seg@9 (plus, for variant (c), the open transaction at 10). */
function b15Segments(openTxn: boolean, withTxnIndex = true): SegmentInput[] {
  return [
    {
      batches: [txn(5, 0, 'k1', 'k2'), marker(9, 'ABORT', 2), marker(5, 'ABORT', 3), txn(5, 4, 'k3'), marker(5, 'COMMIT', 5), txn(6, 6, 'k4', 'k5'), marker(6, 'ABORT', 8)],
      ...(withTxnIndex
        ? {
            txnIndex: [
              { producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
              { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
            ],
          }
        : {}),
    },
    { baseOffset: 9n, batches: [{ baseOffset: 9n, records: [rec('k6', 'v6')] }, ...(openTxn ? [txn(11, 10, 'k7')] : [])] },
  ];
}

describe('B15: read_committed filtering, empty aborted transactions', () => {
  const dir = buildPartition(tempDir(), { segments: b15Segments(false) });
  const log = PartitionLog.open(dir);

  it('B15 (a): read_committed returns [4, 9]; read_uncommitted returns [0, 1, 4, 6, 7, 9]', async () => {
    const committed = await fetch(log, { offset: 0n, isolation: 'read_committed' });
    expect(offsets(committed.records)).toEqual([4, 9]);
    expect(committed.skippedAbortedRecords).toBe(4);
    expect(committed.nextOffset).toBe(10n);
    expect(committed.lastStableOffset).toBe(10n);
    const uncommitted = await fetch(log, { offset: 0n });
    expect(offsets(uncommitted.records)).toEqual([0, 1, 4, 6, 7, 9]);
    expect(uncommitted.records.filter((r) => r.aborted).map((r) => Number(r.offset))).toEqual([0, 1, 6, 7]);
  });

  it('B15 (a): the empty transaction of producer 9 is not indexed and does not disturb the filter', async () => {
    const s = await loadTransactionState(log);
    expect(s.abortedTxns.map((t) => [Number(t.producerId), Number(t.firstOffset), Number(t.lastOffset), Number(t.lastStableOffset)])).toEqual([
      [5, 0, 3, 4],
      [6, 6, 8, 9],
    ]);
    expect(s.markers).toEqual({ commits: 1, aborts: 2, emptyAborts: 1, emptyCommits: 0 });
    expect(s.problems).toEqual([]);
    expect(s.replayedFrom).toBe(0n);
    expect(s.snapshotFile).toBeNull();
  });

  it('B15 (a): read_committed from inside the aborted transaction and paging back agree', async () => {
    expect(offsets((await fetch(log, { offset: 1n, isolation: 'read_committed' })).records)).toEqual([4, 9]);
    expect(offsets((await fetch(log, { offset: 6n, isolation: 'read_committed' })).records)).toEqual([9]);
    const back = await readBackward(log, 10n, 5, { isolation: 'read_committed' });
    expect(offsets(back.records)).toEqual([4, 9]);
    expect(back.atStart).toBe(true);
    const one = await fetch(log, { offset: 0n, isolation: 'read_committed', maxRecords: 1 });
    expect(offsets(one.records)).toEqual([4]);
    expect(one.nextOffset).toBe(9n);
  });

  it('B15 (a): aborted transactions from .txnindex, from markers and auto agree', async () => {
    const fromIndex = await loadTransactionState(log, { source: 'txnindex' });
    const fromMarkers = await loadTransactionState(log, { source: 'markers' });
    const auto = await loadTransactionState(log, { source: 'auto' });
    expect(fromMarkers.abortedTxns).toEqual(fromIndex.abortedTxns);
    expect(auto.abortedTxns).toEqual(fromIndex.abortedTxns);
    expect(abortedTxnsFromIndexes(log, 4n, 10n).abortedTransactions.map((t) => Number(t.producerId))).toEqual([6]);
  });
});

describe('B15 (c): an open transaction bounds the last stable offset', () => {
  const dir = buildPartition(tempDir(), { segments: b15Segments(true) });
  const log = PartitionLog.open(dir);

  it('B15 (c): the LSO is 10; read_committed shows nothing at or after 10', async () => {
    const s = await loadTransactionState(log);
    expect(s.firstUnstableOffset).toBe(10n);
    expect(s.lastStableOffset).toBe(10n);
    expect(s.openTxns).toEqual([{ producerId: 11n, producerEpoch: 0, firstOffset: 10n }]);
    expect(log.logEndOffset).toBe(11n);
    const r = await fetch(log, { offset: 0n, isolation: 'read_committed' });
    expect(offsets(r.records)).toEqual([4, 9]);
    expect(r).toMatchObject({ nextOffset: 10n, readLimit: 10n, reachedLimit: true });
    const at10 = await fetch(log, { offset: 10n, isolation: 'read_committed' });
    expect(at10.records).toEqual([]);
    expect(at10.nextOffset).toBe(10n);
    expect(offsets((await fetch(log, { offset: 0n })).records)).toEqual([0, 1, 4, 6, 7, 9, 10]);
    expect(offsets((await readBackward(log, 11n, 10, { isolation: 'read_committed' })).records)).toEqual([4, 9]);
  });

  it('B15 (c): a producer snapshot at 9 starts the marker walk there; the .txnindex covers what is before', async () => {
    const d2 = buildPartition(tempDir(), { segments: b15Segments(true) });
    writeProducerSnapshot(join(d2, '00000000000000000009.snapshot'), []);
    const log2 = PartitionLog.open(d2);
    const s = await loadTransactionState(log2);
    expect(s.replayedFrom).toBe(9n);
    expect(s.snapshotFile).toBe(join(d2, '00000000000000000009.snapshot'));
    expect(s.lastStableOffset).toBe(10n);
    expect(s.abortedTxns.map((t) => Number(t.lastOffset))).toEqual([3, 8]);
    expect(s.markers).toEqual({ commits: 0, aborts: 0, emptyAborts: 0, emptyCommits: 0 });
  });

  it('B15 (c): an open transaction recorded in the snapshot counts even before its first batch is walked', async () => {
    const d3 = buildPartition(tempDir(), { segments: b15Segments(true) });
    writeProducerSnapshot(join(d3, '00000000000000000011.snapshot'), [
      { producerId: 11n, producerEpoch: 0, lastSequence: 0, lastOffset: 10n, offsetDelta: 0, timestamp: 1000n, coordinatorEpoch: -1, currentTxnFirstOffset: 10n },
    ]);
    const s = await loadTransactionState(PartitionLog.open(d3));
    expect(s.replayedFrom).toBe(11n);
    expect(s.lastStableOffset).toBe(10n);
  });

  it('B15 (c): the high watermark bounds the LSO too', async () => {
    const d4 = buildPartition(tempDir(), { segments: b15Segments(false) }, { highWatermark: 7n });
    const s = await loadTransactionState(PartitionLog.open(d4));
    expect(s.lastStableOffset).toBe(7n);
    expect(offsets((await fetch(PartitionLog.open(d4), { offset: 0n, isolation: 'read_committed' })).records)).toEqual([4]);
  });
});

describe('a missing .txnindex', () => {
  const dir = buildPartition(tempDir(), { segments: b15Segments(false, false) });
  const log = PartitionLog.open(dir);

  it('auto walks the markers: read_committed still hides the aborted data, and the missing entries are reported', async () => {
    const r = await fetch(log, { offset: 0n, isolation: 'read_committed' });
    expect(offsets(r.records)).toEqual([4, 9]);
    const s = await loadTransactionState(log);
    expect(s.problems.map((p) => [p.kind, p.file])).toEqual([
      ['txnindex-missing-entry', join(dir, '00000000000000000000.txnindex')],
      ['txnindex-missing-entry', join(dir, '00000000000000000000.txnindex')],
    ]);
    expect(s.problems[0]!.reason).toMatch(/ABORT marker at offset 3 closes a transaction of producer 5 with data from offset 0/);
  });

  it('source txnindex serves what a broker with the lost index would: the aborted data leaks', async () => {
    const r = await fetch(log, { offset: 0n, isolation: 'read_committed', txnSource: 'txnindex' });
    expect(offsets(r.records)).toEqual([0, 1, 4, 6, 7, 9]);
  });

  it('a snapshot past the aborts with no index: the data before it is not known aborted under auto (reported by source markers)', async () => {
    const d2 = buildPartition(tempDir(), { segments: b15Segments(false, false) });
    writeProducerSnapshot(join(d2, '00000000000000000009.snapshot'), []);
    const log2 = PartitionLog.open(d2);
    expect((await loadTransactionState(log2)).abortedTxns).toEqual([]);
    expect((await loadTransactionState(log2, { source: 'markers' })).abortedTxns).toHaveLength(2);
  });
});

describe('TransactionTracker and AbortedTransactionFilter', () => {
  const header = (over: Partial<BatchHeader>): BatchHeader =>
    ({ magic: 2, baseOffset: 0n, lastOffset: 0n, isTransactional: true, isControl: false, producerId: 1n, producerEpoch: 0, recordCount: 1, ...over }) as BatchHeader;

  it('the tracker computes each abort’s LSO from the other open transactions (Kafka ProducerStateManager.lastStableOffset)', () => {
    const t = new TransactionTracker();
    t.onBatch(header({ producerId: 1n, baseOffset: 10n, lastOffset: 11n }));
    t.onBatch(header({ producerId: 2n, baseOffset: 12n, lastOffset: 12n }));
    t.onBatch(header({ producerId: 1n, baseOffset: 13n, lastOffset: 13n }));
    expect(t.firstUnstableOffset()).toBe(10n);
    expect(t.onMarker(1n, 0, true, 14n)).toEqual({ producerId: 1n, producerEpoch: 0, firstOffset: 10n, lastOffset: 14n, aborted: true, lastStableOffset: 12n });
    expect(t.firstUnstableOffset()).toBe(12n);
    expect(t.onMarker(3n, 0, true, 15n)).toBeNull();
    expect(t.onMarker(2n, 0, false, 16n)).toMatchObject({ aborted: false, lastStableOffset: 17n });
    expect(t.openTransactions()).toEqual([]);
  });

  it('the filter drops only transactional batches of producers whose aborted transaction has begun, until their ABORT marker', () => {
    const f = new AbortedTransactionFilter([{ version: 0, producerId: 1n, firstOffset: 5n, lastOffset: 9n, lastStableOffset: 10n }], 0n);
    expect(f.isAborted(header({ producerId: 1n, baseOffset: 0n, lastOffset: 3n }), false)).toBe(false); // before the aborted transaction
    expect(f.isAborted(header({ producerId: 2n, baseOffset: 4n, lastOffset: 4n }), false)).toBe(false);
    expect(f.isAborted(header({ producerId: 1n, baseOffset: 5n, lastOffset: 6n }), false)).toBe(true);
    expect(f.isAborted(header({ producerId: 1n, baseOffset: 7n, lastOffset: 7n, isTransactional: false }), false)).toBe(false); // idempotent, not transactional
    expect(f.isAborted(header({ producerId: 1n, baseOffset: 9n, lastOffset: 9n, isControl: true }), true)).toBe(false);
    expect(f.isAborted(header({ producerId: 1n, baseOffset: 10n, lastOffset: 10n }), false)).toBe(false); // a new transaction after the marker
    const later = new AbortedTransactionFilter([{ version: 0, producerId: 1n, firstOffset: 5n, lastOffset: 9n, lastStableOffset: 10n }], 10n);
    expect(later.isAborted(header({ producerId: 1n, baseOffset: 10n, lastOffset: 10n }), false)).toBe(false); // its marker is below the start: ignored
  });

  it('non-transactional data around transactions is untouched by read_committed', async () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: [...singles(rec('a', '1')), txn(3, 1, 'x'), marker(3, 'ABORT', 2), ...singles(rec('b', '2'))] }] });
    const log = PartitionLog.open(dir);
    expect(offsets((await fetch(log, { offset: 0n, isolation: 'read_committed' })).records)).toEqual([0, 3]);
  });
});
