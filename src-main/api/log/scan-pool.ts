/**
 * The segment-scan pool: one thread per core on the `scan-worker` entry, on which a verify (and the
 * other scans split over segments, `engine/log/segment-tasks.ts`) reads a partition's segments in
 * parallel. Started on first use in the thread that runs the scan (a log worker thread of the app,
 * the CLI's main thread); idle threads do not keep the process alive.
 */
import { availableParallelism } from 'node:os';
import { PARALLEL_MIN_BYTES, type SegmentTaskRunner } from '../../engine/log/segment-tasks.ts';
import { WorkerPool } from '../core/worker-pool.ts';

let pool: WorkerPool | null = null;
let runner: SegmentTaskRunner | null = null;

/** Threads of the segment-scan pool: the machine's cores (at most 8). */
export function scanThreads(cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(8, cores));
}

/** The segment-task runner on this thread's scan pool (see the module comment). */
export function scanRunner(): SegmentTaskRunner {
  if (runner) return runner;
  const threads = scanThreads();
  const p = (pool ??= new WorkerPool({ entry: 'scan-worker', near: import.meta.url, size: threads }));
  runner = {
    threads,
    run: <R>(kind: Parameters<SegmentTaskRunner['run']>[0], args: unknown, opts: { signal: AbortSignal; onBytes: (bytes: number) => void }) =>
      p.run<R>(kind, args, { signal: opts.signal, onProgress: (pr) => opts.onBytes(pr.bytes), label: `${kind} task` }),
  };
  return runner;
}

/**
 * Bytes of `.log` from which a partition's scan is split over segments: `KLX_SCAN_SPLIT_MIN_BYTES`
 * when set to a number (the tests split small partitions with 0), else the engine's default
 * (`PARALLEL_MIN_BYTES`, 64 MiB).
 */
export function scanSplitMinBytes(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.KLX_SCAN_SPLIT_MIN_BYTES;
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? n : PARALLEL_MIN_BYTES;
}

/** Ends the scan pool's threads (the CLI, before it exits). */
export async function closeScanPool(): Promise<void> {
  const p = pool;
  pool = null;
  runner = null;
  await p?.shutdown();
}
