/**
 * Record counts of a batch whose CRC fails come from its bytes, not from its unverified header (fresh tester's
 * finding: recordsCount 2^31−1 made `klx verify --json` report 2,147,483,655 records). On a copy of the
 * broker-written kafka-2.8.0-snappy/some-topic-0 (9 snappy batches of 1 record, 221 bytes each).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

/** A copy of some-topic-0 with `edit` applied to its .log bytes. */
function edited(edit: (b: Buffer) => void): string {
  const dir = join(tempDir('klx-count-'), 'some-topic-0');
  cpSync(join(REAL_DATA, 'kafka-2.8.0-snappy', 'some-topic-0'), dir, { recursive: true });
  const file = join(dir, '00000000000000000000.log');
  const b = readFileSync(file);
  edit(b);
  writeFileSync(file, b);
  return dir;
}

describeRealData('verify: counts of CRC-failing batches', () => {
  it('recordsCount 2^31−1 in the first batch: 1 damaged record (the frame its snappy area holds), 9 in all', async () => {
    const dir = edited((b) => {
      expect(b.readInt32BE(57)).toBe(1);
      b.writeInt32BE(2147483647, 57);
    });
    const r = await verifyPartition(PartitionLog.open(dir));
    expect(r.findings.filter((f) => f.code === 'crc-mismatch').map((f) => f.position)).toEqual([0]);
    expect(r.stats).toMatchObject({ batches: 9, records: 9, damagedBatches: 1, damagedRecords: 1, bytes: 1989 });
  });

  it('a records area that no longer inflates (snappy bytes overwritten) counts 0 records, whatever the header says', async () => {
    const dir = edited((b) => {
      b.writeInt32BE(1000, 221 + 57);
      b.fill(0xff, 221 + 61, 221 + 221);
    });
    const r = await verifyPartition(PartitionLog.open(dir));
    expect(r.findings.filter((f) => f.code === 'crc-mismatch').map((f) => f.position)).toEqual([221]);
    expect(r.stats).toMatchObject({ batches: 9, records: 8, damagedBatches: 1, damagedRecords: 0 });
  });
});
