/**
 * Scans split over segments (issue 16): `verify`, the holes walk, the record counts and a text
 * search (a text no record holds, so every record is read; ASCII case folded, as the app searches
 * by default) of a multi-segment partition in one thread (`verifyPartition`, `scanHoles`,
 * `countJob`, `searchJob`) against the same scans on the segment-scan pool
 * (`verifyPartitionInParallel`, `scanHolesInParallel`, `countJob` and `searchJob` with a runner, on
 * `scanRunner()`: one thread per core), in the same run; and the one-thread deep
 * pass (records decoded) against the shallow pass (headers + CRC only), for verify and for the reader.
 *
 * Data (generated once into bench/.data/, reused while the parameters are unchanged): a partition of
 * 8 segments (default 1024 MiB in all) of uncompressed batches of 100 records × 200 bytes (16-byte
 * key, printable value, no headers), written with the project's `encodeBatch` and `writeSegmentFiles`
 * (indexes as a broker rebuilds them).
 *
 * Figures: wall seconds (median of `--iterations`), MB/s, process CPU seconds, CPU seconds of each
 * busy thread (from /proc/self/task), the wall speed-up, and the CPU-normalised speed-up: the
 * busiest thread's CPU seconds in the one-thread run over the busiest thread's in the split run,
 * i.e. the speed-up the split gives when every thread has a core of its own; and the same with the
 * split's CPU seconds shared evenly over its threads (balanced). On a machine shared with other work the wall speed-up is low:
 * rerun on a quiet machine for the wall figure.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { scanLogFile } from '../src-main/engine/format/log-reader.ts';
import { encodeBatch, type RecordSpec } from '../src-main/engine/format/record-batch.ts';
import { countJob } from '../src-main/api/log/log-jobs.ts';
import { folderDecoder, searchJob, type DecoderKey } from '../src-main/api/log/log-search.ts';
import { scanHoles, scanHolesInParallel } from '../src-main/engine/log/holes.ts';
import { PartitionLog } from '../src-main/engine/log/partition-log.ts';
import { verifyPartitionInParallel } from '../src-main/engine/log/verify-parallel.ts';
import { verifyPartition } from '../src-main/engine/log/verify.ts';
import { writeSegmentFiles } from '../src-main/engine/segment/segment-file-writer.ts';
import { closeScanPool, scanRunner } from '../src-main/api/log/scan-pool.ts';
import { ALNUM, cachedMeta, collectGarbage, fmt3, loadLine, median, printTable, prng, progress, type BenchOptions } from './lib.ts';

const DEFAULT_SIZE_MB = 1024;
const SEGMENTS = 8;

interface DataParams {
  generator: number;
  sizeMb: number;
  segments: number;
  recordsPerBatch: number;
  valueSize: number;
  seed: number;
}

interface DataMeta {
  params: DataParams;
  dir: string;
  bytes: number;
  batches: number;
  records: number;
}

/** Writes the partition folder segment by segment (one segment's batches in memory at a time). */
function generate(root: string, p: DataParams): DataMeta {
  const dir = join(root, 'scan-0');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rand = prng(p.seed);
  const segBytes = Math.floor((p.sizeMb * 2 ** 20) / p.segments);
  // A few record sets reused with new offsets: the generator's cost is the encoding, not the randomness.
  const sets: RecordSpec[][] = Array.from({ length: 16 }, (_, s) =>
    Array.from({ length: p.recordsPerBatch }, (_, i) => {
      let v = '';
      for (let k = 0; k < p.valueSize; k++) v += ALNUM[Math.floor(rand() * 64)];
      return { key: `key-${String((s * p.recordsPerBatch + i) % 100_000).padStart(12, '0')}`, value: v, timestamp: 1_700_000_000_000n + BigInt(s * 1000 + i) };
    }),
  );
  let offset = 0n;
  let batches = 0;
  let bytes = 0;
  const t0 = Date.now();
  for (let s = 0; s < p.segments; s++) {
    const base = offset;
    const bufs: Buffer[] = [];
    let size = 0;
    while (size < segBytes) {
      const b = encodeBatch({ baseOffset: offset, records: sets[batches % sets.length]!, producerId: 4242n, producerEpoch: 0, baseSequence: Number(offset % 2_000_000_000n) });
      bufs.push(b);
      size += b.length;
      offset += BigInt(p.recordsPerBatch);
      batches++;
    }
    writeSegmentFiles(dir, base, bufs);
    bytes += size;
    progress(`  generating: segment ${s + 1}/${p.segments}`);
  }
  progress('');
  console.log(`  generated ${batches} batches (${(bytes / 2 ** 20).toFixed(0)} MiB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  writeFileSync(join(root, 'recovery-point-offset-checkpoint'), `0\n1\nscan 0 ${offset}\n`);
  const meta: DataMeta = { params: p, dir, bytes, batches, records: batches * p.recordsPerBatch };
  writeFileSync(`${root}.json.tmp`, JSON.stringify(meta, null, 2) + '\n');
  renameSync(`${root}.json.tmp`, `${root}.json`);
  return meta;
}

function data(opts: BenchOptions): DataMeta {
  const p: DataParams = { generator: 1, sizeMb: opts.sizeMb ?? DEFAULT_SIZE_MB, segments: SEGMENTS, recordsPerBatch: 100, valueSize: 170, seed: 16 };
  const root = join(opts.dataDir, `scan-${p.sizeMb}mb`);
  const meta = cachedMeta<DataMeta>(`${root}.json`, p);
  if (meta && existsSync(meta.dir) && readdirSync(meta.dir).filter((f) => f.endsWith('.log')).reduce((a, f) => a + statSync(join(meta.dir, f)).size, 0) === meta.bytes) return meta;
  return generate(root, p);
}

/** CPU seconds of every thread of this process (utime + stime from /proc/self/task/TID/stat), by thread id; empty where /proc is absent. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(rest[11]) + Number(rest[12])) / 100);
    } catch {
      // the thread ended
    }
  }
  return out;
}

interface Measure {
  seconds: number;
  cpuSeconds: number;
  /** CPU seconds of the threads that used more than 0.05 s, busiest first. */
  threads: number[];
}

/** Runs `fn` once to warm up, then `iterations` times; the median run's figures. */
async function measure(iterations: number, fn: () => Promise<unknown>): Promise<Measure> {
  await fn();
  const runs: Measure[] = [];
  for (let i = 0; i < iterations; i++) {
    collectGarbage();
    const before = threadCpu();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const after = threadCpu();
    const threads = [...after].map(([tid, c]) => c - (before.get(tid) ?? 0)).filter((c) => c > 0.05).sort((a, b) => b - a);
    runs.push({ seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, threads });
  }
  const m = median(runs.map((r) => r.seconds));
  return runs.find((r) => r.seconds === m) ?? runs[0]!;
}

/**
 * The speed-up in CPU terms: the busiest thread's CPU seconds in the one-thread run over the
 * busiest thread's in the split run (what the wall speed-up is when each thread has a core).
 */
function cpuSpeedUp(one: Measure, split: Measure, threads: number): string {
  if (one.threads.length === 0 || split.threads.length === 0) return '?';
  // Balanced: the busiest `threads` threads' CPU seconds shared evenly (on a loaded machine the OS
  // gives one pool thread less time and the other takes more segments: the busiest-thread figure
  // then understates what the split does on idle cores).
  const busy = split.threads.slice(0, threads).reduce((a, b) => a + b, 0);
  return `${(one.threads[0]! / split.threads[0]!).toFixed(2)}× (balanced ${((one.threads[0]! * threads) / busy).toFixed(2)}×)`;
}

export async function run(opts: BenchOptions): Promise<void> {
  const meta = data(opts);
  const mb = meta.bytes / 1e6;
  const runner = scanRunner();
  const threads = runner.threads;
  const open = () => PartitionLog.open(meta.dir);
  console.log(`  partition: ${SEGMENTS} segments, ${(meta.bytes / 2 ** 20).toFixed(0)} MiB, ${meta.records.toLocaleString('en-US')} records; pool: ${runner.threads} threads on ${availableParallelism()} cores`);
  console.log(`  before: ${loadLine()}`);
  const check = (r: Awaited<ReturnType<typeof verifyPartition>>) => {
    if (r.findings.length > 0 || r.stats.records !== meta.records) throw new Error(`verify found ${r.findings.length} findings, ${r.stats.records} records`);
  };
  const oneDeep = await measure(opts.iterations, async () => check(await verifyPartition(open(), { deep: true })));
  const poolDeep = await measure(opts.iterations, async () => check(await verifyPartitionInParallel(open(), { deep: true, runner, minBytes: 0 })));
  const oneShallow = await measure(opts.iterations, async () => check(await verifyPartition(open(), { deep: false })));
  const poolShallow = await measure(opts.iterations, async () => check(await verifyPartitionInParallel(open(), { deep: false, runner, minBytes: 0 })));
  const holes = async (gen: AsyncIterable<unknown>) => {
    let n = 0;
    for await (const _ of gen) n++;
    if (n !== 0) throw new Error(`${n} holes`);
  };
  const oneHoles = await measure(opts.iterations, () => holes(scanHoles(open())));
  const poolHoles = await measure(opts.iterations, () => holes(scanHolesInParallel(open(), { runner, minBytes: 0 })));
  const job = { jobId: '', readOnly: true, signal: new AbortController().signal, progress: () => {} };
  const counted = (c: { records: number }) => {
    if (c.records !== meta.records) throw new Error(`${c.records} records counted`);
  };
  const oneCount = await measure(opts.iterations, async () => counted(await countJob(open(), job, { setCounts: () => {} })));
  const poolCount = await measure(opts.iterations, async () => counted(await countJob(open(), job, { setCounts: () => {} }, { runner, minBytes: 0 })));
  const decoderKey: DecoderKey = { root: dirname(meta.dir), choices: {}, decodeEpoch: 0 };
  const searchReq = { dir: meta.dir, text: 'no record holds this', in: ['key', 'value', 'header'] as ('key' | 'value' | 'header')[], ignoreCase: true, decoded: true, scope: 'partition' as const, limit: 100, previewBytes: 256 };
  const searched = (r: { scannedRecords: number; complete: boolean; matches: unknown[] }) => {
    if (r.scannedRecords !== meta.records || !r.complete || r.matches.length !== 0) throw new Error(`search scanned ${r.scannedRecords} records, ${r.matches.length} matches`);
  };
  const oneSearch = await measure(opts.iterations, async () => searched(await searchJob([{ log: open(), decoder: folderDecoder(decoderKey) }], searchReq, job)));
  const poolSearch = await measure(opts.iterations, async () => searched(await searchJob([{ log: open(), decoder: folderDecoder(decoderKey) }], searchReq, job, { runner, minBytes: 0, decoderKey })));
  // The reader alone over every segment: records decoded against headers + CRC.
  const logs = readdirSync(meta.dir).filter((f) => f.endsWith('.log')).sort().map((f) => join(meta.dir, f));
  const readerPass = (deep: boolean) => async () => {
    let n = 0;
    let payload = 0;
    for (const f of logs) {
      for (const e of scanLogFile(f, { deep, verifyCrc: true })) {
        if (e.type !== 'batch') continue;
        if (!deep) {
          n += e.header.recordCount;
          continue;
        }
        // Keys and values materialised, as the codec bench's deep pass does.
        for (const r of e.records!) {
          payload += (r.key?.length ?? 0) + (r.value?.length ?? 0);
          n++;
        }
      }
    }
    if (n !== meta.records || (deep && payload === 0)) throw new Error(`${n} records`);
  };
  const readerDeep = await measure(opts.iterations, readerPass(true));
  const readerShallow = await measure(opts.iterations, readerPass(false));
  console.log(`  after: ${loadLine()}`);

  const row = (name: string, m: Measure, size: number, peer?: Measure): string[] => [
    name,
    fmt3(m.seconds),
    (size / m.seconds).toFixed(0),
    fmt3(m.cpuSeconds),
    m.threads.map((c) => c.toFixed(2)).join(' + '),
    peer ? `${(peer.seconds / m.seconds).toFixed(2)}×` : '',
    peer ? cpuSpeedUp(peer, m, threads) : '',
  ];
  printTable(
    ['pass', 'wall s', 'MB/s', 'CPU s', 'CPU s per busy thread', 'speed-up (wall)', 'speed-up (CPU-normalised)'],
    [
      row('verify deep, 1 thread', oneDeep, mb),
      row(`verify deep, pool of ${runner.threads}`, poolDeep, mb, oneDeep),
      row('verify shallow, 1 thread', oneShallow, mb),
      row(`verify shallow, pool of ${runner.threads}`, poolShallow, mb, oneShallow),
      row('holes, 1 thread', oneHoles, mb),
      row(`holes, pool of ${runner.threads}`, poolHoles, mb, oneHoles),
      row('count, 1 thread', oneCount, mb),
      row(`count, pool of ${runner.threads}`, poolCount, mb, oneCount),
      row('search (text in no record), 1 thread', oneSearch, mb),
      row(`search (text in no record), pool of ${runner.threads}`, poolSearch, mb, oneSearch),
      row('reader deep (keys, values), 1 thread', readerDeep, mb),
      row('reader shallow (header + CRC), 1 thread', readerShallow, mb),
    ],
    new Set([1, 2, 3, 5, 6]),
  );
  const ratio = (deep: Measure, shallow: Measure) => `${((100 * shallow.seconds) / deep.seconds).toFixed(0)} % (busiest thread's CPU: ${((100 * (shallow.threads[0] ?? 0)) / (deep.threads[0] ?? 1)).toFixed(0)} %)`;
  console.log(`  split over segments (goal ≥ 1.8× on 2 cores; the wall figures need a quiet machine): verify deep ${(oneDeep.seconds / poolDeep.seconds).toFixed(2)}× wall, ${cpuSpeedUp(oneDeep, poolDeep, threads)} CPU-normalised; holes ${(oneHoles.seconds / poolHoles.seconds).toFixed(2)}× wall, ${cpuSpeedUp(oneHoles, poolHoles, threads)} CPU-normalised; count ${(oneCount.seconds / poolCount.seconds).toFixed(2)}× wall, ${cpuSpeedUp(oneCount, poolCount, threads)} CPU-normalised; search ${(oneSearch.seconds / poolSearch.seconds).toFixed(2)}× wall, ${cpuSpeedUp(oneSearch, poolSearch, threads)} CPU-normalised`);
  console.log(`  deep against shallow, one thread: verify ${ratio(oneDeep, oneShallow)}; reader ${ratio(readerDeep, readerShallow)} of the shallow pass's speed (goal ≥ 75 %)`);
  await closeScanPool();
}
