/**
 * Shared helpers of the bench scripts (`npm run bench`): options, timing, tables, and the pieces of
 * the data generators (a seeded PRNG, printable filler, a chunked file writer, the cached-data check).
 * Not a bench itself: only files named `*.bench.ts` are run by `bench/run.ts`.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mulberry32 } from '../src-main/app/prng.ts';

/** What `bench/run.ts` passes to every bench's `run(opts)`. */
export interface BenchOptions {
  /** `--size-mb N`: data size in MiB; undefined means the bench's own default. */
  sizeMb?: number;
  /** `--iterations N`: timed iterations after one warm-up (default 3); report the median. */
  iterations: number;
  /** Where generated data lives (`bench/.data/`, git-ignored). Benches reuse what they find there. */
  dataDir: string;
}

/** A bench module: prints its own table. */
export interface BenchModule {
  run(opts: BenchOptions): Promise<void>;
}

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const DATA_DIR = join(BENCH_DIR, '.data');

/** The machine, for the header of the output. */
export function machineInfo(): string {
  const cpu = cpus();
  return [
    `cpu: ${cpu[0]?.model.trim() ?? 'unknown'} × ${cpu.length}`,
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `node ${process.version} (V8 ${process.versions.v8}), ${process.platform}-${process.arch}`,
    loadLine(),
  ].join('\n');
}

/** The 1-minute load average: other processes running during a bench make its figures noisy. */
export function loadLine(): string {
  return `load average (1 min): ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cpus`;
}

let gcFn: (() => void) | undefined;
/** Runs a full GC so one measurement does not pay for the garbage of the previous one. */
export function collectGarbage(): void {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Wall-clock seconds taken by `fn` (awaited), and the CPU seconds the process spent meanwhile (all
 * threads, user + system: includes libuv threadpool work; less sensitive than wall time to other
 * processes competing for the cores).
 */
export async function timeIt<T>(fn: () => T | Promise<T>): Promise<{ seconds: number; cpuSeconds: number; result: T }> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { seconds, cpuSeconds: (c.user + c.system) / 1e6, result };
}

/** Prints rows as an aligned text table; `right` holds the indexes of right-aligned (numeric) columns. */
export function printTable(headers: string[], rows: string[][], right: Set<number> = new Set()): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  console.log(fmt(headers));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(fmt(r));
}

/** A transient progress line on a terminal (overwritten by the next one; '' clears it); nothing when piped. */
export function progress(line: string): void {
  if (!process.stdout.isTTY) return;
  process.stdout.write(`\r${line.padEnd(process.stdout.columns ? Math.min(process.stdout.columns - 1, 80) : 80)}\r`);
}

/** 1234567.8 → "1,234,568". */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Formats with 3 significant digits (at least 0 decimals): 1234 → "1234", 12.345 → "12.3". */
export function fmt3(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  return a >= 100 ? n.toFixed(0) : a >= 10 ? n.toFixed(1) : n.toFixed(2);
}

// ---------------------------------------------------------------------------------------------
// Data generators: generated once into bench/.data/, reused while their parameters are unchanged.

/** mulberry32 (see src-main/app/prng.ts): uint32 seed → numbers in [0, 1). */
export const prng = mulberry32;

/** Printable filler characters: letters and digits (the first 62), then `+` and `/` (base64's alphabet). */
export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * A file written batch by batch with bounded memory: batches are gathered and written in chunks of
 * about `chunkBytes` (default 4 MiB).
 */
export class ChunkedFileWriter {
  /** Bytes written so far (including those still pending). */
  size = 0;
  private readonly fd: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    path: string,
    private readonly chunkBytes = 4 << 20,
  ) {
    this.fd = openSync(path, 'w');
  }

  write(buf: Buffer): void {
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    this.size += buf.length;
    if (this.pendingBytes >= this.chunkBytes) this.flush();
  }

  /** Writes what is pending and closes the file. */
  close(): void {
    this.flush();
    closeSync(this.fd);
  }

  private flush(): void {
    const buf = Buffer.concat(this.pending, this.pendingBytes);
    let done = 0;
    while (done < buf.length) done += writeSync(this.fd, buf, done, buf.length - done);
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * The meta file of generated data (`{ params, ... }` as JSON), when it exists, parses and was written
 * with exactly `params`; else null (generate again).
 */
export function cachedMeta<M extends { params: unknown }>(metaPath: string, params: M['params']): M | null {
  if (!existsSync(metaPath)) return null;
  try {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as M;
    return JSON.stringify(meta.params) === JSON.stringify(params) ? meta : null;
  } catch {
    return null;
  }
}
