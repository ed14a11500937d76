/**
 * Running one scan (verify, counts, holes, search) over a partition's segments on several threads at once
 * (issue 16): the segments of a partition are independent files, so each is read by a task on a
 * worker thread and the results are merged on the calling thread in segment order, where what
 * crosses segment boundaries (offset continuity, transactions open at a roll, holes between
 * segments, the log end) is settled from each segment's summary.
 *
 * The engine does not start threads itself: the caller passes a {@link SegmentTaskRunner} (the API's
 * `WorkerPool` on the `scan-worker` entry, `api/log/scan-pool.ts`), as the SQL build gets its
 * `startWorker`. Without one, or when splitting does not pay ({@link splitPays}), the scans run in
 * one thread as before.
 */
import { KlxError } from '../errors.ts';
import type { PartitionLog } from './partition-log.ts';

/** Runs a segment task (a function of `segment-scan-tasks.ts`) on a worker thread. */
export interface SegmentTaskRunner {
  /** Threads the runner works on at once (tasks in flight at most). */
  readonly threads: number;
  /**
   * Runs the task `kind` with `args` (structured-cloned).
   * @param opts.onBytes bytes of `.log` the task has read so far.
   * @throws KlxError as the task threw it; `cancelled` when `opts.signal` aborts.
   */
  run<R>(kind: SegmentTaskKind, args: unknown, opts: { signal: AbortSignal; onBytes: (bytes: number) => void }): Promise<R>;
}

/** The segment tasks (`segment-scan-tasks.ts`). */
export type SegmentTaskKind = 'verifySegment' | 'countSegment' | 'holesSegment' | 'searchSegment';

/** Below this many bytes of `.log` a partition is scanned in one thread (a thread's start and the merge cost more than they save). */
export const PARALLEL_MIN_BYTES = 64 * 1024 * 1024;

/** Options of a scan that may run over segments in parallel. */
export interface ParallelScanOptions {
  /** Runs the segment tasks; without it the scan runs in one thread. */
  runner?: SegmentTaskRunner | null;
  /** Split only from this many bytes of `.log` (default {@link PARALLEL_MIN_BYTES}). */
  minBytes?: number;
}

/** Whether splitting `log`'s scan over segments pays: a runner of ≥ 2 threads, ≥ 2 segments and at least `minBytes` of `.log`. */
export function splitPays(log: PartitionLog, opts: ParallelScanOptions): boolean {
  if (!opts.runner || opts.runner.threads < 2 || log.segments.length < 2) return false;
  return log.logSize >= (opts.minBytes ?? PARALLEL_MIN_BYTES);
}

/**
 * Runs `count` tasks (`start(i, …)`), at most `threads` at once and never more than `threads` ahead
 * of the one the caller is reading, and yields their results in task order (so memory holds at most
 * `threads` finished results). `onProgress` gets the bytes read by every task so far.
 * Leaving the loop early (a `break`, an error) cancels the tasks still running.
 * @throws the first error in task order; KlxError `cancelled` when `signal` aborts.
 */
export async function* inSegmentOrder<R>(
  count: number,
  start: (i: number, signal: AbortSignal, onBytes: (bytes: number) => void) => Promise<R>,
  opts: { threads: number; signal?: AbortSignal; onProgress?: (bytesDone: number) => void },
): AsyncGenerator<R> {
  const controller = new AbortController();
  const stop = () => controller.abort(opts.signal?.reason);
  if (opts.signal?.aborted) throw new KlxError('cancelled', 'cancelled by the user');
  opts.signal?.addEventListener('abort', stop, { once: true });
  const bytes = new Array<number>(count).fill(0);
  let total = 0;
  const results = new Map<number, Promise<{ ok: true; value: R } | { ok: false; error: unknown }>>();
  let next = 0;
  const launch = (upTo: number) => {
    for (; next < count && next < upTo; next++) {
      const i = next;
      const onBytes = (b: number) => {
        total += b - bytes[i]!;
        bytes[i] = b;
        opts.onProgress?.(total);
      };
      results.set(
        i,
        start(i, controller.signal, onBytes).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
      );
    }
  };
  try {
    for (let i = 0; i < count; i++) {
      launch(i + Math.max(1, opts.threads));
      const r = await results.get(i)!;
      results.delete(i);
      if (opts.signal?.aborted) throw new KlxError('cancelled', 'cancelled by the user');
      if (!r.ok) throw r.error;
      yield r.value;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    controller.abort();
  }
}
