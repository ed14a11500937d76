/**
 * The SQL API (`sql.*`) through `dispatch`, on logs built with the test log builder and on the
 * real broker-written data: the six-record compacted-topic example (state and latest),
 * a retained log (logStartOffset), the table list with row counts and quoted reserved names,
 * refusals and DuckDB errors with line/position, limit and `truncated`, cancelling a query and a
 * table build, rebuilding after the files change (with and without a `log.changed` event), the
 * cache across contexts, the CSV/NDJSON export byte for byte, and HTTP/dispatch parity of a
 * successful query. On real data: `state` and `latest` of the compacted __consumer_offsets
 * partitions through the API equal the engine's own latest-per-key read.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobProgressEvent, MethodName, Res } from '../../../src-shared/contract.ts';
import type { SqlCell, SqlOpenResult, SqlQueryResult, SqlExportResult } from '../../../src-shared/sql-types.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { configureSql } from '../../../src-main/api/sql/sql.ts';
import { startBridge } from '../../../src-main/bridge/server.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { createHash } from 'node:crypto';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { engineLatest } from '../../support/latest-state.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { post } from '../helpers.ts';

const CALL = { readOnly: true };
let server: ServerApi;
let root: string;
let cacheDir: string;

async function call<M extends MethodName>(method: M, req: unknown): Promise<Res<M>> {
  const env = await server.dispatch(method, req, CALL);
  if (!env.ok) throw Object.assign(new Error(env.error.message), { info: env.error });
  return env.result as Res<M>;
}

/** Starts a job; resolves with its end event and the progress events seen. `cancel` cancels it after `cancelAfterMs` (0: at once). */
async function runJob(method: MethodName, req: unknown, opts: { cancelAfterMs?: number; on?: ServerApi } = {}): Promise<{ end: JobEndEvent; progress: JobProgressEvent[] }> {
  const srv = opts.on ?? server;
  const progress: JobProgressEvent[] = [];
  let jobId = '';
  const off = srv.ctx.events.subscribe((e) => {
    if (e.type === 'job.progress' && e.jobId === jobId) progress.push(e);
  });
  const env = await srv.dispatch(method, req, CALL);
  if (!env.ok) {
    off();
    return { end: { type: 'job.end', jobId: '', method, ok: false, error: env.error } as JobEndEvent, progress };
  }
  jobId = (env.result as { jobId: string }).jobId;
  if (opts.cancelAfterMs !== undefined) setTimeout(() => srv.ctx.jobs.cancel(jobId), opts.cancelAfterMs);
  const end = await srv.ctx.jobs.wait(jobId);
  off();
  return { end, progress };
}

async function result<T>(method: MethodName, req: unknown, on?: ServerApi): Promise<T> {
  const { end } = await runJob(method, req, { on });
  if (!end.ok) throw Object.assign(new Error(`${method}: ${end.error.code}: ${end.error.message}`), { info: end.error });
  return end.result as T;
}

async function jobError(method: MethodName, req: unknown): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  const { end } = await runJob(method, req);
  if (end.ok) throw new Error(`${method} succeeded`);
  return end.error;
}

const query = (path: string, sql: string, limit?: number) => result<SqlQueryResult>('sql.query', { path, sql, ...(limit ? { limit } : {}) });

/** Result rows as objects keyed by column name. */
function objects(r: SqlQueryResult): Record<string, SqlCell>[] {
  return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i]!])));
}

const blob = (text: string): SqlCell => ({ t: 'blob', b64: Buffer.from(text).toString('base64'), size: Buffer.byteLength(text) });

/** The example: keys 17, 28, 17, 28, 17, 39; values alpha, one, beta, (tombstone), gamma, two; offsets 0–5. */
const SIX = singles(rec('17', 'alpha', 1000), rec('28', 'one', 2000), rec('17', 'beta', 3000), rec('28', null, 4000), rec('17', 'gamma', 5000), rec('39', 'two', 6000));

/** A fresh log directory in the test root, opened in the session. */
async function logDir(name: string): Promise<string> {
  const d = join(root, name);
  await call('session.open', { path: root });
  return d;
}

/** Fetches an export in chunks of `chunk` bytes and returns its text. */
async function exportText(id: string, chunk: number): Promise<{ text: string; calls: number }> {
  const parts: Buffer[] = [];
  let start = 0;
  let calls = 0;
  for (;;) {
    const r = await call('sql.exportRead', { exportId: id, start, maxBytes: chunk });
    calls++;
    const b = Buffer.from(r.base64, 'base64');
    parts.push(b);
    start += b.length;
    if (r.eof) {
      expect(start).toBe(r.total);
      break;
    }
  }
  return { text: Buffer.concat(parts).toString('utf8'), calls };
}

