/**
 * `records` / `latest` / `state` on a partition damaged in two segments (a batch failing its CRC, a
 * batch overwritten with zeros): the records after the damage stay listed, flagged past_damage with
 * the nearest damage before them, and the session's notices say how many there are, what a consumer
 * does at the damage (as `klx fetch` stops there) and what a broker restarting now would do.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { fetch } from '../../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';
import { klx } from '../../support/klx-cli.ts';
import { openSql, rows } from './sql-test-helpers.ts';

/** One single-record batch per [offset, key]; values `v<offset>`. */
const batchesOf = (pairs: [number, string][]) => pairs.map(([o, k]) => encodeBatch({ baseOffset: BigInt(o), records: [rec(k, `v${o}`, 1000 + o)] }));

function damagedPartition(recoveryPoint: bigint): { root: string; dir: string; crcAt: number; zeroAt: number } {
  const root = tempDir('klx-past-damage-');
  const seg0 = batchesOf([[0, 'a'], [1, 'b'], [2, 'c'], [3, 'd'], [4, 'e']]);
  seg0[2]![seg0[2]!.length - 2] ^= 0xff; // a byte of value v2: the batch at offset 2 fails its CRC
  const seg5 = batchesOf([[5, 'a'], [6, 'b'], [7, 'f'], [8, 'g'], [9, 'h']]);
  seg5[2] = Buffer.alloc(seg5[2]!.length); // the batch at offset 7 overwritten with zeros
  const seg10 = batchesOf([[10, 'a'], [11, 'i']]);
  const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: seg0 }, { baseOffset: 5n, batches: seg5 }, { batches: seg10 }] }, { recoveryPoint, highWatermark: 12n });
  const crcAt = seg0[0]!.length * 2;
  const zeroAt = seg5[0]!.length * 2;
  return { root, dir, crcAt, zeroAt };
}

