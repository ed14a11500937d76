/**
 * Damaged copies: a flipped byte, a batch cut in half, garbage appended, a length field of 2^31−1,
 * an unknown codec, an unknown magic, a zero-filled tail. Each gives the right typed report and
 * every intact batch before and after the damage is still read.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { scanLogBuffer, scanLogFile, type DamageEntry, type LogEntry } from '../../../src-main/engine/format/log-reader.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';

const TS = 1700000000000n;
function batches(n: number, recordsEach = 3): Buffer[] {
  return Array.from({ length: n }, (_, i) =>
    encodeBatch({ baseOffset: BigInt(i * recordsEach), compression: i % 2 ? 'gzip' : 'none', records: Array.from({ length: recordsEach }, (_, j) => ({ timestamp: TS + BigInt(i * 10 + j), key: `k${i}-${j}`, value: `value ${i}-${j} `.repeat(5) })) }),
  );
}
const positions = (bs: Buffer[]) => bs.map((_, i) => bs.slice(0, i).reduce((s, b) => s + b.length, 0));
const summary = (items: LogEntry[]) => items.map((e) => (e.type === 'batch' ? `batch@${e.header.position}:${e.header.baseOffset}:${e.header.crcValid}` : `${e.type}@${e.position}+${e.size}:${e.code}`));

describe('damaged logs', () => {
  const bs = batches(4);
  const pos = positions(bs);
  const whole = Buffer.concat(bs);

  it('a flipped byte: only that batch reports crcValid false; all four are read', () => {
    const buf = Buffer.from(whole);
    buf[pos[1]! + 70] ^= 0x01;
    expect(summary([...scanLogBuffer(buf)])).toEqual([`batch@${pos[0]}:0:true`, `batch@${pos[1]}:3:false`, `batch@${pos[2]}:6:true`, `batch@${pos[3]}:9:true`]);
  });

  it('a batch cut in half: reported as a corrupt region, the batches before and after still read', () => {
    const half = Math.floor(bs[1]!.length / 2);
    const buf = Buffer.concat([bs[0]!, bs[1]!.subarray(0, half), bs[2]!, bs[3]!]);
    const items = [...scanLogBuffer(buf)];
    expect(summary(items)).toEqual([`batch@0:0:true`, `corrupt-region@${pos[1]}+${half}:crc-mismatch`, `batch@${pos[1]! + half}:6:true`, `batch@${pos[1]! + half + bs[2]!.length}:9:true`]);
    expect((items[1] as DamageEntry).reason).toMatch(/batch at baseOffset 3 fails its CRC/);
  });

  it('garbage appended: "N invalid bytes at the end"', () => {
    const garbage = Buffer.from('this is not a kafka batch, just some garbage text at the end of the log');
    const items = [...scanLogBuffer(Buffer.concat([whole, garbage]))];
    expect(items.slice(0, 4).every((e) => e.type === 'batch' && e.header.crcValid)).toBe(true);
    const tail = items[4] as DamageEntry;
    expect(tail).toMatchObject({ type: 'invalid-tail', position: whole.length, size: garbage.length, zeros: false });
    expect(tail.reason).toMatch(new RegExp(`^${garbage.length} invalid bytes at the end of the file`));
    expect(items).toHaveLength(5);
  });

  it('a length field of 2^31−1 in the middle: truncated-batch region, then the later batches', () => {
    const buf = Buffer.from(whole);
    buf.writeInt32BE(0x7fffffff, pos[2]! + 8);
    const items = [...scanLogBuffer(buf)];
    expect(summary(items)).toEqual([`batch@0:0:true`, `batch@${pos[1]}:3:true`, `corrupt-region@${pos[2]}+${bs[2]!.length}:truncated-batch`, `batch@${pos[3]}:9:true`]);
    expect((items[2] as DamageEntry).reason).toContain('2147483659');
  });

  it('a length field of 2^31−1 on the last batch: invalid tail naming the size and the bytes left (B21 wording)', () => {
    const buf = Buffer.from(whole);
    buf.writeInt32BE(0x7fffffff, pos[3]! + 8);
    const items = [...scanLogBuffer(buf)];
    const tail = items[3] as DamageEntry;
    expect(tail).toMatchObject({ type: 'invalid-tail', code: 'truncated-batch', position: pos[3], size: bs[3]!.length });
    expect(tail.reason).toContain(`the batch size (length field + 12-byte header, so 2147483659) exceeds the ${bs[3]!.length} bytes left`);
  });

  it('a truncated last batch (crash mid-write) is an invalid tail; everything before it reads', () => {
    const buf = whole.subarray(0, pos[3]! + 100);
    const items = [...scanLogBuffer(buf)];
    expect(items.slice(0, 3).map((e) => e.type)).toEqual(['batch', 'batch', 'batch']);
    expect(items[3]).toMatchObject({ type: 'invalid-tail', position: pos[3], size: 100, code: 'truncated-batch' });
  });

  it('a zero-filled (preallocated) tail', () => {
    const items = [...scanLogBuffer(Buffer.concat([whole, Buffer.alloc(4096)]))];
    expect(items[4]).toMatchObject({ type: 'invalid-tail', position: whole.length, size: 4096, zeros: true, code: 'batch-length-out-of-range' });
    expect((items[4] as DamageEntry).reason).toMatch(/^4096 invalid bytes at the end of the file: batch length 0 is below the minimum 14 for magic 0 \(all zero bytes/);
  });

  it('unknown codec id 5: a clear error naming the codec id and the batch base offset; the walk goes on', () => {
    const buf = Buffer.from(whole);
    const p = pos[1]!;
    buf.writeInt16BE((buf.readInt16BE(p + 21) & ~7) | 5, p + 21);
    buf.writeUInt32BE(crc32c(buf.subarray(p + 21, p + bs[1]!.length)), p + 17);
    const items = [...scanLogBuffer(buf)];
    expect(items[1]).toMatchObject({ type: 'corrupt-region', code: 'unknown-codec', position: p, size: bs[1]!.length });
    expect((items[1] as DamageEntry).reason).toBe('unknown compression codec id 5 in the batch at baseOffset 3');
    expect(summary(items).filter((s) => s.startsWith('batch'))).toHaveLength(3);
  });

  it('unknown magic 7 in the middle', () => {
    const buf = Buffer.from(whole);
    buf[pos[1]! + 16] = 7;
    const items = [...scanLogBuffer(buf)];
    expect(items[1]).toMatchObject({ type: 'corrupt-region', code: 'unknown-magic', position: pos[1] });
    expect(summary(items).filter((s) => s.startsWith('batch'))).toHaveLength(3);
  });

  it('a record whose length is wrong (CRC recomputed): the batch is yielded with a corrupt-batch error on deep decode', () => {
    const b = Buffer.from(bs[0]!);
    b[61] = 0x7e; // first record length varint := 63 (wrong)
    b.writeUInt32BE(crc32c(b.subarray(21)), 17);
    const items = [...scanLogBuffer(Buffer.concat([b, bs[1]!]), { deep: true })];
    expect(items[0]!.type).toBe('batch');
    const e = items[0] as Extract<LogEntry, { type: 'batch' }>;
    expect(e.header.crcValid).toBe(true);
    expect(e.error?.code).toBe('corrupt-batch');
    expect(e.error?.position).toBe(0);
    expect(e.error?.message).toMatch(/^position 0: batch at baseOffset 0: /);
    expect(items[1]!.type === 'batch' && items[1]!.records!.length).toBe(3);
  });

  it('a file on disk is read in windows smaller than the file and gives the same result', () => {
    const dir = mkdtempSync(join(tmpdir(), 'klx-dmg-'));
    const f = join(dir, '00000000000000000000.log');
    writeFileSync(f, whole);
    const small = [...scanLogFile(f, { deep: true, chunkSize: 100 })];
    const big = [...scanLogBuffer(whole, { deep: true })];
    expect(summary(small)).toEqual(summary(big));
    expect(small.flatMap((e) => (e.type === 'batch' ? e.records!.map((r) => r.offset) : []))).toEqual([...Array(12).keys()].map(BigInt));
  });

  it('a missing file is a typed not-found error naming the file', () => {
    expect(() => [...scanLogFile('/nonexistent/00000000000000000000.log')]).toThrowError(expect.objectContaining({ code: 'not-found', file: '/nonexistent/00000000000000000000.log' }));
  });
});

describe('reuseWindows: two read buffers used in turn give the same walk', () => {
  const bs = batches(12);
  const pos = positions(bs);
  // A flipped byte (crcValid false, followed by a valid batch) and a batch cut in half (resync),
  // read in windows smaller than a batch so nearly every entry reads a new window.
  const flipped = Buffer.from(bs[3]!);
  flipped[70] ^= 0x01;
  const half = Math.floor(bs[7]!.length / 2);
  const file = join(mkdtempSync(join(tmpdir(), 'klx-reuse-')), '00000000000000000000.log');
  writeFileSync(file, Buffer.concat([...bs.slice(0, 3), flipped, ...bs.slice(4, 7), bs[7]!.subarray(0, half), ...bs.slice(8)]));

  it.each([64, 200, 1 << 20])('chunk %i bytes: same entries, and each entry’s bytes intact when it is yielded', (chunkSize) => {
    const plain = [...scanLogFile(file, { chunkSize })].map((e) => ({ s: summary([e])[0], bytes: e.type === 'batch' ? Buffer.from(e.bytes).toString('hex') : null }));
    const reused: { s: string | undefined; bytes: string | null }[] = [];
    for (const e of scanLogFile(file, { chunkSize, reuseWindows: true })) reused.push({ s: summary([e])[0], bytes: e.type === 'batch' ? Buffer.from(e.bytes).toString('hex') : null });
    expect(reused).toEqual(plain);
    expect(plain.map((x) => x.s)).toEqual([...[0, 1, 2].map((i) => `batch@${pos[i]}:${i * 3}:true`), `batch@${pos[3]}:9:false`, ...[4, 5, 6].map((i) => `batch@${pos[i]}:${i * 3}:true`), `corrupt-region@${pos[7]}+${half}:crc-mismatch`, ...[8, 9, 10, 11].map((i) => `batch@${pos[i]! - bs[7]!.length + half}:${i * 3}:true`)]);
    // the batch bytes are the encoder's own
    expect(reused[0]!.bytes).toBe(bs[0]!.toString('hex'));
    expect(reused[11]!.bytes).toBe(bs[11]!.toString('hex'));
  });
});