beforeAll(() => {
  root = tempDir('klx-sql-api-');
  cacheDir = join(root, '.cache');
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  configureSql(server.ctx, { cacheDir });
  buildPartition(join(root, 'six'), { topic: 'prices', segments: [{ batches: SIX }] });
});

/** Files in the export folder. */
const exportFiles = (): string[] => {
  try {
    return readdirSync(join(cacheDir, 'exports'));
  } catch {
    return [];
  }
};

afterAll(async () => {
  await server.ctx.jobs.shutdown();
  rmSync(root, { recursive: true, force: true });
});

describe('sql.open', () => {
  it('builds the tables of a log directory and lists them with columns, types and row counts', async () => {
    const d = await logDir('six');
    const r = await result<SqlOpenResult>('sql.open', { path: d });
    expect(r.root).toBe(d);
    expect(r.fromCache).toBe(false);
    expect(r.build).toMatchObject({ partitions: 1, segments: 1, batches: 6, records: 6, damage: 0, holes: 0, abortedTransactions: 0 });
    expect(r.tables.map((t) => [t.name, t.kind, t.rows])).toEqual([
      ['records', 'view', 6],
      ['latest', 'view', 3],
      ['state', 'view', 2],
      ['segments', 'table', 1],
      ['batches', 'view', 6],
      ['holes', 'table', 0],
      ['partitions', 'table', 1],
      ['damage', 'table', 0],
      ['aborted_transactions', 'table', 0],
      ['transactions', 'view', 0],
      ['cluster_metadata', 'view', 0],
      ['group_offsets', 'view', 0],
      ['group_metadata', 'table', 0],
      ['group_members', 'table', 0],
      ['consumer_offsets', 'table', 0],
      ['schemas', 'table', 0],
    ]);
    const records = r.tables[0]!;
    expect(records.columns.slice(0, 6)).toEqual([
      { name: 'topic', type: 'VARCHAR', sqlName: 'topic' },
      { name: 'partition', type: 'INTEGER', sqlName: 'partition' },
      // offset is a reserved word: completion inserts it quoted.
      { name: 'offset', type: 'BIGINT', sqlName: '"offset"' },
      { name: 'timestamp', type: 'BIGINT', sqlName: 'timestamp' },
      { name: 'key', type: 'BLOB', sqlName: 'key' },
      { name: 'key_text', type: 'VARCHAR', sqlName: 'key_text' },
    ]);
    expect(records.columns.find((c) => c.name === 'headers')?.type).toBe('STRUCT("key" VARCHAR, "value" BLOB)[]');
    expect(records.doc).toMatch(/One row per record/);
    expect(r.reservedWords).toEqual(expect.arrayContaining(['offset', 'select', 'order']));
    expect(r.notices).toEqual([]); // no pending swap, no record past damage
    // The table set is in the cache folder, named <key>-<state>.duckdb; nothing was written next to the logs.
    expect(readdirSync(cacheDir).filter((n) => n.endsWith('.duckdb'))).toHaveLength(1);
    expect(readdirSync(d).sort()).toEqual(['prices-0']);
  });

  it('reports progress while building, and a second context reuses the cached tables', async () => {
    const d = await logDir('cached');
    buildPartition(d, { topic: 'c', segments: [{ batches: singles(...Array.from({ length: 300 }, (_, i) => rec(`k${i % 40}`, `v${i}`, 1000 + i))) }] });
    const first = await runJob('sql.open', { path: d });
    expect(first.end).toMatchObject({ ok: true, result: { fromCache: false, build: { records: 300 } } });
    expect(first.progress[0]).toMatchObject({ phase: 'checking the SQL tables' });
    const built = first.progress.filter((p) => p.phase === 'build SQL tables');
    expect(built.length).toBeGreaterThan(0);
    expect(built.at(-1)!.done).toBe(built.at(-1)!.total);

    const other = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    configureSql(other.ctx, { cacheDir });
    await other.dispatch('session.open', { path: d }, CALL);
    const again = await result<SqlOpenResult>('sql.open', { path: d }, other);
    expect(again).toMatchObject({ fromCache: true, build: null });
    expect(again.tables.find((t) => t.name === 'latest')!.rows).toBe(40);
    await other.ctx.jobs.shutdown();
  });

  it('refuses folders outside the opened ones and what is not a Kafka log', async () => {
    expect(await jobError('sql.open', { path: '/etc' })).toMatchObject({ code: 'invalid-argument' });
    const d = await logDir('not-a-log');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(d, 'notes'), { recursive: true });
    expect(await jobError('sql.open', { path: join(d, 'notes') })).toMatchObject({ code: 'not-a-log-dir' });
  });
});

