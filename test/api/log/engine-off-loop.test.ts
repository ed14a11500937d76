/**
 * Issue 17, defect 4: the explorer's heavy reads run on the log worker pool, so the event loop that
 * answers requests stays free. The input is hostile in the way the audit found: one gzip batch of
 * 600,000 records (a ~5 MB records area from ~0.8 MB on disk; 1,500,000 for the records page)
 * whose records page and deep verify each take a long stretch of CPU. The batch is built by hand from the format (record varints, the v2
 * header, CRC-32C over [21, end), node:zlib's gzip), not by the code under test.
 *
 * Measured in this process: the event loop's delays while a records page of that batch is read
 * through `dispatch` (95th percentile under 50 ms) against the same page read on this thread (the
 * old path, the peer: one delay of the whole page, over 100 ms), and the time from `job.cancel` of
 * a deep verify to its `job.end` (under 100 ms), with `session.folders` answering meanwhile.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Res } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { recordsPage } from '../../../src-main/api/log/log-records.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { tempDir } from '../../support/log-builder.ts';

const COUNT = 600_000;
/**
 * The records page's batch: 1,500,000 records. With 600,000 the page on this thread took 90 ms on a
 * quiet machine once record decoding got faster (stop 26), under the 100 ms the peer must exceed.
 */
const PAGE_COUNT = 1_500_000;

