/**
 * The native-abort reproduction (issue 17, hardening item 1), run as a child process by
 * `duckdb-worker-stop.test.ts`: a worker pool whose threads keep DuckDB busy (`duckdb-test-worker.ts`:
 * long queries, the SQL table build) has its tasks cancelled `rounds` times at varied moments, with
 * a cancel grace shorter than DuckDB takes to stop, so that the pool ends threads while DuckDB works
 * in them. Ending a thread with a DuckDB call in flight aborted the whole process ("terminate called
 * after throwing an instance of 'Napi::Error'", exit status 134); this process must end with 0.
 *
 * usage: node --import tsx test/api/core/duckdb-stop-child.ts ROUNDS [TASK,TASK...] (default query,build)
 * Prints one JSON line: rounds, the slowest cancel answer (ms), the pool's terminations and how many
 * of them had to wait for DuckDB calls in flight (the dangerous moments this reproduces).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { WorkerPool } from '../../../src-main/api/core/worker-pool.ts';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { deferredStops } from '../../../src-main/engine/sql/duckdb-gate.ts';
import { buildPartition, rec, tempDir } from '../../support/log-builder.ts';

const rounds = Number(process.argv[2] ?? 12);
/** The tasks of `duckdb-test-worker.ts` the rounds run, in turn. */
const tasks = (process.argv[3] ?? 'query,build').split(',');
const logs = tempDir('klx-duckdb-stop-');
// 40 batches of 500 records: the build takes a few hundred ms, long enough to be cut anywhere.
buildPartition(join(logs, 'd'), {
  topic: 'orders',
  segments: [{ batches: Array.from({ length: 40 }, (_, b) => ({ records: Array.from({ length: 500 }, (_, i) => rec(`k${(b * 500 + i) % 997}`, `value ${b}-${i} ${'x'.repeat(40)}`, 1_700_000_000_000 + b)) })) }],
});
const pool = new WorkerPool({ entry: 'duckdb-test-worker', near: import.meta.url, size: 2, cancelGraceMs: 1 });
let slowest = 0;
try {
  for (let i = 0; i < rounds; i++) {
    const ac = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const task = pool.run(tasks[i % tasks.length]!, { dir: join(logs, 'd') }, { signal: ac.signal, onProgress: () => started() });
    task.catch(() => undefined);
    await Promise.race([running, task]);
    await new Promise((r) => setTimeout(r, 15 + ((i * 37) % 120)));
    const t0 = performance.now();
    ac.abort();
    try {
      await task;
      throw new Error(`round ${i}: the task ended without being cancelled`);
    } catch (err) {
      if (!(err instanceof KlxError) || err.code !== 'cancelled') throw err;
    }
    slowest = Math.max(slowest, performance.now() - t0);
  }
  await pool.shutdown();
  console.log(JSON.stringify({ rounds, slowestCancelMs: Math.round(slowest), terminated: pool.stats().terminated, waitedForDuckDb: deferredStops() }));
} finally {
  rmSync(logs, { recursive: true, force: true });
}
