/**
 * `log.search` split over segments (issue 16): a partition's segments searched on several threads
 * (`searchSegmentTask`, merged by `searchJob` with a runner) give exactly the one-thread answer:
 * the same matches in the same order with the same aborted flags, the same scannedRecords,
 * scannedBytes, complete flag and next position, for every limit (the search stops at the first
 * `limit` matches in offset order), every start offset, texts and conditions on decoded values.
 * Generated partitions with transactions aborted and committed segments later (the read_committed
 * filter replayed at the merge), a CRC-damaged batch, a torn tail in a middle segment, a batch past
 * the log end in a middle segment, overlapping segments, a log start inside a later segment; every
 * real broker data set with two segments or more; and through the API on the scan pool's worker
 * threads, with progress and a cancel mid-way. Segments finish out of order on purpose.
 */
process.env.KLX_SCAN_SPLIT_MIN_BYTES = '0';

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobProgressEvent, JobResult, ParsedReq } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { folderDecoder, searchJob, searchSegmentTask, type DecoderKey } from '../../../src-main/api/log/log-search.ts';
import { closeScanPool } from '../../../src-main/api/log/scan-pool.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import type { JobContext } from '../../../src-main/api/core/types.ts';
import { inThisThread } from '../../support/segment-runner.ts';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';

type Search = JobResult<'log.search'>;

const dirs: string[] = [];
function logDir(): string {
  const d = tempDir('klx-search-split-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function searchReq(dir: string, r: Partial<ParsedReq<'log.search'>>): ParsedReq<'log.search'> {
  return { dir, text: '', in: ['key', 'value', 'header'], ignoreCase: true, decoded: true, scope: 'partition', limit: 100, previewBytes: 256, ...r };
}

function jobWith(signal = new AbortController().signal, progress: { done: number }[] = []): JobContext {
  return { jobId: '', readOnly: true, signal, progress: (p) => progress.push(p) };
}

/** The one-thread answer and the split answer (threads, seed) for the partitions `partDirs` of the log dir `root`; asserts they are deep-equal. */
async function same(root: string, partDirs: string[], r: ParsedReq<'log.search'>, threads = 2, seed = 1): Promise<{ one: Search; calls: number }> {
  const key: DecoderKey = { root, choices: {}, decodeEpoch: 0 };
  const targets = () => partDirs.map((d) => ({ log: PartitionLog.open(d), decoder: folderDecoder(key) }));
  const one = await searchJob(targets(), r, jobWith());
  const runner = inThisThread('searchSegment', searchSegmentTask, threads, seed);
  const par = await searchJob(targets(), r, jobWith(), { runner, minBytes: 0, decoderKey: key });
  expect(par, `limit ${r.limit}, from ${r.fromOffset ?? '-'}, text '${r.text}', condition ${r.condition ?? '-'}`).toEqual(one);
  return { one, calls: runner.calls };
}

const brief = (s: Search) => s.matches.map((m) => `${m.offset}${m.aborted ? 'A' : ''}`);

const single = (o: number, value: string): BatchInput => ({ baseOffset: BigInt(o), records: [rec(`k${o}`, value, 1000 + o)] });
const txn = (o: number, pid: number, value: string): BatchInput => ({ baseOffset: BigInt(o), producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [rec(`t${o}`, value, 1000 + o)] });
const marker = (o: number, pid: number, type: 'ABORT' | 'COMMIT'): BatchInput => ({ baseOffset: BigInt(o), producerId: BigInt(pid), producerEpoch: 0, isTransactional: true, isControl: true, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(0), timestamp: BigInt(1000 + o) }] });
const apples = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => single(from + i, `apple ${from + i}`));

/**
 * orders-0: producer 1's transaction (2, 5) aborted two segments later (marker 21), producer 2's
 * (3) committed in the next segment (7), producer 3's (8, 22) aborted in the last segment (31);
 * offset 9 CRC-damaged, a torn tail after 10; a header holding the text at 33.
 */
