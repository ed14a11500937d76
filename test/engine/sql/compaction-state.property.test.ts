/**
 * The property the cleaner must keep: compaction never changes `state` (the current value of every
 * key). Generated logs (several segments, batches of 1–5 records in every codec, repeated keys,
 * tombstones, keyless records, committed and aborted transactions) are compacted with the engine's
 * cleaner (`compact`), once and then again after the tombstones' delete horizon; `state` read through
 * SQL is the same before and after both runs, every record left is one that was there before (same
 * offset, key and value), and `latest` never gains a record and can only lose tombstones.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compact } from '../../../src-main/engine/cleaner/cleaner.ts';
import type { Compression } from '../../../src-main/engine/format/types.ts';
import type { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { buildPartition, tempDir, type BatchInput, type SegmentInput } from '../../support/log-builder.ts';
import type { AbortedTxnInput } from '../../../src-main/engine/files/txn-index.ts';
import { markerBatch, openSql, rows } from './sql-test-helpers.ts';

interface GenRecord {
  key: string | null;
  value: string | null;
}
interface GenBatch {
  kind: 'plain' | 'commit' | 'abort';
  compression: Compression;
  records: GenRecord[];
}

const record = fc.record({
  key: fc.oneof({ weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }, { weight: 1, arbitrary: fc.constant(null) }),
  value: fc.oneof({ weight: 4, arbitrary: fc.string({ minLength: 0, maxLength: 12 }) }, { weight: 1, arbitrary: fc.constant(null) }),
});
const batch: fc.Arbitrary<GenBatch> = fc.record({
  kind: fc.oneof({ weight: 6, arbitrary: fc.constant('plain' as const) }, { weight: 1, arbitrary: fc.constantFrom('commit' as const, 'abort' as const) }),
  compression: fc.constantFrom<Compression>('none', 'none', 'gzip', 'lz4', 'zstd', 'snappy'),
  records: fc.array(record, { minLength: 1, maxLength: 5 }),
});
const log = fc.array(fc.array(batch, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 4 });

const TS = 1_700_000_000_000;
const DELETE_RETENTION_MS = 86_400_000;

/** Lays out generated segments: offsets run on; a transactional batch is followed by its marker (and a .txnindex entry for an abort). */
function layout(segs: GenBatch[][]): SegmentInput[] {
  let offset = 0;
  let pid = 100;
  return segs.map((batches) => {
    const out: BatchInput[] = [];
    const txnIndex: AbortedTxnInput[] = [];
    for (const b of batches) {
      const first = offset;
      const records = b.records.map((r) => ({ key: r.key, value: r.value, timestamp: BigInt(TS + offset++) }));
      if (b.kind === 'plain') {
        out.push({ baseOffset: BigInt(first), compression: b.compression, records });
        continue;
      }
      pid++;
      out.push({ baseOffset: BigInt(first), compression: b.compression, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records });
      out.push(markerBatch(pid, b.kind === 'abort' ? 'ABORT' : 'COMMIT', offset));
      if (b.kind === 'abort') txnIndex.push({ producerId: BigInt(pid), firstOffset: BigInt(first), lastOffset: BigInt(offset), lastStableOffset: BigInt(offset + 1) });
      offset++;
    }
    return txnIndex.length > 0 ? { batches: out, txnIndex } : { batches: out };
  });
}

type Row = [offset: bigint, key: string | null, value: string | null];

async function read(s: SqlSession, view: 'state' | 'latest' | 'records'): Promise<Row[]> {
  const rs = await rows(s, `SELECT "offset", key_text, value_text FROM ${view} WHERE NOT is_control ORDER BY "offset"`);
  return rs.map((r) => [r.offset as bigint, r.key_text as string | null, r.value_text as string | null]);
}

