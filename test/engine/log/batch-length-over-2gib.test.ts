/**
 * A batch length of 2^31−1 in a `.log` over 2 GiB (issue 17, defect 10): the file really holds the
 * 2 GiB the length field claims (a sparse file made with ftruncate), so no "runs past the end"
 * check stops it. Every path gives a typed report naming the file and the byte position, in bounded
 * time and memory, never Node's `RangeError: The value of "length" is out of range` (which the API
 * turned into `io-error` without a position).
 *
 * Before the fix the producer-state walk (`producerBatches`: what `klx append`/the Edit view replay
 * before writing, and the cleaner's producer state) yielded the header and read the 2 GiB batch on
 * demand, which threw that RangeError.
 *
 * CPU time is bounded, not wall time: the machine is shared, and reading 2 GiB of file holes waits
 * on the kernel zero-filling pages. Memory: the RSS growth sampled during the walks.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeControlKey } from '../../../src-main/engine/format/control.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { producerBatches } from '../../../src-main/engine/log/producer-append.ts';
import { verifyPartition } from '../../../src-main/engine/log/verify.ts';
import { tempDir } from '../../support/log-builder.ts';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TWO_GIB = 2 ** 31;
const dir = join(root, 'orders-0');
const logFile = join(dir, '00000000000000000000.log');
/** A data batch of producer 7 at offset 0, then a COMMIT marker of producer 7 whose length field says 2^31−1. */
const data = encodeBatch({ baseOffset: 0n, producerId: 7n, producerEpoch: 0, records: [{ timestamp: 1700000000000n, key: 'k', value: 'v' }] });
const marker = encodeBatch({ baseOffset: 1n, producerId: 7n, producerEpoch: 0, isControl: true, isTransactional: true, records: [{ timestamp: 1700000000001n, key: encodeControlKey(1), value: Buffer.from([0, 0, 0, 0, 0, 0]) }] });
const huge = Buffer.from(marker);
huge.writeInt32BE(2 ** 31 - 1, 8);
const fileSize = data.length + TWO_GIB + 4096;

mkdirSync(dir, { recursive: true });
writeFileSync(logFile, Buffer.concat([data, huge]));
const fd = openSync(logFile, 'r+');
ftruncateSync(fd, fileSize);
closeSync(fd);
writeFileSync(join(dir, '00000000000000000000.index'), Buffer.alloc(0));
writeFileSync(join(dir, '00000000000000000000.timeindex'), Buffer.alloc(0));

/** Runs `fn`, returning its result with the CPU milliseconds it took and the RSS growth sampled by `sample`. */
async function measured<T>(fn: (sample: () => void) => T | Promise<T>): Promise<{ value: T; cpuMs: number; growth: number }> {
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const cpu0 = process.cpuUsage();
  const value = await fn(() => (peak = Math.max(peak, process.memoryUsage().rss)));
  const cpu = process.cpuUsage(cpu0);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { value, cpuMs: (cpu.user + cpu.system) / 1000, growth: peak - rss0 };
}

describe('a batch length of 2^31−1 in a file over 2 GiB', () => {
  it('verify (a deep scan: the reader every path uses) names the .log and the byte position of the batch, without loading it', async () => {
    const log = PartitionLog.open(dir);
    const { value: report, cpuMs, growth } = await measured(() => verifyPartition(log, { deep: true }));
    const errors = report.findings.filter((f) => f.severity === 'error').map((f) => ({ code: f.code, file: f.file, position: f.position, reason: f.reason }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: logFile, position: data.length });
    expect(errors[0]!.reason).toContain(`${fileSize - data.length} invalid bytes at the end of the file: batch length 2147483647 is above the 268435456 bytes this reader loads`);
    // One pass over 2 GiB of file holes by block compares; the reader's windows only in memory.
    expect(cpuMs).toBeLessThan(20_000);
    expect(growth).toBeLessThan(256 * 1024 * 1024);
  }, 240_000);

  it('the producer-state walk (append, the cleaner) stops at it instead of reading 2 GiB (failed before: RangeError "length" is out of range)', async () => {
    const { value: seen, cpuMs, growth } = await measured((sample) => {
      const out: { position: number; bytes: number }[] = [];
      for (const b of producerBatches(logFile, 0)) {
        out.push({ position: b.header.position, bytes: b.read().length });
        sample();
      }
      return out;
    });
    expect(seen).toEqual([{ position: 0, bytes: data.length }]);
    expect(cpuMs).toBeLessThan(2_000);
    expect(growth).toBeLessThan(64 * 1024 * 1024);
  });
});
