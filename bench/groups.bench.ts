/**
 * Loading consumer groups (`loadGroups`, engine/groups/groups-load.ts): 1,000 groups × 200 partitions
 * each, committed over and over in 50 `__consumer_offsets` partitions (each group in the partition
 * Kafka puts it in), one uncompressed batch per OffsetCommit request (200 records), plus a group
 * metadata record per round. Two data sets with the same groups and partitions: 5 rounds (1 M commit
 * records) and 25 rounds (5 M commit records).
 *
 * Each timed load runs in a child process: wall time, and the JS heap after the load (after a full
 * GC, with the loaded groups still referenced) — it must grow with groups, not with commit records, so
 * the two data sets should give about the same heap. The limit, from issue 12: 5 M commit records
 * load in under 3 s.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { encodeBatch, type RecordSpec } from '../src-main/engine/format/record-batch.ts';
import { segmentFileName } from '../src-main/engine/files/file-names.ts';
import { offsetsPartitionFor } from '../src-main/engine/groups/offsets-topic.ts';
import { cachedMeta, ChunkedFileWriter, fmt3, fmtInt, loadLine, median, printTable, progress, type BenchOptions } from './lib.ts';

const GROUPS = 1000;
const PARTITIONS_PER_GROUP = 200;
const OFFSETS_PARTITIONS = 50;
const LIMIT_SECONDS = 3;

interface Params {
  generator: number;
  groups: number;
  partitionsPerGroup: number;
  rounds: number;
}

interface Meta {
  params: Params;
  commitRecords: number;
  records: number;
  bytes: number;
}

function str16(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(2 + b.length);
  out.writeInt16BE(b.length, 0);
  b.copy(out, 2);
  return out;
}

/** OffsetCommitKey v1 (from the schema, written here independently of the decoder). */
function commitKey(group: string, topic: string, partition: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeInt32BE(partition, 0);
  return Buffer.concat([Buffer.from([0, 1]), str16(group), str16(topic), p]);
}

/** OffsetCommitValue v3: offset, leaderEpoch, metadata "", commitTimestamp. */
function commitValue(offset: number, ts: number): Buffer {
  const b = Buffer.alloc(2 + 8 + 4 + 2 + 8);
  b.writeInt16BE(3, 0);
  b.writeBigInt64BE(BigInt(offset), 2);
  b.writeInt32BE(0, 10);
  b.writeInt16BE(0, 14);
  b.writeBigInt64BE(BigInt(ts), 16);
  return b;
}

/** GroupMetadataKey v2 and an empty classic consumer group value v3 (generation `gen`). */
function groupRecord(group: string, gen: number, ts: number): RecordSpec {
  const v = Buffer.concat([Buffer.from([0, 3]), str16('consumer'), Buffer.from([0, 0, 0, 0]), Buffer.from([0xff, 0xff]), Buffer.from([0xff, 0xff]), Buffer.alloc(8), Buffer.alloc(4)]);
  v.writeInt32BE(gen, 2 + 2 + 8);
  v.writeBigInt64BE(BigInt(ts), 2 + 2 + 8 + 4 + 2 + 2);
  return { key: Buffer.concat([Buffer.from([0, 2]), str16(group)]), value: v, timestamp: BigInt(ts) };
}

function dataDir(root: string, p: Params): string {
  return join(root, `groups-${p.rounds}r`, 'logdir');
}

function generate(root: string, p: Params): Meta {
  const dir = dataDir(root, p);
  rmSync(join(dir, '..'), { recursive: true, force: true });
  const writers: ChunkedFileWriter[] = [];
  const next: number[] = new Array(OFFSETS_PARTITIONS).fill(0);
  for (let i = 0; i < OFFSETS_PARTITIONS; i++) {
    mkdirSync(join(dir, `__consumer_offsets-${i}`), { recursive: true });
    writers.push(new ChunkedFileWriter(join(dir, `__consumer_offsets-${i}`, segmentFileName(0n, '.log'))));
  }
  const groups = Array.from({ length: p.groups }, (_x, g) => `bench-group-${String(g).padStart(4, '0')}`);
  const keys = groups.map((g, gi) => Array.from({ length: p.partitionsPerGroup }, (_x, k) => commitKey(g, `orders-${gi % 10}`, k)));
  let ts = 1_700_000_000_000;
  let commitRecords = 0;
  let records = 0;
  let bytes = 0;
  for (let round = 0; round < p.rounds; round++) {
    for (let gi = 0; gi < groups.length; gi++) {
      const op = offsetsPartitionFor(groups[gi]!, OFFSETS_PARTITIONS);
      ts += 7;
      const recs: RecordSpec[] = keys[gi]!.map((key, k) => ({ key, value: commitValue(round * 1000 + k, ts), timestamp: BigInt(ts) }));
      const b1 = encodeBatch({ baseOffset: BigInt(next[op]!), records: recs });
      next[op]! += recs.length;
      const b2 = encodeBatch({ baseOffset: BigInt(next[op]!), records: [groupRecord(groups[gi]!, round + 1, ts)] });
      next[op]! += 1;
      writers[op]!.write(b1);
      writers[op]!.write(b2);
      commitRecords += recs.length;
      records += recs.length + 1;
      bytes += b1.length + b2.length;
    }
    progress(`  generating ${p.rounds} rounds: ${round + 1}/${p.rounds}, ${fmtInt(bytes / 2 ** 20)} MiB`);
  }
  for (const w of writers) w.close();
  progress('');
  return { params: p, commitRecords, records, bytes };
}

