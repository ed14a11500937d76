/**
 * `klx fetch` past corruption (issue 13 finding 2), spawned as a user runs it: a batch whose CRC
 * fails stops the read as a consumer with `check.crcs=true` does (Kafka's `CompletedFetch`: the
 * records before it are delivered, then "Record batch for partition P at offset O is invalid,
 * cause: Record is corrupt (stored crc = S, computed crc = C)"), `--skip-corrupt` reads on and marks
 * its records; an unreadable batch (unknown magic, unknown codec) is printed in place as a hole with
 * its cause and the command exits 1. CRCs are computed in the test with kafkajs' CRC-32C (no code in
 * common with the engine's).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetch } from '../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

function klx(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
const lines = (s: string) => s.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;
const batches = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ baseOffset: BigInt(from + i), records: [rec(`k${from + i}`, `v${from + i}`, 1000 + from + i)] }));

const roots: string[] = [];
afterAll(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

/** Partition orders-0 with offsets 0..29 (one record per batch, two segments); `damage` edits the bytes of the batch at offset 10. */
function partitionWith(damage: (bytes: Buffer, position: number, size: number) => void): { dir: string; position: number; size: number } {
  const root = tempDir('klx-fetch-corrupt-');
  roots.push(root);
  const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: batches(0, 20) }, { batches: batches(20, 30) }] }, { cleanShutdown: true, recoveryPoint: 30n });
  const file = join(dir, name(0, '.log'));
  const bytes = readFileSync(file);
  let position = 0;
  for (let i = 0; i < 10; i++) position += 12 + bytes.readInt32BE(position + 8);
  const size = 12 + bytes.readInt32BE(position + 8);
  expect(bytes.readBigInt64BE(position)).toBe(10n);
  damage(bytes, position, size);
  writeFileSync(file, bytes);
  return { dir, position, size };
}

