/**
 * A batch whose size field is wrong (fidelity; found by a fresh tester: `klx query` and `klx fetch` said a
 * consumer stops at a size field of 0x7ffffff0 with "CorruptRecordException: ByteBufferLogInputStream.nextBatch").
 * What Kafka does (2.8–4.x, read in FileLogInputStream, LogSegment, LocalLog, ByteBufferLogInputStream):
 * - a size field running past the end of the file ends the segment's batches without an error
 *   (FileLogInputStream.nextBatch returns null): a fetch at or after it finds nothing in the segment and
 *   LocalLog.read goes on to the next one (the rest of the segment is skipped silently), or, in the last
 *   segment, returns nothing (the consumer waits);
 * - a size field below 14 (−1, 10) makes nextBatch throw CorruptRecordException: the fetch fails with
 *   CORRUPT_MESSAGE, and a seek helps only to an offset whose .index entry lies past the bytes or to the next
 *   segment.
 * The damaged partitions are built here: ten single-record batches of 72 bytes, the one at offset 5 with its
 * size field overwritten.
 */
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { fetch } from '../../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { planRecovery } from '../../../src-main/engine/log/recovery-plan.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import { klx } from '../../support/klx-cli.ts';
import { openSql } from '../sql/sql-test-helpers.ts';

