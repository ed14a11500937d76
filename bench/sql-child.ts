/**
 * One measured step of the SQL bench (`sql.bench.ts`), run in a fresh process so that its peak RSS
 * (`process.resourceUsage().maxRSS`) is the step's own:
 *
 * - `ours LOGDIR CACHEDIR [THREADS]`: build the tables of LOGDIR (cold: the cache folder is emptied
 *   first; THREADS threads, default the cores: the building one and THREADS − 1 decoding; 1: all in the building thread) and
 *   answer `SELECT count(*) FROM state`; then one query that reads values back from the log
 *   (`sum(octet_length(value)) FROM state`).
 * - `parquet FILE DBFILE` / `ndjson FILE DBFILE`: DuckDB loads the same records from FILE into a
 *   table of a fresh database file (`CREATE TABLE ... AS SELECT * FROM read_parquet/read_json`),
 *   checkpointed, with the same DuckDB resource settings as ours.
 * - `floor FILE DBFILE RECORDS`: the limit of storing our record rows through DuckDB's appender: the first
 *   1,000,000 rows of FILE (our `record_rows` as Parquet) read into data chunks before the clock
 *   starts, then appended through DuckDB's appender (in turn, until RECORDS rows) into a table of a
 *   fresh database file, checkpointed: no log read, no decoding, no JS per row.
 *
 * Prints one JSON line: seconds (wall), cpuSeconds (all threads), maxRssBytes, and the step's figures.
 */
import { rmSync, statSync } from 'node:fs';
import { DuckDBInstance, type DuckDBDataChunk } from '@duckdb/node-api';
import { SqlSession } from '../src-main/engine/sql/sql-session.ts';
import { SQL_BUILD_WORKER } from '../src-main/engine/sql/sql-build-pool.ts';
import { startEntryWorker } from '../src-main/api/core/entry-worker.ts';
import { duckdbResourceOptions } from '../src-main/engine/sql/sql-resources.ts';

async function timed<T>(fn: () => Promise<T>): Promise<{ seconds: number; cpuSeconds: number; result: T }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpuSeconds: (c.user + c.system) / 1e6, result };
}

/** Rows of the floor step's chunks held in memory (appended again in turn until the step's row count). */
const FLOOR_ROWS = 1_000_000;

const [mode, a, b, t] = process.argv.slice(2);
const threads = t === undefined ? undefined : Number(t);
if (mode === 'ours') {
  rmSync(b!, { recursive: true, force: true });
  let session: SqlSession | undefined;
  const build = await timed(async () => {
    session = await SqlSession.open(a!, { cacheDir: b!, ...(threads ? { threads } : {}), startWorker: () => startEntryWorker(SQL_BUILD_WORKER.entry, SQL_BUILD_WORKER.near) });
    return (await session.query('SELECT count(*) FROM state')).rows[0]![0];
  });
  const s = session!;
  const values = await timed(() => s.query('SELECT sum(octet_length("value")) FROM state'));
  const out = {
    seconds: build.seconds,
    cpuSeconds: build.cpuSeconds,
    state: String(build.result),
    records: s.buildSummary?.records ?? 0,
    cacheBytes: statSync(s.dbPath).size,
    valueQuerySeconds: values.seconds,
    valueQueryBatches: values.result.readFromLog.batches,
    valueQueryBytes: values.result.readFromLog.bytes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  s.close();
  console.log(JSON.stringify(out));
} else if (mode === 'parquet' || mode === 'ndjson') {
  rmSync(b!, { force: true });
  const reader = mode === 'parquet' ? `read_parquet('${a}')` : `read_json('${a}', format = 'newline_delimited')`;
  const t = await timed(async () => {
    const instance = await DuckDBInstance.create(b!, duckdbResourceOptions());
    const conn = await instance.connect();
    await conn.run(`CREATE TABLE record_rows AS SELECT * FROM ${reader}`);
    await conn.run('CHECKPOINT');
    const n = (await conn.runAndReadAll('SELECT count(*) FROM record_rows')).getRowsJS()[0]![0];
    conn.closeSync();
    instance.closeSync();
    return n;
  });
  console.log(JSON.stringify({ seconds: t.seconds, cpuSeconds: t.cpuSeconds, records: String(t.result), dbBytes: statSync(b!).size, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
  rmSync(b!, { force: true });
} else if (mode === 'floor') {
  // DuckDB's own limit for storing our record rows: data chunks already in memory (the first
  // FLOOR_ROWS rows of FILE, our record_rows as Parquet, read before the clock starts) appended
  // through DuckDB's appender into a fresh database file until it holds RECORDS rows, checkpointed.
  // No decoding and no JS per row: what any build that appends these columns through DuckDB's appender pays.
  const records = Number(t);
  rmSync(b!, { force: true });
  const source = await DuckDBInstance.create(':memory:');
  const sconn = await source.connect();
  const result = await sconn.run(`SELECT * FROM read_parquet('${a}') LIMIT ${Math.min(records, FLOOR_ROWS)}`);
  const chunks: DuckDBDataChunk[] = [];
  for (;;) {
    const c = await result.fetchChunk();
    if (!c || c.rowCount === 0) break;
    chunks.push(c);
  }
  const columns = result.columnNames().map((n, i) => `"${n}" ${result.columnType(i).toString()}`);
  const f = await timed(async () => {
    const instance = await DuckDBInstance.create(b!, duckdbResourceOptions());
    const conn = await instance.connect();
    await conn.run(`CREATE TABLE record_rows (${columns.join(', ')})`);
    const appender = await conn.createAppender('record_rows');
    let rows = 0;
    for (let i = 0; rows < records; i = (i + 1) % chunks.length) {
      const c = chunks[i]!;
      if (rows + c.rowCount > records) c.rowCount = records - rows;
      appender.appendDataChunk(c);
      rows += c.rowCount;
    }
    appender.closeSync();
    await conn.run('CHECKPOINT');
    const n = (await conn.runAndReadAll('SELECT count(*) FROM record_rows')).getRowsJS()[0]![0];
    conn.closeSync();
    instance.closeSync();
    return n;
  });
  sconn.closeSync();
  source.closeSync();
  console.log(JSON.stringify({ seconds: f.seconds, cpuSeconds: f.cpuSeconds, records: String(f.result), dbBytes: statSync(b!).size, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
  rmSync(b!, { force: true });
} else {
  console.error('usage: sql-child.ts ours LOGDIR CACHEDIR [THREADS] | parquet FILE DB | ndjson FILE DB | floor FILE DB RECORDS');
  process.exit(2);
}