/** Zigzag varint (the record format's varint). */
function varint(out: Buffer, pos: number, n: number): number {
  let v = (n << 1) ^ (n >> 31);
  while (v >>> 7 !== 0) {
    out[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[pos++] = v;
  return pos;
}

/** `count` records with offsetDelta i, null key, null value, no headers. */
function recordsArea(count: number): Buffer {
  const out = Buffer.alloc(count * 12);
  let pos = 0;
  const body = Buffer.alloc(12);
  for (let i = 0; i < count; i++) {
    let b = 0;
    body[b++] = 0; // attributes
    b = varint(body, b, 0); // timestampDelta
    b = varint(body, b, i); // offsetDelta
    b = varint(body, b, -1); // key length: null
    b = varint(body, b, -1); // value length: null
    b = varint(body, b, 0); // headers
    pos = varint(out, pos, b);
    body.copy(out, pos, 0, b);
    pos += b;
  }
  return out.subarray(0, pos);
}

/** A gzip (codec 1) v2 batch at offset 0 around `area` (header written by hand). */
function gzipBatch(area: Buffer, count: number): Buffer {
  const z = gzipSync(area, { level: 1 });
  const b = Buffer.alloc(61 + z.length);
  b.writeBigInt64BE(0n, 0);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(0, 12);
  b[16] = 2;
  b.writeInt16BE(1, 21);
  b.writeInt32BE(count - 1, 23);
  b.writeBigInt64BE(1700000000000n, 27);
  b.writeBigInt64BE(1700000000000n, 35);
  b.writeBigInt64BE(-1n, 43);
  b.writeInt16BE(-1, 51);
  b.writeInt32BE(-1, 53);
  b.writeInt32BE(count, 57);
  z.copy(b, 61);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

let root: string;
let dir: string;
/** 20 copies of the batch at baseOffsets 0, 600000, …: a deep verify long enough to cancel (one batch verifies in ~70 ms). */
let manyDir: string;
let server: ServerApi;

beforeAll(async () => {
  root = tempDir('klx-off-loop-');
  dir = join(root, 'heavy-0');
  mkdirSync(dir);
  writeFileSync(join(dir, '00000000000000000000.log'), gzipBatch(recordsArea(PAGE_COUNT), PAGE_COUNT));
  const batch = gzipBatch(recordsArea(COUNT), COUNT);
  manyDir = join(root, 'heavy-1');
  mkdirSync(manyDir);
  // baseOffset (bytes 0..7) is outside the CRC's range (attributes on), so each copy stays CRC-valid.
  const copies = Array.from({ length: 20 }, (_, i) => {
    const c = Buffer.from(batch);
    c.writeBigInt64BE(BigInt(i * COUNT), 0);
    return c;
  });
  writeFileSync(join(manyDir, '00000000000000000000.log'), Buffer.concat(copies));
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  const opened = await server.dispatch('log.open', { path: root }, { readOnly: true });
  expect(opened.ok).toBe(true);
  // Warm the pool (a thread from TypeScript source takes seconds to start under load).
  expect((await server.dispatch('log.records', { dir, from: 'end', direction: 'backward', limit: 1 }, { readOnly: true })).ok).toBe(true);
}, 120_000);

afterAll(async () => {
  await server.ctx.jobs.shutdown();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Measures the event loop: a 5 ms timer; each tick's lateness beyond 5 ms is a delay. `max` is the
 * largest, `p95` the 95th percentile (on this shared 2-core machine, loaded 7× over by other
 * processes, the scheduler takes the CPU from this thread for tens of ms now and then whatever it
 * runs: the percentile sees past that, the maximum does not).
 */
function loopMeter(): { stop: () => Promise<{ max: number; p95: number }> } {
  let last = performance.now();
  const delays: number[] = [];
  const timer = setInterval(() => {
    const now = performance.now();
    delays.push(Math.max(0, now - last - 5));
    last = now;
  }, 5);
  return {
    stop: async () => {
      await new Promise((r) => setTimeout(r, 20)); // let a tick after the work land
      clearInterval(timer);
      delays.sort((a, b) => a - b);
      return { max: delays.at(-1) ?? 0, p95: delays[Math.floor(delays.length * 0.95)] ?? 0 };
    },
  };
}

/** The event-loop delays (ms) while `work` runs. */
async function loopWhile<T>(work: () => Promise<T>): Promise<{ result: T; delay: { max: number; p95: number } }> {
  const meter = loopMeter();
  await new Promise((r) => setTimeout(r, 12));
  const result = await work();
  return { result, delay: await meter.stop() };
}

describe('heavy reads off the event loop', () => {
  it('a records page over a 1,500,000-record gzip batch leaves the loop free (the same page on this thread does not)', async () => {
    const req = { dir, from: '750000', direction: 'forward' as const, limit: 200, isolation: 'read_uncommitted' as const, previewBytes: 256 };
    // Ours first: the peer leaves this thread's heap full of the batch's records (its GC would land in our window).
    const ours = await loopWhile(async () => {
      const env = await server.dispatch('log.records', req, { readOnly: true });
      if (!env.ok) throw new Error(env.error.message);
      return env.result as Res<'log.records'>;
    });
    const peer = await loopWhile(() => recordsPage(PartitionLog.open(dir), req));
    console.log(`event-loop delay during a records page: through the worker pool max ${ours.delay.max.toFixed(1)} ms, p95 ${ours.delay.p95.toFixed(1)} ms; on this thread max ${peer.delay.max.toFixed(1)} ms`);
    expect(ours.result.rows.length).toBe(200);
    expect(ours.result.rows[0]).toMatchObject({ kind: 'record', offset: '750000' });
    expect(ours.result.nextCursor).toBe('750200');
    expect(peer.result.rows.map((r) => (r as { offset: string }).offset)).toEqual(ours.result.rows.map((r) => (r as { offset: string }).offset));
    // The old path holds the loop for the whole page; through the pool, 95% of ticks are on time
    // and no tick waits a quarter of that (the worst is the scheduler's, not our code's).
    expect(peer.delay.max).toBeGreaterThan(100);
    expect(ours.delay.p95).toBeLessThan(50);
    expect(ours.delay.max).toBeLessThan(peer.delay.max / 4);
  }, 120_000);

  it('job.cancel of a deep verify on it ends the job within 100 ms; session calls answer meanwhile', async () => {
    const started = await server.dispatch('log.verify', { dir: manyDir, deep: true }, { readOnly: true });
    expect(started.ok).toBe(true);
    if (!started.ok) return;
    const { jobId } = started.result as { jobId: string };
    await new Promise((r) => setTimeout(r, 150)); // the verify is inside the 20 batches by now (12 M records)
    const meter = loopMeter();
    const ping0 = performance.now();
    expect((await server.dispatch('session.folders', {}, { readOnly: true })).ok).toBe(true);
    const pingMs = performance.now() - ping0;
    const t0 = performance.now();
    const cancel = await server.dispatch('job.cancel', { jobId }, { readOnly: true });
    expect(cancel).toEqual({ ok: true, result: { cancelled: true } });
    const end = await server.ctx.jobs.wait(jobId);
    const endMs = performance.now() - t0;
    const delay = await meter.stop();
    expect(end).toMatchObject({ type: 'job.end', jobId, method: 'log.verify', ok: false, error: { code: 'cancelled' } });
    console.log(`during a deep verify: session.folders answered in ${pingMs.toFixed(1)} ms; job.end ${endMs.toFixed(1)} ms after job.cancel`);
    expect(pingMs).toBeLessThan(100);
    expect(endMs).toBeLessThan(100);
    expect(delay.p95).toBeLessThan(50);
  }, 120_000);
});
