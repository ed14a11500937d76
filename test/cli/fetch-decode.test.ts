import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src-main/engine/decode/json-text.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../engine/decode/schema-fixtures.ts';
import { klx } from '../support/klx-cli.ts';

let fx: SchemaFixtures;
beforeAll(() => {
  fx = buildSchemaFixtures();
}, 120_000);
afterAll(() => fx?.cleanup());


describe('klx fetch decodes keys and values (bodies from python3-avro, _schemas beside the partition)', () => {
  it('--json gains keyFormat, valueFormat, keyDecoded, valueDecoded, schemaId, decodeError; int64 exact', () => {
    const r = klx('fetch', join(fx.logDir, 'orders-0'), '--offset', 'earliest', '--json');
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n').map((l) => parseJsonExact(l) as Record<string, unknown>);
    const recs = lines.filter((l) => l.type === 'record');
    expect(recs.map((x) => [x.keyFormat, x.valueFormat, x.schemaId, x.decodeError])).toEqual([
      ['long', 'confluent', 7, null],
      ['long', 'confluent', 7, null],
      ['long', 'confluent', 7, null],
      ['string', 'confluent', 7, expect.stringMatching(/^Avro: read past the end/)],
      ['string', 'confluent', 12, 'unknown schema id 12'],
      ['string', 'confluent', 20, 'unknown schema id 20'],
      ['string', 'confluent', 21, null],
    ]);
    expect(recs[0]!.keyDecoded).toBe(1);
    expect((recs[0]!.valueDecoded as { big: bigint }).big).toBe(9223372036854775807n);
    expect(r.stdout.split('\n')[0]).toContain('"big":9223372036854775807');
  });

  it('--value-format and --schemas: plain Avro with a schema file; an unknown format is a usage error', () => {
    const r = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--value-format', 'avro', '--schemas', join(fx.files, 'plain-value.avsc'));
    expect(r.stdout.split('\n')[0]).toMatch(/^offset 0 ts .* key: "s1" value: \{"sensor":"s1","celsius":21\.5,"at":1700000000000\}$/);
    const bad = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--value-format', 'nope');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('no format named "nope"');
  });
});
