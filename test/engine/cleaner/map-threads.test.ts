/**
 * The offset map built on two threads (`map-builder.ts`: a worker thread digests the second and
 * later dirty segments, this thread puts) equals the one-thread build: same entries and answers,
 * latestOffset, fullness and stop point, superseded offsets, verified segments, counts, errors —
 * on a multi-segment partition with legacy (magic 1) messages, compressed batches, tombstones,
 * keyless records, committed and aborted transactions (one open across a segment roll), with maps
 * from roomy to tiny (full in the first segment, in a worker's segment, mid-batch). End to end,
 * `runCompaction` writes the same bytes either way, multi-pass included.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { startEntryWorker } from '../../../src-main/api/core/entry-worker.ts';
import { runCompaction, type CompactionOptions } from '../../../src-main/engine/cleaner/compaction.ts';
import { buildOffsetMap, hasFreeCore, MAP_BUILD_WORKER, type MapBuildOptions, type MapBuildResult } from '../../../src-main/engine/cleaner/map-builder.ts';
import { SkimpyOffsetMap } from '../../../src-main/engine/cleaner/offset-map.ts';
import { SupersededOffsets } from '../../../src-main/engine/cleaner/superseded-offsets.ts';
import { encodeLegacy } from '../../../src-main/engine/format/legacy.ts';
import { crc32c } from '../../../src-main/engine/format/crc.ts';
import { listTrash } from '../../../src-main/engine/cleaner/trash.ts';
import { segmentFileName } from '../../../src-main/engine/files/file-names.ts';
import { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildPartition, rec, tempDir, type BatchInput } from '../../support/log-builder.ts';
import { batchesOf, marker, snapshotFiles } from './support.ts';

const TS = 1_700_000_000_000;
const startWorker = () => startEntryWorker(MAP_BUILD_WORKER.entry, MAP_BUILD_WORKER.near);
const threaded: MapBuildOptions = { startWorker, threadedFromBytes: 0, workerWhen: 'always' };

/** 80 keys over 6 dirty segments and an active one (see the module comment). */
function build(): string {
  const key = (i: number) => `key-${String((i * 37) % 80).padStart(3, '0')}`;
  let o = 0;
  const data = (n: number, opts: Partial<BatchInput> = {}): BatchInput => {
    const records = Array.from({ length: n }, (_, i) => {
      const k = o + i;
      return rec(k % 13 === 5 ? null : key(k), k % 10 === 3 ? null : `v${k}`, TS + k);
    });
    const b: BatchInput = { baseOffset: BigInt(o), records, ...opts };
    o += n;
    return b;
  };
  const txn = (pid: bigint, n: number): BatchInput => data(n, { isTransactional: true, producerId: pid, producerEpoch: 0, baseSequence: 0 });
  const mark = (type: 'ABORT' | 'COMMIT', pid: bigint): BatchInput => {
    const b = { ...marker(type, pid, TS + o), baseOffset: BigInt(o) } as BatchInput;
    o += 1;
    return b;
  };
  // Segment 0: magic 1 messages, uncompressed and gzip-wrapped.
  const legacy = (n: number, compression: 'none' | 'gzip') => {
    const recs = Array.from({ length: n }, (_, i) => ({ offset: BigInt(o + i), timestamp: BigInt(TS + o + i), key: (o + i) % 7 === 2 ? null : Buffer.from(key(o + i)), value: Buffer.from(`m${o + i}`) }));
    o += n;
    return encodeLegacy(1, compression, recs);
  };
  const seg0 = [legacy(6, 'none'), legacy(9, 'gzip'), legacy(5, 'none')];
  const seg1Start = o;
  const seg1 = [data(10), txn(5n, 4), data(7, { compression: 'lz4' }), mark('ABORT', 5n), data(12)];
  const seg2Start = o;
  const seg2 = [txn(6n, 5), data(9), mark('COMMIT', 6n), data(15, { compression: 'zstd' }), data(3)];
  const seg3Start = o;
  // Producer 7's transaction opens here and is aborted in segment 4 (the index entry is there).
  const t7 = o;
  const seg3 = [data(20), txn(7n, 6), data(11, { compression: 'snappy' })];
  const seg4Start = o;
  const seg4 = [txn(7n, 3), data(8), mark('ABORT', 7n), data(25)];
  const t7Last = o - 26;
  const seg5Start = o;
  const seg5 = [data(30), data(4)];
  const activeStart = o;
  const active = [data(5)];
  return buildPartition(tempDir(), {
    segments: [
      { baseOffset: 0n, batches: seg0 },
      { baseOffset: BigInt(seg1Start), batches: seg1, txnIndex: [{ producerId: 5n, firstOffset: BigInt(seg1Start + 10), lastOffset: BigInt(seg1Start + 21), lastStableOffset: BigInt(seg1Start + 22) }] },
      { baseOffset: BigInt(seg2Start), batches: seg2 },
      { baseOffset: BigInt(seg3Start), batches: seg3 },
      { baseOffset: BigInt(seg4Start), batches: seg4, txnIndex: [{ producerId: 7n, firstOffset: BigInt(t7 + 20), lastOffset: BigInt(t7Last), lastStableOffset: BigInt(t7Last + 1) }] },
      { baseOffset: BigInt(seg5Start), batches: seg5 },
      { baseOffset: BigInt(activeStart), batches: active },
    ],
  });
}