describe('records past damage', () => {
  it('are listed with past_damage and the nearest damage before them; latest and state say which latest values lie past damage; the notice counts them', async () => {
    const { dir, crcAt, zeroAt } = damagedPartition(5n);
    expect([crcAt, zeroAt]).toEqual([142, 142]);
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT "offset", key_text, value_text, crc_valid, past_damage, past_damage_segment, past_damage_position FROM records ORDER BY "offset"')).toEqual([
      { offset: 0n, key_text: 'a', value_text: 'v0', crc_valid: true, past_damage: false, past_damage_segment: null, past_damage_position: null },
      { offset: 1n, key_text: 'b', value_text: 'v1', crc_valid: true, past_damage: false, past_damage_segment: null, past_damage_position: null },
      // The batch failing its CRC: its own record is listed with crc_valid = false.
      // In the batch failing its CRC: a consumer stops at the batch, before its record (review of stop 26).
      { offset: 2n, key_text: 'c', value_text: null, crc_valid: false, past_damage: true, past_damage_segment: 0n, past_damage_position: 142n },
      { offset: 3n, key_text: 'd', value_text: 'v3', crc_valid: true, past_damage: true, past_damage_segment: 0n, past_damage_position: 142n },
      { offset: 4n, key_text: 'e', value_text: 'v4', crc_valid: true, past_damage: true, past_damage_segment: 0n, past_damage_position: 142n },
      // A later segment lies past the damage too: a consumer reading in order never gets there.
      { offset: 5n, key_text: 'a', value_text: 'v5', crc_valid: true, past_damage: true, past_damage_segment: 0n, past_damage_position: 142n },
      { offset: 6n, key_text: 'b', value_text: 'v6', crc_valid: true, past_damage: true, past_damage_segment: 0n, past_damage_position: 142n },
      // Offset 7 is in the zeroed bytes: no row.
      { offset: 8n, key_text: 'g', value_text: 'v8', crc_valid: true, past_damage: true, past_damage_segment: 5n, past_damage_position: 142n },
      { offset: 9n, key_text: 'h', value_text: 'v9', crc_valid: true, past_damage: true, past_damage_segment: 5n, past_damage_position: 142n },
      { offset: 10n, key_text: 'a', value_text: 'v10', crc_valid: true, past_damage: true, past_damage_segment: 5n, past_damage_position: 142n },
      { offset: 11n, key_text: 'i', value_text: 'v11', crc_valid: true, past_damage: true, past_damage_segment: 5n, past_damage_position: 142n },
    ]);
    expect(await rows(s, 'SELECT key_text, "offset", past_damage FROM state ORDER BY key_text')).toEqual([
      { key_text: 'a', offset: 10n, past_damage: true },
      { key_text: 'b', offset: 6n, past_damage: true },
      { key_text: 'c', offset: 2n, past_damage: true },
      { key_text: 'd', offset: 3n, past_damage: true },
      { key_text: 'e', offset: 4n, past_damage: true },
      { key_text: 'g', offset: 8n, past_damage: true },
      { key_text: 'h', offset: 9n, past_damage: true },
      { key_text: 'i', offset: 11n, past_damage: true },
    ]);
    expect(await rows(s, 'SELECT segment_base_offset, "position", kind, code FROM damage ORDER BY segment_base_offset')).toEqual([
      { segment_base_offset: 0n, position: 142n, kind: 'crc-mismatch', code: 'crc-mismatch' },
      { segment_base_offset: 5n, position: 142n, kind: 'corrupt-region', code: expect.any(String) },
    ]);
    // The same rule as klx fetch: reading from offset 0 delivers 0 and 1, then stops at the batch failing its CRC.
    const read = await fetch(PartitionLog.open(dir), { offset: 0n, onCorrupt: 'stop' });
    expect([read.records.map((r) => r.offset), read.nextOffset, read.stoppedAtCorrupt?.code]).toEqual([[0n, 1n], 2n, 'corrupt-record']);
    expect(await s.notices()).toEqual([
      {
        partition: 'orders-0',
        notice:
          '9 records of records lie past damage in the log (the first: crc-mismatch at 00000000000000000000.log position 142): a consumer with check.crcs=true (the default) reading in order stops at that batch (CorruptRecordException: CompletedFetch.maybeEnsureValid) and reaches them only by seeking past it; ' +
          'a broker restarting now does not check segment 0 (below the recovery point 5: LogLoader.recoverLog recovers only the segments from the one holding it on), so the records past the damage stay on disk. ' +
          'They are listed with past_damage = true (past_damage_segment and past_damage_position: the damage at or just before each); 8 keys of latest have their latest value past damage.',
      },
    ]);
  });

  it('the notice says when a broker restarting now would cut the damaged segment and delete the later ones; an undamaged log has no notice', async () => {
    const { dir } = damagedPartition(0n);
    const s = await openSql(dir);
    const [n] = await s.notices();
    expect(n!.notice).toContain('a broker restarting now recovers segment 0 (no clean shutdown, at or after the recovery point: LogLoader.recoverLog), cuts it at the damage (LogSegment.recover) and deletes the later segments, so the records past the damage would be gone.');
    const clean = buildPartition(tempDir('klx-past-damage-'), { segments: [{ batches: batchesOf([[0, 'a'], [1, 'b']]) }] });
    const c = await openSql(clean);
    expect(await c.notices()).toEqual([]);
    expect(await rows(c, 'SELECT count(*) FILTER (past_damage) AS past, count(*) AS n FROM records')).toEqual([{ past: 0n, n: 2n }]);
  });

  it('a data batch whose CRC is valid but whose records do not decode: a recovering broker keeps it (LogSegment.recover checks size and CRC only)', async () => {
    const root = tempDir('klx-past-damage-');
    const seg = batchesOf([[0, 'a'], [1, 'b'], [2, 'c']]);
    // recordsCount 2 in a batch of one record, CRC-32C computed again over [21, end): a valid CRC (review of stop 26).
    const bad = seg[1]!;
    bad.writeInt32BE(2, 57);
    bad.writeUInt32BE(crc32c(bad.subarray(21)), 17);
    const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: seg }] });
    const s = await openSql(dir);
    expect(await rows(s, 'SELECT kind, code FROM damage')).toEqual([{ kind: 'undecodable-batch', code: 'corrupt-batch' }]);
    const [n] = await s.notices();
    expect(n!.notice).toContain('(the first: undecodable-batch corrupt-batch at 00000000000000000000.log position 71)');
    expect(n!.notice).toContain(
      "a broker restarting now recovers segment 0 (no clean shutdown, at or after the recovery point: LogLoader.recoverLog) and keeps a data batch whose CRC is valid (LogSegment.recover checks a batch's size and CRC, not the records inside; only a control batch's marker is read, and a failure there cuts the segment), so the records past the damage stay on disk.",
    );
    expect(n!.notice).not.toContain('cuts it at the damage');
  });

  it('in __cluster_metadata the notice names what a KRaft node does, not a consumer', async () => {
    const root = tempDir('klx-past-damage-');
    const seg = batchesOf([[0, 'a'], [1, 'b'], [2, 'c']]);
    seg[1]![seg[1]!.length - 2] ^= 0xff;
    const dir = buildPartition(root, { topic: '__cluster_metadata', segments: [{ batches: seg }] });
    const s = await openSql(dir);
    const [n] = await s.notices();
    expect(n!.notice).toBe(
      '2 records of records lie past damage in the log (the first: crc-mismatch at 00000000000000000000.log position 71): no consumer reads __cluster_metadata (only KRaft voters and observers fetch it: KafkaRaftClient); a KRaft node reading it for its listeners stops at the damage (RecordsIterator.readBatch: CorruptRecordException); ' +
        'a broker restarting now recovers segment 0 (no clean shutdown, at or after the recovery point: LogLoader.recoverLog), cuts it at the damage (LogSegment.recover) and deletes the later segments, so the records past the damage would be gone. They are listed with past_damage = true (past_damage_segment and past_damage_position: the damage at or just before each); 2 keys of latest have their latest value past damage.',
    );
  });

  it('klx query prints the notice after the rows (text) and on stderr (--json)', () => {
    const { dir } = damagedPartition(5n);
    const r = klx('query', dir, 'SELECT "offset", past_damage FROM state WHERE key_text = \'a\'', '--no-cache');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('(note: orders-0: 9 records of records lie past damage in the log (the first: crc-mismatch at 00000000000000000000.log position 142)');
    const j = klx('query', dir, 'SELECT "offset", past_damage FROM state WHERE key_text = \'a\'', '--no-cache', '--json');
    expect(j.stdout.trim()).toBe('{"offset":10,"past_damage":true}');
    expect(j.stderr).toContain('klx: note: orders-0: 9 records of records lie past damage');
  });
});