describe('klx fetch at a batch whose CRC fails (check.crcs=true)', () => {
  const { dir, position, size } = partitionWith((b, pos, size) => {
    b[pos + size - 2] ^= 0x01; // the value's last byte ("v10" -> "v11"): framing intact, CRC-32C fails
  });
  const file = join(dir, name(0, '.log'));
  const b = readFileSync(file);
  const stored = b.readUInt32BE(position + 17);
  const computed = kjsCrc32C(b.subarray(position + 21, position + size)) >>> 0;

  it('prints the records before it, then fails with corrupt-record naming offsets, position and both CRCs (exit 1)', () => {
    expect(stored).not.toBe(computed);
    const r = klx('fetch', dir, '--offset', '0');
    expect(r.code).toBe(1);
    const out = r.stdout.split('\n').filter(Boolean);
    expect(out.map((l) => l.split(' ')[1])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(r.stderr).toBe(
      `klx: corrupt-record: ${file}: position ${position}: Record batch for partition orders-0 at offset 10 is invalid, cause: Record is corrupt (stored crc = ${stored}, computed crc = ${computed}; CRC-32C); offsets 10..10, ${size} bytes at position ${position}: a consumer with check.crcs=true (the default) stops at offset 10 until it seeks past offset 10 (Kafka CompletedFetch) (read past it with --skip-corrupt)\n`,
    );
  });

  it('--json: the records, then one error object with the details', () => {
    const r = klx('fetch', dir, '--offset', '5', '--json');
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.filter((o) => o.type === 'record').map((o) => o.offset)).toEqual([5, 6, 7, 8, 9]);
    expect(out.at(-1)).toMatchObject({ type: 'error', code: 'corrupt-record', file, position, details: { baseOffset: 10, lastOffset: 10, position, size, crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' } });
  });

  it('--max-bytes: one answer ending before the batch, then the same error', () => {
    const r = klx('fetch', dir, '--offset', '8', '--max-bytes', '1000000', '--json');
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.filter((o) => o.type === 'record').map((o) => o.offset)).toEqual([8, 9]);
    expect(out.at(-1)).toMatchObject({ type: 'error', code: 'corrupt-record', position });
  });

  it('--skip-corrupt: reads all 30 records and marks offset 10 with both CRCs (exit 0)', () => {
    const r = klx('fetch', dir, '--offset', '0', '--skip-corrupt');
    expect(r.code).toBe(0);
    const out = r.stdout.split('\n').filter(Boolean);
    expect(out).toHaveLength(31);
    expect(out[10]).toBe(`offset 10 ts 1010 (1970-01-01T00:00:01.010Z) key: "k10" value: "v11" [CRC MISMATCH: stored crc = ${stored}, computed crc = ${computed}; CRC-32C]`);
    expect(out.filter((l) => l.includes('CRC MISMATCH'))).toHaveLength(1);
    const json = lines(klx('fetch', dir, '--offset', '10', '--max', '1', '--skip-corrupt', '--json').stdout)[0];
    expect(json).toMatchObject({ type: 'record', offset: 10, crcValid: false, crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' });
  });

  it('engine: onCorrupt stop returns the records before it and names the error; flag (the explorer) returns it flagged', async () => {
    const log = PartitionLog.open(dir);
    const r = await fetch(log, { offset: 0n, maxRecords: 100, onCorrupt: 'stop' });
    expect(r.records.map((x) => Number(x.offset))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r.nextOffset).toBe(10n);
    expect(r.reachedLimit).toBe(false);
    expect(r.stoppedAtCorrupt?.code).toBe('corrupt-record');
    await expect(fetch(log, { offset: 10n, onCorrupt: 'stop' })).rejects.toMatchObject({ code: 'corrupt-record', position, details: { crc: stored, computedCrc: computed } });
    const after = await fetch(log, { offset: 11n, onCorrupt: 'stop' });
    expect(after.records).toHaveLength(19);
    expect(after.stoppedAtCorrupt).toBeNull();
    const flagged = await fetch(log, { offset: 10n, maxRecords: 1 });
    expect(flagged.records[0]).toMatchObject({ offset: 10n, crcValid: false, crc: stored, computedCrc: computed });
  });
});

describe('klx fetch at an unreadable batch: a hole with its cause, exit 1', () => {
  it('unknown magic (CRC-32C still valid: the magic byte is outside it): offset 10 is a hole named unknown-magic, reading goes on', () => {
    const { dir, position } = partitionWith((b, pos) => {
      b[pos + 16] = 3;
    });
    const file = join(dir, name(0, '.log'));
    const r = klx('fetch', dir, '--offset', '0');
    expect(r.code).toBe(1);
    const out = r.stdout.split('\n').filter(Boolean);
    expect(out).toHaveLength(29 + 1 + 1);
    expect(out[10]).toMatch(new RegExp(`^-- hole offset 10: unknown-magic: \\d+ bytes from position ${position} are not a valid batch \\(unknown magic byte 3\\); reading resumed at position \\d+ \\(${file.replace(/[.]/g, '\\.')} position ${position}, \\d+ bytes\\)$`));
    expect(out[11]).toMatch(/^offset 11 /);
    expect(r.stderr).toBe('klx: 1 unreadable batch or region (shown in place as holes above)\n');
    const json = lines(klx('fetch', dir, '--offset', '0', '--json').stdout);
    expect(json[10]).toMatchObject({ type: 'problem', code: 'unknown-magic', file, position, fromOffset: 10, toOffset: 10 });
  });

  it('unknown codec 5 in a batch whose CRC-32C is recomputed (valid): its offsets are a hole named unknown-codec', () => {
    const { dir, position } = partitionWith((b, pos, size) => {
      b.writeInt16BE((b.readInt16BE(pos + 21) & ~0x07) | 5, pos + 21);
      b.writeUInt32BE(kjsCrc32C(b.subarray(pos + 21, pos + size)) >>> 0, pos + 17);
    });
    const r = klx('fetch', dir, '--offset', '9', '--max', '3', '--json');
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.map((o) => (o.type === 'record' ? o.offset : o.type))).toEqual([9, 'problem', 11, 12, 'end']);
    expect(out[1]).toMatchObject({ code: 'unknown-codec', position, fromOffset: 10, toOffset: 10 });
  });
});

describe('klx fetch: zero bytes that hide no offset below the read limit', () => {
  it('a zeroed tail after offset 3: the records, then where the bytes are and that they hide nothing below the read limit (no "no offset asked for" when offset 4 was asked)', () => {
    const root = tempDir('klx-fetch-zeros-');
    roots.push(root);
    const dir = buildPartition(root, { topic: 'orders', segments: [{ batches: batches(0, 6) }] }, { cleanShutdown: true, recoveryPoint: 6n });
    const log = join(dir, name(0, '.log'));
    const bytes = readFileSync(log);
    const at = bytes.length / 6 * 4; // every batch has the same size: batches 4 and 5 zeroed
    bytes.fill(0, at);
    writeFileSync(log, bytes);
    const from2 = klx('fetch', dir, '--offset', '2', '--max', '5');
    const text = from2.stdout.split('\n').filter(Boolean);
    expect(text.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual(['offset 2 ts', 'offset 3 ts', '-- unreadable bytes', '-- next offset']);
    expect(text[3]).toMatch(/^-- next offset 4 /);
    expect(text[2]).toBe(`-- unreadable bytes that hide no offset below the read limit 4: batch-length-out-of-range: ${bytes.length - at} invalid bytes at the end of the file: batch length 0 is below the minimum 14 for magic 0 (all zero bytes: a preallocated or crashed tail) (${log} position ${at}, ${bytes.length - at} bytes)`);
    const from4 = klx('fetch', dir, '--offset', '4');
    expect(from4.stdout).not.toContain('asked for');
  });
});