function transactional(root: string): string {
  const dir = buildPartition(root, {
    topic: 'orders',
    segments: [
      { batches: [single(0, 'apple 0'), single(1, 'pear'), txn(2, 1, 'apple t2'), txn(3, 2, 'apple t3'), single(4, 'apple 4')] },
      { batches: [txn(5, 1, 'apple t5'), single(6, 'pear'), marker(7, 2, 'COMMIT'), txn(8, 3, 'apple t8'), single(9, 'apple 9'), single(10, 'apple 10')], tail: encodeBatch({ baseOffset: 11n, records: [rec('a', 'apple', 1)] }).subarray(0, 40) },
      { baseOffset: 20n, batches: [single(20, 'apple 20'), marker(21, 1, 'ABORT'), txn(22, 3, 'apple t22'), ...apples(23, 26)], txnIndex: [{ producerId: 1n, firstOffset: 2n, lastOffset: 21n, lastStableOffset: 2n }] },
      {
        baseOffset: 30n,
        batches: [single(30, 'apple 30'), marker(31, 3, 'ABORT'), single(32, 'pear'), { baseOffset: 33n, records: [rec('k33', 'pear', 1033, [{ key: 'h', value: 'apple in a header' }])] }, ...apples(34, 37)],
        txnIndex: [{ producerId: 3n, firstOffset: 8n, lastOffset: 31n, lastStableOffset: 8n }],
      },
    ],
  });
  // Offset 9's value bytes altered: its CRC fails, the batch after it is sound (so it stays a batch).
  const file = join(dir, `${'5'.padStart(20, '0')}.log`);
  const bytes = readFileSync(file);
  const b9 = [...scanLogFile(file)].flatMap((e) => (e.type === 'batch' ? [e.header] : [])).find((h) => h.baseOffset === 9n)!;
  bytes[b9.position + b9.size - 2] ^= 0x08; // 'apple 9' -> 'apple 1'
  writeFileSync(file, bytes);
  return dir;
}

