/**
 * Read-only SQL sessions: which statements run and which are refused (naming the statement type),
 * DuckDB's syntax/binder errors with their position, file access disabled, row limits, streaming
 * cursors, cancellation of a running query, JSON conversion of values, temporary tables removed on
 * close.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { errorPosition, leadingKeyword, OFFSET_HINT, SqlSession, toJsonValue } from '../../../src-main/engine/sql/sql-session.ts';
import { buildPartition, rec, singles, tempDir } from '../../support/log-builder.ts';
import { openSql, rows, scalar } from './sql-test-helpers.ts';

function sixRecordLog(): string {
  return buildPartition(tempDir(), { topic: 'prices', segments: [{ batches: singles(rec('17', 'alpha'), rec('28', 'one'), rec('17', 'beta'), rec('28', null), rec('17', 'gamma'), rec('39', 'two')) }] });
}

async function failure(p: Promise<unknown>): Promise<KlxError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KlxError);
  return err as KlxError;
}

describe('read-only statements', () => {
  it('runs SELECT, WITH, FROM-first, DESCRIBE, SHOW, SUMMARIZE, PRAGMA table_info and EXPLAIN', async () => {
    const s = await openSql(sixRecordLog());
    expect(await scalar(s, 'WITH k AS (SELECT DISTINCT key FROM records) SELECT count(*) FROM k')).toBe(3n);
    expect(await scalar(s, 'FROM state SELECT count(*)')).toBe(2n);
    const described = await rows(s, 'DESCRIBE records');
    expect(described.slice(0, 3).map((r) => [r.column_name, r.column_type])).toEqual([
      ['topic', 'VARCHAR'],
      ['partition', 'INTEGER'],
      ['offset', 'BIGINT'],
    ]);
    expect((await rows(s, 'SHOW TABLES')).map((r) => r.name)).toEqual(['aborted_transactions', 'batches', 'cluster_metadata', 'consumer_offsets', 'damage', 'group_members', 'group_metadata', 'group_offsets', 'holes', 'latest', 'partitions', 'records', 'schemas', 'segments', 'state', 'transactions']);
    const summary = await rows(s, 'SUMMARIZE SELECT "offset" FROM records');
    expect([summary[0]!.min, summary[0]!.max, summary[0]!.count]).toEqual(['0', '5', 6n]);
    expect((await rows(s, `PRAGMA table_info('state')`)).map((r) => r.name)).toContain('value_text');
    const explain = await s.query('EXPLAIN SELECT * FROM state');
    expect(explain.statementType).toBe('EXPLAIN');
    expect(String(explain.rows[0]![1])).toContain('PROJECTION');
  });

  it.each([
    ['DELETE FROM records', 'DELETE'],
    ['DELETE FROM segments', 'DELETE'],
    ['INSERT INTO partitions SELECT * FROM partitions', 'INSERT'],
    [`UPDATE segments SET size_bytes = 0`, 'UPDATE'],
    ['UPDATE records SET value = NULL', 'UPDATE'],
    ['DROP VIEW state', 'DROP'],
    ['DROP TABLE segments', 'DROP'],
    ['CREATE TABLE x AS SELECT 1', 'CREATE'],
    ['CREATE TEMP TABLE x AS SELECT 1', 'CREATE'],
    ['ALTER TABLE segments RENAME TO s', 'ALTER'],
    ['TRUNCATE segments', 'DELETE'],
    [`COPY records TO '/tmp/x.csv'`, 'COPY'],
    [`ATTACH '/tmp/other.duckdb'`, 'ATTACH'],
    ['SET threads = 1', 'SET'],
    ['PRAGMA enable_profiling', 'PRAGMA'],
    ['CHECKPOINT', 'CALL'],
    ['BEGIN TRANSACTION', 'TRANSACTION'],
    ['LOAD json', 'LOAD'],
    ['  /* comment */ DELETE FROM records', 'DELETE'],
  ])('refuses %s as a %s statement with KlxError read-only', async (sql, type) => {
    const s = await openSql(sixRecordLog());
    const err = await failure(s.query(sql));
    expect(err.code).toBe('read-only');
    expect(err.message).toContain(`${type} statements are refused`);
    expect(err.details).toEqual({ statementType: type });
    // The tables are untouched.
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(6n);
    expect(await scalar(s, 'SELECT count(*) FROM segments')).toBe(1n);
  });

  it('EXPLAIN ANALYZE of a write is refused by the read-only database', async () => {
    const s = await openSql(sixRecordLog());
    const err = await failure(s.query('EXPLAIN ANALYZE DELETE FROM segments'));
    expect(err.code).toBe('read-only');
    expect(await scalar(s, 'SELECT count(*) FROM segments')).toBe(1n);
  });

  it('refuses several statements and empty text', async () => {
    const s = await openSql(sixRecordLog());
    const many = await failure(s.query('SELECT 1; DELETE FROM records'));
    expect([many.code, many.message]).toEqual(['invalid-argument', 'the query holds 2 statements; run one statement at a time']);
    for (const empty of ['', '   ', '-- nothing\n', '/* x */ ;']) expect((await failure(s.query(empty))).code).toBe('invalid-argument');
  });

  it('a syntax error keeps DuckDB\'s message and gives its line and character position', async () => {
    const s = await openSql(sixRecordLog());
    const sql = 'SELECT key_text\nFROM records\nWHERE "offset" > 2 ORDR BY 1';
    const err = await failure(s.query(sql));
    expect(err.code).toBe('invalid-argument');
    expect(err.message).toMatch(/^Parser Error: syntax error at or near "ORDR"/);
    expect(err.message).toContain('LINE 3:');
    expect(err.details).toEqual({ errorType: 'Parser', line: 3, position: sql.indexOf('ORDR') });
  });

  it('binder and catalog errors name the column or table, with position', async () => {
    const s = await openSql(sixRecordLog());
    const sql = 'SELECT key_text,\n  no_such_column\nFROM state';
    const err = await failure(s.query(sql));
    expect(err.message).toContain('Binder Error: Referenced column "no_such_column" not found');
    expect(err.details).toEqual({ errorType: 'Binder', line: 2, position: sql.indexOf('no_such_column') });
    const cat = await failure(s.query('SELECT * FROM recordz'));
    expect(cat.message).toContain('Catalog Error: Table with name recordz does not exist');
    expect(cat.details).toMatchObject({ errorType: 'Catalog', line: 1, position: 14 });
  });

  it('a bare offset column gets a hint to quote it', async () => {
    const s = await openSql(sixRecordLog());
    const err = await failure(s.query('SELECT min(offset) FROM records'));
    expect(err.message).toContain(OFFSET_HINT);
    expect(await scalar(s, 'SELECT min("offset") FROM records LIMIT 1 OFFSET 0')).toBe(0n);
  });

  it('errors raised while running (a failed cast) are invalid-argument with DuckDB\'s message', async () => {
    const s = await openSql(sixRecordLog());
    const err = await failure(s.query(`SELECT CAST(value_text AS INTEGER) FROM records`));
    expect(err.code).toBe('invalid-argument');
    expect(err.details).toMatchObject({ errorType: 'Conversion' });
    expect(await scalar(s, 'SELECT count(*) FROM state')).toBe(2n);
  });

  it('reading or writing other files is disabled', async () => {
    const s = await openSql(sixRecordLog());
    const err = await failure(s.query(`SELECT * FROM read_csv('/etc/hostname')`));
    expect(err.code).toBe('invalid-argument');
    expect(err.message).toContain('disabled');
  });
});

