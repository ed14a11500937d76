/**
 * `klx export` disk and memory: the peak bytes of its staging beside the output (the temporary
 * DuckDB database of `engine/sql/export-staging.ts`, its WAL and spill folder) and the process's
 * peak RSS, for Parquet (staged) and NDJSON with `--where` (staged), against two peers of the same
 * run: the log's own bytes, and the NDJSON export of the same rows (what the NDJSON staging that
 * the database replaced took: it wrote exactly those lines). RSS is compared with DuckDB's
 * `memory_limit` (`sql-resources.ts`).
 *
 * Data (generated once into bench/.data/export/, reused while the parameters are unchanged): one
 * partition of gzip v2 batches of 100 records (16-byte key, ~200-byte JSON value with a few varying
 * fields: compressible, as real event logs are), `--size-mb` MiB of `.log` (default 64).
 *
 * Each export runs `node bin/klx.mjs export …` as a child under `/usr/bin/time` (peak RSS, user
 * and system CPU seconds); the staging files beside the output and DuckDB's spill folders in the
 * temp folder are polled every 20 ms for their size (the hidden partial output is the output, not
 * staging: it is renamed when complete).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatch, type RecordSpec } from '../src-main/engine/format/record-batch.ts';
import { writeSegmentFiles } from '../src-main/engine/segment/segment-file-writer.ts';
import { duckdbMemoryLimitBytes } from '../src-main/engine/sql/sql-resources.ts';
import { BENCH_DIR, cachedMeta, fmt3, fmtInt, loadLine, printTable, prng, progress, type BenchOptions } from './lib.ts';

const DEFAULT_SIZE_MB = 64;

interface DataParams {
  generator: number;
  sizeMb: number;
  recordsPerBatch: number;
  seed: number;
}

interface DataMeta {
  params: DataParams;
  dir: string;
  logBytes: number;
  records: number;
}

/** The partition folder `events-0` under `<dataDir>/export/`. */
function data(opts: BenchOptions): DataMeta {
  const params: DataParams = { generator: 1, sizeMb: opts.sizeMb ?? DEFAULT_SIZE_MB, recordsPerBatch: 100, seed: 7 };
  const root = join(opts.dataDir, 'export');
  const metaPath = join(root, 'meta.json');
  const cached = cachedMeta<DataMeta>(metaPath, params);
  if (cached && existsSync(cached.dir)) return cached;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const dir = join(root, 'events-0');
  mkdirSync(dir);
  const rand = prng(params.seed);
  const target = params.sizeMb * 1024 * 1024;
  const batches: Buffer[] = [];
  let bytes = 0;
  let offset = 0n;
  let ts = 1_700_000_000_000;
  while (bytes < target) {
    const records: RecordSpec[] = [];
    for (let i = 0; i < params.recordsPerBatch; i++) {
      const user = Math.floor(rand() * 100_000);
      const value = JSON.stringify({
        event: ['page_view', 'add_to_cart', 'checkout', 'login'][Math.floor(rand() * 4)],
        user: `user-${user}`,
        session: Math.floor(rand() * 2 ** 40).toString(36),
        amount: Math.round(rand() * 100_000) / 100,
        ts: ts + i,
        path: `/shop/category/${Math.floor(rand() * 50)}/item/${Math.floor(rand() * 10_000)}`,
        agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)',
      });
      records.push({ key: `user-${String(user).padStart(11, '0')}`, value, timestamp: BigInt(ts + i) });
    }
    const b = encodeBatch({ baseOffset: offset, compression: 'gzip', records });
    batches.push(b);
    bytes += b.length;
    offset += BigInt(params.recordsPerBatch);
    ts += 1000;
    if (batches.length % 500 === 0) progress(`export data: ${fmtInt(bytes)} of ${fmtInt(target)} bytes`);
  }
  writeSegmentFiles(dir, 0n, batches, {});
  progress('');
  const meta: DataMeta = { params, dir, logBytes: statSync(join(dir, '00000000000000000000.log')).size, records: Number(offset) };
  writeFileSync(metaPath, JSON.stringify(meta));
  return meta;
}