describe('searchJob split over segments: the one-thread answer, exactly', () => {
  it('every limit and start offset over transactions ended segments later, a CRC-damaged batch and a torn tail', async () => {
    const root = logDir();
    const dir = transactional(root);
    const all = await same(root, [dir], searchReq(dir, { text: 'APPLE', limit: 1000 }));
    // Aborted: producer 1 (2, 5: marker 21) and producer 3 (8, 22: marker 31); producer 2 (3) committed.
    expect(brief(all.one)).toEqual(['0', '2A', '3', '4', '5A', '8A', '9', '10', '20', '22A', '23', '24', '25', '30', '33', '34', '35', '36']);
    expect(all.one.matches.find((m) => m.offset === '33')!.in).toEqual(['header']);
    expect(Buffer.from(all.one.matches.find((m) => m.offset === '9')!.value!.base64, 'base64').toString()).toBe('apple 1'); // read as the bytes are
    expect(all.one).toMatchObject({ scannedRecords: 21, complete: true, nextOffset: null, partitions: 1 });
    expect(all.calls).toBe(4);
    for (const limit of [1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 17, 18, 19]) {
      for (const fromOffset of [undefined, '3', '5', '11', '21', '22', '31', '37']) {
        await same(root, [dir], searchReq(dir, { text: 'apple', limit, ...(fromOffset !== undefined ? { fromOffset } : {}) }), 2 + (limit % 3), limit);
      }
    }
    // The limit reached at a segment's last data record: the search stops at the next segment's first.
    const four = await same(root, [dir], searchReq(dir, { text: 'apple', limit: 5 }));
    expect(brief(four.one)).toEqual(['0', '2A', '3', '4', '5A']);
    expect(four.one).toMatchObject({ scannedRecords: 6, complete: false, nextOffset: '6' });
    const ten = await same(root, [dir], searchReq(dir, { text: 'apple', limit: 8 }));
    expect(ten.one).toMatchObject({ scannedRecords: 10, complete: false, nextOffset: '20' });
  });

  it('conditions on decoded values, headers only, case kept', async () => {
    const root = logDir();
    const dir = transactional(root);
    const cond = await same(root, [dir], searchReq(dir, { condition: 'offset >= 4 && value contains "apple" && not (offset == 30)', limit: 1000 }));
    expect(brief(cond.one)).toEqual(['4', '5A', '8A', '9', '10', '20', '22A', '23', '24', '25', '34', '35', '36']);
    for (const limit of [1, 4, 9]) await same(root, [dir], searchReq(dir, { text: 'apple', condition: 'offset > 3', limit }), 3, limit);
    const headers = await same(root, [dir], searchReq(dir, { text: 'apple', in: ['header'], limit: 1 }));
    expect(headers.one).toMatchObject({ scannedRecords: 18, complete: false, nextOffset: '34' });
    expect(brief(headers.one)).toEqual(['33']);
    expect(brief((await same(root, [dir], searchReq(dir, { text: 'APPLE', ignoreCase: false }))).one)).toEqual([]);
  });

  it('overlapping segments, a log start inside a later segment, a batch past the log end in a middle segment, a topic of two partitions', async () => {
    const root = logDir();
    const overlap = buildPartition(
      root,
      {
        topic: 'prices',
        segments: [
          { batches: apples(0, 10) },
          { baseOffset: 10n, batches: [...apples(10, 18), txn(18, 5, 'pear'), single(19, 'apple 19')] },
          // Overlapping: read after offset 19, when the filter has taken in producer 5's aborted transaction (from 18).
          { baseOffset: 15n, batches: [txn(15, 5, 'apple t15'), ...apples(16, 18), ...apples(22, 25)], noIndex: true, noTimeIndex: true },
          { baseOffset: 25n, batches: [...apples(25, 30), marker(30, 5, 'ABORT'), ...apples(31, 40)], txnIndex: [{ producerId: 5n, firstOffset: 18n, lastOffset: 30n, lastStableOffset: 18n }] },
        ],
      },
      { logStartOffset: 12n },
    );
    const past = buildPartition(root, { topic: 'prices', partition: 1, segments: [{ batches: apples(0, 10) }, { baseOffset: 10n, batches: [...apples(10, 12), single(500, 'apple 500')] }, { baseOffset: 20n, batches: apples(20, 30) }] });
    for (const limit of [1, 3, 7, 8, 9, 10, 14, 27, 28, 29, 30, 31, 40, 41, 1000]) {
      await same(root, [overlap], searchReq(overlap, { text: 'apple', limit }), 2, limit);
      await same(root, [overlap], searchReq(overlap, { text: 'apple', limit, fromOffset: '16' }), 3, limit);
      await same(root, [past], searchReq(past, { text: 'apple', limit }), 2, limit);
      // Both partitions, one after the other: the limit met in the first, at its end, or in the second.
      await same(root, [overlap, past], searchReq(overlap, { text: 'apple', scope: 'topic', limit }), 2, limit);
    }
    const whole = await same(root, [overlap, past], searchReq(overlap, { text: 'apple', scope: 'topic', limit: 1000 }));
    // prices-0 from its log start 12, its overlapping segment read as the one-thread walk reads it; prices-1 stops at the batch past its log end.
    expect(whole.one.matches.filter((m) => m.partition === 1).map((m) => Number(m.offset))).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const first = whole.one.matches.filter((m) => m.partition === 0).map((m) => Number(m.offset));
    expect(first[0]).toBe(12);
    expect(brief(whole.one).slice(0, 12)).toEqual(['12', '13', '14', '15', '16', '17', '19', '15A', '16', '17', '22', '23']);
    const at = await same(root, [overlap, past], searchReq(overlap, { text: 'apple', scope: 'topic', limit: first.length }));
    expect(at.one).toMatchObject({ complete: false, nextDir: past, nextOffset: '0', partitions: 2 });
  });

  it('stops reading segments once the first matches and the record after them are known; cancels', async () => {
    const root = logDir();
    const dir = buildPartition(root, { topic: 't', segments: Array.from({ length: 8 }, (_, k) => ({ baseOffset: BigInt(k * 10), batches: apples(k * 10, k * 10 + 10) })) });
    const early = await same(root, [dir], searchReq(dir, { text: 'apple', limit: 3 }));
    expect(early.one).toMatchObject({ nextOffset: '3', scannedRecords: 3 });
    expect(early.calls).toBeLessThanOrEqual(3); // segment 0, and at most the two read ahead
    const ac = new AbortController();
    ac.abort();
    const runner = inThisThread('searchSegment', searchSegmentTask, 2);
    await expect(searchJob([{ log: PartitionLog.open(dir), decoder: folderDecoder({ root, choices: {}, decodeEpoch: 0 }) }], searchReq(dir, { text: 'apple' }), jobWith(ac.signal), { runner, minBytes: 0, decoderKey: { root, choices: {}, decodeEpoch: 0 } })).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('searchJob text matching (ASCII letters folded, other bytes as they are)', () => {
  it('finds exactly the records whose key or value bytes hold the text, folded byte by byte, over random bytes', async () => {
    const root = logDir();
    let seed = 7;
    // The generator's high bits (its low bits repeat with short periods: with them no 'ab' or 'Á' pair ever occurred).
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) % n;
    // Letters of both cases, digits, control bytes, Latin-1 capitals (0xC0-0xDE) and UTF-8 lead/continuation bytes.
    const alphabet = [0x41, 0x42, 0x61, 0x62, 0x43, 0x63, 0x31, 0x09, 0x01, 0x1f, 0xc1, 0xe1, 0xc3, 0x81, 0xa9, 0x89, 0xdf, 0xff];
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => alphabet[rand(alphabet.length)]!));
    const records = Array.from({ length: 400 }, (_, i) => ({ key: bytes(1 + rand(6)), value: bytes(rand(24)), timestamp: BigInt(1000 + i) }));
    const dir = buildPartition(root, { topic: 'bytes', segments: [0, 1, 2, 3].map((k) => ({ baseOffset: BigInt(k * 100), batches: [{ baseOffset: BigInt(k * 100), records: records.slice(k * 100, k * 100 + 100) }] })) });
    const fold = (b: Buffer) => Buffer.from(b.map((c) => (c >= 65 && c <= 90 ? c + 32 : c)));
    for (const text of ['a', 'AB', 'bC', 'c1', 'Ab', '\t', 'á', 'Á', 'é', 'ab1']) {
      // Only A-Z fold (review of stop 26: the needle was lower-cased whole, so 'Á' never found the bytes of 'Á').
      const needle = Buffer.from(text.replace(/[A-Z]/g, (c) => c.toLowerCase()), 'utf8');
      const expected = records.flatMap((r, i) => (fold(r.key).indexOf(needle) >= 0 || fold(r.value).indexOf(needle) >= 0 ? [String(i)] : []));
      const { one } = await same(root, [dir], searchReq(dir, { text, in: ['key', 'value'], decoded: false, limit: 1000 }));
      expect(one.matches.map((m) => m.offset), text).toEqual(expected);
      const exact = Buffer.from(text, 'utf8');
      const kept = records.flatMap((r, i) => (r.key.indexOf(exact) >= 0 || r.value.indexOf(exact) >= 0 ? [String(i)] : []));
      expect((await same(root, [dir], searchReq(dir, { text, in: ['key', 'value'], decoded: false, ignoreCase: false, limit: 1000 }))).one.matches.map((m) => m.offset), text).toEqual(kept);
    }
  });
  it('keys and values above 16 MiB are matched byte by byte, as the smaller ones', async () => {
    const root = logDir();
    const big = 17 * 1024 * 1024;
    const dir = buildPartition(root, {
      topic: 'big-values',
      segments: [{ batches: [{ records: [rec('k0', `${'x'.repeat(big)}NeedLe`, 1000)] }, { records: [rec('k1', `\u0001${'y'.repeat(big)}needle`, 1001)] }, { records: [rec('k2', 'x'.repeat(big), 1002)] }] }],
    });
    const { one } = await same(root, [dir], searchReq(dir, { text: 'nEEDle', limit: 10 }));
    expect(one.matches.map((m) => [m.offset, m.in])).toEqual([['0', ['value']], ['1', ['value']]]);
    expect((await same(root, [dir], searchReq(dir, { text: 'NeedLe', ignoreCase: false }))).one.matches.map((m) => m.offset)).toEqual(['0']);
  }, 60_000);
});

describeRealData('searchJob split over segments on real broker data', () => {
  it('every partition with two segments or more: the one-thread answer', async () => {
    let checked = 0;
    for (const c of realDataCases()) {
      const root = join(REAL_DATA, c);
      for (const { log } of allPartitions(openPath(root))) {
        if (log.segments.length < 2) continue;
        for (const limit of [1, 7, 1000]) {
          await same(root, [log.dir], searchReq(log.dir, { text: 'e', limit }), 2, checked + limit);
          await same(root, [log.dir], searchReq(log.dir, { condition: 'offset >= 0', limit }), 3, checked + limit);
        }
        const mid = log.segments[1]!.baseOffset;
        if (mid >= log.logStartOffset && mid <= log.logEndOffset) await same(root, [log.dir], searchReq(log.dir, { text: 'a', limit: 20, fromOffset: String(mid) }), 2, checked);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

describe('log.search on the scan pool (worker threads)', () => {
  let server: ServerApi;
  beforeAll(() => {
    server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  });
  afterAll(async () => {
    await server.ctx.jobs.shutdown();
    await closeScanPool();
  });

  async function runSearch(req: unknown, cancelAtProgress = false): Promise<{ end: JobEndEvent; progress: JobProgressEvent[] }> {
    const progress: JobProgressEvent[] = [];
    let jobId = '';
    const off = server.ctx.events.subscribe((e) => {
      if (e.type === 'job.progress' && e.jobId === jobId) {
        progress.push(e);
        if (cancelAtProgress && e.done > 0) server.ctx.jobs.cancel(jobId);
      }
    });
    const env = await server.dispatch('log.search', req, { readOnly: true });
    if (!env.ok) throw new Error(env.error.message);
    jobId = (env.result as { jobId: string }).jobId;
    const end = await server.ctx.jobs.wait(jobId);
    off();
    return { end, progress };
  }

  it('answers what one thread answers, with progress, and is cancelled mid-way', async () => {
    const root = logDir();
    const dir = transactional(root);
    expect((await server.dispatch('log.open', { path: root }, { readOnly: true })).ok).toBe(true);
    for (const limit of [3, 1000]) {
      const { end, progress } = await runSearch({ dir, text: 'apple', limit });
      expect(end.ok).toBe(true);
      const one = await searchJob([{ log: PartitionLog.open(dir), decoder: folderDecoder({ root, choices: {}, decodeEpoch: 0 }) }], searchReq(dir, { text: 'apple', limit }), jobWith());
      expect(end.ok && end.result).toEqual(one);
      expect(one.matches.length).toBe(Math.min(limit, 18));
      expect(progress.length).toBeGreaterThan(0);
    }
    // A partition big enough that the search is still running when the first progress comes.
    const big = buildPartition(root, { topic: 'big', segments: Array.from({ length: 6 }, (_, k) => ({ baseOffset: BigInt(k * 20000), batches: Array.from({ length: 200 }, (_, b) => ({ baseOffset: BigInt(k * 20000 + b * 100), records: Array.from({ length: 100 }, (_, i) => rec(`k${i}`, 'x'.repeat(300), 1000)) })) })) });
    expect((await server.dispatch('log.open', { path: root }, { readOnly: true })).ok).toBe(true);
    const { end } = await runSearch({ dir: big, text: 'needle' }, true);
    expect(end.ok).toBe(false);
    expect(!end.ok && end.error.code).toBe('cancelled');
  }, 120_000);
});
