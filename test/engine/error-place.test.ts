/**
 * Every error names its file and position (issue 17, defect 10): the shared `errorAt` turns an error
 * thrown while handling bytes of a file into a KlxError naming that file and the byte position
 * (RangeErrors from sizes taken from corrupt header fields included), and the compaction preview of
 * a segment holding a batch whose offset does not fit the segment's int32 relative offsets names
 * the segment file and the batch position (before: "relative offset outside 0..2147483647" alone).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorAt, KlxError } from '../../src-main/engine/errors.ts';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { planCompaction } from '../../src-main/engine/cleaner/compaction.ts';
import { crc32c } from '../../src-main/engine/format/crc.ts';
import { recordsOf, streamRecordsOf, walkLog } from '../../src-main/engine/log/log-walk.ts';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import { rec, tempDir } from '../support/log-builder.ts';

describe('errors name their file and position', () => {
  it('errorAt: a RangeError becomes corrupt-batch at the place; a KlxError without a file gets it; one with a file is kept', () => {
    let range: unknown;
    try {
      new Int32Array(-1);
    } catch (err) {
      range = err;
    }
    const a = errorAt(range, { file: '/x/0.log', position: 61 }) as KlxError;
    expect(a).toBeInstanceOf(KlxError);
    expect([a.code, a.file, a.position]).toEqual(['corrupt-batch', '/x/0.log', 61]);
    expect(a.message).toMatch(/^\/x\/0\.log: position 61: Invalid typed array length/);
    const b = errorAt(new KlxError('invalid-argument', 'aborted transaction 1: version 64 is not supported'), { file: '/x/0.txnindex' }, 'cannot write it') as KlxError;
    expect(b.message).toBe('/x/0.txnindex: cannot write it: aborted transaction 1: version 64 is not supported');
    const own = new KlxError('crc-mismatch', 'bad', { file: '/y.log', position: 3 });
    expect(errorAt(own, { file: '/x', position: 9 })).toBe(own);
    const bug = new TypeError('a bug');
    expect(errorAt(bug, { file: '/x' })).toBe(bug);
  });

  it('compaction preview of a batch whose offset does not fit the segment: the error names the .log and the position', () => {
    const dir = join(tempDir(), 'topic-0');
    mkdirSync(dir);
    const first = encodeBatch({ baseOffset: 0n, records: [rec('k', 'v1', 1000)] });
    const far = encodeBatch({ baseOffset: 2n ** 31n + 10n, records: [rec('k', 'v2', 1000)] });
    writeFileSync(join(dir, '00000000000000000000.log'), Buffer.concat([first, far]));
    writeFileSync(join(dir, '00000000000000000000.index'), Buffer.alloc(0));
    writeFileSync(join(dir, '00000000000000000000.timeindex'), Buffer.alloc(0));
    // A later active segment so that the first one is cleanable.
    writeFileSync(join(dir, '00000000002147483659.log'), encodeBatch({ baseOffset: 2n ** 31n + 11n, records: [rec('k', 'v3', 1000)] }));
    let err: unknown;
    try {
      planCompaction(dir, { now: 10_000, dedupeBufferSize: 1 << 20, config: { 'cleanup.policy': ['compact'] } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KlxError);
    const k = err as KlxError;
    expect(k.file).toBe(join(dir, '00000000000000000000.log'));
    expect(k.position).toBe(0);
    expect(k.message).toContain('relative offset outside 0..2147483647');
  });

  it('the records of a walked batch that do not decode name the segment .log and the batch position (recordsOf, streamRecordsOf)', () => {
    const dir = join(tempDir(), 'topic-0');
    mkdirSync(dir);
    const first = encodeBatch({ baseOffset: 0n, records: [rec('k', 'v1', 1000)] });
    // recordsCount 3 where the area holds one record; the CRC recomputed, so only the records are wrong.
    const bad = encodeBatch({ baseOffset: 1n, records: [rec('k', 'v2', 1000)] });
    bad.writeInt32BE(3, 57);
    bad.writeUInt32BE(crc32c(bad.subarray(21)), 17);
    writeFileSync(join(dir, '00000000000000000000.log'), Buffer.concat([first, bad]));
    const log = PartitionLog.open(dir);
    const batches = [...walkLog(log)].filter((e) => e.type === 'batch');
    expect(batches.map((e) => e.header.position)).toEqual([0, first.length]);
    expect(recordsOf(batches[0]!).map((r) => r.offset)).toEqual([0n]);
    for (const read of [recordsOf, streamRecordsOf]) {
      let err: unknown;
      try {
        read(batches[1]!);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KlxError);
      const k = err as KlxError;
      expect([k.code, k.file, k.position]).toEqual(['corrupt-batch', join(dir, '00000000000000000000.log'), first.length]);
      expect(k.message).toContain('recordsCount 3');
    }
  });
});
