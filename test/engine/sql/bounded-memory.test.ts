/**
 * The SQL build in bounded memory (issue 16): building the tables of a generated partition much
 * larger than the RSS cap, in a fresh process (test/support/sql-build-probe.ts) whose RSS is sampled
 * from /proc every 50 ms while the kernel keeps its high-water mark, stays under the cap of 1 GiB
 * ("peak RSS at most 1 GiB whatever the log size") and far below the log's size.
 *
 * The partition: {@link LOG_MIB} MiB (default 1024: the "1 GB partition"; `KLX_SQL_MEMORY_MIB`
 * changes it) in 256 MiB segments of uncompressed v2 batches of 100 records of ~200 bytes (keys
 * `key-NNNNNNN` over 1,000,000 distinct keys, JSON values, every 50th record a tombstone), written by
 * copying one encoded batch and patching its baseOffset, timestamps, key digits and CRC-32C, so
 * that 1 GiB is written in seconds instead of encoding 5 M records.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { segmentFileName } from '../../../src-main/engine/files/file-names.ts';
import { tempDir } from '../../support/log-builder.ts';

const REPO_ROOT = join(import.meta.dirname, '../../..');
const MiB = 1024 * 1024;
const LOG_MIB = Number(process.env.KLX_SQL_MEMORY_MIB ?? 1024);
/** The cap on the SQL build's peak RSS. */
const RSS_CAP_BYTES = 1024 * MiB;
const PER_BATCH = 100;
const KEYS = 1_000_000;
const SEGMENT_BYTES = 256 * MiB;
const TS = 1_700_000_000_000;

/** Writes the partition (see the module comment); returns its record count and `.log` bytes. */
function generate(dir: string, targetBytes: number): { records: number; bytes: number; tombstones: number } {
  const recs = Array.from({ length: PER_BATCH }, (_, i) => ({
    key: 'key-0000000',
    value: i % 50 === 0 ? null : JSON.stringify({ id: i, event: 'page_view', user: `user-${i % 977}`, amount: i * 7, note: 'lorem ipsum dolor sit amet '.repeat(4).slice(0, 60 + i) }),
    timestamp: BigInt(TS + i),
  }));
  const template = encodeBatch({ baseOffset: 0n, records: recs });
  // Where each record's 7 key digits are.
  const keyAt: number[] = [];
  for (let p = template.indexOf('key-0000000'); p >= 0; p = template.indexOf('key-0000000', p + 1)) keyAt.push(p + 4);
  expect(keyAt.length).toBe(PER_BATCH);
  const batchesPerSegment = Math.floor(SEGMENT_BYTES / template.length);
  const batches = Math.ceil(targetBytes / template.length);
  const chunk = Buffer.alloc(template.length * 256);
  let fd = -1;
  let inChunk = 0;
  const flush = () => {
    if (inChunk > 0) writeSync(fd, chunk, 0, inChunk * template.length);
    inChunk = 0;
  };
  for (let b = 0; b < batches; b++) {
    const base = b * PER_BATCH;
    if (b % batchesPerSegment === 0) {
      if (fd >= 0) {
        flush();
        closeSync(fd);
      }
      fd = openSync(join(dir, segmentFileName(BigInt(base), '.log')), 'w');
    }
    const at = inChunk * template.length;
    const batch = chunk.subarray(at, at + template.length);
    template.copy(batch);
    batch.writeBigInt64BE(BigInt(base), 0);
    batch.writeBigInt64BE(BigInt(TS + base), 27);
    batch.writeBigInt64BE(BigInt(TS + base + PER_BATCH - 1), 35);
    for (let i = 0; i < PER_BATCH; i++) batch.write(String(((base + i) * 7919) % KEYS).padStart(7, '0'), keyAt[i]!, 'latin1');
    batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
    if (++inChunk === 256) flush();
  }
  flush();
  closeSync(fd);
  return { records: batches * PER_BATCH, bytes: batches * template.length, tombstones: batches * (PER_BATCH / 50) };
}

/** Runs the probe, sampling its RSS; resolves to the probe's JSON and the largest sample. */
function probe(dir: string, cacheDir: string): Promise<{ out: { records: number; stateRows: number; cacheBytes: number; maxRssBytes: number }; sampledMaxBytes: number; samples: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test/support/sql-build-probe.ts'), dir, cacheDir], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let sampledMaxBytes = 0;
    let samples = 0;
    const timer = setInterval(() => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) {
          sampledMaxBytes = Math.max(sampledMaxBytes, Number(m[1]) * 1024);
          samples++;
        }
      } catch {
        // The child has just exited.
      }
    }, 50);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(timer);
      if (code !== 0) return reject(new Error(`sql-build-probe exited with ${code}: ${stderr}`));
      resolve({ out: JSON.parse(stdout.trim().split('\n').pop()!), sampledMaxBytes, samples });
    });
  });
}

describe.runIf(process.platform === 'linux')('SQL build memory', () => {
  it(`stays under ${RSS_CAP_BYTES / MiB} MiB of RSS while building the tables of a ${LOG_MIB} MiB partition`, async () => {
    const dir = join(tempDir(), 'mem-0');
    mkdirSync(dir);
    const gen = generate(dir, LOG_MIB * MiB);
    const { out, sampledMaxBytes, samples } = await probe(dir, tempDir('klx-sql-cache-'));
    const peak = Math.max(out.maxRssBytes, sampledMaxBytes);
    console.log(`SQL build of ${gen.records} records (${(gen.bytes / MiB).toFixed(0)} MiB): peak RSS ${(peak / MiB).toFixed(0)} MiB (kernel ${(out.maxRssBytes / MiB).toFixed(0)}, ${samples} samples up to ${(sampledMaxBytes / MiB).toFixed(0)}), cache ${(out.cacheBytes / MiB).toFixed(0)} MiB`);
    expect(out.records).toBe(gen.records);
    // state: the keys whose last record (offset n, key n·7919 mod 1,000,000) is not a tombstone (n % 50 = 0).
    const last = new Float64Array(KEYS).fill(-1);
    for (let n = 0; n < gen.records; n++) last[(n * 7919) % KEYS] = n;
    expect(out.stateRows).toBe(last.reduce((c, n) => (n >= 0 && n % 50 !== 0 ? c + 1 : c), 0));
    expect(samples).toBeGreaterThan(0);
    expect(peak).toBeLessThan(RSS_CAP_BYTES);
    expect(peak).toBeLessThan(gen.bytes);
    expect(out.cacheBytes).toBeLessThan(gen.bytes / 4);
  }, 600_000);
});
