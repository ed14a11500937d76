/**
 * Helpers of the SQL tests: open a session on a built folder (cache in a temp folder), read query
 * results as plain objects, and build transactional batches / markers.
 */
import { afterEach } from 'vitest';
import { SqlSession, type SqlSessionOptions, type SqlValue } from '../../../src-main/engine/sql/sql-session.ts';
import { rec, tempDir, type BatchInput } from '../../support/log-builder.ts';

const open: SqlSession[] = [];

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** Opens a session closed after the test; cache in a fresh temp folder unless `cacheDir` is given. */
export async function openSql(path: string, opts: SqlSessionOptions = {}): Promise<SqlSession> {
  const s = await SqlSession.open(path, { cacheDir: tempDir('klx-sql-cache-'), ...opts });
  open.push(s);
  return s;
}

/** Rows of a query as objects keyed by column name (all rows). */
export async function rows(s: SqlSession, sql: string): Promise<Record<string, SqlValue>[]> {
  const r = await s.query(sql, { limit: Infinity });
  return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i]!])));
}

/** The single value of a one-row, one-column query. */
export async function scalar(s: SqlSession, sql: string): Promise<SqlValue> {
  const r = await s.query(sql);
  if (r.rows.length !== 1 || r.columns.length !== 1) throw new Error(`expected one value from ${sql}, got ${r.rows.length} rows × ${r.columns.length} columns`);
  return r.rows[0]![0]!;
}

/** Bytes of a string, for comparing BLOB results. */
export const bytes = (s: string): Buffer => Buffer.from(s);

/** A transactional data batch of producer `pid` holding `keys` (values `v-<key>`). */
export function txnBatch(pid: number, baseOffset: number, keys: string[]): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: keys.map((k) => rec(k, `v-${k}`)) };
}

export { markerBatch } from '../../support/log-builder.ts';

/** `{key_text: value_text}` of a result, for compact assertions. */
export function keyValues(rs: Record<string, SqlValue>[]): Record<string, string | null> {
  return Object.fromEntries(rs.map((r) => [String(r.key_text), r.value_text === null ? null : String(r.value_text)]));
}
