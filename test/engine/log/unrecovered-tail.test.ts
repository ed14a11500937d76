/**
 * A partial batch header at the end of the last segment after a clean shutdown: what every text says
 * a broker does with it (unrecovered-tail.ts: FileRecords.open/append, LogSegment.readNextOffset,
 * FileRecords.searchForOffsetWithSize, FileLogInputStream.nextBatch, LogLoader.recoverLog,
 * LogSegment.recover), checked against the bytes a broker's append would leave.
 */
import { appendFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { findHoles } from '../../../src-main/engine/log/holes.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { tailCheckPartition } from '../../../src-main/engine/log/quick-check.ts';
import { planRecovery } from '../../../src-main/engine/log/recovery.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { PartitionWriter } from '../../../src-main/engine/log/partition-writer.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';

/** kafkajs's CRC-32C: an implementation independent of ours. */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Ten single-record batches (offsets 0..9, 72 bytes each: 720 bytes), then the first 40 bytes of the 74-byte batch at offset 10. */
function partialHeaderAfterCleanShutdown(): { dir: string; log: string; partial: Buffer; cut: Buffer } {
  const root = tempDir('klx-unrecovered-');
  dirs.push(root);
  const cut = encodeBatch({ baseOffset: 10n, records: [rec('k10', 'v10', 1010)] });
  const partial = cut.subarray(0, 40);
  const dir = buildPartition(root, { segments: [{ batches: singles(...Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`, 1000 + i))), tail: partial }] }, { cleanShutdown: true, recoveryPoint: 10n });
  return { dir, log: join(dir, '00000000000000000000.log'), partial, cut };
}

/** The sentence every place gives for this folder (numbers from the bytes above). */
const SEQUENCE =
  'a broker opens the segment with all its 760 bytes (FileRecords.open: the write position is the file\'s size) and sets the log end offset to 10 (LogSegment.readNextOffset reads only complete batches), so no read reaches these 40 bytes until the next append; ' +
  'that append is written after them, at byte 760, with base offset 10 (LogSegment.append, FileRecords.append). ' +
  'Then a read that walks the batches from before byte 720 (a fetch or ListOffsets at offset 10 or later, until an .index entry points past these bytes: LogSegment.read, FileRecords.searchForOffsetWithSize, FileLogInputStream.nextBatch) ' +
  'takes these 40 bytes and the first 34 appended bytes for one batch of 74 bytes (their size field says 62), claiming offsets up to 10: from the first append on (a batch is more than 61 bytes) a fetch at offset 10 returns this entry, ' +
  'and it fails its CRC (DefaultRecordBatch.ensureValid: CorruptRecordException): a consumer with check.crcs=true (the default) stops at offset 10 (Kafka CompletedFetch), and a follower fetching it refuses it (UnifiedLog.analyzeAndValidateRecords) and stays behind, so the appended records cannot be read from offset 10. ' +
  'LogManager.loadLogs deletes the clean-shutdown marker as it loads, so the next start after a crash recovers this segment (it holds the recovery point, at most 10, until a roll flushes it: LogLoader.recoverLog), and LogSegment.recover cuts it at byte 720: every batch appended after these bytes is lost';
const KLX = '. klx repair leaves them (a broker would not cut them) and klx append refuses to write after them; klx repair --truncate-at-corruption cuts them before anything is appended, losing no batch';

describe('a partial batch header at the end of the last segment after a clean shutdown', () => {
  it('repair --dry-run, verify, the health check and holes say what a broker does with it and with its next append', async () => {
    const { dir } = partialHeaderAfterCleanShutdown();
    const log = PartitionLog.open(dir);
    expect(log.startupCleanShutdown).toBe(true);
    expect(log.logEndOffset).toBe(10n);

    const plan = await planRecovery(dir);
    expect(plan.actions).toEqual([]);
    expect(plan.unresolved.map((u) => [u.kind, u.position])).toEqual([['not-recovered-by-broker', 720]]);
    const reason = plan.unresolved[0]!.reason;
    expect(reason).toContain(`(LogLoader.recoverLog); ${SEQUENCE}. Cutting the segment here is your choice (--truncate-at-corruption), not the broker's`);
    expect(reason).not.toContain('between two batches');

    const v = await verifyPartition(log);
    const tail = v.findings.find((f) => f.code === 'invalid-tail')!;
    expect(tail.position).toBe(720);
    expect(tail.reason).toBe(`40 invalid bytes at the end of the file: the batch size (length field + 12-byte header, so 74) exceeds the 40 bytes left in the file; ${SEQUENCE}${KLX}`);

    const quick = tailCheckPartition(log).find((f) => f.code === 'invalid-tail')!;
    expect(quick.reason).toBe(tail.reason);

    const holes = await findHoles(log);
    const h = holes.holes.find((x) => x.cause === 'truncated-tail')!;
    expect(h.detail).toContain(
      "after the clean shutdown a broker keeps them and writes its next batch after them (FileRecords.append), and a read from before them frames them with that batch's first bytes (FileRecords.searchForOffsetWithSize, FileLogInputStream.nextBatch), so a fetch at offset 10 does not get that batch as written, and the next start after a crash cuts the segment at byte 720 (LogLoader.recoverLog, LogSegment.recover), losing it",
    );
  });

  it('the bytes a broker would leave: the frame at 720 is the 40 bytes and 34 of the appended batch, its CRC fails; recovery after a crash cuts at 720', async () => {
    const { dir, log, partial } = partialHeaderAfterCleanShutdown();
    // What a broker appends next: a batch at the log end offset 10, written at the file's size (FileRecords.append).
    const appended = encodeBatch({ baseOffset: 10n, records: [rec('new', 'appended', 2000)] });
    appendFileSync(log, appended);
    const bytes = readFileSync(log);
    expect(bytes.length).toBe(760 + appended.length);
    // Framing as FileLogInputStream.nextBatch does, from position 0: offset (8), size (4), then size bytes.
    const frames: { position: number; size: number; baseOffset: bigint }[] = [];
    let pos = 0;
    while (pos + 17 <= bytes.length) {
      const size = bytes.readInt32BE(pos + 8);
      if (size < 14 || pos + 12 + size > bytes.length) break;
      frames.push({ position: pos, size: 12 + size, baseOffset: bytes.readBigInt64BE(pos) });
      pos += 12 + size;
    }
    expect(frames.slice(0, 10).map((f) => f.position)).toEqual([0, 72, 144, 216, 288, 360, 432, 504, 576, 648]);
    const frame = frames[10]!;
    expect(frame).toEqual({ position: 720, size: 74, baseOffset: 10n });
    const frameBytes = bytes.subarray(720, 794);
    expect(Buffer.compare(frameBytes.subarray(0, 40), partial)).toBe(0);
    expect(Buffer.compare(frameBytes.subarray(40), appended.subarray(0, 34))).toBe(0);
    // lastOffset = baseOffset + lastOffsetDelta (bytes 23..27, from the 40 garbage bytes) = 10: searchForOffsetWithSize(10) stops here.
    expect(frameBytes.readBigInt64BE(0) + BigInt(frameBytes.readInt32BE(23))).toBe(10n);
    // DefaultRecordBatch.ensureValid: the stored CRC-32C (bytes 17..21) against the bytes from 21 on.
    const stored = frameBytes.readUInt32BE(17);
    const computed = kjsCrc32C(frameBytes.subarray(21)) >>> 0;
    expect(stored).not.toBe(computed);
    // The appended batch itself is valid where it lies (position 760), but no frame starts there.
    expect(kjsCrc32C(appended.subarray(21)) >>> 0).toBe(appended.readUInt32BE(17));
    expect(frames.some((f) => f.position === 760)).toBe(false);

    // A later start without the marker (LogManager.loadLogs deleted it): the segment holds the recovery point 10 and is recovered,
    // and LogSegment.recover cuts it at 720, dropping the appended batch.
    rmSync(join(dir, '..', '.kafka_cleanshutdown'));
    const after = await planRecovery(dir);
    expect(after.cleanShutdown).toBe(false);
    expect(after.unresolved.map((u) => [u.kind, u.position])).toEqual([['needs-truncate-flag', 720]]);
    expect(after.unresolved[0]!.reason).toContain('1 valid batch (1 records) follow it');
    expect(after.unresolved[0]!.reason).toContain('A broker would cut the segment at byte 720 (LogSegment.recover)');
    const cut = await planRecovery(dir, { truncateAtCorruption: true });
    expect(cut.actions.find((a) => a.type === 'truncate-log')).toMatchObject({ toBytes: 720, droppedBatches: 1, droppedRecords: 1 });
  });

  it('klx append refuses to write after the bytes and names the repair that cuts them', () => {
    const { dir } = partialHeaderAfterCleanShutdown();
    let err: unknown;
    try {
      PartitionWriter.open(dir, { clock: () => 5000n }).append([{ key: 'a', value: 'b' }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KlxError);
    expect((err as KlxError).position).toBe(720);
    expect((err as KlxError).message).toContain(
      'after a clean shutdown a broker does not recover this segment (LogLoader.recoverLog) and would write the batch after these bytes, where reads from before them frame them with it (FileRecords.append, FileRecords.searchForOffsetWithSize): cut them first; this partition must be repaired before anything is appended: run `klx repair --truncate-at-corruption ',
    );
    expect(statSync(join(dir, '00000000000000000000.log')).size).toBe(760);
  });
});
