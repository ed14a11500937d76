import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultFormatRegistry } from '../../../src-main/engine/decode/default-formats.ts';
import { decodeBytes, type DecodeContext } from '../../../src-main/engine/decode/format.ts';
import { parseJsonExact } from '../../../src-main/engine/decode/json-text.ts';
import { SchemaRegistry } from '../../../src-main/engine/decode/schemas/schema-registry.ts';
import { addSchemaFiles, registryFromSchemasTopics } from '../../../src-main/engine/decode/schemas/schema-sources.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import type { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildSchemaFixtures, type SchemaFixtures } from './schema-fixtures.ts';

let fx: SchemaFixtures;
let logs: PartitionLog[];
let registry: SchemaRegistry;
const formats = defaultFormatRegistry();

beforeAll(() => {
  fx = buildSchemaFixtures();
  logs = allPartitions(openPath(fx.logDir)).map((p) => p.log);
  registry = registryFromSchemasTopics(logs, (l) => `${l.topic}-${l.partition} of this folder`).registry;
}, 120_000);
afterAll(() => fx?.cleanup());

function values(topic: string): { key: Uint8Array | null; value: Uint8Array | null }[] {
  const log = logs.find((l) => l.topic === topic)!;
  const out: { key: Uint8Array | null; value: Uint8Array | null }[] = [];
  for (const e of walkLog(log)) if (e.type === 'batch') for (const r of recordsOf(e)) out.push({ key: r.key, value: r.value });
  return out;
}

const ctx = (topic: string, schemas: SchemaRegistry | null = registry): DecodeContext => ({ topic, side: 'value', schemas });

describe('offline registry rebuilt from the _schemas topic written with klx append', () => {
  it('holds the latest state of every SCHEMA key; tombstones remove, DELETE_SUBJECT soft-deletes', () => {
    const rows = registry.all().map((e) => [e.id, e.subject, e.version, e.schemaType, e.deleted, e.references.map((r) => r.name)]);
    expect(rows).toEqual([
      [3, 'customer', 1, 'AVRO', false, []],
      [7, 'orders-value', 1, 'AVRO', false, ['shop.Customer']],
      [8, 'money', 1, 'PROTOBUF', false, []],
      [9, 'payments-value', 1, 'PROTOBUF', false, ['common/money.proto']],
      [10, 'events-value', 1, 'JSON', false, []],
      [21, 'old-value', 1, 'AVRO', true, []],
    ]);
    expect(registry.byId(7)!.source).toBe('_schemas-0 of this folder (offset 11)');
    expect(registry.byId(20)).toBeUndefined();
    expect(registry.bySubject('old-value', 'latest')).toBeUndefined();
  });
});

describe('Confluent framing, bodies written by python3-avro / python3-protobuf', () => {
  it('Avro with a reference: JSON text equals what the encoder was given, int64 extremes exact', () => {
    const v = values('orders');
    for (let i = 0; i < 3; i++) {
      const d = decodeBytes(formats, v[i]!.value, ctx('orders'));
      expect(d.error).toBeUndefined();
      expect([d.format, d.schemaId, d.subject, d.version]).toEqual(['confluent', 7, 'orders-value', 1]);
      expect(d.jsonText).toBe(fx.expected.orders[i]);
    }
    expect(decodeBytes(formats, v[0]!.value, ctx('orders')).reason).toBe('Confluent Schema Registry framing: Confluent framing, schema id 7 (Avro, orders-value v1) found in _schemas-0 of this folder (offset 11)');
  });

  it('typed errors: truncated Avro body, unknown id, hard-deleted id; soft-deleted id still decodes', () => {
    const v = values('orders');
    const cut = decodeBytes(formats, v[3]!.value, ctx('orders'));
    const len = v[3]!.value!.byteLength;
    expect([cut.format, cut.errorCode, cut.error]).toEqual(['confluent', 'truncated', `Avro: read past the end of the ${len - 5}-byte datum (bytes 5–${len - 1})`]);
    const unknown = decodeBytes(formats, v[4]!.value, ctx('orders'));
    expect([unknown.format, unknown.errorCode, unknown.error]).toEqual(['confluent', 'unknown-schema', 'unknown schema id 12']);
    expect(decodeBytes(formats, v[5]!.value, ctx('orders')).error).toBe('unknown schema id 20');
    const old = decodeBytes(formats, v[6]!.value, ctx('orders'));
    expect([old.json, old.schemaId, old.reason.includes('soft-deleted')]).toEqual(['still here', 21, true]);
    const none = decodeBytes(formats, v[0]!.value, ctx('orders', null), 'confluent');
    expect(none.error).toBe('unknown schema id 7 (no schema has an id: no _schemas topic in the opened folders, and no schema file or registry export gives ids: give a schema file for this topic (Schemas in the records header), or klx fetch --schemas ID=FILE)');
  });

  it('Protobuf: message indexes [1], [1,0], [0] (the single 0 byte), imports by reference and well-known types; equals json_format.MessageToDict', () => {
    const v = values('payments');
    for (let i = 0; i < 4; i++) {
      const d = decodeBytes(formats, v[i]!.value, ctx('payments'));
      expect(d.error).toBeUndefined();
      expect(d.schemaId).toBe(9);
      expect(d.json).toEqual(fx.expected.payments[i]);
    }
    expect(decodeBytes(formats, v[0]!.value, ctx('payments')).jsonText).toContain('"amount_cents":"9223372036854775807"');
    const bad = decodeBytes(formats, v[4]!.value, ctx('payments'));
    expect([bad.errorCode, bad.error]).toEqual(['message-index', 'Protobuf: message index 3 out of range (the 2 top-level messages of id 9 (payments-value v1))']);
  });

  it('JSON Schema: the JSON, validated with ajv; a value that does not validate keeps its JSON and says why', () => {
    const v = values('events');
    const ok = decodeBytes(formats, v[0]!.value, ctx('events'));
    expect([ok.json, ok.schemaId, ok.error]).toEqual([{ n: 5, label: 'ok' }, 10, undefined]);
    const bad = decodeBytes(formats, v[1]!.value, ctx('events'));
    expect([bad.json, bad.error]).toEqual([{ n: 'five' }, 'JSON Schema: /n must be integer']);
  });
});

