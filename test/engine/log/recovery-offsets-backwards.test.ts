/**
 * Offsets going backwards in a segment a broker recovers (no clean shutdown, no recovery point): on a copy of the
 * broker-written multisegment-rolled/invoice-1 partition folder, one batch's baseOffset is lowered (the CRC-32C does
 * not cover it, so the batch stays valid). LogSegment.recover does not check that offsets increase; what a broker
 * does depends on the index entries it rebuilds (OffsetIndex.append throws InvalidOffsetException for an entry not
 * above the previous one, and LogLoader.recoverLog then empties the segment and deletes the later ones).
 * In segment 0, .index entries (index.interval.bytes 4096) fall on the batches at bytes 429217 (last offset 13463)
 * and 447240 (13976..14487), none on 430859 (13464..13975).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { offsetDisorderAtRecovery, planRecovery } from '../../../src-main/engine/log/recovery-plan.ts';
import { tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

const SEG0 = '00000000000000000000.log';
const CHECKS = "A broker's recovery does not check that offsets increase (LogSegment.recover checks each batch's CRC and that its last offset fits the segment)";

/** A copy of the invoice-1 folder alone (no checkpoints: a broker recovers from offset 0) with the batch at `position` of segment 0 given `baseOffset`. */
function lowered(position: number, baseOffset: bigint): string {
  const dir = join(tempDir('klx-backwards-'), 'invoice-1');
  cpSync(join(REAL_DATA, 'multisegment-rolled', 'invoice-1'), dir, { recursive: true });
  const file = join(dir, SEG0);
  const bytes = readFileSync(file);
  bytes.writeBigInt64BE(baseOffset, position);
  writeFileSync(file, bytes);
  return dir;
}

describeRealData('repair plan: offsets going backwards in a recovered segment', () => {
  it('an .index entry on the batch not above the previous entry: a broker empties the segment (999,904 bytes) and deletes the 3 later ones', async () => {
    const dir = lowered(447240, 12000n);
    expect(offsetDisorderAtRecovery(join(dir, SEG0), 0n, 4096)).toEqual({ kind: 'invalid-offset', index: 'offset', position: 447240, offset: 12511n, previous: 13463n, segmentBytes: 999904 });
    const plan = await planRecovery(dir);
    const note = plan.unresolved.find((u) => u.position !== undefined)!;
    expect(note).toEqual({
      kind: 'needs-truncate-flag',
      file: join(dir, SEG0),
      position: 447240,
      reason:
        "batch at offsets 12000..12511 is not above the previous batch's last offset 13975; 303 valid batches (16644 records) follow it: left in place (no valid record is dropped by default). " +
        `${CHECKS}, but the .index entry it writes at the batch at byte 447240 names offset 12511, not above the previous entry's 13463: OffsetIndex.append throws InvalidOffsetException, and LogLoader.recoverLog then empties the whole segment (LogSegment.truncateTo(0): all 999904 bytes) and deletes the 3 later segments; ` +
        'cutting the segment at byte 447240 and deleting every later segment is your choice (--truncate-at-corruption)',
    });
    // Asked for, the cut is klx's at the batch, and it says it is not the broker's.
    const cut = await planRecovery(dir, { truncateAtCorruption: true });
    const t = cut.actions.find((a) => a.type === 'truncate-log')!;
    expect(t).toMatchObject({ type: 'truncate-log', baseOffset: 0n, fromBytes: 999904, toBytes: 447240, kind: 'corruption', byBroker: false });
    expect((t as { reason: string }).reason).toContain('(your choice: A broker\'s recovery does not check that offsets increase');
  });

  it('an .index entry on the batch still above the previous entry (13000..13511 over 13463): a broker cuts nothing', async () => {
    const dir = lowered(447240, 13000n);
    expect(offsetDisorderAtRecovery(join(dir, SEG0), 0n, 4096)).toEqual({ kind: 'kept' });
    const note = (await planRecovery(dir)).unresolved.find((u) => u.position !== undefined)!;
    expect(note).toEqual({
      kind: 'not-recovered-by-broker',
      file: join(dir, SEG0),
      position: 447240,
      reason:
        "batch at offsets 13000..13511 is not above the previous batch's last offset 13975; 303 valid batches (16644 records) follow it: left in place (no valid record is dropped by default). " +
        `${CHECKS}, and no index entry it rebuilds goes backwards (OffsetIndex.append, TimeIndex.maybeAppend), so it keeps the batch and cuts nothing; a consumer reads past it, skipping records below its position (Kafka CompletedFetch.nextFetchedRecord); ` +
        'cutting the segment at byte 447240 and deleting every later segment is your choice (--truncate-at-corruption)',
    });
  });

  it('no index entry on the batch (byte 430859): a broker cuts nothing', async () => {
    const dir = lowered(430859, 13000n);
    expect(offsetDisorderAtRecovery(join(dir, SEG0), 0n, 4096)).toEqual({ kind: 'kept' });
    const note = (await planRecovery(dir)).unresolved.find((u) => u.position !== undefined)!;
    expect([note.kind, note.position]).toEqual(['not-recovered-by-broker', 430859]);
    expect(note.reason).toContain(`${CHECKS}, and no index entry it rebuilds goes backwards (OffsetIndex.append, TimeIndex.maybeAppend), so it keeps the batch and cuts nothing`);
    expect(note.reason).not.toContain('would cut');
  });

  it('a lowered batch carrying the max timestamp to the next .timeindex entry, below the previous one: TimeIndex.maybeAppend throws', async () => {
    // The batch at 430859 (no .index entry) lowered to 12000..12511 and given a maxTimestamp above every later one
    // (CRC-32C recomputed): at 447240 the .timeindex entry names 12511, below the entry written at 429217 (13463).
    const dir = lowered(430859, 12000n);
    const file = join(dir, SEG0);
    const bytes = readFileSync(file);
    expect(bytes.readBigInt64BE(430859 + 35)).toBe(1718446826314n);
    bytes.writeBigInt64BE(1818446826314n, 430859 + 35);
    const size = bytes.readInt32BE(430859 + 8) + 12;
    bytes.writeUInt32BE(crc32c(bytes.subarray(430859 + 21, 430859 + size)) >>> 0, 430859 + 17);
    writeFileSync(file, bytes);
    expect(offsetDisorderAtRecovery(file, 0n, 4096)).toEqual({ kind: 'invalid-offset', index: 'time', position: 447240, offset: 12511n, previous: 13463n, segmentBytes: 999904 });
    const note = (await planRecovery(dir)).unresolved.find((u) => u.position !== undefined)!;
    expect([note.kind, note.position]).toEqual(['needs-truncate-flag', 430859]);
    expect(note.reason).toContain(
      `${CHECKS}, but the .timeindex entry it writes at the batch at byte 447240 names offset 12511, below the previous entry's 13463: TimeIndex.maybeAppend throws InvalidOffsetException, and LogLoader.recoverLog then empties the whole segment (LogSegment.truncateTo(0): all 999904 bytes) and deletes the 3 later segments`,
    );
  });
});
