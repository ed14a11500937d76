/**
 * `log.export` and `log.copyRecords` (issue 14, records you can take away): bodies written by
 * python3-avro (encode_fixtures.py) with their schemas in a `_schemas` topic; the Parquet file is
 * read back by DuckDB, NDJSON by JSON.parse, and the decoded values compared with what python3-avro
 * printed (int64 beyond 2^53 exact). Outputs inside an opened folder or over an existing file are
 * refused.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobResult, MethodName, Res } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { klx } from '../../support/klx-cli.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec } from '../../support/log-builder.ts';
import { addSecondOrdersPartition, buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';

let server: ServerApi;
let fx: SchemaFixtures;
const out = mkdtempSync(join(tmpdir(), 'klx-export-api-'));

async function call<M extends MethodName>(method: M, req: unknown): Promise<Res<M>> {
  const env = await server.dispatch(method, req, { readOnly: true });
  if (!env.ok) throw new Error(env.error.message);
  return env.result as Res<M>;
}

async function exportEnd(req: Record<string, unknown>): Promise<JobEndEvent> {
  const env = await server.dispatch('log.export', req, { readOnly: true });
  if (!env.ok) throw Object.assign(new Error(env.error.message), { info: env.error });
  return server.ctx.jobs.wait((env.result as { jobId: string }).jobId);
}

async function exported(req: Record<string, unknown>): Promise<JobResult<'log.export'>> {
  const end = await exportEnd(req);
  if (!end.ok) throw new Error(`${end.error.code}: ${end.error.message}`);
  return end.result as JobResult<'log.export'>;
}

beforeAll(async () => {
  fx = buildSchemaFixtures();
  addSecondOrdersPartition(fx);
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  await call('log.open', { path: fx.logDir });
}, 120_000);
afterAll(() => {
  fx?.cleanup();
  rmSync(out, { recursive: true, force: true });
});

describe('log.export', () => {
  const orders = () => join(fx.logDir, 'orders-0');

  it('Parquet of an offset range: DuckDB reads the raw bytes and the decoded values python3-avro wrote', async () => {
    const file = join(out, 'orders.parquet');
    const r = await exported({ dir: orders(), scope: 'range', from: '0', to: '2', format: 'parquet', out: file });
    expect(r).toMatchObject({ out: file, format: 'parquet', records: 3, partitions: 1, from: '0', to: '2' });
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const rows = (await (await c.run(`SELECT "offset", hex("key") AS k, value_decoded::VARCHAR AS v, value_format, schema_id FROM read_parquet('${file}') ORDER BY "offset"`)).getRowObjectsJS()) as { offset: bigint; k: string; v: string; value_format: string; schema_id: number }[];
    c.closeSync();
    db.closeSync();
    expect(rows.map((x) => Number(x.offset))).toEqual([0, 1, 2]);
    expect(rows.map((x) => x.k)).toEqual(['0000000000000001', '0000000000000002', '0000000000000003']);
    expect(rows.map((x) => JSON.parse(x.v.replace(/(-?\d{16,})/g, '"$1"')))).toEqual(fx.expected.orders.map((o) => JSON.parse(o.replace(/(-?\d{16,})/g, '"$1"'))));
    expect(rows.map((x) => x.v.match(/"big":(-?\d+)/)![1])).toEqual(['9223372036854775807', '-9223372036854775808', expect.stringMatching(/^-?\d+$/)]);
    expect(rows.map((x) => [x.value_format, x.schema_id])).toEqual([['confluent', 7], ['confluent', 7], ['confluent', 7]]);
  });

  it('NDJSON of a selection across partitions (a search result): one line per record asked for', async () => {
    const file = join(out, 'picked.ndjson');
    const r = await exported({ dir: orders(), scope: 'records', records: [{ dir: join(fx.logDir, 'orders-1'), offset: '1' }, { dir: orders(), offset: '2' }, { dir: orders(), offset: '0' }], format: 'ndjson', out: file });
    expect(r).toMatchObject({ records: 3, partitions: 2, from: null, to: null });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as { topic: string; partition: number; offset: number }).map((o) => `${o.topic}-${o.partition}@${o.offset}`)).toEqual(['orders-1@1', 'orders-0@0', 'orders-0@2']);
    // int64 beyond 2^53 stays exact in the decoded JSON (not a rounded double).
    expect(lines[1]).toContain('"big":9223372036854775807');
  });

  it('a time range resolves as ListOffsets does: [first offset at or after fromTime, first at or after toTime)', async () => {
    const file = join(out, 'timed.csv');
    const r = await exported({ dir: orders(), scope: 'time', fromTime: '1700000000001', toTime: '1700000000003', format: 'csv', out: file });
    expect(r).toMatchObject({ records: 2, from: '1', to: '2' });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]!.startsWith('topic,partition,offset,timestamp,')).toBe(true);
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 4).join(','))).toEqual(['orders,0,1,1700000000001', 'orders,0,2,1700000000002']);
  });

  it('refuses a file inside the opened folder, an existing file and a relative path, and writes nothing', async () => {
    const inside = join(orders(), 'x.ndjson');
    expect(await exportEnd({ dir: orders(), format: 'ndjson', out: inside })).toMatchObject({ ok: false, error: { code: 'invalid-argument', file: inside, message: expect.stringContaining('inside the opened folder') } });
    expect(existsSync(inside)).toBe(false);
    const existing = join(out, 'existing.csv');
    writeFileSync(existing, 'keep me');
    expect(await exportEnd({ dir: orders(), format: 'csv', out: existing })).toMatchObject({ ok: false, error: { code: 'invalid-argument', message: expect.stringContaining('never overwrites') } });
    expect(readFileSync(existing, 'utf8')).toBe('keep me');
    expect(await exportEnd({ dir: orders(), format: 'csv', out: 'x.csv' })).toMatchObject({ ok: false, error: { code: 'invalid-argument', message: expect.stringContaining('give a full path') } });
  });

  it('a partition with a zeroed batch: the records around it are written and the result names the damage (file, position, offsets)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'klx-export-api-damage-'));
    const seg0 = [0, 1, 2, 3, 4].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`, 1000 + o)] }));
    seg0[2] = Buffer.alloc(seg0[2]!.length); // the batch at offset 2 overwritten with zeros
    const dir = buildPartition(root, { topic: 'dmg', segments: [{ batches: seg0 }, { batches: [encodeBatch({ baseOffset: 5n, records: [rec('k5', 'v5', 1005)] })] }] });
    await call('log.open', { path: root });
    const file = join(out, 'dmg.ndjson');
    const r = await exported({ dir, scope: 'partition', format: 'ndjson', out: file });
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as { offset: number }).offset)).toEqual([0, 1, 3, 4, 5]);
    const log = join(dir, '00000000000000000000.log');
    expect(r.notExported).toEqual([{ topic: 'dmg', partition: 0, file: log, position: seg0[0]!.length * 2, kind: 'damage', text: expect.stringMatching(new RegExp(`^dmg-0: not exported \\(offsets 2\\): damage at ${log} position ${seg0[0]!.length * 2} \\(${seg0[2]!.length} bytes\\): `)) }]);
    rmSync(root, { recursive: true, force: true });
  });

  it('read_committed stops at an open transaction: the result names the LSO, producer 7, its first offset and the 3 records left out', async () => {
    const ld = mkdtempSync(join(tmpdir(), 'klx-export-lso-'));
    try {
      const d = join(ld, 'payments-0');
      const k = (...args: string[]) => expect(klx(...args).status).toBe(0);
      k('create', d);
      k('append', d, '--key', 'a', '--value', '1', '--timestamp', '1700000000000');
      k('append', d, '--key', 'b', '--value', '2', '--producer-id', '7', '--producer-epoch', '3', '--transactional', '--timestamp', '1700000000001');
      k('append', d, '--key', 'c', '--value', '3', '--timestamp', '1700000000002');
      k('append', d, '--key', 'd', '--value', '4', '--timestamp', '1700000000003');
      await call('log.open', { path: ld });
      const r = await exported({ dir: d, format: 'csv', out: join(out, 'lso.csv'), isolation: 'read_committed' });
      expect(r.records).toBe(1);
      expect(r.lastStableStops).toEqual([
        {
          topic: 'payments',
          partition: 0,
          lastStableOffset: '1',
          producerId: '7',
          producerEpoch: 3,
          firstOffset: '1',
          recordsNotRead: 3,
          text: 'payments-0: read_committed stops at the last stable offset 1: producer 7 (epoch 3) has a transaction open since offset 1 with no COMMIT or ABORT marker yet, and a read_committed consumer gets nothing at or after it until one is written (UnifiedLog, FetchIsolation.TXN_COMMITTED); 3 records at offsets 1..3 (data, not aborted) were not exported',
        },
      ]);
      expect((await exported({ dir: d, format: 'csv', out: join(out, 'lso-ru.csv') })).lastStableStops).toEqual([]);
    } finally {
      rmSync(ld, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('log.copyRecords', () => {
  const orders = () => join(fx.logDir, 'orders-0');

  it('kcat lines with the decoded key and value, and klx append --records lines with binary bytes as base64', async () => {
    const kcat = await call('log.copyRecords', { dir: orders(), from: '0', to: '0', format: 'kcat' });
    expect(kcat).toMatchObject({ records: 1, truncated: false });
    const big = fx.expected.orders[0]!;
    const body = Buffer.from(readFileSync(join(fx.files, 'orders.ndjson'), 'utf8').split('\n')[0]!.match(/"valueBase64": "([^"]+)"/)![1]!, 'base64');
    expect(kcat.text).toBe(`Topic orders[0], offset: 0, key: 1, payload: ${body.length} bytes: ${big}\n`);
    const append = await call('log.copyRecords', { dir: orders(), from: '0', to: '1', format: 'append', maxRecords: 1 });
    expect(append).toMatchObject({ records: 1, truncated: true });
    expect(JSON.parse(append.text)).toEqual({ keyBase64: 'AAAAAAAAAAE=', valueBase64: body.toString('base64'), timestamp: 1700000000000 });
  });

  it('JSON: an array of the export objects', async () => {
    const r = await call('log.copyRecords', { dir: orders(), from: '1', to: '2', format: 'json' });
    const arr = JSON.parse(r.text.replace(/(-?\d{16,})/g, '"$1"')) as { offset: number; key_decoded: number }[];
    expect(arr.map((o) => [o.offset, o.key_decoded])).toEqual([[1, 2], [2, 3]]);
  });
});
