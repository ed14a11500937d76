/**
 * The `decode.*` API on bodies written by independent encoders (python3-avro, python3-protobuf:
 * test/engine/decode/fixtures/encode_fixtures.py) and a `_schemas` topic written by `klx append`:
 * decoded fields and schema ids, auto's reason, typed errors with the raw bytes, and the format
 * choice per topic and side persisted per opened folder in the app's data folder (never in the
 * opened folder), honoured by `log.records` and the SQL tables.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KlxEvent, MethodName, Res } from '../../../src-shared/contract.ts';
import type { RecordRow } from '../../../src-shared/log-types.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { configureSql } from '../../../src-main/api/sql/sql-sessions.ts';
import { decodeChoicesFile, fileDecodeChoicesStore } from '../../../src-main/api/core/decode-choices-store.ts';
import { parseJsonExact } from '../../../src-main/engine/decode/json-text.ts';
import { tempDir } from '../helpers.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import { PartitionWriter } from '../../../src-main/engine/log/partition-writer.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';

let fx: SchemaFixtures;
const data = tempDir('klx-decode-api-');
let server: ServerApi;
const events: KlxEvent[] = [];

function serverWithStore(): ServerApi {
  const s = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 }, decodeChoices: fileDecodeChoicesStore(decodeChoicesFile(data.dir)) });
  configureSql(s.ctx, { cacheDir: join(data.dir, 'sql-cache') });
  return s;
}

async function call<M extends MethodName>(method: M, req: unknown, s: ServerApi = server): Promise<Res<M>> {
  const env = await s.dispatch(method, req, { readOnly: true });
  if (!env.ok) throw Object.assign(new Error(env.error.message), { code: env.error.code });
  return env.result as Res<M>;
}

async function failure(method: MethodName, req: unknown): Promise<{ code: string; message: string }> {
  const env = await server.dispatch(method, req, { readOnly: true });
  if (env.ok) throw new Error(`${method} succeeded`);
  return env.error;
}

/** Every file under `dir` with its size and mtime (to show the opened folder is never written). */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    const st = statSync(p);
    out.push(`${p}\t${st.size}\t${st.mtimeMs}`);
  }
  return out.sort();
}

let before: string[];

beforeAll(async () => {
  fx = buildSchemaFixtures();
  before = snapshot(fx.logDir);
  server = serverWithStore();
  server.ctx.events.subscribe((e) => events.push(e));
  await call('log.open', { path: fx.logDir });
}, 120_000);
afterAll(() => {
  fx?.cleanup();
  data.remove();
});

describe('decode.formats', () => {
  it('lists auto first, then the registry in auto\'s tie-break order', async () => {
    const { formats } = await call('decode.formats', {});
    expect(formats[0]).toEqual({ name: 'auto', title: 'Auto (detect per record)', topicOnly: false });
    expect(formats.map((f) => f.name).slice(0, 6)).toEqual(['auto', 'consumer-offsets', 'transaction-log', 'cluster-metadata', 'json', 'confluent']);
    expect(formats.find((f) => f.name === 'consumer-offsets')?.topicOnly).toBe(true);
    expect(formats.find((f) => f.name === 'long')).toEqual({ name: 'long', title: 'Long (int64, big-endian)', topicOnly: false });
  });
});