describe('user-supplied schema files', () => {
  it('a folder of .avsc/.proto/.json: plain Avro by <topic>-value.avsc, .proto imports by path', () => {
    const user = new SchemaRegistry();
    expect(addSchemaFiles(user, fx.files)).toBe(7);
    const v = values('plain');
    const d0 = decodeBytes(formats, v[0]!.value, ctx('plain', user));
    expect([d0.format, d0.json, d0.reason]).toEqual(['avro', fx.expected.readings[0], `Avro (plain datum, schema given for the topic): plain Avro datum with the schema given for plain values (file ${join(fx.files, 'plain-value.avsc')})`]);
    expect(decodeBytes(formats, v[1]!.value, ctx('plain', user), 'avro').json).toEqual(fx.expected.readings[1]);
    expect(decodeBytes(formats, v[0]!.value, ctx('plain', null), 'avro').error).toBe('no Avro schema given for plain values (give plain-value.avsc, or --schemas plain-value=FILE, or a schema file in the schema settings)');
    // A .proto given as a file compiles with its import found among the files.
    const proto = user.bySubject('payments', 'latest')!;
    user.add({ ...proto, id: 99, subject: 'payments-by-file' });
    const framed = new Uint8Array(Buffer.from(fx.expected.paymentsFramed[0]!, 'base64'));
    framed.set([0, 0, 0, 0, 99], 0);
    expect(decodeBytes(formats, framed, ctx('payments', user)).json).toEqual(fx.expected.payments[0]);
  });

  it('a registry export (GET /schemas JSON) registers ids', () => {
    const user = new SchemaRegistry();
    const path = join(fx.files, 'export', 'schemas.json');
    require('node:fs').mkdirSync(join(fx.files, 'export'), { recursive: true });
    require('node:fs').writeFileSync(path, JSON.stringify([{ subject: 'orders-value', version: 3, id: 7, schema: readFileSync(join(fx.files, 'order.avsc'), 'utf8') }]));
    expect(addSchemaFiles(user, path)).toBe(1);
    const d = decodeBytes(formats, values('orders')[1]!.value, ctx('orders', user));
    expect([d.jsonText, d.subject, d.version]).toEqual([fx.expected.orders[1], 'orders-value', 3]);
  });
});

describe('Avro container files (python3-avro DataFileWriter)', () => {
  it.each(['null', 'deflate'])('codec %s: writer schema and every record', (codec) => {
    const b = new Uint8Array(readFileSync(join(fx.files, `readings-${codec}.avro`)));
    const d = decodeBytes(formats, b, ctx('files'));
    expect(d.format).toBe('avro-file');
    const j = d.json as { codec: string; records: unknown[]; schema: { name: string } };
    expect([j.codec, j.schema.name, j.records]).toEqual([codec, 'Reading', fx.expected.readings]);
    const cut = decodeBytes(formats, b.subarray(0, b.length - 20), ctx('files'));
    expect(cut.errorCode).toBe('truncated');
  });
});

it('parseJsonExact reads back the exact int64 text', () => {
  expect((parseJsonExact(fx.expected.orders[1]!) as { big: bigint }).big).toBe(-9223372036854775808n);
});