describe('sql.query', () => {
  it("the issue's example: state holds 17 = gamma @4 and 39 = two @5; latest also 28 as a tombstone @3", async () => {
    const d = await logDir('six');
    const state = await query(d, 'SELECT * FROM state ORDER BY key');
    expect(state.columns.slice(0, 8)).toEqual([
      { name: 'topic', type: 'VARCHAR' },
      { name: 'partition', type: 'INTEGER' },
      { name: 'offset', type: 'BIGINT' },
      { name: 'timestamp', type: 'BIGINT' },
      { name: 'key', type: 'BLOB' },
      { name: 'key_text', type: 'VARCHAR' },
      { name: 'value', type: 'BLOB' },
      { name: 'value_text', type: 'VARCHAR' },
    ]);
    expect(state).toMatchObject({ rowCount: 2, truncated: false, limit: 1000, statementType: 'SELECT' });
    expect(objects(state).map((r) => [r.key, r.key_text, r.value, r.value_text, r.offset, r.timestamp, r.is_tombstone])).toEqual([
      [blob('17'), '17', blob('gamma'), 'gamma', 4, 5000, false],
      [blob('39'), '39', blob('two'), 'two', 5, 6000, false],
    ]);
    const latest = await query(d, 'SELECT key_text, value_text, value, "offset", is_tombstone FROM latest ORDER BY "offset"');
    expect(latest.rows).toEqual([
      ['28', null, null, 3, true],
      ['17', 'gamma', blob('gamma'), 4, false],
      ['39', 'two', blob('two'), 5, false],
    ]);
    expect((await query(d, 'SELECT count(*) AS n, min("offset") AS lo, max("offset") AS hi FROM records')).rows).toEqual([[6, 0, 5]]);
  });

  it('a log retained to offsets 8–10 gives min 8 / max 10 / logStartOffset 8', async () => {
    const d = await logDir('retained');
    buildPartition(d, { topic: 'r', segments: [{ baseOffset: 8n, batches: [{ baseOffset: 8n, records: [rec('a', 'x')] }, ...singles(rec('b', 'y'), rec('c', 'z'))] }] }, { logStartOffset: 8n });
    const r = await query(d, 'SELECT (SELECT min("offset") FROM records) AS lo, (SELECT max("offset") FROM records) AS hi, log_start_offset, log_end_offset FROM partitions');
    expect(objects(r)).toEqual([{ lo: 8, hi: 10, log_start_offset: 8, log_end_offset: 11 }]);
  });

  it('sends cells JSON-safe: BIGINT beyond 2^53 as text, TIMESTAMP as ISO-8601, BLOB tagged with a prefix and its size, long text cut, nested values as text', async () => {
    const d = await logDir('six');
    const r = await query(d, `SELECT 9007199254740993::BIGINT AS big, -9007199254740991::BIGINT AS small, epoch_ms(1717000000123) AS ts, 1.5::DOUBLE AS dbl, 'inf'::DOUBLE AS inf, repeat('ab', 2000) AS long, repeat('x', 600)::BLOB AS bytes, [1, 2] AS list, {'a': 'b'} AS st, NULL AS nothing, true AS yes`);
    const [row] = objects(r);
    expect(row!.big).toBe('9007199254740993');
    expect(row!.small).toBe(-9007199254740991);
    expect(row!.ts).toBe('2024-05-29T16:26:40.123Z');
    expect(row!.dbl).toBe(1.5);
    expect(row!.inf).toBe('Infinity');
    expect(row!.long).toEqual({ t: 'text', text: 'ab'.repeat(1024), length: 4000 });
    expect(row!.bytes).toEqual({ t: 'blob', b64: Buffer.from('x'.repeat(512)).toString('base64'), size: 600 });
    expect(row!.list).toEqual({ t: 'nested', text: '[1, 2]', length: 6 });
    expect(row!.st).toEqual({ t: 'nested', text: "{a: 'b'}", length: 8 });
    expect(row!.nothing).toBeNull();
    expect(row!.yes).toBe(true);
    expect(r.columns.map((c) => c.type)).toEqual(['BIGINT', 'BIGINT', 'TIMESTAMP', 'DOUBLE', 'DOUBLE', 'VARCHAR', 'BLOB', 'INTEGER[]', 'STRUCT("a" VARCHAR)', 'INTEGER', 'BOOLEAN']);
  });

  it('stops at the limit and says so', async () => {
    const d = await logDir('six');
    const two = await query(d, 'SELECT "offset" FROM records ORDER BY 1', 2);
    expect(two).toMatchObject({ rows: [[0], [1]], rowCount: 2, truncated: true, limit: 2 });
    const all = await query(d, 'SELECT "offset" FROM records ORDER BY 1', 6);
    expect(all).toMatchObject({ rowCount: 6, truncated: false });
    expect(await jobError('sql.query', { path: d, sql: 'SELECT 1', limit: 100_001 })).toMatchObject({ code: 'invalid-argument' });
  });

  it('refuses statements that would change the tables, with a clear message', async () => {
    const d = await logDir('six');
    const e = await jobError('sql.query', { path: d, sql: 'DELETE FROM records' });
    expect(e.code).toBe('read-only');
    expect(e.message).toBe('DELETE statements are refused: the SQL tables of a log are read-only (run one SELECT, WITH, EXPLAIN, DESCRIBE, SHOW, SUMMARIZE or PRAGMA table_info statement)');
    expect((await jobError('sql.query', { path: d, sql: 'CREATE TABLE x AS SELECT 1' })).code).toBe('read-only');
    expect((await jobError('sql.query', { path: d, sql: "COPY records TO '/tmp/x.csv'" })).code).toBe('read-only');
    expect(await jobError('sql.query', { path: d, sql: 'SELECT 1; SELECT 2' })).toMatchObject({ code: 'invalid-argument', message: 'the query holds 2 statements; run one statement at a time' });
  });

  it("keeps DuckDB's message and gives the line and character position of a syntax error", async () => {
    const d = await logDir('six');
    const parser = await jobError('sql.query', { path: d, sql: 'SELECT offset FROM records' });
    expect(parser.code).toBe('invalid-argument');
    expect(parser.message).toBe('Parser Error: syntax error at or near "FROM"\n\nLINE 1: SELECT offset FROM records\n                      ^\nhint: offset is an SQL keyword; write the column as "offset" (in double quotes)');
    expect(parser.details).toEqual({ errorType: 'Parser', line: 1, position: 14 });
    const catalog = await jobError('sql.query', { path: d, sql: 'SELECT *\nFROM recordz' });
    expect(catalog.message).toMatch(/^Catalog Error: Table with name recordz does not exist!\nDid you mean "records"\?/);
    expect(catalog.details).toEqual({ errorType: 'Catalog', line: 2, position: 14 });
  });

  it('cancels a running query (DuckDB is interrupted) and keeps the session usable', async () => {
    const d = await logDir('six');
    await query(d, 'SELECT 1'); // tables ready
    const started = Date.now();
    const { end } = await runJob('sql.query', { path: d, sql: 'SELECT count(*) FROM range(100000000000) a' }, { cancelAfterMs: 150 });
    expect(end).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await query(d, 'SELECT count(*) FROM records')).rows).toEqual([[6]]);
  });

  it('cancels a table build; the next open builds again', async () => {
    const d = await logDir('cancel-build');
    buildPartition(d, { topic: 'big', segments: [{ batches: [{ records: Array.from({ length: 20_000 }, (_, i) => rec(`k${i}`, 'v'.repeat(200))) }] }] });
    const { end } = await runJob('sql.open', { path: d }, { cancelAfterMs: 0 });
    expect(end).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    // No half-built table set is left in the cache.
    // (The build notices the cancel between batches; this one batch of 20,000 records is decoded first.)
    for (let i = 0; i < 50 && readdirSync(cacheDir).some((n) => n.includes('.building-')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readdirSync(cacheDir).filter((n) => n.includes('.building-'))).toEqual([]);
    const r = await query(d, 'SELECT count(*) FROM records');
    expect(r).toMatchObject({ rows: [[20_000]], tablesOpened: true });
  });

  it('sees records appended to the partition (the folder changed: tables rebuilt before the query)', async () => {
    const d = await logDir('append');
    buildPartition(d, { topic: 'a', segments: [{ batches: SIX }] });
    expect((await query(d, 'SELECT count(*) FROM records')).rows).toEqual([[6]]);
    const same = await query(d, 'SELECT count(*) FROM records');
    expect(same.tablesOpened).toBe(false); // unchanged: the open session is reused
    // Append offset 6 (key 28 again) by rewriting the segment with the log builder.
    buildPartition(d, { topic: 'a', segments: [{ batches: [...SIX, ...singles(rec('28', 'three', 7000))] }] });
    const after = await query(d, 'SELECT key_text, value_text, "offset" FROM state ORDER BY key_text');
    expect(after.tablesOpened).toBe(true);
    expect(after.rows).toEqual([
      ['17', 'gamma', 4],
      ['28', 'three', 6],
      ['39', 'two', 5],
    ]);
  });

  it('reopens the tables after a log.changed event for a partition inside the folder', async () => {
    const d = await logDir('six');
    expect((await query(d, 'SELECT 1')).tablesOpened).toBe(false);
    server.ctx.events.emit({ type: 'log.changed', dirs: [join(d, 'prices-0')], reason: 'test' });
    const r = await query(d, 'SELECT count(*) FROM records');
    expect(r).toMatchObject({ tablesOpened: true, rows: [[6]] });
    // Unrelated folders do not count.
    server.ctx.events.emit({ type: 'log.changed', dirs: [join(root, 'elsewhere', 'x-0')], reason: 'test' });
    expect((await query(d, 'SELECT 1')).tablesOpened).toBe(false);
  });

  it('gives the same result over HTTP as through dispatch', async () => {
    const bridge = await startBridge({ readOnly: true, roots: [root], rendererDir: root, jobs: { progressIntervalMs: 0 } });
    configureSql(bridge.api.ctx, { cacheDir });
    try {
      const d = join(root, 'six');
      const sql = 'SELECT key, key_text, value, "offset", headers, is_tombstone FROM latest ORDER BY "offset"';
      const viaHttp = await post(bridge, 'sql.query', { path: d, sql });
      expect(viaHttp.body.ok).toBe(true);
      const httpEnd = await bridge.api.ctx.jobs.wait((viaHttp.body as { result: { jobId: string } }).result.jobId);
      const direct = await bridge.api.dispatch('sql.query', { path: d, sql }, bridge.dispatchOptions);
      const directEnd = await bridge.api.ctx.jobs.wait((direct as { result: { jobId: string } }).result.jobId);
      const strip = (e: JobEndEvent) => (e.ok ? { ...(e.result as SqlQueryResult), elapsedMs: 0, tablesOpened: false } : e);
      expect(JSON.parse(JSON.stringify(strip(httpEnd)))).toEqual(strip(directEnd));
      expect((strip(directEnd) as SqlQueryResult).rows[0]).toEqual([blob('28'), '28', null, 3, { t: 'nested', text: '[]', length: 2 }, true]);
    } finally {
      await bridge.close();
    }
  });
});