function loadOrGenerate(root: string, p: Params): Meta {
  const metaPath = join(root, `groups-${p.rounds}r`, 'meta.json');
  const cached = cachedMeta<Meta>(metaPath, p);
  if (cached) return cached;
  const t0 = Date.now();
  const meta = generate(root, p);
  writeFileSync(metaPath, JSON.stringify(meta, null, 2) + '\n');
  console.log(`  generated ${fmtInt(meta.records)} records (${fmtInt(meta.bytes)} bytes) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return meta;
}

interface ChildResult {
  seconds: number;
  /** CPU seconds of the process during the load (all threads: includes GC). */
  cpuSeconds: number;
  heapMiB: number;
  maxRssMiB: number;
  groups: number;
  offsets: number;
  records: number;
}

async function child(dir: string): Promise<void> {
  const { allPartitions, openPath } = await import('../src-main/engine/log/log-dir.ts');
  const { loadGroups } = await import('../src-main/engine/groups/groups-load.ts');
  const { collectGarbage } = await import('./lib.ts');
  collectGarbage();
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const loaded = await loadGroups(allPartitions(openPath(dir)).map((p) => p.log));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  const cpuSeconds = (cu.user + cu.system) / 1e6;
  collectGarbage();
  const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
  let offsets = 0;
  for (const g of loaded.store.groups.values()) offsets += g.offsets.size;
  const out: ChildResult = { seconds, cpuSeconds, heapMiB, maxRssMiB: process.resourceUsage().maxRSS / 1024, groups: loaded.store.groups.size, offsets, records: loaded.store.counts.records };
  process.stdout.write(JSON.stringify(out) + '\n');
}

function runChild(dir: string): ChildResult {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--import', 'tsx', self, '--klx-groups-child', dir], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`groups child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult;
}

/** The bench (see the module comment). */
export async function run(opts: BenchOptions): Promise<void> {
  const rows: string[][] = [];
  const results: { rounds: number; meta: Meta; secs: number; cpu: number; heap: number; rss: number; r: ChildResult }[] = [];
  for (const rounds of [5, 25]) {
    const p: Params = { generator: 1, groups: GROUPS, partitionsPerGroup: PARTITIONS_PER_GROUP, rounds };
    const meta = loadOrGenerate(opts.dataDir, p);
    const dir = dataDir(opts.dataDir, p);
    const runs: ChildResult[] = [];
    for (let i = 0; i <= opts.iterations; i++) {
      progress(`  ${fmtInt(meta.commitRecords)} commits: ${i === 0 ? 'warm-up' : `iteration ${i}/${opts.iterations}`}`);
      const r = runChild(dir);
      if (i > 0) runs.push(r);
    }
    progress('');
    const secs = median(runs.map((r) => r.seconds));
    const cpu = median(runs.map((r) => r.cpuSeconds));
    const heap = median(runs.map((r) => r.heapMiB));
    const rss = Math.max(...runs.map((r) => r.maxRssMiB));
    results.push({ rounds, meta, secs, cpu, heap, rss, r: runs[0]! });
    rows.push([fmtInt(meta.commitRecords), fmtInt(meta.bytes / 2 ** 20), fmtInt(runs[0]!.groups), fmtInt(runs[0]!.offsets), `${fmt3(secs)} s`, `${fmt3(cpu)} s`, `${fmtInt(meta.records / secs)} rec/s`, `${fmt3(heap)} MiB`, `${fmtInt(rss)} MiB`]);
  }
  printTable(['commit records', 'MiB', 'groups', 'offsets kept', 'load (median)', 'CPU', 'rate', 'heap after load', 'peak RSS'], rows, new Set([0, 1, 2, 3, 4, 5, 6, 7, 8]));
  const big = results[results.length - 1]!;
  const small = results[0]!;
  const verdict = (x: number): string => `${fmt3(x)} s = ${fmt3(x / LIMIT_SECONDS)} × the limit: ${x < LIMIT_SECONDS ? 'met' : 'NOT met'}`;
  console.log(`  limit: ${fmtInt(big.meta.commitRecords)} commit records in < ${LIMIT_SECONDS} s. Wall: ${verdict(big.secs)}; CPU of the load (what an idle core would take): ${verdict(big.cpu)} (${loadLine()}; wall grows with the load, CPU much less)`);
  console.log(`  memory with groups, not commits: heap ${fmt3(small.heap)} MiB at ${fmtInt(small.meta.commitRecords)} commits, ${fmt3(big.heap)} MiB at ${fmtInt(big.meta.commitRecords)} (× ${fmt3(big.heap / small.heap)} for × ${fmt3(big.meta.commitRecords / small.meta.commitRecords)} commits)`);
}

if (process.argv[2] === '--klx-groups-child' && import.meta.url === pathToFileURL(process.argv[1]!).href) {
  await child(process.argv[3]!);
}