interface Built {
  result: MapBuildResult;
  latest: number;
  size: number;
  full: boolean;
  answers: number[];
  superseded: number[];
}

function mapOf(dir: string, memory: number, start: bigint, opts: MapBuildOptions): Built {
  const log = PartitionLog.open(dir);
  const end = log.activeSegment!.baseOffset;
  const map = new SkimpyOffsetMap(memory);
  const superseded = SupersededOffsets.forRange(Number(start), Number(end))!;
  const result = buildOffsetMap(log, start, end, map, { ...opts, superseded });
  const answers = Array.from({ length: 80 }, (_, i) => map.get(Buffer.from(`key-${String(i).padStart(3, '0')}`)));
  const sup: number[] = [];
  for (let off = Number(start); off < Number(end); off++) if (superseded.isSuperseded(off)) sup.push(off);
  return { result, latest: map.latestOffset, size: map.size, full: map.full, answers, superseded: sup };
}

const withoutThreadCount = (b: Built) => ({ ...b, result: { ...b.result, segmentsOnWorker: 0 } });

describe('offset map on two threads', () => {
  it('equals the one-thread build for maps from roomy to tiny, from the log start and from inside a segment', () => {
    const dir = build();
    let fullRuns = 0;
    let onWorker = 0;
    // 24 B per slot, full at 90 %: 2 … 90 keys, and 1000 (never full).
    for (const slots of [3, 10, 31, 45, 60, 70, 1000]) {
      for (const start of [0n, 60n]) {
        const one = mapOf(dir, slots * 24, start, {});
        const two = mapOf(dir, slots * 24, start, threaded);
        expect(one.result.segmentsOnWorker).toBe(0);
        expect(withoutThreadCount(two)).toEqual(one);
        if (one.full) fullRuns++;
        onWorker = Math.max(onWorker, two.result.segmentsOnWorker);
      }
    }
    // The test covers what it claims: maps that fill up, and a worker that did segments.
    expect(fullRuns).toBeGreaterThan(8);
    expect(onWorker).toBe(5);
    const roomy = mapOf(dir, 1000 * 24, 0n, threaded);
    // 195 offsets; the keys of 78 of the 80 key names survive keyless and aborted records; the active segment starts at 195.
    expect([roomy.full, roomy.size, roomy.result.segments, roomy.result.verified.size, roomy.latest, roomy.result.recordsRead]).toEqual([false, 78, 6, 6, 194, 195]);
  });

  it('uses the worker only while a core is free (load average ≤ cores − 1), unless told always', () => {
    expect([hasFreeCore(0.5, 2), hasFreeCore(1, 2), hasFreeCore(1.01, 2), hasFreeCore(9, 2), hasFreeCore(0, 1), hasFreeCore(2.9, 4)]).toEqual([true, true, false, false, false, true]);
  });

  it('stays one-threaded below threadedFromBytes or with one dirty segment', () => {
    const dir = build();
    expect(mapOf(dir, 24_000, 0n, { startWorker }).result.segmentsOnWorker).toBe(0);
    const log = PartitionLog.open(dir);
    const last = log.segments[log.segments.length - 2]!.baseOffset;
    expect(mapOf(dir, 24_000, last, threaded).result.segmentsOnWorker).toBe(0);
  });

  it('throws the same error for a damaged batch in a worker segment, and none when the map fills before it', () => {
    const dir = build();
    const log = PartitionLog.open(dir);
    const seg = log.segments[4]!;
    const bytes = readFileSync(seg.files.log);
    const b = batchesOf(seg.files.log)[2]!;
    const position = bytes.indexOf(b.bytes);
    const at = position + b.bytes.length - 3;
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(seg.files.log, bytes);
    const errOf = (opts: MapBuildOptions) => {
      try {
        mapOf(dir, 24_000, 0n, opts);
      } catch (err) {
        const e = err as { code: string; message: string; file: string; position: number };
        return { code: e.code, message: e.message, file: e.file, position: e.position };
      }
      return null;
    };
    const one = errOf({});
    expect(one).toEqual({ code: 'crc-mismatch', message: expect.stringMatching(/fails its CRC-32C check/), file: seg.files.log, position });
    expect(errOf(threaded)).toEqual(one);
    // A map of 9 keys is full in segment 1: the damage is never read.
    expect(withoutThreadCount(mapOf(dir, 240, 0n, threaded))).toEqual(mapOf(dir, 240, 0n, {}));
  });

  it('reads the rest in this thread when the worker never answers', () => {
    const dir = build();
    const silent = () => new Worker('setInterval(() => {}, 1000)', { eval: true });
    const one = mapOf(dir, 24_000, 0n, {});
    const two = mapOf(dir, 24_000, 0n, { startWorker: silent, threadedFromBytes: 0, workerWhen: 'always', workerStallMs: 100 });
    expect(two.result.segmentsOnWorker).toBe(0);
    expect(two).toEqual(one);
  });

  it('reads the rest in this thread when the worker fails to load, without an uncaught error', async () => {
    const dir = build();
    let worker: Worker | null = null;
    const failing = () => (worker = new Worker('throw new Error("the entry did not load")', { eval: true }));
    const two = mapOf(dir, 24_000, 0n, { startWorker: failing, threadedFromBytes: 0, workerWhen: 'always', workerStallMs: 200 });
    expect(two.result.segmentsOnWorker).toBe(0);
    expect(two).toEqual(mapOf(dir, 24_000, 0n, {}));
    // The worker's error event is delivered now that this thread runs its event loop again: without
    // a listener it would be an uncaught exception (vitest fails the run on one).
    await new Promise<void>((resolve) => (worker!.threadId === -1 ? resolve() : worker!.once('exit', () => resolve())));
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('is cancelled while the worker reads', () => {
    const dir = build();
    const ac = new AbortController();
    let bytes = 0;
    expect(() =>
      mapOf(dir, 24_000, 0n, {
        ...threaded,
        signal: ac.signal,
        onBytes: (n) => {
          bytes += n;
          if (bytes > 3000) ac.abort();
        },
      }),
    ).toThrow(/compaction cancelled while building the offset map/);
  });

  it('the CRC-32C each trash manifest records for a cleaned file is that of its bytes (v2 batches appended by their CRC field, magic 1 messages read whole)', () => {
    for (const dedupeBufferSize of [24_000, 480]) {
      const dir = build();
      const trashDir = tempDir('klx-trash-');
      runCompaction(dir, { now: TS + 2 * 86_400_000, dedupeBufferSize, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': 1000n } }, { runId: 't', trashDir });
      const created = listTrash(trashDir).flatMap((e) => e.manifest!.created);
      const logs = created.filter((f) => f.name.endsWith('.log'));
      expect(logs.length).toBeGreaterThan(0);
      // A later pass may replace a segment (the last manifest naming a file is its current one) or drop its .txnindex.
      const last = new Map(created.map((f) => [f.name, f]));
      const present = [...last.values()].filter((f) => existsSync(join(dir, f.name)));
      expect(present.filter((f) => f.name.endsWith('.log')).length).toBeGreaterThan(0);
      for (const f of present) expect([f.name, f.crc32c]).toEqual([f.name, crc32c(readFileSync(join(dir, f.name)))]);
    }
    // Magic 1 messages kept whole and rebuilt, beside v2 batches copied and rebuilt.
    const legacy = (from: number, keys: string[]) => encodeLegacy(1, 'gzip', keys.map((k, i) => ({ offset: BigInt(from + i), timestamp: BigInt(TS + from + i), key: Buffer.from(k), value: Buffer.from(`m${from + i}`) })));
    const dir = buildPartition(tempDir(), {
      segments: [
        { baseOffset: 0n, batches: [legacy(0, ['l0', 'l1']), legacy(2, ['l2', 'x']), { baseOffset: 4n, records: [rec('y', '1', TS), rec('a', '2', TS)] }, { baseOffset: 6n, records: [rec('b', '3', TS)] }] },
        { baseOffset: 7n, batches: [{ baseOffset: 7n, records: [rec('x', 'new', TS + 9), rec('y', 'new', TS + 9)] }] },
        { baseOffset: 9n, batches: [{ baseOffset: 9n, records: [rec('z', 'z', TS)] }] },
      ],
    });
    const trashDir = tempDir('klx-trash-');
    runCompaction(dir, { now: TS + 1000 }, { runId: 't', trashDir });
    const out = batchesOf(join(dir, segmentFileName(0n, '.log')));
    expect(out.map((b) => [b.base, b.count, b.bytes[16]])).toEqual([
      [0, 2, 1],
      [2, 1, 1],
      [4, 1, 2],
      [6, 1, 2],
      [7, 2, 2],
    ]);
    const [f] = listTrash(trashDir).flatMap((e) => e.manifest!.created).filter((c) => c.name.endsWith('.log'));
    expect(f!.crc32c).toBe(crc32c(readFileSync(join(dir, f!.name))));
  });

  it('runCompaction writes the same bytes with the map built on one thread or two, multi-pass included', () => {
    for (const dedupeBufferSize of [24_000, 480]) {
      const outputs = [{}, { mapWorker: startWorker, threadedMapFromBytes: 0, mapWorkerWhen: 'always' as const }].map((extra) => {
        const dir = build();
        const opts: CompactionOptions = { now: TS + 2 * 86_400_000, dedupeBufferSize, config: { 'cleanup.policy': ['compact'], 'delete.retention.ms': 1000n }, ...extra };
        const r = runCompaction(dir, opts, { runId: 't', trashDir: tempDir('klx-trash-') });
        const files = [...snapshotFiles(dir)].filter(([n]) => n !== '.lock' && !n.startsWith('.klx')).map(([n, b]) => `${n} ${createHash('md5').update(b).digest('hex')}`);
        return { passes: r.passes, records: r.after.records, files };
      });
      expect(outputs[1]).toEqual(outputs[0]);
      if (dedupeBufferSize === 480) expect(outputs[0]!.passes).toBeGreaterThan(2);
      expect(outputs[0]!.files.some((f) => f.startsWith(segmentFileName(0n, '.log')))).toBe(true);
    }
  });
});
