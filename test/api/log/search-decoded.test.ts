/**
 * `log.search` over decoded values: text in the decoded key/value, conditions on the decoded JSON,
 * topic and folder scope. Bodies come from python3-avro / python3-protobuf (encode_fixtures.py) and
 * the `_schemas` topic is written by `klx append --records`; real broker data is read in place.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEndEvent, JobResult, MethodName, Res } from '../../../src-shared/contract.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { addSecondOrdersPartition, buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';
import { describeRealData, expectedBatches, REAL_DATA } from '../../support/real-data.ts';

let server: ServerApi;
let fx: SchemaFixtures;
type Search = JobResult<'log.search'>;

async function call<M extends MethodName>(method: M, req: unknown): Promise<Res<M>> {
  const env = await server.dispatch(method, req, { readOnly: true });
  if (!env.ok) throw new Error(env.error.message);
  return env.result as Res<M>;
}

async function searchEnd(req: Record<string, unknown>): Promise<JobEndEvent> {
  const env = await server.dispatch('log.search', req, { readOnly: true });
  if (!env.ok) throw Object.assign(new Error(env.error.message), { info: env.error });
  return server.ctx.jobs.wait((env.result as { jobId: string }).jobId);
}

async function search(req: Record<string, unknown>): Promise<Search> {
  const end = await searchEnd(req);
  if (!end.ok) throw new Error(`${end.error.code}: ${end.error.message}`);
  return end.result as Search;
}

const offsets = (r: Search) => r.matches.map((m) => m.offset);
const places = (r: Search) => r.matches.map((m) => `${m.topic}-${m.partition}@${m.offset}`);

beforeAll(async () => {
  fx = buildSchemaFixtures();
  addSecondOrdersPartition(fx); // orders-1: a second partition of the topic
  server = createServerApi({ version: '0.0.0-test', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  await call('log.open', { path: fx.logDir });
}, 120_000);
afterAll(() => fx?.cleanup());

describe('log.search with a condition on decoded values (python3-avro / python3-protobuf bodies)', () => {
  const orders = () => join(fx.logDir, 'orders-0');
  const payments = () => join(fx.logDir, 'payments-0');

  it('Avro: numbers, exact int64, nested fields, arrays, enums and the key', async () => {
    // orders-0: o-1 (12.5, big 2^63-1), o-2 (99.25, big -2^63), o-3 (7.75), then cut / unknown id 12 / deleted id 20 / a plain string.
    expect(offsets(await search({ dir: orders(), condition: 'value.amount > 10' }))).toEqual(['0', '1']);
    expect(offsets(await search({ dir: orders(), condition: 'value.big == 9223372036854775807' }))).toEqual(['0']);
    expect(offsets(await search({ dir: orders(), condition: 'value.big == 9223372036854775806' }))).toEqual([]);
    expect(offsets(await search({ dir: orders(), condition: 'value.big < -9223372036854775807' }))).toEqual(['1']);
    expect(offsets(await search({ dir: orders(), condition: 'value.customer.name == "Bo" || value.customer.vip == true' }))).toEqual(['0', '1']);
    expect(offsets(await search({ dir: orders(), condition: 'value.tags contains "é" && value.status == "NEW"' }))).toEqual(['2']);
    expect(offsets(await search({ dir: orders(), condition: 'value.note == null && value.id != null' }))).toEqual(['1']);
    expect(offsets(await search({ dir: orders(), condition: 'key == 2' }))).toEqual(['1']);
    // A value that did not decode (unknown schema id 12) has no fields; the soft-deleted id 21 decodes to a string.
    expect(offsets(await search({ dir: orders(), condition: 'value == "still here"' }))).toEqual(['6']);
    const hit = (await search({ dir: orders(), condition: 'value.qty >= 42' })).matches[0]!;
    expect(hit).toMatchObject({ dir: orders(), topic: 'orders', partition: 0, offset: '2', in: [], keyDecoded: { format: 'long', text: '3' }, valueDecoded: { format: 'confluent', schemaId: 7, text: fx.expected.orders[2] } });
  });

  it('Protobuf: int64 in its JSON string form, repeated messages, enums', async () => {
    expect(offsets(await search({ dir: payments(), condition: 'value.amount_cents == 9223372036854775807' }))).toEqual(['0']);
    expect(offsets(await search({ dir: payments(), condition: 'value.amount_cents < 0' }))).toEqual(['1']);
    expect(offsets(await search({ dir: payments(), condition: 'value.lines[1].sku == "B-2" && value.total.currency == "EUR"' }))).toEqual(['0']);
    expect(offsets(await search({ dir: payments(), condition: 'value.status == "REFUNDED"' }))).toEqual(['1']);
    expect(offsets(await search({ dir: payments(), condition: 'value.qty == 7' }))).toEqual(['2']);
  });

  it('text matches the decoded text too (not in the raw bytes), and not with decoded: false', async () => {
    // Avro writes the enum PAID as an index and Protobuf its status as 1: only the decoded text holds "PAID".
    expect(offsets(await search({ dir: orders(), text: 'paid', in: ['value'] }))).toEqual(['0']);
    expect(offsets(await search({ dir: orders(), text: 'paid', in: ['value'], decoded: false }))).toEqual([]);
    expect(offsets(await search({ dir: orders(), text: 'PAID', ignoreCase: false }))).toEqual(['0']);
    expect(offsets(await search({ dir: orders(), text: '9223372036854775807', in: ['value'] }))).toEqual(['0']);
    // Text and condition together: both must hold.
    expect(offsets(await search({ dir: orders(), text: 'new', condition: 'value.amount > 50' }))).toEqual(['1']);
    // A key written as an 8-byte long reads as its number.
    expect((await search({ dir: orders(), text: '3', in: ['key'] })).matches.map((m) => [m.offset, m.in])).toEqual([['2', ['key']]]);
  });

  it('topic and folder scope: matches name partition and offset; limit and continuation across partitions', async () => {
    const topic = await search({ dir: orders(), scope: 'topic', condition: 'value.amount > 10' });
    expect(places(topic)).toEqual(['orders-0@0', 'orders-0@1', 'orders-1@1']);
    expect(topic).toMatchObject({ partitions: 2, complete: true, nextDir: null, nextOffset: null });
    expect(topic.matches[2]!.dir).toBe(join(fx.logDir, 'orders-1'));

    const folder = await search({ dir: fx.logDir, scope: 'folder', condition: 'value.status == "PAID"' });
    expect(places(folder)).toEqual(['orders-0@0', 'orders-1@1', 'payments-0@0']);
    expect(folder.partitions).toBe(6); // _schemas, events, orders-0, orders-1, payments, plain
    // The text is also in the schema texts of _schemas (the Avro enum's symbols, the .proto).
    const text = await search({ dir: fx.logDir, scope: 'folder', text: 'paid' });
    expect(places(text)).toEqual(['_schemas-0@2', '_schemas-0@4', '_schemas-0@11', 'orders-0@0', 'orders-1@1', 'payments-0@0']);

    const first = await search({ dir: orders(), scope: 'folder', condition: 'value.status == "PAID"', limit: 2 });
    expect(places(first)).toEqual(['orders-0@0', 'orders-1@1']);
    expect(first).toMatchObject({ complete: false, nextDir: payments(), nextOffset: '0' });
    const rest = await search({ dir: orders(), scope: 'folder', condition: 'value.status == "PAID"', limit: 2, fromDir: first.nextDir, fromOffset: first.nextOffset });
    expect(places(rest)).toEqual(['payments-0@0']);
    expect(rest).toMatchObject({ complete: true, partitions: 2 });
  });

  it('search honours the format chosen for a topic (decode.setChoice), and auto again', async () => {
    const d = join(fx.logDir, 'orders-1');
    // Keys chosen as UTF-8 strings: the 8-byte long key 3 is no longer the number 3.
    await call('decode.setChoice', { path: fx.logDir, topic: 'orders', side: 'key', format: 'string' });
    try {
      expect(offsets(await search({ dir: d, condition: 'key == 3' }))).toEqual([]);
      const hit = (await search({ dir: d, condition: 'value.qty == 42' })).matches[0]!;
      expect(hit.keyDecoded?.format).toBe('string');
    } finally {
      await call('decode.setChoice', { path: fx.logDir, topic: 'orders', side: 'key', format: 'auto' });
    }
    expect(offsets(await search({ dir: d, condition: 'key == 3' }))).toEqual(['0']);
  });

  it('a bad condition fails the job with invalid-argument naming the character; neither text nor condition too', async () => {
    const bad = await searchEnd({ dir: orders(), condition: 'value.amount >> 10' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid-argument', details: { index: 14, column: 15 } } });
    expect(bad.ok === false && bad.error.message).toContain('expected a path or a value, not this at character 15');
    const none = await searchEnd({ dir: orders() });
    expect(none).toMatchObject({ ok: false, error: { code: 'invalid-argument', message: 'give a text to search for, a condition on decoded values, or both' } });
  });
});

describeRealData('log.search over real __consumer_offsets (kafka-2.7.1-compacted-offsets, read in place)', () => {
  const set = join(REAL_DATA, 'kafka-2.7.1-compacted-offsets');
  /** Group id of an offset-commit/group-metadata key (int16 version, int16 length, UTF-8), parsed here from EXPECTED.jsonl's bytes. */
  const groupOf = (keyB64: string): string => {
    const b = Buffer.from(keyB64, 'base64');
    return b.toString('utf8', 4, 4 + b.readInt16BE(2));
  };

  it('a group id over the whole folder finds the records the independent decoder lists for it', async () => {
    await call('log.open', { path: set });
    const expected: string[] = [];
    const group = 'console-consumer-65070';
    for (const batch of expectedBatches('kafka-2.7.1-compacted-offsets')) {
      const file = String(batch.file);
      if (!file.startsWith('__consumer_offsets-')) continue;
      const partition = file.slice('__consumer_offsets-'.length, file.indexOf('/'));
      for (const r of batch.records as { key: string; offset: number }[]) if (groupOf(r.key) === group) expected.push(`__consumer_offsets-${partition}@${r.offset}`);
    }
    expect(expected.length).toBeGreaterThan(0);
    const r = await search({ dir: set, scope: 'folder', condition: `key.data.group == "${group}"` });
    expect(places(r)).toEqual(expected);
    // The committed offset of test_topic_0603-0 (value v3, offset 9) and the tombstone after it.
    const commits = await search({ dir: set, scope: 'folder', condition: `key.data.group == "${group}" && key.recordType == "OffsetCommit" && value.data.offset == 9` });
    expect(commits.matches.map((m) => [m.partition, m.offset, m.valueDecoded?.text])).toEqual([[39, '16', 'offset 9 · v3']]);
    const deleted = await search({ dir: set, scope: 'folder', condition: `key.data.group == "${group}" && value == null` });
    expect(deleted.matches.map((m) => [m.partition, m.offset, m.valueDecoded?.text])).toEqual([
      [39, '18', '<DELETE>'],
      [39, '19', '<DELETE>'],
    ]);
  });
});
