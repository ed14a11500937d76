import { describe, expect, it } from 'vitest';
import { RecordDecoder } from '../../../src-main/engine/decode/record-decoder.ts';
import { recordsOf, walkLog } from '../../../src-main/engine/log/log-walk.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { describeRealData, REAL_DATA, realDataCases } from '../../support/real-data.ts';
import { join } from 'node:path';

/** Decodes every record of the partitions of `topic` in a real data set through the layer (auto). */
/** The values of every record of `topic`'s partition under `logDir`, in log order (the fixtures have no null value). */
function topicValues(logDir: string, topic: string): Uint8Array[] {
  const part = allPartitions(openPath(logDir)).find((p) => p.log.topic === topic)!.log;
  return [...walkLog(part)].flatMap((e) => (e.type === 'batch' ? recordsOf(e).map((r) => r.value!) : []));
}

function decodeAll(caseName: string, topic: string) {
  const dec = new RecordDecoder();
  const out = { records: 0, keyFormats: new Map<string, number>(), valueFormats: new Map<string, number>(), errors: [] as string[], samples: [] as string[] };
  for (const { log } of allPartitions(openPath(join(REAL_DATA, caseName)))) {
    if (log.topic !== topic) continue;
    for (const e of walkLog(log)) {
      if (e.type !== 'batch') continue;
      const control = e.header.isControl;
      if (control && topic !== '__cluster_metadata') continue;
      for (const r of recordsOf(e)) {
        out.records++;
        const d = dec.decodeRecord(topic, r.key, r.value, control ? r.control?.typeId : undefined);
        out.keyFormats.set(d.key.format, (out.keyFormats.get(d.key.format) ?? 0) + 1);
        out.valueFormats.set(d.value.format, (out.valueFormats.get(d.value.format) ?? 0) + 1);
        if (d.key.error) out.errors.push(`${log.topic}-${log.partition}@${r.offset} key: ${d.key.error}`);
        if (d.value.error) out.errors.push(`${log.topic}-${log.partition}@${r.offset} value: ${d.value.error}`);
        if (out.samples.length < 500 && !control) out.samples.push(`${d.key.text} => ${d.value.text}`);
      }
    }
  }
  return out;
}