describe('sql.export', () => {
  const SQL = `SELECT key_text, value_text, "offset", key, 'a,"b"' AS quoted FROM latest ORDER BY "offset"`;

  it('writes the full result as CSV, exactly as klx query --csv does, fetched in chunks', async () => {
    const d = await logDir('six');
    const r = await result<SqlExportResult>('sql.export', { path: d, sql: SQL, format: 'csv' });
    // A text key (BLOB) is its text in CSV (NDJSON keeps base64).
    const expected = ['key_text,value_text,offset,key,quoted', '28,,3,28,"a,""b"""', '17,gamma,4,17,"a,""b"""', '39,two,5,39,"a,""b"""', ''].join('\n');
    expect(r).toMatchObject({ format: 'csv', rows: 3, bytes: Buffer.byteLength(expected) });
    expect(r.fileName).toMatch(/^six-query-\d{8}-\d{6}\.csv$/);
    const { text, calls } = await exportText(r.exportId, 16);
    expect(text).toBe(expected);
    expect(calls).toBe(Math.ceil(Buffer.byteLength(expected) / 16));
    expect(await call('sql.exportDiscard', { exportId: r.exportId })).toEqual({ discarded: true });
    const gone = await server.dispatch('sql.exportRead', { exportId: r.exportId }, CALL);
    expect(gone).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(exportFiles()).toEqual([]);
  });

  it('writes NDJSON with every row (no limit)', async () => {
    const d = await logDir('six');
    const r = await result<SqlExportResult>('sql.export', { path: d, sql: SQL, format: 'ndjson' });
    const { text } = await exportText(r.exportId, 1 << 20);
    expect(text).toBe(
      [
        '{"key_text":"28","value_text":null,"offset":3,"key":"Mjg=","quoted":"a,\\"b\\""}',
        '{"key_text":"17","value_text":"gamma","offset":4,"key":"MTc=","quoted":"a,\\"b\\""}',
        '{"key_text":"39","value_text":"two","offset":5,"key":"Mzk=","quoted":"a,\\"b\\""}',
        '',
      ].join('\n'),
    );
    expect(r.fileName).toMatch(/\.ndjson$/);
    await call('sql.exportDiscard', { exportId: r.exportId });
    const many = await result<SqlExportResult>('sql.export', { path: d, sql: 'SELECT range AS n FROM range(250000)', format: 'csv' });
    expect(many.rows).toBe(250_000);
    const { text: big } = await exportText(many.exportId, 4 << 20);
    const lines = big.split('\n');
    expect(lines.length).toBe(250_002);
    expect([lines[0], lines[1], lines[250_000]]).toEqual(['n', '0', '249999']);
    await call('sql.exportDiscard', { exportId: many.exportId });
  });

  it('fails like a query for a refused statement, and leaves no file', async () => {
    const d = await logDir('six');
    expect(exportFiles()).toEqual([]);
    expect(await jobError('sql.export', { path: d, sql: 'DROP TABLE segments', format: 'csv' })).toMatchObject({ code: 'read-only' });
    // A query that fails while rows are written (a failed cast at row 3) leaves no partial file either.
    expect(await jobError('sql.export', { path: d, sql: "SELECT CASE WHEN range < 2 THEN range::VARCHAR ELSE 'x' END::INTEGER AS n FROM range(5000)", format: 'csv' })).toMatchObject({ code: 'invalid-argument' });
    expect(exportFiles()).toEqual([]);
  });
});