describe('compaction keeps state', () => {
  it('state read through SQL is unchanged by compaction (and by a second run past the delete horizon), on generated logs', async () => {
    let removed = 0;
    let tombstonesDropped = 0;
    await fc.assert(
      fc.asyncProperty(log, async (segs) => {
        const logDir = tempDir();
        const dir = buildPartition(logDir, { topic: 'compacted', segments: layout(segs) }, { cleanShutdown: true });
        const cacheDir = tempDir('klx-sql-cache-');
        const trashDir = tempDir('klx-trash-');
        const config = { 'cleanup.policy': ['compact' as const], 'delete.retention.ms': BigInt(DELETE_RETENTION_MS), 'min.cleanable.dirty.ratio': 0 };

        const before = await openSql(dir, { cacheDir });
        const stateBefore = await read(before, 'state');
        const latestBefore = await read(before, 'latest');
        const recordsBefore = new Map((await read(before, 'records')).map((r) => [r[0], r]));
        before.close();

        const now = TS + 10_000;
        for (const at of [now, now + DELETE_RETENTION_MS + 1]) {
          const outcome = compact(dir, { now: at, config, trashDir });
          expect(outcome.partitions[0]!.error, JSON.stringify(outcome.partitions[0]!.error)).toBeUndefined();
          const after = await openSql(dir, { cacheDir });
          expect(await read(after, 'state')).toEqual(stateBefore);
          const recordsAfter = await read(after, 'records');
          for (const r of recordsAfter) expect(recordsBefore.get(r[0])).toEqual(r);
          removed += recordsBefore.size - recordsAfter.length;
          const latestAfter = await read(after, 'latest');
          const lost = latestBefore.filter((r) => !latestAfter.some((a) => a[0] === r[0]));
          tombstonesDropped += lost.length;
          for (const r of lost) expect(r[2], `only tombstones leave latest (lost ${String(r[0])})`).toBeNull();
          expect(latestAfter.every((a) => latestBefore.some((r) => r[0] === a[0]))).toBe(true);
          after.close();
        }
      }),
      { numRuns: 12 },
    );
    // The runs did compact: records went. (Tombstones leave only when a later round cleans their
    // segment again, which needs new dirty data, so `tombstonesDropped` may stay 0 here.)
    expect(removed).toBeGreaterThan(0);
    expect(tombstonesDropped).toBeGreaterThanOrEqual(0);
  }, 240_000);

  it('a known log: k1/k2 duplicates, a tombstone, a keyless record and an aborted transaction compact to the same state', async () => {
    const segs: GenBatch[][] = [
      [
        { kind: 'plain', compression: 'none', records: [{ key: 'k1', value: 'a' }, { key: 'k2', value: 'b' }, { key: null, value: 'x' }] },
        { kind: 'abort', compression: 'lz4', records: [{ key: 'k1', value: 'aborted' }] },
        { kind: 'plain', compression: 'gzip', records: [{ key: 'k1', value: 'c' }, { key: 'k2', value: null }] },
      ],
      [{ kind: 'plain', compression: 'none', records: [{ key: 'k3', value: 'd' }] }],
    ];
    const dir = buildPartition(tempDir(), { topic: 'compacted', segments: layout(segs) }, { cleanShutdown: true });
    const cacheDir = tempDir('klx-sql-cache-');
    const before = await openSql(dir, { cacheDir });
    expect(await read(before, 'state')).toEqual([
      [5n, 'k1', 'c'],
      [7n, 'k3', 'd'],
    ]);
    expect(await read(before, 'records')).toHaveLength(7);
    before.close();
    const outcome = compact(dir, { now: TS + 10_000, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': BigInt(DELETE_RETENTION_MS) }, trashDir: tempDir('klx-trash-') });
    expect(outcome.partitions[0]!.error).toBeUndefined();
    const after = await openSql(dir, { cacheDir });
    expect(after.reused).toBe(false);
    expect(await read(after, 'state')).toEqual([
      [5n, 'k1', 'c'],
      [7n, 'k3', 'd'],
    ]);
    // The keyless record, the overwritten k1/k2 and the aborted data are gone; the tombstone stays until its horizon.
    expect(await read(after, 'records')).toEqual([
      [5n, 'k1', 'c'],
      [6n, 'k2', null],
      [7n, 'k3', 'd'],
    ]);
  });
});
