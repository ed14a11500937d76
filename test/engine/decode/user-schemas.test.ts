/**
 * Schema files given by the user for a topic side (engine/decode/schemas/user-schemas.ts), for a
 * folder without a `_schemas` topic. Bodies and schema files come from the independent encoders
 * (python3-avro, python3-protobuf; see schema-fixtures.ts); the decoder has no registry schemas.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { RecordDecoder } from '../../../src-main/engine/decode/record-decoder.ts';
import { SchemaRegistry } from '../../../src-main/engine/decode/schemas/schema-registry.ts';
import { registryFromSchemasTopics } from '../../../src-main/engine/decode/schemas/schema-sources.ts';
import { checkUserSchema } from '../../../src-main/engine/decode/schemas/user-schemas.ts';
import type { UserSchema } from '../../../src-main/engine/decode/format.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import type { PartitionLog } from '../../../src-main/engine/log/partition-log.ts';
import { buildSchemaFixtures, type SchemaFixtures } from './schema-fixtures.ts';

let fx: SchemaFixtures;
let logs: PartitionLog[];
beforeAll(() => {
  fx = buildSchemaFixtures();
  logs = allPartitions(openPath(fx.logDir)).map((p) => p.log);
}, 120_000);
afterAll(() => fx?.cleanup());

function values(topic: string): (Uint8Array | null)[] {
  const log = logs.find((l) => l.topic === topic)!;
  const out: (Uint8Array | null)[] = [];
  for (const e of walkLog(log)) if (e.type === 'batch') for (const r of recordsOf(e)) out.push(r.value);
  return out;
}
const file = (name: string, as = name.slice(name.lastIndexOf('/') + 1)) => ({ name: as, text: readFileSync(join(fx.files, name), 'utf8') });

describe('schema files given for a topic side', () => {
  it('Confluent Avro whose schema id no source knows is read with the file given for the topic (python3-avro bodies); removing it brings the typed error back', () => {
    const order: UserSchema = { files: [file('order.avsc')] };
    const dec = new RecordDecoder({ schemas: new SchemaRegistry(), choices: { orders: { valueSchema: order } } });
    const v = values('orders');
    for (let i = 0; i < 3; i++) {
      const d = dec.decode('orders', 'value', v[i]!);
      expect([d.format, d.error, d.schemaId, d.subject]).toEqual(['confluent', undefined, 7, 'orders-value']);
      expect(d.jsonText).toBe(fx.expected.orders[i]);
    }
    expect(dec.decode('orders', 'value', v[0]!).reason).toBe('Confluent Schema Registry framing: Confluent framing, schema id 7 is in no schema source; read with the schema file order.avsc given for orders values');
    // Keys are not given a schema: unchanged.
    expect(dec.decode('orders', 'key', new Uint8Array([0, 0, 0, 0, 7, 2])).error).toMatch(/^unknown schema id 7/);
    dec.setChoices({});
    expect(dec.decode('orders', 'value', v[0]!).error).toBe('unknown schema id 7 (no schema has an id: no _schemas topic in the opened folders, and no schema file or registry export gives ids: give a schema file for this topic (Schemas in the records header), or klx fetch --schemas ID=FILE)');
  });

  it('a schema id the _schemas topic knows wins over the file given for the topic', () => {
    const registry = registryFromSchemasTopics(logs, (l) => `${l.topic}-${l.partition}`).registry;
    const wrong: UserSchema = { files: [{ name: 'x.avsc', text: '"string"' }] };
    const dec = new RecordDecoder({ schemas: registry, choices: { orders: { valueSchema: wrong } } });
    const d = dec.decode('orders', 'value', values('orders')[0]!);
    expect([d.format, d.subject, d.jsonText]).toEqual(['confluent', 'orders-value', fx.expected.orders[0]]);
  });

  it('Protobuf with an import given as a file name only (money.proto for "common/money.proto") and a well-known type; equals json_format.MessageToDict', () => {
    const pay: UserSchema = { files: [file('payments.proto'), file('common/money.proto')] };
    checkUserSchema('payments', 'value', pay);
    const dec = new RecordDecoder({ schemas: new SchemaRegistry(), choices: { payments: { valueSchema: pay } } });
    const v = values('payments');
    for (let i = 0; i < 4; i++) {
      const d = dec.decode('payments', 'value', v[i]!);
      expect(d.error).toBeUndefined();
      expect(d.json).toEqual(fx.expected.payments[i]);
    }
    expect(dec.decode('payments', 'value', v[4]!).error).toMatch(/^Protobuf: message index 3 out of range/);
  });

  it('plain Avro datums (python3-avro) with the file given for the topic', () => {
    const dec = new RecordDecoder({ schemas: new SchemaRegistry(), choices: { plain: { valueSchema: { files: [file('plain-value.avsc', 'readings.avsc')] } } } });
    const d = dec.decode('plain', 'value', values('plain')[0]!);
    expect([d.format, d.jsonText]).toEqual(['avro', '{"sensor":"s1","celsius":21.5,"at":1700000000000}']);
    expect(d.reason).toContain('plain Avro datum with the schema given for plain values (schema file readings.avsc given for plain values)');
  });

  it('a file that cannot be used is refused naming it: not a schema extension, Avro that does not compile, a missing import, over 1 MiB', () => {
    const refused = (s: UserSchema) => {
      try {
        checkUserSchema('t', 'value', s);
      } catch (e) {
        expect(e).toBeInstanceOf(KlxError);
        return [(e as KlxError).code, (e as KlxError).file, (e as KlxError).reason];
      }
      return null;
    };
    expect(refused({ files: [{ name: 'notes.txt', text: 'x' }] })).toEqual(['invalid-argument', 'notes.txt', 'a schema file must end in .avsc (Avro), .proto (Protobuf) or .json (JSON Schema)']);
    expect(refused({ files: [{ name: 'o.avsc', text: '{"type": "record"}' }] })?.slice(0, 2)).toEqual(['invalid-argument', 'o.avsc']);
    expect(refused({ files: [{ name: 'o.avsc', text: '{"type": "record"}' }] })?.[2]).toMatch(/^cannot use this schema: /);
    expect(refused({ files: [file('payments.proto')] })?.[2]).toContain('import "common/money.proto" has no reference');
    expect(refused({ files: [{ name: 'big.json', text: `{"description": "${'x'.repeat(1 << 20)}"}` }] })?.[2]).toBe(`the schema files hold ${(1 << 20) + 19} bytes; at most 1048576 are kept per topic side`);
    expect(refused({ files: [file('event.schema.json')] })).toBeNull();
    // A file the .proto does not import would never be read: refused, naming it (was kept silently).
    expect(refused({ files: [file('payments.proto'), file('common/money.proto'), file('order.avsc')] })).toEqual([
      'invalid-argument',
      'order.avsc',
      'payments.proto does not import this file (directly or through the others given), so it would never be read: give the schema first, then only the files it imports',
    ]);
  });
});