describeRealData('sql.* on broker-written data', () => {
  const md5 = (b: Uint8Array | null) => (b === null ? null : createHash('md5').update(b).digest('hex'));

  /** Per __consumer_offsets partition: state and latest through the API equal the engine's latest-per-key read. */
  async function compare(caseName: string): Promise<{ partitions: number; keys: number; live: number }> {
    const path = join(REAL_DATA, caseName);
    await call('session.open', { path });
    let partitions = 0;
    let keys = 0;
    let live = 0;
    for (const { rel, log } of allPartitions(openPath(path))) {
      if (log.topic !== '__consumer_offsets') continue;
      const engine = await engineLatest(log);
      const expectedLatest = new Map([...engine].map(([k, [o, v]]) => [k, [o, md5(v)] as const]));
      const expectedState = new Map([...expectedLatest].filter(([, [, v]]) => v !== null));
      for (const [view, expected] of [['latest', expectedLatest], ['state', expectedState]] as const) {
        const r = await query(path, `SELECT lower(hex(v.key)) AS k, v."offset" AS o, md5(v.value) AS m FROM ${view} v JOIN partitions p USING (partition_id) WHERE p.dir = '${rel}' ORDER BY 1`, 100_000);
        expect(r.truncated).toBe(false);
        const got = new Map(r.rows.map(([k, o, m]) => [k as string, [BigInt(o as number), m as string | null] as const]));
        expect(got, `${caseName}/${rel} ${view}`).toEqual(expected);
      }
      partitions++;
      keys += expectedLatest.size;
      live += expectedState.size;
    }
    return { partitions, keys, live };
  }

  it('kafka-2.7.1-compacted-offsets: the compacted __consumer_offsets partitions', async () => {
    expect(await compare('kafka-2.7.1-compacted-offsets')).toEqual({ partitions: 50, keys: 7, live: 0 });
    const path = join(REAL_DATA, 'kafka-2.7.1-compacted-offsets');
    // What the cleaner left in partition 39 (PROVENANCE.md): a tombstone at 4, then 16, 17; a second segment at 18.
    const p39 = await query(path, `SELECT "offset", is_tombstone, segment_base_offset FROM records WHERE topic = '__consumer_offsets' AND "partition" = 39 ORDER BY 1`);
    expect(p39.rows).toEqual([
      [4, true, 0],
      [16, false, 0],
      [17, false, 0],
      [18, true, 18],
      [19, true, 18],
    ]);
  });

  it('retention-log-start and cp-5.1-lz4-connect: live consumer group offsets in state', async () => {
    expect(await compare('retention-log-start')).toEqual({ partitions: 50, keys: 32, live: 11 });
    expect(await compare('cp-5.1-lz4-connect')).toEqual({ partitions: 50, keys: 23, live: 22 });
  });
});
