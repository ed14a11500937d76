/**
 * `producerBatches` (the producer-state walk of `klx append`, the Edit view and the cleaner) reads
 * only where headers lie: 1 MiB windows over small batches, the next header alone after a batch of
 * 128 KiB or more (so a run of large batches past the first window is read header by header).
 * Checked against the log reader (`scanLogFile`) on a segment mixing both, with
 * windows refilled in the middle of runs of small batches and headers straddling a window's end.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { producerBatches } from '../../../src-main/engine/log/producer-append.ts';
import { tempDir } from '../../support/log-builder.ts';

describe('producerBatches', () => {
  it('yields every v2 header at its position, and each batch reads back as its bytes, across small and large batches', () => {
    const batches: Buffer[] = [];
    let offset = 0n;
    const add = (records: number, valueBytes: number) => {
      batches.push(encodeBatch({ baseOffset: offset, producerId: 7n, producerEpoch: 1, baseSequence: Number(offset), records: Array.from({ length: records }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(valueBytes, 97 + (i % 26)), timestamp: 1000n + BigInt(i) })) }));
      offset += BigInt(records);
    };
    for (let i = 0; i < 5; i++) add(1, 60); // small
    add(1, 300_000); // large: the next header is read alone
    for (let i = 0; i < 3; i++) add(2, 50);
    add(1, 200_000);
    add(1, 140_000); // two large in a row
    for (let i = 0; i < 9000; i++) add(1, 100 + (i % 7)); // ~1.4 MB of small batches: a 1 MiB window refills mid-run
    for (let i = 0; i < 6; i++) add(1, 131_000 + i * 40_000); // 1.3 MB of large batches in a row: past the window, each next header is read alone
    add(3, 10);
    add(1, 131_000); // just above 128 KiB, then the last header alone
    add(1, 10);
    const file = join(tempDir(), '00000000000000000000.log');
    const bytes = Buffer.concat(batches);
    writeFileSync(file, bytes);
    const expected = [...scanLogFile(file, { verifyCrc: true })].map((e) => {
      if (e.type !== 'batch') throw new Error(`damage at ${e.position}`);
      return { position: e.header.position, baseOffset: e.header.baseOffset, size: e.header.size };
    });
    expect(expected).toHaveLength(batches.length);
    const seen: { position: number; baseOffset: bigint; size: number }[] = [];
    const reads: Buffer[] = [];
    for (const b of producerBatches(file, 0)) {
      seen.push({ position: b.header.position, baseOffset: b.header.baseOffset, size: b.header.size });
      if (seen.length % 997 === 1 || b.header.size > 100_000) reads.push(b.read());
    }
    expect(seen).toEqual(expected);
    // Batches read back whole (the large ones, and a sample of the small).
    const sampled = seen.filter((s, i) => i % 997 === 0 || s.size > 100_000);
    expect(reads.map((r) => r.length)).toEqual(sampled.map((s) => s.size));
    sampled.forEach((s, i) => expect(reads[i]!.equals(readFileSync(file).subarray(s.position, s.position + s.size))).toBe(true));
    // From a batch boundary inside the file.
    const mid = expected[9]!;
    expect([...producerBatches(file, mid.position)].map((b) => b.header.baseOffset)).toEqual(expected.slice(9).map((e) => e.baseOffset));
  });
});