describe('decode.record', () => {
  const orders = () => join(fx.logDir, 'orders-0');

  it('Confluent Avro (python3-avro body, schema id 7 from the folder\'s _schemas): fields, int64 exact, subject, version, auto\'s reason', async () => {
    const r = await call('decode.record', { dir: orders(), offset: '0' });
    expect(r).toMatchObject({ offset: '0', topic: 'orders', partition: 0 });
    expect(r.key).toMatchObject({ choice: 'auto', format: 'long', text: '1', json: '1', isNull: false, size: 8, error: null, bytes: null });
    expect(r.value).toMatchObject({ choice: 'auto', format: 'confluent', schemaId: 7, subject: 'orders-value', version: 1, error: null, errorCode: null, bytes: null });
    // Offset 11 of _schemas-0 is the last record of the key orders-value v1 (the latest state wins).
    expect(r.value.reason).toBe(`Confluent Schema Registry framing: Confluent framing, schema id 7 (Avro, orders-value v1) found in _schemas-0 of ${fx.logDir} (offset 11)`);
    // The exact long 2^63−1 the encoder wrote, as JSON text (a double would print 9223372036854775808).
    expect(r.value.json).toContain('"big": 9223372036854775807');
    expect(parseJsonExact(r.value.json!)).toEqual(parseJsonExact(fx.expected.orders[0]!));
    expect(r.value.text).toBe(fx.expected.orders[0]);
    expect(r.value.json!.split('\n').length).toBeGreaterThan(10); // pretty-printed for the inspector
  });

  it('a truncated Avro body: typed reason, position, schema id, and the raw bytes still there', async () => {
    const r = await call('decode.record', { dir: orders(), offset: '3' });
    expect(r.key).toMatchObject({ format: 'string', text: 'cut' });
    expect(r.value).toMatchObject({ format: 'confluent', json: null, text: null, errorCode: 'truncated', schemaId: 7 });
    const framed = Buffer.from(JSON.parse(readFileSync(join(fx.files, 'orders.ndjson'), 'utf8').split('\n')[3]!).valueBase64 as string, 'base64');
    expect(r.value.error).toBe(`Avro: read past the end of the ${framed.length - 5}-byte datum (bytes 5–${framed.length - 1})`);
    expect(r.value.size).toBe(framed.length);
    expect(r.value.bytes).toBe(framed.toString('base64'));
  });

  it('an unknown schema id is `unknown-schema` naming the id, with the bytes', async () => {
    const r = await call('decode.record', { dir: orders(), offset: '4' });
    expect(r.value).toMatchObject({ format: 'confluent', error: 'unknown schema id 12', errorCode: 'unknown-schema', schemaId: 12, json: null });
    expect(Buffer.from(r.value.bytes!, 'base64').subarray(0, 5)).toEqual(Buffer.from([0, 0, 0, 0, 12]));
  });

  it('Protobuf: a message index the schema does not have is `message-index`', async () => {
    const r = await call('decode.record', { dir: join(fx.logDir, 'payments-0'), offset: '4' });
    expect(r.value).toMatchObject({ errorCode: 'message-index', schemaId: 9, error: 'Protobuf: message index 3 out of range (the 2 top-level messages of id 9 (payments-value v1))' });
    const ok = await call('decode.record', { dir: join(fx.logDir, 'payments-0'), offset: '3' });
    expect(ok.value).toMatchObject({ format: 'confluent', schemaId: 9, subject: 'payments-value', text: '{"trace":"t-9"}' });
  });

  it('a format given in the request wins over the topic\'s choice, without a fallback', async () => {
    const r = await call('decode.record', { dir: orders(), offset: '0', keyFormat: 'hex', valueFormat: 'string' });
    expect(r.key).toMatchObject({ choice: 'hex', format: 'hex', text: '0000000000000001' });
    expect(r.value).toMatchObject({ choice: 'string', format: 'string', json: null, errorCode: 'invalid-utf8' });
    expect(r.value.reason).toBe('String (UTF-8): chosen for values of orders');
  });

  it('bad requests: unknown format, an offset past the end, a hole', async () => {
    expect(await failure('decode.record', { dir: orders(), offset: '0', valueFormat: 'nope' })).toMatchObject({ code: 'invalid-argument' });
    expect(await failure('decode.record', { dir: orders(), offset: '99' })).toMatchObject({ code: 'offset-out-of-range' });
    expect(await failure('decode.record', { dir: fx.files, offset: '0' })).toMatchObject({ code: 'invalid-argument' });
  });
});

