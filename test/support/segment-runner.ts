/**
 * A {@link SegmentTaskRunner} for tests of the segment-split scans: it runs one segment task in this
 * thread, through a structured clone of its arguments and of its result as a worker thread would,
 * after a pseudo-random delay of 0–6 ms (seeded), so that segments finish out of order.
 */
import type { SegmentTaskKind, SegmentTaskRunner } from '../../src-main/engine/log/segment-tasks.ts';

/** A segment task as `segment-scan-tasks.ts` exports it. */
type SegmentTask<A> = (args: A, opts: { signal: AbortSignal; onBytes: (bytes: number) => void }) => Promise<unknown>;

/**
 * The runner for `kind`, calling `task`; `calls` counts the tasks run.
 * @throws Error when asked for another task kind
 */
export function inThisThread<A>(kind: SegmentTaskKind, task: SegmentTask<A>, threads: number, seed = 1): SegmentTaskRunner & { calls: number } {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) % 7);
  const runner = {
    threads,
    calls: 0,
    run: async <R,>(k: string, args: unknown, opts: { signal: AbortSignal; onBytes: (b: number) => void }): Promise<R> => {
      if (k !== kind) throw new Error(k);
      runner.calls++;
      await new Promise((r) => setTimeout(r, rand()));
      return structuredClone(await task(structuredClone(args) as A, { signal: opts.signal, onBytes: opts.onBytes })) as R;
    },
  };
  return runner;
}
