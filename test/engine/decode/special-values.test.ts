/**
 * Values JSON has no number for, and Avro's logical types, through the decode layer: bodies written
 * by python3-avro / python3-protobuf (`fixtures/encode_special_values.py`), the expected text
 * computed there from the encoders' own values. Also through SQL: `value_decoded` stays valid
 * DuckDB JSON with those values (NaN, Infinity, decimals, int64 beyond 2^53).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultFormatRegistry } from '../../../src-main/engine/decode/default-formats.ts';
import { decodeBytes, type DecodeContext } from '../../../src-main/engine/decode/format.ts';
import { DecodedCondition } from '../../../src-main/engine/decode/decoded-condition.ts';
import { parseJsonExact } from '../../../src-main/engine/decode/json-text.ts';
import { SchemaRegistry } from '../../../src-main/engine/decode/schemas/schema-registry.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import { PartitionWriter } from '../../../src-main/engine/log/partition-writer.ts';
import { SqlSession } from '../../../src-main/engine/sql/sql-session.ts';
import { tempDir } from '../../support/log-builder.ts';
import { REPO_ROOT } from '../../support/real-data.ts';
import { rmSync, writeFileSync } from 'node:fs';

interface Fixture {
  avroSchema: unknown;
  avro: { body: string; json: string }[];
  proto: string;
  protoRows: { body: string; dict: Record<string, unknown> }[];
  primitives: { float: string; double: string; msgpack: string; floatJson: string; doubleJson: string }[];
}
const fx = JSON.parse(execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'test/engine/decode/fixtures/encode_special_values.py')], { encoding: 'utf8' })) as Fixture;
const formats = defaultFormatRegistry();
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const framed = (id: number, body: Uint8Array, index?: number[]) => new Uint8Array([0, (id >>> 24) & 255, (id >>> 16) & 255, (id >>> 8) & 255, id & 255, ...(index ?? []), ...body]);

function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  r.add({ id: 31, subject: 'special-value', version: 1, schemaType: 'AVRO', schema: JSON.stringify(fx.avroSchema), references: [], deleted: false, source: 'test' });
  r.add({ id: 32, subject: 'measure-value', version: 1, schemaType: 'PROTOBUF', schema: fx.proto, references: [], deleted: false, source: 'test' });
  return r;
}
const ctx = (schemas: SchemaRegistry): DecodeContext => ({ topic: 'special', side: 'value', schemas });

describe('Avro: NaN/Infinity, decimals and logical types (python3-avro bodies)', () => {
  it.each([0, 1, 2])('record %i: the JSON text python3-avro\'s values call for', (i) => {
    const d = decodeBytes(formats, framed(31, bytes(fx.avro[i]!.body)), ctx(registry()));
    expect(d.error).toBeUndefined();
    expect(parseJsonExact(d.jsonText!)).toEqual(parseJsonExact(fx.avro[i]!.json));
  });

  it('a NaN is not null (a null union branch is); a decimal is its exact text, never a rounded float', () => {
    const [a, b] = [0, 1].map((i) => decodeBytes(formats, framed(31, bytes(fx.avro[i]!.body)), ctx(registry())).jsonText!);
    expect(a).toContain('"f":"NaN","d":"Infinity","maybe":"-Infinity","price":"12345678.90","big":"1234567890123456.7891"');
    expect(b).toContain('"d":"NaN","maybe":null,"price":"-0.05","big":"-0.0001"');
    const c = decodeBytes(formats, framed(31, bytes(fx.avro[2]!.body)), ctx(registry())).jsonText!;
    expect(c).toContain('{"f":0.1,'); // the float32 nearest 0.1; its double is 0.10000000149011612
    expect(a).toContain('"ts_us":9223372800123456'); // timestamp-micros beyond 2^53, exact
    expect(a).toContain('"span":{"months":14,"days":3,"milliseconds":86399999}');
  });

  it('a search condition compares a decimal exactly as a number and finds "NaN" as a string', () => {
    const value = decodeBytes(formats, framed(31, bytes(fx.avro[0]!.body)), ctx(registry())).json;
    const holds = (c: string) => DecodedCondition.parse(c).test({ key: null, value, offset: 0n, timestamp: 0n, partition: 0, topic: 'special' });
    expect([holds('value.price == 12345678.9'), holds('value.price > 12345678.89'), holds('value.price > 12345678.9'), holds('value.big == 1234567890123456.7891'), holds('value.big == 1234567890123456.789')]).toEqual([true, true, false, true, false]);
    expect([holds('value.f == "NaN"'), holds('value.maybe == null'), holds('value.d == "Infinity"')]).toEqual([true, false, true]);
  });

  it('plain (unframed) Avro with the schema given for the topic reads the same', () => {
    const r = new SchemaRegistry();
    r.setForTopic('special', 'value', { id: 0, subject: 'special-value', version: 1, schemaType: 'AVRO', schema: JSON.stringify(fx.avroSchema), references: [], deleted: false, source: 'test' });
    const d = decodeBytes(formats, bytes(fx.avro[0]!.body), ctx(r), 'avro');
    expect(parseJsonExact(d.jsonText!)).toEqual(parseJsonExact(fx.avro[0]!.json));
  });
});

describe('Protobuf: float/double NaN and Infinity as proto3 JSON strings (python3-protobuf bodies, json_format.MessageToDict)', () => {
  it.each([0, 1, 2, 3, 4, 5])('message %i (float 0.1 prints 0.1, as json_format does, not 0.10000000149011612)', (i) => {
    const d = decodeBytes(formats, framed(32, bytes(fx.protoRows[i]!.body), [0]), ctx(registry()));
    expect(d.error).toBeUndefined();
    expect(d.json).toEqual(fx.protoRows[i]!.dict);
  });
});

describe("Kafka's FloatSerializer/DoubleSerializer bytes and MessagePack floats (python struct)", () => {
  it.each([0, 1, 2, 3, 4])('value %i: NaN/Infinity as strings (were null), a float as its shortest float32 form', (i) => {
    const p = fx.primitives[i]!;
    const r = registry();
    expect(decodeBytes(formats, bytes(p.float), ctx(r), 'float').jsonText).toBe(p.floatJson);
    expect(decodeBytes(formats, bytes(p.double), ctx(r), 'double').jsonText).toBe(p.doubleJson);
    expect(decodeBytes(formats, bytes(p.msgpack), ctx(r), 'msgpack').jsonText).toBe(`{"v":${p.doubleJson}}`);
  });
});

describe('SQL value_decoded: valid DuckDB JSON with these values', () => {
  let root: string;
  let s: SqlSession;
  beforeAll(async () => {
    root = tempDir('klx-special-');
    const logDir = join(root, 'logs');
    createPartition(logDir, 'special', 0);
    const w = PartitionWriter.open(join(logDir, 'special-0'));
    try {
      w.append(fx.avro.map((r, i) => ({ key: `k${i}`, value: bytes(r.body), timestamp: 1700000000000n + BigInt(i) })));
    } finally {
      w.close();
    }
    writeFileSync(join(root, 'special-value.avsc'), JSON.stringify(fx.avroSchema));
    s = await SqlSession.open(logDir, { decode: { schemaPaths: [join(root, 'special-value.avsc')], choices: { special: { value: 'avro' } } } });
  }, 120_000);
  afterAll(() => {
    s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('NaN/Infinity and decimals as JSON strings, int64 exact, json_valid', async () => {
    const r = (await s.query(`SELECT value_format, decode_error, json_valid(value_decoded::VARCHAR), value_decoded->>'f', value_decoded->>'maybe', value_decoded->>'price', value_decoded->>'big', value_decoded->>'ts_us', CAST(CAST(value_decoded->>'price' AS DECIMAL(10,2)) AS VARCHAR) FROM records ORDER BY "offset"`)).rows;
    expect(r.map((x) => x.slice(0, 8))).toEqual([
      ['avro', null, true, 'NaN', '-Infinity', '12345678.90', '1234567890123456.7891', '9223372800123456'],
      ['avro', null, true, '-Infinity', null, '-0.05', '-0.0001', '0'],
      ['avro', null, true, '0.1', '1', '0.00', '99999999999999.9999', '1704067200000000'],
    ]);
    // The text casts to DuckDB's DECIMAL(10,2) without going through a double.
    expect(r.map((x) => x[8])).toEqual(['12345678.90', '-0.05', '0.00']);
  });
});