/** Bytes of the staging files beside `out` (any pid) and of DuckDB's spill folders (`<tmpdir>/klx-duckdb-<pid>`), recursively. */
function stagingBytes(outDir: string, name: string): number {
  let n = 0;
  const entries = [
    ...readdirSync(outDir, { withFileTypes: true }).filter((e) => e.name.startsWith(`.${name}.klx-staging-`)),
    ...readdirSync(tmpdir(), { withFileTypes: true }).filter((e) => e.name.startsWith('klx-duckdb-')),
  ];
  for (const e of entries) {
    const p = join(e.parentPath, e.name);
    try {
      if (e.isDirectory()) {
        for (const f of readdirSync(p, { withFileTypes: true, recursive: true })) if (f.isFile()) n += statSync(join(f.parentPath, f.name)).size;
      } else n += statSync(p).size;
    } catch {
      // removed meanwhile
    }
  }
  return n;
}

function sizeOf(p: string): number {
  const s = statSync(p);
  if (!s.isDirectory()) return s.size;
  let n = 0;
  for (const f of readdirSync(p, { withFileTypes: true, recursive: true })) if (f.isFile()) n += statSync(join(f.parentPath, f.name)).size;
  return n;
}

interface Run {
  wall: number;
  user: number;
  sys: number;
  maxRssKb: number;
  peakStaging: number;
  outBytes: number;
}

/** One `klx export` child: wall, CPU, peak RSS, peak staging bytes, output bytes. */
async function exportOnce(dir: string, outDir: string, name: string, args: string[]): Promise<Run> {
  const out = join(outDir, name);
  rmSync(out, { recursive: true, force: true });
  const timeFile = join(outDir, `${name}.time`);
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', '-o', timeFile, process.execPath, join(BENCH_DIR, '..', 'bin', 'klx.mjs'), 'export', dir, '--out', out, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peak = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, stagingBytes(outDir, name));
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  const wall = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`klx export ${args.join(' ')} failed (${code}): ${stderr}`);
  const [user, sys, rss] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).slice(-3).map(Number) as [number, number, number];
  const outBytes = sizeOf(out);
  rmSync(out, { recursive: true, force: true });
  rmSync(timeFile, { force: true });
  return { wall, user, sys, maxRssKb: rss, peakStaging: peak, outBytes };
}

export async function run(opts: BenchOptions): Promise<void> {
  const meta = data(opts);
  const outDir = join(opts.dataDir, 'export-out');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  console.log(`\nklx export: ${fmtInt(meta.records)} records, .log ${mib(meta.logBytes)} MiB (gzip); DuckDB memory_limit ${mib(duckdbMemoryLimitBytes())} MiB; ${loadLine()}`);
  const cases: [string, string, string[]][] = [
    ['ndjson (peer: the old staging)', 'peer.ndjson', ['--format', 'ndjson']],
    ['parquet', 'out-pq', ['--format', 'parquet']],
    ['ndjson --where', 'where.ndjson', ['--format', 'ndjson', '--where', `"offset" % 10 = 0`]],
  ];
  const rows: string[][] = [];
  let peerBytes = 0;
  for (const [label, name, args] of cases) {
    progress(`klx export ${args.join(' ')}`);
    const r = await exportOnce(meta.dir, outDir, name, args);
    progress('');
    if (name === 'peer.ndjson') peerBytes = r.outBytes;
    rows.push([
      label,
      mib(r.outBytes),
      mib(r.peakStaging),
      fmt3(r.peakStaging / meta.logBytes),
      name === 'peer.ndjson' ? '-' : fmt3(r.peakStaging / peerBytes),
      mib(r.maxRssKb * 1024),
      fmt3((r.maxRssKb * 1024) / duckdbMemoryLimitBytes()),
      r.wall.toFixed(1),
      (r.user + r.sys).toFixed(1),
    ]);
  }
  printTable(['export', 'output MiB', 'peak staging MiB', 'staging / log', 'staging / old staging', 'peak RSS MiB', 'RSS / DuckDB limit', 'wall s', 'CPU s'], rows, new Set([1, 2, 3, 4, 5, 6, 7, 8]));
  console.log(loadLine());
  rmSync(outDir, { recursive: true, force: true });
}