const HUGE = 0x7ffffff0;
const one = (o: number) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`, 1000 + o)] });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const offsets = (rs: { offset: bigint }[]) => rs.map((r) => Number(r.offset));

/**
 * orders-0 with offsets 0..14: `middle` puts 0..9 in segment 0 (the batch at 5 damaged, at byte 360) and 10..14
 * in segment 10; `last` puts 0..2 in segment 0 and 3..9 in segment 3, the last (the batch at 5 at byte 144).
 */
function damaged(size: number, where: 'middle' | 'last', opts: { indexIntervalBytes?: number; cleanShutdown?: boolean } = {}): string {
  const seg = range(0, 9).map(one);
  expect(seg.map((b) => b.length)).toEqual(Array(10).fill(72));
  seg[5] = Buffer.from(seg[5]!);
  seg[5].writeInt32BE(size, 8);
  const segments = where === 'middle' ? [{ batches: seg }, { batches: range(10, 14).map(one) }] : [{ batches: seg.slice(0, 3) }, { batches: seg.slice(3) }];
  return buildPartition(tempDir('klx-size-field-'), { topic: 'orders', segments, indexIntervalBytes: opts.indexIntervalBytes }, { highWatermark: where === 'middle' ? 15n : 10n, recoveryPoint: 0n, cleanShutdown: opts.cleanShutdown });
}

describe('a size field running past the end of the file (0x7ffffff0)', () => {
  it('middle segment: a consumer gets 0..4, then silently 10..14 (offsets 5..9 skipped: LocalLog.read goes on to the next segment), no error', async () => {
    const log = PartitionLog.open(damaged(HUGE, 'middle'));
    const r = await fetch(log, { offset: 0n, onCorrupt: 'stop' });
    expect(offsets(r.records)).toEqual([0, 1, 2, 3, 4, 10, 11, 12, 13, 14]);
    expect([r.nextOffset, r.reachedLimit, r.stalled, r.stoppedAtCorrupt]).toEqual([15n, true, false, null]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ code: 'truncated-batch', position: 360, fromOffset: 5n, toOffset: 9n });
    expect(r.problems[0]!.reason).toContain(
      'their size field, 2147483632, reaches past the end of the file (360 bytes left): a broker takes them for the end of the segment\'s batches, no error (FileLogInputStream.nextBatch returns nothing), so a fetch at offset 5 finds nothing in this segment (LogSegment.read) and LocalLog.read goes on to the next segment: a consumer at offset 5 silently receives offset 10 next and the rest of this segment (offsets 5..9) is skipped, no error',
    );
    expect(r.problems[0]!.reason).toContain('takes it for a partial batch and stops before it, no error (ByteBufferLogInputStream.nextBatch)');
    // A fetch from inside the skipped range gets the next segment too.
    const at7 = await fetch(log, { offset: 7n, onCorrupt: 'stop' });
    expect([offsets(at7.records), at7.problems.map((p) => [p.fromOffset, p.toOffset])]).toEqual([[10, 11, 12, 13, 14], [[7n, 9n]]]);
    // The explorer (resync) still shows what the file holds after the bytes.
    expect(offsets((await fetch(log, { offset: 0n })).records)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it('last segment: the log end offset stops at the bytes (LogSegment.readNextOffset), so a consumer waits at 5; with an .index entry past them, a fetch at 5 stalls and one at that entry reads on', async () => {
    const plain = PartitionLog.open(damaged(HUGE, 'last'));
    expect(plain.logEndOffset).toBe(5n);
    const r = await fetch(plain, { offset: 0n, onCorrupt: 'stop' });
    expect([offsets(r.records), r.nextOffset, r.reachedLimit, r.stalled]).toEqual([[0, 1, 2, 3, 4], 5n, true, false]);
    // An entry every 100 bytes: entries at the batches at 6 (position 216) and 8 (360) lie past the bytes at 144.
    const indexed = PartitionLog.open(damaged(HUGE, 'last', { indexIntervalBytes: 100 }));
    expect(indexed.segments[1]!.offsetIndex().entries.map((e) => [Number(e.offset), e.position])).toEqual([
      [6, 216],
      [8, 360],
    ]);
    expect(indexed.logEndOffset).toBe(10n);
    const s = await fetch(indexed, { offset: 0n, onCorrupt: 'stop' });
    expect([offsets(s.records), s.nextOffset, s.reachedLimit, s.stalled]).toEqual([[0, 1, 2, 3, 4], 5n, false, true]);
    expect(s.problems.map((p) => [p.code, p.position, p.fromOffset, p.toOffset])).toEqual([['truncated-batch', 144, 5n, 9n]]);
    expect(s.problems[0]!.reason).toContain('LocalLog.read returns no records and no error: a consumer waits at offset 5 (a later segment, once rolled, is where it goes on); a fetch at offset 6 or later reads on from the .index entry past these bytes');
    expect(offsets((await fetch(indexed, { offset: 6n, onCorrupt: 'stop' })).records)).toEqual([6, 7, 8, 9]);
  });

  it('klx fetch prints the skipped offsets in place (exit 1); klx query and the repair plan say the same', async () => {
    const dir = damaged(HUGE, 'middle');
    const r = klx('fetch', dir, '--offset', '0');
    expect(r.status).toBe(1);
    const out = r.stdout.split('\n').filter(Boolean);
    expect(out.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([...range(0, 4).map((o) => `offset ${o} ts`), '-- hole offsets', ...range(10, 14).map((o) => `offset ${o} ts`), '-- next offset']);
    expect(out[11]).toMatch(/^-- next offset 15 \(end: nothing more to read\); 10 records;/);
    expect(out[5]).toContain('-- hole offsets 5..9: truncated-batch: ');
    expect(out[5]).toContain('a consumer at offset 5 silently receives offset 10 next');
    const s = await openSql(dir);
    const [n] = await s.notices();
    expect(n!.notice).toContain('(the first: corrupt-region truncated-batch at 00000000000000000000.log position 360): their size field, 2147483632, reaches past the end of the file');
    expect(n!.notice).toContain('a consumer at offset 5 silently receives offset 10 next and the rest of this segment (offsets 5..9) is skipped, no error');
    expect(n!.notice).not.toContain('CorruptRecordException');
    // After a clean shutdown a broker does not recover the segment: the plan leaves the bytes and says what consumers meet.
    const plan = await planRecovery(damaged(HUGE, 'middle', { cleanShutdown: true }));
    expect(plan.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', 360]]);
    expect(plan.unresolved[0]!.reason).toContain('a consumer at offset 5 silently receives offset 10 next');
    // Without it, LogSegment.recover stops at the same bytes (nextBatch returns nothing) and cuts the segment there.
    expect((await planRecovery(damaged(HUGE, 'middle'))).unresolved[0]!.reason).toContain('A broker would cut the segment at byte 360 (LogSegment.recover) and delete the 1 later segment (LogLoader.recoverLog)');
  });
});

describe('a size field below 14 (−1, 10)', () => {
  for (const size of [-1, 10]) {
    it(`${size}, middle segment: 0..4, then the consumer's error at 5; a seek to 7 fails the same way, one to 10 (the next segment) reads on`, async () => {
      const log = PartitionLog.open(damaged(size, 'middle'));
      const r = await fetch(log, { offset: 0n, onCorrupt: 'stop' });
      expect([offsets(r.records), r.nextOffset, r.stalled]).toEqual([[0, 1, 2, 3, 4], 5n, false]);
      expect(r.stoppedAtCorrupt).toMatchObject({ code: 'batch-length-out-of-range', position: 360, details: { offset: 5n, size, seekTo: 10n } });
      const why = r.stoppedAtCorrupt!.reason;
      expect(why).toContain('Encountered corrupt message when fetching offset 5 for topic-partition orders-0');
      expect(why).toContain(`throws CorruptRecordException (FileLogInputStream.nextBatch): a fetch at offset 5 fails with CORRUPT_MESSAGE (ReplicaManager.readFromLocalLog)`);
      expect(why).toContain(`"Record size ${size} is less than the minimum record overhead (14)"`);
      expect(why).toContain('a seek reads on only from offset 10 (the next segment)');
      await expect(fetch(log, { offset: 5n, onCorrupt: 'stop' })).rejects.toMatchObject({ code: 'batch-length-out-of-range', position: 360 });
      await expect(fetch(log, { offset: 7n, onCorrupt: 'stop' })).rejects.toThrow('Encountered corrupt message when fetching offset 7 for topic-partition orders-0');
      expect(offsets((await fetch(log, { offset: 10n, onCorrupt: 'stop' })).records)).toEqual([10, 11, 12, 13, 14]);
    });
  }

  it('klx fetch: the records before, then the error (exit 1); klx query names the CorruptRecordException of a size below 14', async () => {
    const dir = damaged(-1, 'middle');
    const r = klx('fetch', dir, '--offset', '0');
    expect(r.status).toBe(1);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(range(0, 4).map((o) => `offset ${o}`));
    expect(r.stderr).toContain('Encountered corrupt message when fetching offset 5 for topic-partition orders-0');
    const [n] = await (await openSql(dir)).notices();
    expect(n!.notice).toContain("a broker's read that walks over their size field, -1, below the 14-byte minimum, throws CorruptRecordException (FileLogInputStream.nextBatch)");
  });

  it('10, last segment at the log end offset: a broker loading it after a clean shutdown does not start; one that recovers the segment cuts it', async () => {
    const dir = damaged(10, 'last');
    expect(PartitionLog.open(dir).logEndOffset).toBe(5n);
    const r = await fetch(PartitionLog.open(dir), { offset: 0n, onCorrupt: 'stop' });
    expect([offsets(r.records), r.nextOffset, r.reachedLimit, r.stoppedAtCorrupt]).toEqual([[0, 1, 2, 3, 4], 5n, true, null]);
    const [n] = await (await openSql(dir)).notices();
    expect(n!.notice).toContain(
      'they lie at the log end offset 5 (after the last batch before them): a broker loading this log without recovering the segment (clean shutdown) walks over their size field, 10, below the 14-byte minimum, to find its log end and throws CorruptRecordException (LogSegment.readNextOffset, FileLogInputStream.nextBatch), which LogManager.loadLogs does not catch, so it does not start; one that recovers the segment cuts it there (LogSegment.recover)',
    );
  });
});
