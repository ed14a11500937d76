/**
 * A worker entry for `duckdb-worker-stop.test.ts` (through `duckdb-stop-child.ts`): tasks that keep
 * DuckDB busy in this thread, so that cancelling them ends a thread while DuckDB works in it.
 * - `query`: long queries one after the other on an in-memory database, until its signal aborts;
 * - `build`: the SQL table build of a log folder (`SqlSession.open`) and two queries on it, repeated.
 */
import { serveTasks } from '../../../src-main/api/core/worker-tasks.ts';
import { DuckDBInstance } from '../../../src-main/engine/sql/duckdb.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';

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
});