describe('decode.choices / decode.setChoice', () => {
  it('auto by default; a choice changes log.records, decode.record and SQL, emits decode.choices, and persists in the app data folder only', async () => {
    const dir = join(fx.logDir, 'orders-0');
    expect(await call('decode.choices', { path: dir })).toEqual({ root: fx.logDir, choices: {} });

    const set = await call('decode.setChoice', { path: dir, topic: 'orders', side: 'key', format: 'hex' });
    expect(set).toEqual({ root: fx.logDir, choices: { orders: { key: 'hex' } } });
    expect(events).toContainEqual({ type: 'decode.choices', root: fx.logDir, choices: { orders: { key: 'hex' } } });

    const page = await call('log.records', { dir });
    const row0 = page.rows.find((r): r is RecordRow => r.kind === 'record')!;
    expect(row0.keyDecoded).toEqual({ format: 'hex', text: '0000000000000001' });
    expect(row0.valueDecoded).toMatchObject({ format: 'confluent', schemaId: 7 });
    expect((await call('decode.record', { dir, offset: '1' })).key).toMatchObject({ choice: 'hex', text: '0000000000000002' });

    // Persisted per folder, in the app's data folder: a new app (same store file) sees it.
    const file = JSON.parse(readFileSync(decodeChoicesFile(data.dir), 'utf8')) as unknown;
    expect(file).toEqual({ version: 1, folders: { [fx.logDir]: { orders: { key: 'hex' } } } });
    const again = serverWithStore();
    await call('log.open', { path: fx.logDir }, again);
    expect(await call('decode.choices', { path: fx.logDir }, again)).toEqual({ root: fx.logDir, choices: { orders: { key: 'hex' } } });

    // SQL's decoded columns use the folder's choice.
    const end = async (s: ServerApi, m: MethodName, req: unknown) => {
      const started = (await call(m, req, s)) as { jobId: string };
      return (await s.ctx.jobs.wait(started.jobId)) as { ok: boolean; result?: { rows: unknown[][] }; error?: unknown };
    };
    const q = await end(again, 'sql.query', { path: fx.logDir, sql: `SELECT "offset", key_format, value_format, schema_id FROM records WHERE topic = 'orders' ORDER BY "offset" LIMIT 2` });
    expect(q.error).toBeUndefined();
    expect(q.result!.rows).toEqual([
      [0, 'hex', 'confluent', 7],
      [1, 'hex', 'confluent', 7],
    ]);

    // Back to auto: the choice is removed.
    expect(await call('decode.setChoice', { path: dir, topic: 'orders', side: 'key', format: 'auto' })).toEqual({ root: fx.logDir, choices: {} });
    const page2 = await call('log.records', { dir });
    expect(page2.rows.find((r): r is RecordRow => r.kind === 'record')!.keyDecoded).toEqual({ format: 'long', text: '1' });

    // Refused: a format that does not exist; and the opened folder was never written.
    expect(await failure('decode.setChoice', { path: dir, topic: 'orders', side: 'value', format: 'nope' })).toMatchObject({ code: 'invalid-argument' });
    expect(snapshot(fx.logDir)).toEqual(before);
  }, 60_000);
});

describe('decode.record on a value over the 1 MiB decode cap', () => {
  it('is `too-large`, not decoded, with its first MiB of bytes', async () => {
    const logs = join(data.dir, 'big-logs');
    createPartition(logs, 'blobs', 0, { 'max.message.bytes': 4194304 });
    const big = new Uint8Array(2 * 1024 * 1024 + 3).fill(0x61);
    const w = PartitionWriter.open(join(logs, 'blobs-0'));
    try {
      w.append([{ key: 'k', value: big, timestamp: 1000n }]);
    } finally {
      w.close();
    }
    await call('log.open', { path: logs });
    const r = await call('decode.record', { dir: join(logs, 'blobs-0'), offset: '0' });
    expect(r.value).toMatchObject({ error: 'too large', errorCode: 'too-large', json: null, text: null, size: big.length });
    expect(Buffer.from(r.value.bytes!, 'base64').length).toBe(1024 * 1024);
    expect(r.key).toMatchObject({ format: 'string', text: 'k', error: null });
  });
});

describeRealData('decode.record on real broker data (read in place)', () => {
  it('Kafka 2.7.1 __consumer_offsets-39 offset 16: OffsetCommitKey and OffsetCommitValue v3 as Kafka names their fields', async () => {
    const root = join(REAL_DATA, 'kafka-2.7.1-compacted-offsets');
    const opened = await call('log.open', { path: root });
    const dir = opened.logDirs.flatMap((d) => d.partitions.map((p) => p.dir)).find((d) => d.endsWith('__consumer_offsets-39'))!;
    const r = await call('decode.record', { dir, offset: '16' });
    expect(r.key).toMatchObject({ format: 'consumer-offsets', text: 'OffsetCommit · console-consumer-65070 · test_topic_0603-0', error: null });
    expect(parseJsonExact(r.key.json!)).toEqual({ type: 1, recordType: 'OffsetCommit', data: { group: 'console-consumer-65070', topic: 'test_topic_0603', partition: 0 } });
    expect(parseJsonExact(r.value.json!)).toEqual({ version: 3, data: { offset: 9, metadata: '', commitTimestamp: 1685814551579, leaderEpoch: -1 } });
    expect(r.value.reason).toContain("__consumer_offsets is Kafka's group coordinator log");
  });
});