describe('results', () => {
  it('limit: at most N rows, truncated when more exist; Infinity returns all', async () => {
    const s = await openSql(sixRecordLog());
    const r = await s.query('SELECT "offset" FROM records ORDER BY 1', { limit: 4 });
    expect(r.rows).toEqual([[0n], [1n], [2n], [3n]]);
    expect([r.rowCount, r.truncated, r.statementType]).toEqual([4, true, 'SELECT']);
    const all = await s.query('SELECT * FROM range(5000)', { limit: Infinity });
    expect([all.rowCount, all.truncated]).toEqual([5000, false]);
    const exact = await s.query('SELECT "offset" FROM records', { limit: 6 });
    expect([exact.rowCount, exact.truncated]).toEqual([6, false]);
    expect((await failure(s.query('SELECT 1', { limit: -1 }))).code).toBe('invalid-argument');
  });

  it('a cursor streams rows in chunks of at most 2048 and reports column names and DuckDB types', async () => {
    const s = await openSql(sixRecordLog());
    const c = await s.cursor('SELECT range AS n, range::VARCHAR AS n FROM range(5000)');
    expect(c.columns).toEqual([
      { name: 'n', type: 'BIGINT' },
      { name: 'n:1', type: 'VARCHAR' },
    ]);
    const sizes: number[] = [];
    for (let chunk = await c.next(); chunk !== null; chunk = await c.next()) sizes.push(chunk.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2048);
    expect(await c.next()).toBeNull();
  });

  it('cancelling a running query interrupts it (KlxError cancelled); the session stays usable', async () => {
    const s = await openSql(sixRecordLog());
    const ac = new AbortController();
    const running = s.query('SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range * b.range % 7 = 3', { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const err = await failure(running);
    expect(err.code).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await scalar(s, 'SELECT count(*) FROM state')).toBe(2n);
    const already = new AbortController();
    already.abort();
    expect((await failure(s.query('SELECT 1', { signal: already.signal }))).code).toBe('cancelled');
  });

  it('interrupted() true stops a query reading values (KlxError cancelled, also without an aborted signal); false again: the session works', async () => {
    let interrupted = false;
    const s = await openSql(sixRecordLog(), { interrupted: () => interrupted });
    interrupted = true;
    const err = await failure(s.query('SELECT value_text FROM records'));
    expect(err.code).toBe('cancelled');
    expect(err.message).toBe('query cancelled');
    interrupted = false;
    expect((await s.query('SELECT value_text FROM state ORDER BY "offset"')).rows).toEqual([['gamma'], ['two']]);
  });

  it("DuckDB's out-of-memory is KlxError out-of-memory naming the session's limit (details.memoryLimitBytes)", async () => {
    const s = await openSql(sixRecordLog(), { memoryLimitBytes: 24 * 1024 * 1024 });
    expect(s.memoryLimitBytes).toBe(24 * 1024 * 1024);
    const err = await failure(s.query(`SELECT length(string_agg(repeat('x', 1000), ',')) FROM range(100000)`));
    expect(err.code).toBe('out-of-memory');
    expect(err.details).toEqual({ memoryLimitBytes: 24 * 1024 * 1024 });
    expect(err.message).toMatch(/^the query needs more memory than DuckDB's memory limit of 24 MiB \(what it could not spill to disk; DuckDB: Out of Memory Error: [^\n]+\); raise the limit with --memory-limit SIZE/);
  });

  it('toJsonValue: BIGINT beyond 2^53 as strings, BLOB as base64, timestamps as ISO text, nested values', async () => {
    const s = await openSql(sixRecordLog());
    const r = await s.query(`SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, key, TIMESTAMP '2024-01-02 03:04:05' AS ts, [1, 2] AS l, {'a': key} AS st, 'nan'::DOUBLE AS d FROM records WHERE "offset" = 0`);
    const o = Object.fromEntries(r.columns.map((c, i) => [c.name, toJsonValue(r.rows[0]![i]!)]));
    expect(o).toEqual({ big: '9007199254740993', small: 42, key: Buffer.from('17').toString('base64'), ts: '2024-01-02T03:04:05.000Z', l: [1, 2], st: { a: 'MTc=' }, d: 'NaN' });
  });
});

describe('session lifecycle', () => {
  it('without a cache folder the tables live in a temporary folder removed by close()', async () => {
    const s = await SqlSession.open(sixRecordLog());
    expect(s.reused).toBe(false);
    expect(existsSync(s.dbPath)).toBe(true);
    expect(await scalar(s, 'SELECT count(*) FROM records')).toBe(6n);
    s.close();
    expect(existsSync(s.dbPath)).toBe(false);
    expect((await failure(s.query('SELECT 1'))).code).toBe('invalid-argument');
    s.close();
  });

  it('closing the session stops an open cursor', async () => {
    const s = await SqlSession.open(sixRecordLog());
    const c = await s.cursor('SELECT * FROM range(100000)');
    expect((await c.next())!.length).toBeGreaterThan(0);
    s.close();
    expect(await c.next()).toBeNull();
  });
});

describe('helpers', () => {
  it('leadingKeyword skips blanks, comments and parentheses', () => {
    expect(leadingKeyword('  -- a\n /* b */ ((delete from x))')).toBe('DELETE');
    expect(leadingKeyword('with x as (select 1) select * from x')).toBe('WITH');
    expect(leadingKeyword('/* unterminated')).toBe('');
  });

  it('errorPosition maps DuckDB\'s caret to a character index, also in an elided long line', () => {
    const sql = 'SELECT a FORM t';
    expect(errorPosition(`Parser Error: x\n\nLINE 1: SELECT a FORM t\n${' '.repeat(8 + 14)}^`, sql)).toEqual({ line: 1, position: 14 });
    const long = `SELECT ${Array.from({ length: 40 }, (_, i) => `a AS c${i}`).join(', ')}, nope, ${Array.from({ length: 40 }, (_, i) => `a AS d${i}`).join(', ')} FROM t`;
    const from = long.indexOf('a AS c34') - 2;
    const shown = long.slice(from, from + 100);
    const caret = ' '.repeat('LINE 1: ...'.length + (long.indexOf('nope') - from)) + '^';
    expect(errorPosition(`Binder Error: y\n\nLINE 1: ...${shown}...\n${caret}`, long)).toEqual({ line: 1, position: long.indexOf('nope') });
    // A context that appears twice in the line cannot be placed: the line only.
    const twice = `SELECT ${'x, '.repeat(60)}nope FROM t`;
    expect(errorPosition(`Binder Error: y\n\nLINE 1: ...${twice.slice(100, 160)}...\n${' '.repeat(20)}^`, twice)).toEqual({ line: 1 });
    expect(errorPosition('no position here', sql)).toBeNull();
  });
});