describeRealData('internal topics through the decode layer (auto picks by topic name)', () => {
  const offsetsCases = realDataCases().filter((c) => c !== 'kraft-metadata-small' && c !== 'kraft-3x-metadata-2seg');
  it.each(offsetsCases)('%s: every __consumer_offsets record decodes, tombstones print <DELETE>', (c) => {
    const r = decodeAll(c, '__consumer_offsets');
    if (r.records === 0) return; // this set has no __consumer_offsets
    expect(r.errors).toEqual([]);
    expect([...r.keyFormats.keys()]).toEqual(['consumer-offsets']);
    for (const f of r.valueFormats.keys()) expect(['consumer-offsets']).toContain(f);
  });

  it('kafka-0.10.1-magic1: old offset commit values (v0/v1) read by the layer', () => {
    const r = decodeAll('kafka-0.10.1-magic1', '__consumer_offsets');
    expect(r.records).toBeGreaterThan(0);
    expect(r.samples.filter((x) => /^OffsetCommit · .+ · .+-\d+ => offset \d+.* · v[01]$/.test(x)).length).toBeGreaterThan(0);
    expect(r.samples.filter((x) => /^GroupMetadata · .+ => consumer · gen \d+ · .+ · v[01]$/.test(x)).length).toBeGreaterThan(0);
  });

  it.each(['kraft-metadata-small', 'kraft-3x-metadata-2seg'])('%s: every __cluster_metadata record and KRaft control record decodes, as dump-log prints it', (c) => {
    const r = decodeAll(c, '__cluster_metadata');
    expect(r.records).toBeGreaterThan(0);
    expect(r.errors).toEqual([]);
    expect(r.samples[0]).toMatch(/^null => \{"type":"[A-Z_]+_RECORD","version":\d+,"data":\{/);
  });
});

describe('auto remembers a sure pick per topic side', () => {
  it('a second record of the same topic takes the remembered format and keeps the reason', () => {
    const dec = new RecordDecoder();
    const key = new Uint8Array([0, 1, 0, 1, 0x67, 0, 1, 0x74, 0, 0, 0, 3]); // OffsetCommit key v1: group "g", topic "t", partition 3
    const a = dec.decode('__consumer_offsets', 'key', key);
    const b = dec.decode('__consumer_offsets', 'key', key);
    expect([a.format, a.text, b.format, b.text, b.reason]).toEqual(['consumer-offsets', 'OffsetCommit · g · t-3', 'consumer-offsets', 'OffsetCommit · g · t-3', a.reason]);
    expect(dec.decode('__consumer_offsets', 'value', null, key).text).toBe('<DELETE>');
    dec.setChoices({ __consumer_offsets: { key: 'hex' } });
    expect(dec.decode('__consumer_offsets', 'key', key).text).toBe('000100016700017400000003');
  });
});

describe('auto skips detection for the same schema id, not for another (python3-avro bodies, _schemas by klx append)', () => {
  it('records framed with ids 7, 7, 21, 7 each get their own schema and reason', async () => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const fx = buildSchemaFixtures();
    try {
      const dec = new RecordDecoder({ schemas: schemasOf(openPath(fx.logDir)).registry });
      const values = topicValues(fx.logDir, 'orders');
      const got = [0, 1, 6, 2].map((i) => dec.decode('orders', 'value', values[i]!));
      expect(got.map((d) => [d.schemaId, d.text])).toEqual([
        [7, fx.expected.orders[0]],
        [7, fx.expected.orders[1]],
        [21, '"still here"'],
        [7, fx.expected.orders[2]],
      ]);
      expect(got[1]!.reason).toBe(got[0]!.reason);
      expect(got[0]!.reason).toMatch(/schema id 7 \(Avro, orders-value v1\)/);
      expect(got[2]!.reason).toMatch(/schema id 21 \(Avro, old-value v1, soft-deleted\)/);
      expect(got[3]!.reason).toBe(got[0]!.reason);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});

describe('a reader kept for a schema id follows schema changes (python3-avro bodies, _schemas by klx append)', () => {
  it.each([
    ['auto', {}],
    ['format confluent', { orders: { value: 'confluent' } }],
  ])('%s: after the id-7 subject version is hard-deleted, the next id-7 record is not read with the old schema', async (_name, choices) => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const fx = buildSchemaFixtures();
    try {
      const registry = schemasOf(openPath(fx.logDir)).registry;
      const dec = new RecordDecoder({ schemas: registry, choices });
      const values = topicValues(fx.logDir, 'orders');
      const before = [0, 1].map((i) => dec.decode('orders', 'value', values[i]!));
      expect(before.map((d) => [d.format, d.schemaId, d.text])).toEqual([
        ['confluent', 7, fx.expected.orders[0]],
        ['confluent', 7, fx.expected.orders[1]],
      ]);
      registry.remove('orders-value', 1);
      const after = dec.decode('orders', 'value', values[2]!);
      expect([after.format, after.schemaId, after.errorCode, after.error, after.text]).toEqual(['confluent', 7, 'unknown-schema', 'unknown schema id 7', null]);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});

describe('the reader kept for a schema id answers what the generic decode does (python3-avro bodies, _schemas by klx append)', () => {
  it('good bodies with int64 ±2^63−1/−2^63, a truncated body, bytes left after the datum: same JSON, errors, positions, schema id', async () => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const { decodeBytes } = await import('../../../src-main/engine/decode/format.ts');
    const fx = buildSchemaFixtures();
    try {
      const registry = schemasOf(openPath(fx.logDir)).registry;
      const dec = new RecordDecoder({ schemas: registry, choices: { orders: { value: 'confluent' } } });
      const values = topicValues(fx.logDir, 'orders');
      const longer = new Uint8Array([...values[2]!, 7, 7]);
      const inputs = [values[0]!, values[1]!, values[2]!, values[3]!, longer, values[0]!];
      const seen = (d: ReturnType<RecordDecoder['decode']>) => [d.format, d.ok, d.jsonText, d.error, d.errorCode, d.errorPosition, d.schemaId, d.subject, d.version];
      const got = inputs.map((v) => dec.decode('orders', 'value', v));
      const generic = inputs.map((v) => decodeBytes(dec.formats, v, { topic: 'orders', side: 'value', schemas: registry }, 'confluent'));
      expect(got.map(seen)).toEqual(generic.map(seen));
      expect(got.map((d) => d.jsonText)).toEqual([fx.expected.orders[0], fx.expected.orders[1], fx.expected.orders[2], null, fx.expected.orders[2], fx.expected.orders[0]]);
      const len = values[3]!.byteLength;
      expect(seen(got[3]!)).toEqual(['confluent', false, null, `Avro: read past the end of the ${len - 5}-byte datum (bytes 5–${len - 1})`, 'truncated', len, 7, undefined, undefined]);
      const end = values[2]!.byteLength;
      expect(seen(got[4]!)).toEqual(['confluent', true, fx.expected.orders[2], `Avro: 2 bytes left after the datum (it ends at byte ${end} of ${end + 2})`, 'invalid', undefined, 7, 'orders-value', 1]);
      expect(fx.expected.orders[0]).toContain('"big":9223372036854775807');
      // The truncated body as a view followed by more bytes in its ArrayBuffer (a whole good value):
      // reading on past its end must not make it decode; it is the same truncated error.
      const joined = new Uint8Array([...values[3]!, ...values[0]!, ...values[0]!]);
      const inside = joined.subarray(0, values[3]!.byteLength);
      expect(seen(dec.decode('orders', 'value', inside))).toEqual(seen(got[3]!));
      // A good body in the middle of a bigger ArrayBuffer: its JSON.
      const middle = new Uint8Array([9, 9, ...values[1]!, 9]).subarray(2, 2 + values[1]!.byteLength);
      expect(dec.decode('orders', 'value', middle).jsonText).toBe(fx.expected.orders[1]);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});

describe('Protobuf read with a reader over the whole value (python3-protobuf bodies, _schemas by klx append)', () => {
  it('good bodies, a body cut short and a wire type 7: the JSON of json_format, and the errors with their positions counted from the value start', async () => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const { decodeBytes } = await import('../../../src-main/engine/decode/format.ts');
    const fx = buildSchemaFixtures();
    try {
      const registry = schemasOf(openPath(fx.logDir)).registry;
      const dec = new RecordDecoder({ schemas: registry, choices: { payments: { value: 'confluent' } } });
      const values = topicValues(fx.logDir, 'payments');
      const v0 = values[0]!;
      // Framing 00 00000009, message index [1] (02 02), then the message from byte 7: field 1 (0a) first.
      expect([...v0.subarray(0, 8)]).toEqual([0, 0, 0, 0, 9, 2, 2, 0x0a]);
      const cut = v0.subarray(0, v0.byteLength - 2);
      const wire7 = new Uint8Array([...v0.subarray(0, 7), 0x0f, 1, 2]); // tag 0x0f: field 1, wire type 7
      const inputs = [values[0]!, values[1]!, values[2]!, values[3]!, cut, wire7];
      const seen = (d: ReturnType<RecordDecoder['decode']>) => [d.format, d.ok, d.json, d.error, d.errorCode, d.errorPosition, d.schemaId];
      const got = inputs.map((v) => dec.decode('payments', 'value', v));
      const generic = inputs.map((v) => decodeBytes(dec.formats, v, { topic: 'payments', side: 'value', schemas: registry }, 'confluent'));
      expect(got.map(seen)).toEqual(generic.map(seen));
      expect(got.slice(0, 4).map((d) => d.json)).toEqual(fx.expected.payments.slice(0, 4));
      // protobufjs's messages, with the position it stopped at counted from its reader's start (byte 7).
      // The last field (tag 3a, length 6) holds the value's last 6 bytes: cut 2 short, its bytes are where reading stopped.
      expect([...v0.subarray(v0.byteLength - 8, v0.byteLength - 6)]).toEqual([0x3a, 6]);
      expect(seen(got[4]!)).toEqual(['confluent', false, undefined, 'Protobuf: index out of range (Payment)', 'invalid', v0.byteLength - 6, 9]);
      expect(seen(got[5]!)).toEqual(['confluent', false, undefined, 'Protobuf: invalid wire type 7 at offset 1 (Payment)', 'invalid', 8, 9]);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});

describe('keys and values decoded in turn keep each side on its own remembered format (python3-avro bodies, _schemas by klx append)', () => {
  it('orders key (int64) and value (Avro id 7) alternating, then a payments record between: the same answers as one decoder per side', async () => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const fx = buildSchemaFixtures();
    try {
      const opened = openPath(fx.logDir);
      const registry = schemasOf(opened).registry;
      const recs = (topic: string) => {
        const part = allPartitions(opened).find((p) => p.log.topic === topic)!.log;
        return [...walkLog(part)].flatMap((e) => (e.type === 'batch' ? recordsOf(e).map((r) => ({ topic, key: r.key, value: r.value })) : []));
      };
      const orders = recs('orders');
      const seq = [orders[0]!, orders[1]!, recs('payments')[0]!, orders[2]!, orders[0]!];
      const both = new RecordDecoder({ schemas: registry });
      const keys = new RecordDecoder({ schemas: registry });
      const values = new RecordDecoder({ schemas: registry });
      const seen = (d: ReturnType<RecordDecoder['decode']>) => [d.format, d.reason, d.jsonText, d.error, d.schemaId];
      for (const r of seq) {
        const d = both.decodeRecord(r.topic, r.key, r.value);
        expect([seen(d.key), seen(d.value)]).toEqual([seen(keys.decode(r.topic, 'key', r.key)), seen(values.decode(r.topic, 'value', r.value, r.key))]);
      }
      const last = both.decodeRecord('orders', orders[0]!.key, orders[0]!.value);
      expect([last.key.format, last.key.text, last.value.schemaId, last.value.jsonText]).toEqual(['long', '1', 7, fx.expected.orders[0]]);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});

describe('openSchemasTopics: only the _schemas partitions are opened for the schemas (python3-avro bodies, _schemas by klx append)', () => {
  it('opens _schemas-0 alone, lists no other partition, and the registry has the same schemas as one built from every partition', async () => {
    const { buildSchemaFixtures } = await import('./schema-fixtures.ts');
    const { openSchemasTopics, schemasOf } = await import('../../../src-main/engine/decode/record-decoder.ts');
    const fx = buildSchemaFixtures();
    try {
      const opened = openSchemasTopics(fx.logDir);
      expect(opened.logDirs.flatMap((d) => d.partitions.map((p) => `${p.topic}-${p.partition}`))).toEqual(['_schemas-0']);
      expect(opened.logDirs.flatMap((d) => d.unopened)).toEqual([]);
      const every = allPartitions(openPath(fx.logDir)).map((p) => p.log.topic).sort();
      expect(every).toEqual(['_schemas', 'events', 'orders', 'payments', 'plain']);
      const few = schemasOf(opened);
      const all = schemasOf(openPath(fx.logDir));
      const rows = (r: typeof few) => r.registry.all().map((e) => [e.id, e.subject, e.version]).sort((a, b) => Number(a[0]) - Number(b[0]));
      expect(rows(few)).toEqual(rows(all));
      expect(few.stats).toEqual(all.stats);
      // Ids 7 and 21 are the ones the orders records are framed with (see the test above).
      expect(few.registry.byId(7)?.subject).toBe('orders-value');
      expect(few.registry.byId(21)).toBeDefined();
      expect(few.registry.size).toBeGreaterThanOrEqual(2);
    } finally {
      fx.cleanup();
    }
  }, 60_000);
});