describe('decode.setSchema: schema files for a folder without a _schemas topic', () => {
  it('a file given for orders values decodes the table, decode.record and SQL; kept with the choices; a bad file is refused naming it; null removes it', async () => {
    // The python3-avro bodies of orders (Confluent framing, schema id 7) in a log directory with no _schemas topic.
    const noreg = join(data.dir, 'noreg');
    createPartition(noreg, 'orders', 0);
    const lines = readFileSync(join(fx.files, 'orders.ndjson'), 'utf8').split('\n').filter(Boolean).slice(0, 3).map((l) => JSON.parse(l) as { keyBase64: string; valueBase64: string; timestamp: number });
    const w = PartitionWriter.open(join(noreg, 'orders-0'));
    try {
      w.append(lines.map((o) => ({ key: new Uint8Array(Buffer.from(o.keyBase64, 'base64')), value: new Uint8Array(Buffer.from(o.valueBase64, 'base64')), timestamp: BigInt(o.timestamp) })));
    } finally {
      w.close();
    }
    const s = serverWithStore();
    await call('log.open', { path: noreg }, s);
    const dir = join(noreg, 'orders-0');
    const firstValue = async () => (await call('log.records', { dir }, s)).rows.find((r): r is RecordRow => r.kind === 'record')!.valueDecoded;
    expect(await firstValue()).toMatchObject({ format: 'confluent', error: expect.stringMatching(/^unknown schema id 7/) });

    const schema = { files: [{ name: 'order.avsc', text: readFileSync(join(fx.files, 'order.avsc'), 'utf8') }] };
    const set = await call('decode.setSchema', { path: dir, topic: 'orders', side: 'value', schema }, s);
    expect(set).toEqual({ root: noreg, choices: { orders: { valueSchema: schema } } });
    expect(await firstValue()).toMatchObject({ format: 'confluent', schemaId: 7, text: fx.expected.orders[0] });
    const rec = await call('decode.record', { dir, offset: '1' }, s);
    expect([rec.value.subject, rec.value.error, rec.value.reason]).toEqual(['orders-value', null, 'Confluent Schema Registry framing: Confluent framing, schema id 7 is in no schema source; read with the schema file order.avsc given for orders values']);
    expect(parseJsonExact(rec.value.json!)).toEqual(parseJsonExact(fx.expected.orders[1]!));
    expect((JSON.parse(readFileSync(decodeChoicesFile(data.dir), 'utf8')) as { folders: Record<string, unknown> }).folders[noreg]).toEqual({ orders: { valueSchema: schema } });

    const started = (await call('sql.query', { path: noreg, sql: `SELECT "offset", schema_id, value_decoded->>'id' AS id, decode_error FROM records ORDER BY "offset"` }, s)) as { jobId: string };
    const q = (await s.ctx.jobs.wait(started.jobId)) as { result?: { rows: unknown[][] }; error?: unknown };
    expect(q.error).toBeUndefined();
    expect(q.result!.rows).toEqual([
      [0, 7, 'o-1', null],
      [1, 7, 'o-2', null],
      [2, 7, 'o-3', null],
    ]);

    const bad = await s.dispatch('decode.setSchema', { path: dir, topic: 'orders', side: 'value', schema: { files: [{ name: 'broken.avsc', text: '{"type": "record"}' }] } }, { readOnly: true });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid-argument', file: 'broken.avsc' } });
    expect(await call('decode.setSchema', { path: dir, topic: 'orders', side: 'value', schema: null }, s)).toEqual({ root: noreg, choices: {} });
    expect(await firstValue()).toMatchObject({ error: expect.stringMatching(/^unknown schema id 7/) });
  }, 90_000);
});
