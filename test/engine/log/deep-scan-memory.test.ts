/**
 * Deep scans keep one record at a time (issue 17): a batch of 5,000,000 tiny records (written by
 * hand from the format spec, not by the engine's encoder) is deep-verified, counted from an offset
 * inside it and searched, each in a fresh process whose RSS growth is measured. Decoding the batch into one object
 * per record (what these paths did) holds 5 M objects at once, several hundred MiB of heap; the
 * streaming iterator (`streamV2Records`) keeps the heap near the records area's size.
 *
 * The records: attributes 0, timestampDelta 0, offsetDelta 2·i (a compacted-looking batch, so a
 * count from inside it has to read its records), null key, null value, no headers; the last one has
 * key "needle". Bounds are generous (the machine is shared); speed is not measured here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { buildPartition, tempDir } from '../../support/log-builder.ts';
import { REPO_ROOT } from '../../support/real-data.ts';

const N = 5_000_000;

function zigzag(v: number, out: number[]): void {
  let z = (v << 1) ^ (v >> 31);
  z >>>= 0;
  while (z >= 0x80) {
    out.push((z & 0x7f) | 0x80);
    z >>>= 7;
  }
  out.push(z);
}

/** One uncompressed v2 batch (DefaultRecordBatch layout) of `n` records at baseOffset 0. */
function hugeBatch(n: number): Buffer {
  const area = Buffer.alloc(n * 12 + 32);
  let p = 0;
  const body: number[] = [];
  for (let i = 0; i < n; i++) {
    body.length = 0;
    body.push(0, 0); // attributes, timestampDelta 0
    zigzag(2 * i, body); // offsetDelta
    if (i === n - 1) {
      body.push(12, ...Buffer.from('needle')); // key length 6, key
    } else body.push(1); // key length −1
    body.push(1, 0); // value length −1, no headers
    const len: number[] = [];
    zigzag(body.length, len);
    for (const b of len) area[p++] = b;
    for (const b of body) area[p++] = b;
  }
  const b = Buffer.alloc(61 + p);
  b.writeBigInt64BE(0n, 0);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(0, 12); // partitionLeaderEpoch
  b[16] = 2;
  b.writeInt16BE(0, 21);
  b.writeInt32BE(2 * (n - 1), 23); // lastOffsetDelta
  b.writeBigInt64BE(1700000000000n, 27);
  b.writeBigInt64BE(1700000000000n, 35);
  b.writeBigInt64BE(-1n, 43);
  b.writeInt16BE(-1, 51);
  b.writeInt32BE(-1, 53);
  b.writeInt32BE(n, 57);
  area.copy(b, 61, 0, p);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

let root: string;
let dir: string;

beforeAll(() => {
  root = tempDir('klx-deep-memory-');
  mkdirSync(root, { recursive: true });
  dir = buildPartition(root, { topic: 'tiny', partition: 0, segments: [{ baseOffset: 0n, batches: [hugeBatch(N)] }] });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs one scan in a fresh process (test/support/deep-scan-probe.ts): its result and RSS growth in MiB. */
function probe(op: 'verify' | 'count' | 'search'): { result: Record<string, unknown>; growthMiB: number } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test/support/deep-scan-probe.ts'), op, dir], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 170_000 });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

// A records array of 5 M lazy records: ≥ 5 M × (object ~48 B + array slot 8 B) ≈ 270 MiB of heap,
// more in RSS. The streaming scans hold the file window and the records area (~45 MiB each).
const BOUND_MIB = 200;

describe('deep scans over a batch of 5,000,000 records keep bounded memory', () => {
  it('deep verify: counts all 5,000,000 records, no error, RSS growth bounded', () => {
    const { result, growthMiB } = probe('verify');
    expect(result).toEqual({ records: N, errors: [] });
    expect(growthMiB).toBeLessThan(BOUND_MIB);
  }, 180_000);

  it('a count from inside the batch reads its records: 2,500,000 at or after offset 5,000,000, RSS growth bounded', () => {
    const { result, growthMiB } = probe('count');
    expect(result).toEqual({ records: 2_500_000, logEndOffset: String(2 * (N - 1) + 1) });
    expect(growthMiB).toBeLessThan(BOUND_MIB);
  }, 180_000);

  it('search: the one key "needle" (the last record, offset 9,999,998) among 5,000,000, RSS growth bounded', () => {
    const { result, growthMiB } = probe('search');
    expect(result).toEqual({ matches: ['9999998'], scannedRecords: N });
    expect(growthMiB).toBeLessThan(BOUND_MIB);
  }, 180_000);
});
