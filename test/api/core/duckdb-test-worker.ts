/**
 * A worker entry for `duckdb-worker-stop.test.ts` (through `duckdb-stop-child.ts`): tasks that keep
 * DuckDB busy in this thread, so that cancelling them ends a thread while DuckDB works in it.
 * - `query`: long queries one after the other on an in-memory database, until its signal aborts;
 * - `build`: the SQL table build of a log folder (`SqlSession.open`) and two queries on it, repeated;
 * - `udf`: a streamed query whose every chunk calls `spin`, a scalar function in JavaScript (as the
 *   record functions `klx_value`... are) that spins `spinMs` (60) on this thread, read one chunk at
 *   a time with `pauseMs` (60) between chunks: DuckDB's threads keep computing the result in the
 *   pauses, so that `spin` runs on this thread while no DuckDB call of ours is in flight.
 */
import { serveTasks } from '../../../src-main/api/core/worker-tasks.ts';
import { createRequire } from 'node:module';
import { BIGINT, DuckDBInstance } from '../../../src-main/engine/sql/duckdb.ts';
import { callsInFlight } from '../../../src-main/engine/sql/duckdb-gate.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';

/** DuckDB's native binding as `duckdb.ts` counts it (loaded through it, as `record-functions.ts` does). */
const bindings = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'))('@duckdb/node-bindings') as typeof import('@duckdb/node-bindings');

serveTasks({
  query: async (_args: unknown, run) => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    run.progress({ phase: 'querying', done: 0, total: 1, bytes: 0 });
    try {
      // Each query runs ~0.5 s on one core; the cancel comes in the middle of one.
      for (;;) await connection.run('SELECT count(*) FROM range(100000000) t(i) WHERE i % 7 = 3');
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  },
  build: async (args: { dir: string }, run) => {
    run.progress({ phase: 'building', done: 0, total: 1, bytes: 0 });
    for (;;) {
      // No signal: the build must not stop by itself before its thread is ended.
      const s = await SqlSession.open(args.dir);
      try {
        await s.query('SELECT count(*), sum(length(value)) FROM records');
        await s.query('SELECT key, count(*) FROM records GROUP BY key ORDER BY 2 DESC LIMIT 5');
      } finally {
        s.close();
      }
    }
  },
  udf: async (_args: unknown, run) => {
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    const connection = await instance.connect();
    try {
      // A small result buffer (4 chunks): each fetch frees room that DuckDB's threads fill again after it.
      await connection.run("SET streaming_buffer_size = '64KB'");
      await connection.run('CREATE TABLE t AS SELECT range AS i FROM range(200000)');
      const fn = bindings.create_scalar_function();
      bindings.scalar_function_set_name(fn, 'spin');
      bindings.scalar_function_add_parameter(fn, BIGINT.toLogicalType().logical_type);
      bindings.scalar_function_set_return_type(fn, BIGINT.toLogicalType().logical_type);
      // Runs on this thread, called by DuckDB's threads (the output is left as DuckDB gave it: only the call matters).
      bindings.scalar_function_set_function(fn, () => {
        const outside = callsInFlight() === 0;
        if (outside) run.progress({ phase: 'spin outside our calls', done: 0, total: 1, bytes: 0 });
        const until = performance.now() + (outside ? 500 : 100);
        while (performance.now() < until);
      });
      bindings.register_scalar_function((connection as unknown as { connection: import('@duckdb/node-bindings').Connection }).connection, fn);
      bindings.destroy_scalar_function_sync(fn);
      const result = await connection.stream('SELECT spin(i) FROM t');
      // One chunk at a time with a pause, as a reader of pages does. No signal: the cancel's
      // interrupt makes the next fetch fail.
      for (let fetched = 0; (await result.fetchChunk())?.rowCount; fetched++) {
        if (fetched === 4) run.progress({ phase: 'streaming', done: 0, total: 1, bytes: 0 }); // no spin came outside our calls so far
        await new Promise((r) => setTimeout(r, 60));
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  },
});
