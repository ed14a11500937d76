import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../decode/schema-fixtures.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

let fx: SchemaFixtures;
let s: SqlSession;

beforeAll(async () => {
  fx = buildSchemaFixtures();
  s = await SqlSession.open(fx.logDir, { decode: { schemaPaths: [join(fx.files, 'plain-value.avsc')] } });
}, 120_000);
afterAll(() => {
  s?.close();
  fx?.cleanup();
});

const rows = async (sql: string) => (await s.query(sql)).rows;

describe('decoded columns of records/latest/state (bodies from python3-avro / python3-protobuf)', () => {
  it('Avro through the _schemas registry: format, schema id, exact JSON, typed errors', async () => {
    const r = await rows(`SELECT "offset", key_format, value_format, schema_id, value_decoded::VARCHAR, decode_error FROM records WHERE topic = 'orders' ORDER BY "offset"`);
    expect(r.slice(0, 3).map((x) => x.slice(1, 4))).toEqual([
      ['long', 'confluent', 7],
      ['long', 'confluent', 7],
      ['long', 'confluent', 7],
    ]);
    expect(r.slice(0, 3).map((x) => x[4])).toEqual(fx.expected.orders);
    expect(r.slice(3).map((x) => [x[1], x[3], x[5]])).toEqual([
      ['string', 7, expect.stringMatching(/^Avro: read past the end of the \d+-byte datum/)],
      ['string', 12, 'unknown schema id 12'],
      ['string', 20, 'unknown schema id 20'],
      ['string', 21, null],
    ]);
    // int64 beyond 2^53 stays exact inside DuckDB's JSON.
    expect(await rows(`SELECT value_decoded->>'big', (value_decoded->'customer'->>'name') FROM records WHERE topic = 'orders' AND "offset" = 0`)).toEqual([['9223372036854775807', 'Ann']]);
  });

  it('Protobuf and JSON Schema values; a JSON-path condition on decoded values', async () => {
    expect(await rows(`SELECT value_decoded->>'id', value_decoded->>'amount_cents', value_decoded->'total'->>'currency' FROM records WHERE topic = 'payments' AND "offset" = 0`)).toEqual([['p-1', '9223372036854775807', 'EUR']]);
    expect(await rows(`SELECT decode_error FROM records WHERE topic = 'payments' AND "offset" = 4`)).toEqual([['Protobuf: message index 3 out of range (the 2 top-level messages of id 9 (payments-value v1))']]);
    expect(await rows(`SELECT key_decoded::VARCHAR, decode_error FROM records WHERE topic = 'events' ORDER BY "offset"`)).toEqual([
      ['"ok"', null],
      ['"bad"', 'JSON Schema: /n must be integer'],
    ]);
    expect(await rows(`SELECT count(*) FROM records WHERE topic = 'orders' AND (value_decoded->>'qty')::INTEGER > 2`)).toEqual([[2n]]);
  });

  it('plain Avro with a schema file given for the topic; _schemas as JSON; timestamp_utc', async () => {
    expect(await rows(`SELECT value_format, value_decoded->>'sensor', (value_decoded->>'celsius')::DOUBLE FROM state WHERE topic = 'plain' ORDER BY "offset"`)).toEqual([
      ['avro', 's1', 21.5],
      ['avro', 's2', -3.25],
    ]);
    expect(await rows(`SELECT value_format, value_decoded->>'id' FROM latest WHERE topic = '_schemas' AND (key_decoded->>'subject') = 'orders-value'`)).toEqual([['json', '7']]);
    const ts = await rows(`SELECT timestamp_utc::VARCHAR FROM records WHERE topic = 'plain' ORDER BY "offset" LIMIT 1`);
    expect(ts).toEqual([['2023-11-14 22:13:20']]);
  });

  it('the schemas table is the rebuilt registry plus the schema files given', async () => {
    expect(await rows(`SELECT id, subject, version, schema_type, deleted, "references"->0->>'subject' FROM schemas ORDER BY id, subject`)).toEqual([
      [3, 'customer', 1, 'AVRO', false, null],
      [7, 'orders-value', 1, 'AVRO', false, 'customer'],
      [8, 'money', 1, 'PROTOBUF', false, null],
      [9, 'payments-value', 1, 'PROTOBUF', false, 'money'],
      [10, 'events-value', 1, 'JSON', false, null],
      [21, 'old-value', 1, 'AVRO', true, null],
    ]);
  });
});

describeRealData('decoded columns on broker-written data', () => {
  it('cp-5.1: Connect and _schemas topics decode as JSON, __consumer_offsets with no error', async () => {
    const q = await SqlSession.open(join(REAL_DATA, 'cp-5.1-lz4-connect'));
    try {
      const r = (await q.query(`SELECT topic, value_format, count(*), count(decode_error) FROM records WHERE topic IN ('_schemas', 'docker-connect-configs', 'docker-connect-offsets', 'docker-connect-status') AND NOT is_control AND (value IS NOT NULL OR topic = '_schemas') GROUP BY ALL ORDER BY ALL`)).rows;
      expect(r.length).toBeGreaterThan(0);
      // _schemas of this set holds NOOP keys with null values only.
      expect(r).toEqual([
        ['_schemas', 'null', expect.any(BigInt), 0n],
        ['docker-connect-configs', 'json', expect.any(BigInt), 0n],
        ['docker-connect-offsets', 'json', expect.any(BigInt), 0n],
        ['docker-connect-status', 'json', expect.any(BigInt), 0n],
      ]);
      const keys = (await q.query(`SELECT topic, key_format, count(decode_error) FROM records WHERE topic IN ('_schemas', 'docker-connect-configs', 'docker-connect-offsets', 'docker-connect-status') GROUP BY ALL ORDER BY ALL`)).rows;
      expect(keys).toEqual([
        ['_schemas', 'json', 0n],
        ['docker-connect-configs', 'string', 0n],
        ['docker-connect-offsets', 'json', 0n],
        ['docker-connect-status', 'string', 0n],
      ]);
      const co = (await q.query(`SELECT count(*), count(decode_error), count(*) FILTER (WHERE value_format = 'consumer-offsets' OR value_decoded IS NULL) FROM records WHERE topic = '__consumer_offsets'`)).rows[0]!;
      expect(co[0]).toBeGreaterThan(0n);
      expect(co[1]).toBe(0n);
    } finally {
      q.close();
    }
  }, 120_000);
});
