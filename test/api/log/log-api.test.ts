/**
 * The explorer's read-side API (`log.*`) through `dispatch`, on partitions built with the test log
 * builder and on copies of real broker-written data: partition summaries (offsets, checkpoints,
 * config sources, health facts, dirty ratio per spec §13.2), segment rows, batch pages, record pages
 * with hole rows and cursors (cases B01, B02, B10, B11, B14, B15, B20 as the table shows them),
 * record bytes in chunks, time lookup, and the jobs (count, holes, verify, search) with progress and
 * cancel. Engine errors must arrive intact (code, file, byte position).
 */
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobProgressEvent, JobResult, MethodName, Res } from '../../../src-shared/contract.ts';
import type { HoleRow, RecordRow, TableRow } from '../../../src-shared/log-types.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { createRequire } from 'node:module';

/** kafkajs' CRC-32C (shares no code with the engine's). */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const CALL = { readOnly: true };
let server: ServerApi;
let root: string;

/** Calls a method; resolves with its result or rejects with its ErrorInfo. */
async function call<M extends MethodName>(method: M, req: unknown): Promise<Res<M>> {
  const env = await server.dispatch(method, req, CALL);
  if (!env.ok) throw Object.assign(new Error(env.error.message), { info: env.error });
  return env.result as Res<M>;
}

/** The ErrorInfo a call fails with. */
async function failure(method: MethodName, req: unknown): Promise<{ code: string; message: string; file?: string; position?: number }> {
  const env = await server.dispatch(method, req, CALL);
  if (env.ok) throw new Error(`${method} succeeded`);
  return env.error;
}

/** Runs a job to its end; returns the end event and the progress events seen. */
async function runJob(method: MethodName, req: unknown, opts: { cancelAfterProgress?: boolean } = {}): Promise<{ end: JobEndEvent; progress: JobProgressEvent[] }> {
  const progress: JobProgressEvent[] = [];
  let jobId = '';
  const off = server.ctx.events.subscribe((e) => {
    if (e.type === 'job.progress' && e.jobId === jobId) {
      progress.push(e);
      if (opts.cancelAfterProgress && progress.length === 1) server.ctx.jobs.cancel(jobId);
    }
  });
  const env = await server.dispatch(method, req, CALL);
  if (!env.ok) throw new Error(env.error.message);
  jobId = (env.result as { jobId: string }).jobId;
  const end = await server.ctx.jobs.wait(jobId);
  off();
  return { end, progress };
}

async function jobResult<T>(method: MethodName, req: unknown): Promise<T> {
  const { end } = await runJob(method, req);
  if (!end.ok) throw new Error(`${method}: ${end.error.code}: ${end.error.message}`);
  return end.result as T;
}

/** Rows as compact tuples: records → offset (with flags), holes → [from, to, cause]. */
function brief(rows: TableRow[]): (string | [string, string, string])[] {
  return rows.map((r) => (r.kind === 'record' ? `${r.offset}${r.control ? ':' + r.control.type : ''}${r.aborted ? ':aborted' : ''}` : [r.from, r.to, r.cause]));
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const singleAt = (o: number, key = `k${o}`, ts = 1000): BatchInput => ({ baseOffset: BigInt(o), records: [rec(key, `v${o}`, ts)] });
function txn(pid: number, baseOffset: number, n: number): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: range(1, n).map((i) => rec(`t${i}`, 'x')) };
}
function marker(pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput {
  return { baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(0), timestamp: 1000n }] };
}

/** A fresh log directory inside the test root, opened in the session. */
async function logDir(name: string): Promise<string> {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
}

beforeAll(() => {
  root = tempDir('klx-log-api-');
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
});

afterAll(async () => {
  await server.ctx.jobs.shutdown();
  rmSync(root, { recursive: true, force: true });
});

