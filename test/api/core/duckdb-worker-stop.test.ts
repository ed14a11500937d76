/**
 * The native abort (issue 17, hardening item 1): a long fuzz run ended with "terminate called after
 * throwing an instance of 'Napi::Error'" right after a watchdog ended a worker thread running the
 * DuckDB SQL build. `duckdb-stop-child.ts` cancels DuckDB-busy pool tasks (long queries, the SQL
 * build) at varied moments with a cancel grace shorter than DuckDB takes to stop; before the gate
 * (`engine/sql/duckdb-gate.ts`) that child process aborted in its first rounds (exit status 134).
 * It must exit 0, every cancel must still answer within 100 ms, and some of its stops must have
 * found DuckDB calls in flight (else it tested nothing).
 *
 * The second case cancels a streamed query whose chunks call a scalar function written in
 * JavaScript (`udf` in `duckdb-test-worker.ts`) at the moment that function runs on the thread
 * while no DuckDB call of ours is in flight: DuckDB's own threads called it while filling the
 * result's buffer between two fetches. Before open connections counted in the gate, ending the
 * thread then aborted the process in the first round on every run (4 of 4: "FATAL ERROR:
 * Error::Error napi_define_properties", exit status 134).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('ending worker threads that use DuckDB', () => {
  it('cancelling DuckDB-busy tasks ends their threads without aborting the process; cancel answers within 100 ms', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test/api/core/duckdb-stop-child.ts'), '4'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).not.toMatch(/terminate called|Napi::Error/);
    expect({ status: r.status, signal: r.signal }, `the child's output: ${r.stdout.slice(-1000)} ${r.stderr.slice(-3000)}`).toEqual({ status: 0, signal: null });
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { rounds: number; slowestCancelMs: number; terminated: number; waitedForDuckDb: number };
    expect(summary.rounds).toBe(4);
    expect(summary.terminated).toBe(4);
    expect(summary.waitedForDuckDb).toBeGreaterThan(0);
    expect(summary.slowestCancelMs).toBeLessThan(100);
  }, 130_000);

  it('cancelling a streamed query while its JavaScript scalar function runs between two fetches does not abort the process', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test/api/core/duckdb-stop-child.ts'), '3', 'udf'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).not.toMatch(/terminate called|Napi::Error|FATAL ERROR/);
    expect({ status: r.status, signal: r.signal }, `the child's output: ${r.stdout.slice(-1000)} ${r.stderr.slice(-3000)}`).toEqual({ status: 0, signal: null });
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { rounds: number; slowestCancelMs: number; terminated: number; waitedForDuckDb: number };
    expect(summary.rounds).toBe(3);
    expect(summary.terminated).toBe(3);
    // Every stop found the thread's connection open (or a call in flight) and waited.
    expect(summary.waitedForDuckDb).toBe(3);
    expect(summary.slowestCancelMs).toBeLessThan(100);
  }, 130_000);
});
