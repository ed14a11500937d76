import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeChoicesFile, fileDecodeChoicesStore } from '../../src-main/api/core/decode-choices-store.ts';
import { cliDecoder, openPartitionArg } from '../../src-main/cli/commands/fetch.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src-main/engine/decode/json-text.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../engine/decode/schema-fixtures.ts';
import { klx, klxWithEnv } from '../support/klx-cli.ts';

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

describe('klx fetch and klx query read the format choices saved in the app (decode-choices.json in $KLX_DATA_DIR)', () => {
  it('a saved choice for a folder holding the partition applies; --key-format overrides it; another folder\'s choice does not apply', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'klx-saved-choices-'));
    try {
      const env = { KLX_DATA_DIR: dataDir };
      const orders = (args: string[]) => {
        const r = klxWithEnv(['fetch', join(fx.logDir, 'orders-0'), '--offset', 'earliest', '--json', ...args], env);
        const recs = r.stdout.trim().split('\n').map((l) => parseJsonExact(l) as Record<string, unknown>).filter((l) => l.type === 'record');
        return { r, recs };
      };
      // Nothing saved: auto reads the first key as a long.
      expect(orders([]).recs[0]!.keyFormat).toBe('long');
      // What the app writes when the user picks hex for orders' keys in the log directory (a real path).
      fileDecodeChoicesStore(decodeChoicesFile(dataDir)).set(realpathSync(fx.logDir), { orders: { key: 'hex' } });
      fileDecodeChoicesStore(decodeChoicesFile(dataDir)).set(realpathSync(fx.files), { orders: { value: 'hex' } });
      const saved = orders([]);
      expect(saved.recs.map((x) => [x.keyFormat, x.valueFormat])[0]).toEqual(['hex', 'confluent']);
      expect(saved.recs[0]!.keyDecoded).toBe('0000000000000001');
      expect(saved.r.stderr).toContain(`klx: note: decoding keys of orders as hex, the format saved in the app (${decodeChoicesFile(dataDir)}); --key-format overrides it`);
      expect(saved.r.stderr).not.toContain('values of orders');
      const overridden = orders(['--key-format', 'auto']);
      expect(overridden.recs[0]!.keyFormat).toBe('long');
      expect(overridden.r.stderr).toBe('');
      // klx query builds the decoded columns with the same saved choice.
      const q = klxWithEnv(['query', fx.logDir, "SELECT key_format, value_format, count(*) AS n FROM records WHERE topic = 'orders' GROUP BY ALL ORDER BY 1, 2", '--json', '--no-cache'], env);
      expect(q.stderr).toBe('');
      expect(q.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([{ key_format: 'hex', value_format: 'confluent', n: 7 }]);
      // A saved name this version does not know: auto, with a note.
      fileDecodeChoicesStore(decodeChoicesFile(dataDir)).set(realpathSync(fx.logDir), { orders: { key: 'no-such-format' } });
      const unknown = orders([]);
      expect(unknown.recs[0]!.keyFormat).toBe('long');
      expect(unknown.r.stderr).toContain('the key format saved in the app for orders ("no-such-format"');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('cliDecoder: schema files given in the app for the topic', () => {
  it('are used by klx fetch, with a note naming the file', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'klx-saved-schemas-'));
    try {
      const text = readFileSync(join(fx.files, 'plain-value.avsc'), 'utf8');
      fileDecodeChoicesStore(decodeChoicesFile(dataDir)).set(realpathSync(fx.logDir), { plain: { valueSchema: { files: [{ name: 'readings.avsc', text }] } } });
      const log = openPartitionArg(join(fx.logDir, 'plain-0'));
      const { decoder, notes } = cliDecoder(log, 'plain', undefined, 'avro', [], dataDir);
      expect(notes).toEqual([`reading values of plain with the schema file readings.avsc given in the app (${decodeChoicesFile(dataDir)})`]);
      const first = readFileSync(join(fx.files, 'plain.ndjson'), 'utf8').split('\n')[0]!;
      const d = decoder.decode('plain', 'value', new Uint8Array(Buffer.from((JSON.parse(first) as { valueBase64: string }).valueBase64, 'base64')));
      expect([d.format, d.jsonText]).toEqual(['avro', '{"sensor":"s1","celsius":21.5,"at":1700000000000}']);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