describe('log.open', () => {
  it('summarizes every partition of a log directory and registers it in the session', async () => {
    const d = await logDir('open-basic');
    buildPartition(d, { topic: 'orders', partition: 0, segments: [{ batches: singles(rec('a', '1', 1000), rec('b', '2', 2000)) }, { batches: singles(rec('c', '3', 3000)) }] }, { highWatermark: 3n, recoveryPoint: 2n, cleanShutdown: true });
    buildPartition(d, { topic: 'orders', partition: 1, segments: [{ batches: [] }] });
    expect((await failure('log.partition', { dir: join(d, 'orders-0') })).code).toBe('invalid-argument'); // not opened yet

    const r = await call('log.open', { path: d });
    expect(r.root).toBe(d);
    expect(r.opened).toContain(d);
    expect(r.logDirs).toHaveLength(1);
    const [p0, p1] = r.logDirs[0]!.partitions;
    expect(r.logDirs[0]!.cleanShutdown).toBe(true);
    expect(p0).toMatchObject({
      dir: join(d, 'orders-0'),
      name: 'orders-0',
      topic: 'orders',
      partition: 0,
      kind: 'normal',
      segmentCount: 2,
      logStartOffset: '0',
      logEndOffset: '3',
      firstSegmentBaseOffset: '0',
      highWatermark: '3',
      recoveryPoint: '2',
      cleanerCheckpoint: null,
      policy: ['delete'],
      dirtyRatio: null,
      counts: null,
    });
    // Three single-record batches of 70-odd bytes each: the sizes are the .log file sizes.
    const sizes = ['00000000000000000000.log', '00000000000000000002.log'].map((f) => statSync(join(d, 'orders-0', f)).size);
    expect(p0!.logSize).toBe(sizes[0]! + sizes[1]!);
    expect(p0!.config.find((c) => c.key === 'retention.ms')).toEqual({ key: 'retention.ms', value: '604800000', source: 'default' });
    expect(p0!.pendingSwaps).toBeNull();
    expect(p0!.health).toMatchObject({ level: 'ok', errors: 0, warnings: 0, crc: 'unknown', indexProblems: 0, leftoverFiles: 0, verifiedAt: null });
    expect(p1).toMatchObject({ partition: 1, segmentCount: 1, logSize: 0, logStartOffset: '0', logEndOffset: '0' });
    // Now inside an opened folder.
    expect((await call('log.partition', { dir: join(d, 'orders-0') })).partition.logEndOffset).toBe('3');
  });

  it('with lazyAbove, a folder of more partitions is listed without reading them; log.summaries gives what log.open gives for each', async () => {
    const d = await logDir('open-lazy');
    for (let p = 0; p < 3; p++) buildPartition(d, { topic: 'orders', partition: p, segments: [{ batches: singles(...Array.from({ length: p + 1 }, (_, i) => rec(`k${i}`, `v${i}`, 1000 + i))) }] });
    writeFileSync(join(d, 'replication-offset-checkpoint'), '0\n3\norders 0 1\norders 1 2\norders 2 3\n');
    const eager = await call('log.open', { path: d });
    const lazy = await call('log.open', { path: d, lazyAbove: 2 });
    expect(lazy.logDirs[0]!.partitions).toEqual([]);
    expect(lazy.logDirs[0]!.pending).toEqual([0, 1, 2].map((p) => ({ dir: join(d, `orders-${p}`), name: `orders-${p}`, topic: 'orders', partition: p, kind: 'normal' })));
    expect(eager.logDirs[0]!.pending).toEqual([]);
    // At or below the bound, every partition is summarized as without it.
    expect((await call('log.open', { path: d, lazyAbove: 3 })).logDirs[0]!.partitions).toEqual(eager.logDirs[0]!.partitions);
    const s = await call('log.summaries', { dirs: [join(d, 'orders-2'), join(d, 'orders-0')] });
    expect(s.failed).toEqual([]);
    expect(s.partitions).toEqual([eager.logDirs[0]!.partitions[2], eager.logDirs[0]!.partitions[0]]);
    expect(s.partitions.map((p) => [p.logEndOffset, p.highWatermark])).toEqual([['3', '3'], ['1', '1']]);
    // A partition removed since it was listed is named in failed; one outside the opened folders is refused.
    rmSync(join(d, 'orders-1'), { recursive: true });
    const gone = await call('log.summaries', { dirs: [join(d, 'orders-1'), join(d, 'orders-2')] });
    expect(gone.partitions.map((p) => p.name)).toEqual(['orders-2']);
    expect(gone.failed).toEqual([{ dir: join(d, 'orders-1'), error: expect.objectContaining({ code: 'not-found' }) }]);
    expect((await failure('log.summaries', { dirs: [root] })).code).toBe('invalid-argument');
  });

  it('names a pending swap: the segments a broker replaces with it at startup (LogLoader.load), and that the pre-swap ones are shown', async () => {
    const d = await logDir('open-swap');
    // seg@0 holds offsets 0..4, seg@5 5..9, seg@10 (active) 10..11; the cleaner's output for seg@0+seg@5 keeps 3 and 8.
    const dir = buildPartition(d, { topic: 'c', segments: [{ batches: range(0, 4).map((o) => singleAt(o)) }, { batches: range(5, 9).map((o) => singleAt(o)) }, { batches: [singleAt(10), singleAt(11)] }] }, { cleanShutdown: true });
    writeFileSync(join(dir, '00000000000000000000.log.swap'), Buffer.concat([3, 8].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`)] }))));
    const p = (await call('log.open', { path: dir })).logDirs[0]!.partitions[0]!;
    expect(p.pendingSwaps).toMatchObject({ swapFiles: ['00000000000000000000.log.swap'], replacedSegments: ['0', '5'], range: { from: '0', to: '9' }, deletedFiles: [] });
    expect(p.pendingSwaps!.notice).toMatch(/^Pending swap of an interrupted cleaner or segment split: 00000000000000000000\.log\.swap \(offsets 3\.\.8\)\. At startup a broker completes it \(LogLoader\.load\): it deletes the files of the segments with base offsets in \[0, 9\) \(00000000000000000000\.log, 00000000000000000005\.log\)/);
    expect(p.logEndOffset).toBe('12');
  });

  it('gives health facts: missing index, leftover files; and refuses what is not a Kafka log with the reason', async () => {
    const d = await logDir('open-health');
    const dir = buildPartition(d, { topic: 't', segments: [{ batches: singles(rec('a', '1')), noIndex: true }, { batches: singles(rec('b', '2')) }] }, { cleanShutdown: true });
    writeFileSync(join(dir, '00000000000000000000.log.deleted'), 'x');
    const r = await call('log.open', { path: dir });
    const p = r.logDirs[0]!.partitions[0]!;
    expect(p.health.level).toBe('warning');
    expect(p.health.indexProblems).toBe(1);
    expect(p.health.leftoverFiles).toBe(1);
    expect(p.health.findings.map((f) => [f.code, f.file])).toEqual(
      expect.arrayContaining([
        ['missing-index', join(dir, '00000000000000000000.index')],
        ['leftover-file', join(dir, '00000000000000000000.log.deleted')],
      ]),
    );
    expect(p.problems.map((x) => x.code)).toContain('leftover-file');
    // What a broker does with it (LogLoader), said where the partition is shown (issue 13 finding 4).
    expect(p.pendingSwaps).toEqual({
      notice:
        'Leftover 1 .deleted (already removed from the log by the cleaner or retention): 00000000000000000000.log.deleted. A broker deletes it at startup (LogLoader.removeTempFilesAndCollectSwapFiles); it holds no record a broker serves, and none is shown here. klx repair deletes it too.',
      swapFiles: [],
      replacedSegments: [],
      range: null,
      deletedFiles: ['00000000000000000000.log.deleted'],
    });

    const plain = await logDir('not-kafka');
    writeFileSync(join(plain, 'notes.txt'), 'hello');
    const e = await failure('log.open', { path: plain });
    expect(e).toMatchObject({ code: 'not-a-log-dir', file: plain });
    expect(e.message).toMatch(/no meta\.properties/);
    expect((await failure('log.open', { path: join(root, 'nope') })).code).toBe('not-found');
  });

  it('computes the dirty ratio of a compacted topic from segment sizes and the cleaner checkpoint (spec §13.2)', async () => {
    const d = await logDir('open-dirty');
    // Segments at 0, 3, 6 and the active one at 9; cleaner checkpoint 4 (inside segment 3).
    const segs = [0, 3, 6, 9].map((base) => ({ batches: range(base, base + 2).map((o) => singleAt(o, `key-${o % 2}`)) }));
    const dir = buildPartition(d, { topic: '__consumer_offsets', partition: 7, segments: segs }, { cleanerOffset: 4n });
    const size = (b: number) => statSync(join(dir, `${String(b).padStart(20, '0')}.log`)).size;
    const p = (await call('log.open', { path: d })).logDirs[0]!.partitions[0]!;
    expect(p.policy).toEqual(['compact']);
    expect(p.config.find((c) => c.key === 'cleanup.policy')).toEqual({ key: 'cleanup.policy', value: 'compact', source: 'inferred' });
    // clean = segments with base < 4 (0 and 3); cleanable = from the segment holding 4 (3) to the active segment 9 (3 and 6).
    const clean = size(0) + size(3);
    const cleanable = size(3) + size(6);
    expect(p.dirtyRatio).toEqual({
      firstDirtyOffset: '4',
      checkpointReset: false,
      firstUncleanableOffset: '9',
      uncleanableBound: 'active-segment',
      cleanBytes: clean,
      cleanableBytes: cleanable,
      ratio: cleanable / (clean + cleanable),
      minCleanableRatio: 0.5,
      // Four equal segments make exactly 0.5: not above the minimum (the broker compares strictly).
      aboveMinimum: false,
    });
    expect(p.dirtyRatio!.ratio).toBe(0.5);
  });
});

describe('log.partition and log.batches', () => {
  it('lists segments with offsets, sizes, timestamps, active flag and index health', async () => {
    const d = await logDir('segments');
    const dir = buildPartition(d, { topic: 's', segments: [{ batches: [singleAt(0, 'a', 1000), singleAt(1, 'b', 5000), singleAt(2, 'c', 2000)] }, { batches: [singleAt(3, 'd', 6000)], noIndex: true }] }, { cleanShutdown: true });
    await call('log.open', { path: d });
    const { segments } = await call('log.partition', { dir });
    expect(segments.map((s) => [s.baseOffset, s.lastOffset, s.firstBatchOffset, s.firstTimestamp, s.lastTimestamp, s.lastTimestampSource, s.active])).toEqual([
      ['0', '2', '0', '1000', '5000', 'time-index', false],
      ['3', '3', '3', '6000', '6000', 'last-batch', true],
    ]);
    expect(segments[0]!.size).toBe(statSync(join(dir, '00000000000000000000.log')).size);
    // Three 70-odd-byte batches never pass index.interval.bytes: no offset-index entry; the time
    // index holds the segment's largest timestamp once (5000, at offset 1).
    expect(segments[0]!.index).toMatchObject({ exists: true, entries: 0, health: 'ok', problems: [] });
    expect(segments[0]!.timeIndex).toMatchObject({ exists: true, entries: 1, size: 12, health: 'ok' });
    expect(segments[1]!.index).toMatchObject({ exists: false, size: 0, health: 'warning', file: join(dir, '00000000000000000003.index') });
    expect(segments[1]!.index.problems[0]!.code).toBe('missing-index');
  });

  it('pages through batches with positions, codec, producer, flags and CRC state, and shows a cut tail as damage', async () => {
    const d = await logDir('batches');
    const batches: BatchInput[] = [
      { baseOffset: 0n, compression: 'gzip', records: [rec('a', '1'), rec('b', '2')] },
      { baseOffset: 2n, producerId: 42n, producerEpoch: 3, baseSequence: 0, records: [rec('c', '3')] },
      marker(42, 'COMMIT', 3),
    ];
    const cut = encodeBatch({ baseOffset: 4n, records: [rec('d', 'x'.repeat(50))] }).subarray(0, 40);
    const dir = buildPartition(d, { topic: 'b', segments: [{ batches, tail: cut }] });
    await call('log.open', { path: d });
    const p1 = await call('log.batches', { dir, segment: '0', limit: 2 });
    expect(p1.rows.map((r) => (r.kind === 'batch' ? [r.position, r.baseOffset, r.lastOffset, r.recordCount, r.compression, r.producerId, r.control, r.crcValid] : r.kind))).toEqual([
      [0, '0', '1', 2, 'gzip', '-1', false, true],
      [p1.rows[0]!.size, '2', '2', 1, 'none', '42', false, true],
    ]);
    expect(p1.nextPosition).toBe(p1.rows[0]!.size + p1.rows[1]!.size);
    const p2 = await call('log.batches', { dir, segment: '0', fromPosition: p1.nextPosition! });
    expect(p2.rows.map((r) => r.kind)).toEqual(['batch', 'damage']);
    expect(p2.rows[0]).toMatchObject({ kind: 'batch', baseOffset: '3', control: true, transactional: true });
    expect(p2.rows[1]).toMatchObject({ kind: 'damage', type: 'invalid-tail', size: 40, position: p2.fileSize - 40 });
    expect(p2.nextPosition).toBeNull();
    expect((await failure('log.batches', { dir, segment: '9' })).code).toBe('not-found');
  });

  it('a batch whose CRC fails: batch and record rows carry the stored and computed CRC and the algorithm (issue 13 finding 1)', async () => {
    const d = await logDir('crc-fail');
    const dir = buildPartition(d, { topic: 'c', segments: [{ batches: [singleAt(0), singleAt(1), singleAt(2)] }] });
    const file = join(dir, '00000000000000000000.log');
    const bytes = readFileSync(file);
    const pos = 12 + bytes.readInt32BE(8); // the batch at offset 1
    const size = 12 + bytes.readInt32BE(pos + 8);
    bytes[pos + size - 2] ^= 0x01; // the last value byte ("v1" -> "v0")
    writeFileSync(file, bytes);
    const stored = bytes.readUInt32BE(pos + 17);
    const computed = kjsCrc32C(bytes.subarray(pos + 21, pos + size)) >>> 0;
    expect(computed).not.toBe(stored);
    await call('log.open', { path: d });
    const rows = (await call('log.batches', { dir, segment: '0' })).rows;
    expect(rows[1]).toMatchObject({ kind: 'batch', position: pos, crcValid: false, crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' });
    expect(rows[0]).toMatchObject({ crcValid: true, crcAlgorithm: 'CRC-32C', computedCrc: bytes.readUInt32BE(17) });
    const recs = (await call('log.records', { dir })).rows.filter((r): r is RecordRow => r.kind === 'record');
    expect(recs.map((r) => [r.offset, r.crcValid])).toEqual([['0', true], ['1', false], ['2', true]]);
    expect(recs[1]).toMatchObject({ crc: stored, computedCrc: computed, crcAlgorithm: 'CRC-32C' });
  });
});

describe('log.records: pages with hole rows and cursors', () => {
  it('B01: browsing from offset 1 returns k2=c@2 first; offset 1 is a hole row removed by compaction; next after 0 is 2', async () => {
    const d = await logDir('b01');
    const dir = buildPartition(d, { topic: 'b01', segments: [{ batches: [singleAt(0, 'k1'), singleAt(2, 'k2'), singleAt(3, 'k3')] }, { batches: [singleAt(4, 'k4')] }] });
    await call('log.open', { path: d });
    const all = await call('log.records', { dir });
    expect(brief(all.rows)).toEqual(['0', ['1', '1', 'compacted-between-batches'], '2', '3', '4']);
    expect(all).toMatchObject({ atStart: true, atEnd: true, prevCursor: null, nextCursor: null, logStartOffset: '0', logEndOffset: '5' });
    const from1 = await call('log.records', { dir, from: '1' });
    expect(brief(from1.rows)).toEqual([['1', '1', 'compacted-between-batches'], '2', '3', '4']);
    expect((from1.rows[1] as RecordRow).key!.base64).toBe(Buffer.from('k2').toString('base64'));
    const first = await call('log.records', { dir, limit: 1 });
    // A one-record page covers [0, 2): the record and the hole up to the real next offset (not 0 + 1).
    expect(brief(first.rows)).toEqual(['0', ['1', '1', 'compacted-between-batches']]);
    expect(first.nextCursor).toBe('2');
  });

  it('B02: a compacted batch keeps base 0 and last offset 9; reading from 3 moves on to 10 with the in-batch hole shown', async () => {
    const d = await logDir('b02');
    const a: BatchInput = { baseOffset: 0n, lastOffsetDelta: 9, records: [{ offsetDelta: 2, key: 'k2', value: 'v', timestamp: 1000n }] };
    const b: BatchInput = { baseOffset: 10n, records: [0, 1, 3, 4, 5, 6, 7, 8, 9].map((k, i) => ({ offsetDelta: i, key: `k${k}`, value: 'w', timestamp: 1000n })) };
    const dir = buildPartition(d, { topic: 'b02', segments: [{ batches: [a, b] }, { batches: [singleAt(19, 'kz')] }] });
    await call('log.open', { path: d });
    const r = await call('log.records', { dir, from: '3', limit: 2 });
    expect(brief(r.rows)).toEqual([['3', '9', 'compacted-in-batch'], '10', '11']);
    expect((r.rows[0] as HoleRow).detail).toMatch(/inside batch 0\.\.9 at position 0: compaction kept 1 of its 10 offsets/);
    expect(r.nextCursor).toBe('12');
    const start = await call('log.records', { dir, limit: 1 });
    expect(brief(start.rows)).toEqual([['0', '1', 'compacted-in-batch'], '2', ['3', '9', 'compacted-in-batch']]);
    expect(start.nextCursor).toBe('10');
  });

  it('B11: the first record of a cleaned log is 265 while logStartOffset stays 0; the hole [0, 264] is one row', async () => {
    const d = await logDir('b11');
    const dir = buildPartition(d, { topic: 'b11', segments: [{ baseOffset: 0n, batches: range(265, 300).map((o) => singleAt(o)) }, { batches: range(301, 310).map((o) => singleAt(o)) }] }, { logStartOffset: 0n });
    await call('log.open', { path: d });
    const r = await call('log.records', { dir, limit: 3 });
    expect(brief(r.rows)).toEqual([['0', '264', 'compacted-between-batches'], '265', '266', '267']);
    expect(r.logStartOffset).toBe('0');
    const counts = await jobResult<{ records: number; offsetSpan: string }>('log.countRecords', { dir });
    expect(counts).toMatchObject({ records: 46, offsetSpan: '311' });
  });

  it('B10: below logStartOffset (DeleteRecords) the offsets are a row of their own; reading below it is OffsetOutOfRange', async () => {
    const d = await logDir('b10');
    const dir = buildPartition(d, { topic: 'b10', segments: [{ batches: range(0, 9).map((o) => singleAt(o)) }, { batches: range(10, 12).map((o) => singleAt(o)) }] }, { logStartOffset: 6n });
    await call('log.open', { path: d });
    const r = await call('log.records', { dir, limit: 2 });
    expect(brief(r.rows)).toEqual([['0', '5', 'below-log-start'], '6', '7']);
    const e = await failure('log.records', { dir, from: '3' });
    expect(e).toMatchObject({ code: 'offset-out-of-range', file: dir });
    expect(e.message).toMatch(/only have log segments starting from offset: 6/);
  });

  it('B14/B15: markers are flagged control rows, aborted data is flagged (read_uncommitted) or a hole (read_committed)', async () => {
    const d = await logDir('b15');
    const dir = buildPartition(d, {
      topic: 'b15',
      segments: [
        {
          batches: [txn(5, 0, 2), marker(9, 'ABORT', 2), marker(5, 'ABORT', 3), txn(5, 4, 1), marker(5, 'COMMIT', 5), txn(6, 6, 2), marker(6, 'ABORT', 8)],
          txnIndex: [
            { producerId: 5n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n },
            { producerId: 6n, firstOffset: 6n, lastOffset: 8n, lastStableOffset: 9n },
          ],
        },
        { batches: [singleAt(9)] },
      ],
    });
    await call('log.open', { path: d });
    const u = await call('log.records', { dir });
    expect(brief(u.rows)).toEqual(['0:aborted', '1:aborted', '2:ABORT', '3:ABORT', '4', '5:COMMIT', '6:aborted', '7:aborted', '8:ABORT', '9']);
    const c = await call('log.records', { dir, isolation: 'read_committed' });
    expect(brief(c.rows)).toEqual([['0', '1', 'aborted-transaction'], '2:ABORT', '3:ABORT', '4', '5:COMMIT', ['6', '7', 'aborted-transaction'], '8:ABORT', '9']);
  });

  it('forward and backward pages concatenate to exact coverage of the offsets, holes joined at the seams', async () => {
    const d = await logDir('cursors');
    // Records at 0..99 except multiples of 7 (each removed record a hole), 3 segments.
    const present = range(0, 99).filter((o) => o % 7 !== 0 || o === 0);
    const segOf = (o: number) => (o < 40 ? 0 : o < 80 ? 1 : 2);
    const segments = [0, 1, 2].map((s) => ({ baseOffset: BigInt(s * 40), batches: present.filter((o) => segOf(o) === s).map((o) => singleAt(o)) }));
    const dir = buildPartition(d, { topic: 'cur', segments });
    await call('log.open', { path: d });
    const covered = (rows: TableRow[]) => rows.flatMap((r) => (r.kind === 'record' ? [Number(r.offset)] : range(Number(r.from), Number(r.to))));
    // Forward, 9 records a page.
    let fwd: TableRow[] = [];
    let cursor: string | null = '0';
    let pages = 0;
    while (cursor !== null) {
      const p: Res<'log.records'> = await call('log.records', { dir, from: cursor, limit: 9 });
      fwd = fwd.concat(p.rows);
      cursor = p.nextCursor;
      pages++;
    }
    expect(pages).toBe(Math.ceil(present.length / 9));
    expect(covered(fwd)).toEqual(range(0, 99));
    // Backward from the end, 11 records a page.
    let back: TableRow[] = [];
    let before: string | null = 'end';
    while (before !== null) {
      const p: Res<'log.records'> = await call('log.records', { dir, from: before, direction: 'backward', limit: 11 });
      back = p.rows.concat(back);
      before = p.prevCursor;
    }
    expect(covered(back)).toEqual(range(0, 99));
    expect(back.filter((r) => r.kind === 'record').map((r) => Number((r as RecordRow).offset))).toEqual(present);
    const holes = back.filter((r): r is HoleRow => r.kind === 'hole');
    expect(new Set(holes.map((h) => h.cause))).toEqual(new Set(['compacted-between-batches']));
  });

  it('a damaged partition: the cut tail is a row naming file and byte position, and the page reports the damage', async () => {
    const d = await logDir('damaged');
    const cut = encodeBatch({ baseOffset: 3n, records: [rec('x', 'y'.repeat(100))] }).subarray(0, 80);
    const dir = buildPartition(d, { topic: 'dmg', segments: [{ batches: singles(rec('a', '1'), rec('b', '2'), rec('c', '3')), tail: cut, noIndex: true }] });
    await call('log.open', { path: d });
    const log = join(dir, '00000000000000000000.log');
    const size = statSync(log).size;
    const r = await call('log.records', { dir });
    expect(brief(r.rows)).toEqual(['0', '1', '2', ['3', '3', 'truncated-tail']]);
    const tail = r.rows[3] as HoleRow;
    expect(tail.position).toBe(size - 80);
    expect(tail.detail).toContain(`80 bytes at position ${size - 80} of ${log}`);
    expect(r.problems).toEqual([{ code: 'truncated-batch', file: log, position: size - 80, size: 80, reason: expect.stringMatching(/exceeds the 80 bytes left/) }]);
    const { partition } = await call('log.partition', { dir });
    expect(partition.health.findings.find((f) => f.code === 'missing-index')).toMatchObject({ severity: 'warning', file: join(dir, '00000000000000000000.index') });
    expect(partition.health.indexProblems).toBe(1);
  });
});

describe('log.recordValue and log.seekTimestamp', () => {
  it('returns a large value in chunks with its total size, a header value, and refuses a hole', async () => {
    const d = await logDir('values');
    const big = Buffer.alloc(3 * 1024 * 1024 + 5, 0x61);
    const dir = buildPartition(d, { topic: 'v', segments: [{ batches: [{ records: [{ key: 'k', value: big, timestamp: 1000n, headers: [{ key: 'h', value: 'hv' }] }] }, singleAt(2, 'k2')] }] });
    await call('log.open', { path: d });
    const c1 = await call('log.recordValue', { dir, offset: '0', part: 'value' });
    expect(c1).toMatchObject({ offset: '0', part: 'value', isNull: false, totalSize: big.length, start: 0, truncated: true });
    expect(Buffer.from(c1.base64, 'base64').length).toBe(1024 * 1024);
    const last = await call('log.recordValue', { dir, offset: '0', part: 'value', start: 3 * 1024 * 1024 });
    expect(Buffer.from(last.base64, 'base64')).toEqual(Buffer.alloc(5, 0x61));
    expect(last.truncated).toBe(false);
    const h = await call('log.recordValue', { dir, offset: '0', part: 'header', headerIndex: 0 });
    expect([h.headerKey, Buffer.from(h.base64, 'base64').toString()]).toEqual(['h', 'hv']);
    expect((await failure('log.recordValue', { dir, offset: '1', part: 'value' })).code).toBe('not-found');
    expect((await failure('log.recordValue', { dir, offset: '0', part: 'header', headerIndex: 3 })).code).toBe('not-found');
    // The records table gets a 256-byte preview and the full size.
    const page = await call('log.records', { dir, limit: 1 });
    expect((page.rows[0] as RecordRow).value).toEqual({ base64: big.subarray(0, 256).toString('base64'), size: big.length });
  });

  it('B20: time lookups follow offset order, not timestamp order', async () => {
    const d = await logDir('b20');
    const dir = buildPartition(d, { topic: 'b20', segments: [{ batches: [singleAt(0, 'o0', 1000), singleAt(1, 'o1', 5000), singleAt(2, 'o2', 2000)] }, { batches: [singleAt(3, 'o3', 6000), singleAt(4, 'o4', 5500)] }] });
    await call('log.open', { path: d });
    const at = async (t: number) => (await call('log.seekTimestamp', { dir, timestamp: String(t) })).offset;
    expect([await at(500), await at(2000), await at(5000), await at(5200), await at(6001)]).toEqual(['0', '1', '1', '3', null]);
    expect(await call('log.seekTimestamp', { dir, timestamp: '-1' })).toMatchObject({ found: true, offset: '5', timestamp: '-1' });
    expect((await failure('log.seekTimestamp', { dir, timestamp: '-7' })).code).toBe('invalid-argument');
  });
});

describe('log.* jobs', () => {
  it('log.countRecords counts per segment with progress; the summary then carries the counts', async () => {
    const d = await logDir('count');
    const dir = buildPartition(d, { topic: 'c', segments: [{ batches: [{ records: [rec('a', '1'), rec('b', '2'), rec('c', '3')] }, marker(1, 'COMMIT', 3)] }, { batches: [{ records: [] , lastOffsetDelta: 1, maxTimestamp: 1000n }, singleAt(6)] }] });
    await call('log.open', { path: d });
    const { end, progress } = await runJob('log.countRecords', { dir });
    expect(end).toMatchObject({ ok: true, result: { records: 4, controlRecords: 1, batches: 4, emptyBatches: 1, offsetSpan: '7', logStartOffset: '0', logEndOffset: '7' } });
    const result = (end as Extract<JobEndEvent, { ok: true }>).result as JobResult<'log.countRecords'>;
    expect(result.segments.map((s) => [s.baseOffset, s.records, s.batches])).toEqual([
      ['0', 3, 2],
      ['4', 1, 2],
    ]);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ phase: 'counting records', done: progress.at(-1)!.total });
    expect((await call('log.partition', { dir })).partition.counts).toEqual({ records: 4, controlRecords: 1, batches: 4, emptyBatches: 1 });
  });

  it('log.holes lists holes with totals and buckets for the hole map', async () => {
    const d = await logDir('holes');
    const dir = buildPartition(d, { topic: 'h', segments: [{ batches: [singleAt(0), singleAt(5), singleAt(6)] }, { baseOffset: 7n, batches: [singleAt(9)] }] });
    await call('log.open', { path: d });
    const r = await jobResult<{ holes: HoleRow[]; totals: unknown; buckets: { from: string; to: string; absent: Record<string, number> }[]; missingOffsets: string; segments: unknown }>('log.holes', { dir, buckets: 5 });
    expect(r.holes.map((h) => [h.from, h.to, h.cause])).toEqual([
      ['1', '4', 'compacted-between-batches'],
      ['7', '8', 'compacted-between-batches'],
    ]);
    expect(r.totals).toEqual([{ cause: 'compacted-between-batches', ranges: 2, offsets: '6', offsetsInSpan: '6' }]);
    expect(r.missingOffsets).toBe('6');
    expect(r.segments).toEqual([
      { baseOffset: '0', nextOffset: '7' },
      { baseOffset: '7', nextOffset: '10' },
    ]);
    // 10 offsets in 5 buckets of 2: [0,2) has 1 absent, [2,4) 2, [4,6) 1, [6,8) 1, [8,10) 1.
    expect(r.buckets.map((b) => [b.from, b.to, b.absent['compacted-between-batches'] ?? 0])).toEqual([
      ['0', '2', 1],
      ['2', '4', 2],
      ['4', '6', 1],
      ['6', '8', 1],
      ['8', '10', 1],
    ]);
    const limited = await jobResult<{ holes: unknown[]; truncated: boolean }>('log.holes', { dir, limit: 1 });
    expect(limited).toMatchObject({ truncated: true });
    expect(limited.holes).toHaveLength(1);
  });

  it('log.verify names the CRC mismatch with file and byte position; the health badge then says "CRC errors"', async () => {
    const d = await logDir('verify');
    const dir = buildPartition(d, { topic: 'v', segments: [{ batches: singles(rec('a', '1'), rec('b', '2')) }] }, { cleanShutdown: true });
    const log = join(dir, '00000000000000000000.log');
    await call('log.open', { path: d });
    expect((await call('log.partition', { dir })).partition.health.crc).toBe('unknown');
    // Flip a byte of the second batch's value (its CRC no longer matches).
    const buf = readFileSync(log);
    const second = buf.readInt32BE(8) + 12;
    buf[buf.length - 2] ^= 0xff;
    chmodSync(log, 0o644);
    writeFileSync(log, buf);
    const r = await jobResult<Res<'log.partition'>['partition']['health'] & { findings: { code: string; file: string; position?: number }[]; counts: { error: number } }>('log.verify', { dir });
    const crc = r.findings.find((f) => f.code === 'crc-mismatch')!;
    expect(crc).toMatchObject({ severity: 'error', file: log, position: second });
    expect(r.counts.error).toBeGreaterThanOrEqual(1);
    const health = (await call('log.partition', { dir })).partition.health;
    expect(health).toMatchObject({ crc: 'errors', crcErrors: 1, level: 'error' });
    expect(health.verifiedAt).not.toBeNull();
  });

  it('log.search finds text in keys, values and headers (case folded), flags aborted data, stops at the limit and can be cancelled', async () => {
    const d = await logDir('search');
    const dir = buildPartition(d, {
      topic: 's',
      segments: [
        { batches: [singleAt(0, 'alpha'), { baseOffset: 1n, records: [rec('beta', 'has NEEDLE inside'), rec('gamma', 'x', 1000, [{ key: 'trace', value: 'needle-7' }])] }, txn(3, 3, 1), marker(3, 'ABORT', 4)], txnIndex: [{ producerId: 3n, firstOffset: 3n, lastOffset: 4n, lastStableOffset: 5n }] },
        { batches: [singleAt(5, 'needle-key')] },
      ],
    });
    await call('log.open', { path: d });
    const r = await jobResult<{ matches: { offset: string; in: string[]; aborted: boolean }[]; complete: boolean; scannedRecords: number; nextOffset: string | null }>('log.search', { dir, text: 'needle' });
    expect(r.matches.map((m) => [m.offset, m.in])).toEqual([
      ['1', ['value']],
      ['2', ['header']],
      ['5', ['key']],
    ]);
    expect(r).toMatchObject({ complete: true, nextOffset: null, scannedRecords: 5 });
    const exact = await jobResult<{ matches: { offset: string }[] }>('log.search', { dir, text: 'needle', ignoreCase: false, in: ['value'] });
    expect(exact.matches).toEqual([]);
    const tx = await jobResult<{ matches: { offset: string; aborted: boolean }[] }>('log.search', { dir, text: 't1', in: ['key'] });
    expect(tx.matches).toMatchObject([{ offset: '3', aborted: true }]);
    const first = await jobResult<{ matches: unknown[]; complete: boolean; nextOffset: string }>('log.search', { dir, text: 'needle', limit: 1 });
    expect(first).toMatchObject({ complete: false, nextOffset: '2' });

    // Cancel: a partition big enough that the walk reports progress before it ends.
    const big = await logDir('search-big');
    const bigDir = buildPartition(big, { topic: 'big', segments: [{ batches: range(0, 399).map((b) => ({ records: range(0, 49).map((i) => rec(`k${b}-${i}`, 'v'.repeat(200))) })) }] });
    await call('log.open', { path: big });
    const { end } = await runJob('log.search', { dir: bigDir, text: 'absent text' }, { cancelAfterProgress: true });
    expect(end).toMatchObject({ ok: false, error: { code: 'cancelled' } });
  });
});

describeRealData('log.* on real broker-written data (a copy of kafka-2.7.1-compacted-offsets)', () => {
  let copy: string;
  beforeAll(() => {
    copy = join(root, 'real-compacted');
    cpSync(join(REAL_DATA, 'kafka-2.7.1-compacted-offsets'), copy, { recursive: true });
    for (const e of readdirSync(copy, { recursive: true, withFileTypes: true })) chmodSync(join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
    chmodSync(copy, 0o755);
  });

  it('__consumer_offsets-39: records 4, 16..19 with the compaction holes [0,3] and [5,15]; dirty ratio from the cleaner checkpoint 18', async () => {
    const r = await call('log.open', { path: copy });
    const parts = r.logDirs[0]!.partitions;
    expect(parts.filter((p) => p.topic === '__consumer_offsets')).toHaveLength(50);
    const p39 = parts.find((p) => p.name === '__consumer_offsets-39')!;
    expect(p39).toMatchObject({ logStartOffset: '0', logEndOffset: '20', cleanerCheckpoint: '18', segmentCount: 2, policy: ['compact'] });
    const seg0 = statSync(join(p39.dir, '00000000000000000000.log')).size;
    // firstDirty 18 is the active segment's base: clean = segment 0, nothing cleanable.
    expect(p39.dirtyRatio).toMatchObject({ firstDirtyOffset: '18', firstUncleanableOffset: '18', cleanBytes: seg0, cleanableBytes: 0, ratio: 0, aboveMinimum: false });
    const page = await call('log.records', { dir: p39.dir });
    expect(brief(page.rows)).toEqual([['0', '3', 'compacted-between-batches'], '4', ['5', '15', 'compacted-between-batches'], '16', '17', '18', '19']);
    expect((page.rows[0] as HoleRow).detail).toMatch(/between the base offset of segment 0 and its first batch 4/);
    // Offset 4 is a tombstone (null value) of an offset-commit key.
    const r4 = page.rows[1] as RecordRow;
    expect(r4.value).toBeNull();
    expect(r4.key!.size).toBe(26);
    const holes = await jobResult<{ totals: unknown; missingOffsets: string }>('log.holes', { dir: p39.dir });
    expect(holes).toMatchObject({ totals: [{ cause: 'compacted-between-batches', ranges: 2, offsets: '15' }], missingOffsets: '15' });
  });

  it('__consumer_offsets-28: the cleaned segment 0 starts at offset 1', async () => {
    await call('log.open', { path: copy });
    const dir = join(copy, '__consumer_offsets-28');
    const { segments } = await call('log.partition', { dir });
    expect(segments.map((s) => [s.baseOffset, s.firstBatchOffset, s.lastOffset, s.active])).toEqual([
      ['0', '1', '1', false],
      ['2', '2', '2', true],
    ]);
    expect(brief((await call('log.records', { dir })).rows)).toEqual([['0', '0', 'compacted-between-batches'], '1', '2']);
  });
});

describe('errors reach the caller intact', () => {
  it('a batch whose records cannot be decoded: the time lookup fails with corrupt-batch naming the file and the batch position', async () => {
    const d = await logDir('errors');
    const good = encodeBatch({ baseOffset: 0n, records: [rec('a', '1', 1000)] });
    const bad = encodeBatch({ baseOffset: 1n, compression: 'gzip', records: [rec('b', '2', 5000), rec('c', '3', 6000)] });
    bad.fill(0x5a, 61); // garbage instead of the gzip stream, then a valid CRC over it
    bad.writeUInt32BE(crc32c(bad.subarray(21)) >>> 0, 17);
    const dir = buildPartition(d, { topic: 'e', segments: [{ batches: [good, bad] }] });
    await call('log.open', { path: d });
    const e = await failure('log.seekTimestamp', { dir, timestamp: '4000' });
    expect(e).toMatchObject({ code: 'corrupt-batch', file: join(dir, '00000000000000000000.log'), position: good.length });
    // The records table reads on: the batch becomes a corrupt-region hole row and a page problem at that position.
    const page = await call('log.records', { dir });
    expect(brief(page.rows)).toEqual(['0', ['1', '2', 'corrupt-region']]);
    expect(page.problems).toMatchObject([{ code: 'corrupt-batch', position: good.length }]);
  });
});
