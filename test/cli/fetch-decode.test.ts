import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeChoicesFile, fileDecodeChoicesStore } from '../../src-main/api/core/decode-choices-store.ts';
import { cliDecoder, openPartitionArg } from '../../src-main/cli/commands/fetch.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonExact, toJsonText } from '../../src-main/engine/decode/json-text.ts';
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

describe('klx fetch --schemas: how a schema file is mapped (a file named neither <id>.avsc nor <topic>-value.avsc)', () => {
  const plainText = (r: { stdout: string }) => r.stdout.split('\n')[0];
  const reading0 = /^offset 0 ts .* key: "s1" value: \{"sensor":"s1","celsius":21\.5,"at":1700000000000\}$/;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'klx-schema-map-'));
    writeFileSync(join(dir, 'pay.avsc'), readFileSync(join(fx.files, 'plain-value.avsc')));
    writeFileSync(join(dir, 'shop-order.avsc'), readFileSync(join(fx.files, 'order.avsc')));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a file that maps to nothing is a typed error naming the file and how to map it (was ignored, then "no schema files given")', () => {
    const r = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--schemas', join(dir, 'pay.avsc'));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`klx: invalid-argument: ${join(dir, 'pay.avsc')}: this schema file is not used: its name maps it to no schema id and no topic`);
    expect(r.stderr).toContain('--schemas 42=pay.avsc (schema id 42) or --schemas plain-value=pay.avsc (subject plain-value: the values of topic plain, framed or plain Avro)');
  });

  it('--value-format avro with exactly one schema file: the file is used for the values, with a note', () => {
    const r = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--value-format', 'avro', '--schemas', join(dir, 'pay.avsc'));
    expect(plainText(r)).toMatch(reading0);
    expect(r.stderr).toBe(`klx: note: reading values of plain with ${join(dir, 'pay.avsc')}, the only schema file given (--value-format avro); --schemas plain-value=FILE says so explicitly\n`);
    // Both sides Avro: which one is not clear, so it is an error again.
    const both = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--key-format', 'avro', '--value-format', 'avro', '--schemas', join(dir, 'pay.avsc'));
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('this schema file is not used');
  });

  it('SUBJECT=FILE maps a file to a subject (<topic>-value: that topic\'s values); ID=FILE to a schema id', () => {
    const bySubject = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--schemas', `plain-value=${join(dir, 'pay.avsc')}`);
    expect(bySubject.stderr).toBe('');
    expect(plainText(bySubject)).toMatch(reading0);
    // orders-0's record 4 is framed with schema id 12, which _schemas-0 does not hold.
    const before = klx('fetch', join(fx.logDir, 'orders-0'), '--offset', '4', '--max', '1', '--json');
    expect((parseJsonExact(before.stdout.split('\n')[0]!) as Record<string, unknown>).decodeError).toBe('unknown schema id 12');
    const byId = klx('fetch', join(fx.logDir, 'orders-0'), '--offset', '4', '--max', '1', '--json', '--schemas', `12=${join(dir, 'shop-order.avsc')}`);
    expect(byId.stderr).toBe('');
    const rec = parseJsonExact(byId.stdout.split('\n')[0]!) as Record<string, unknown>;
    expect([rec.schemaId, rec.decodeError, toJsonText(rec.valueDecoded)]).toEqual([12, null, fx.expected.orders[0]]);
    // A mapping names one file: not a folder.
    const folder = klx('fetch', join(fx.logDir, 'orders-0'), '--offset', '5', '--schemas', `12=${dir}`);
    expect(folder.status).toBe(2);
    expect(folder.stderr).toContain(`klx: invalid-argument: ${dir}: 12=PATH maps one schema file; this is a folder`);
  });

  it('a folder: files that map to nothing are named in a note (not silently skipped)', () => {
    const r = klx('fetch', join(fx.logDir, 'plain-0'), '--offset', 'earliest', '--max', '1', '--schemas', fx.files);
    expect(plainText(r)).toMatch(reading0);
    expect(r.stderr).toContain(`klx: note: ${join(fx.files, 'event.schema.json')}: this schema file is not used: its name maps it to no schema id and no topic`);
    expect(r.stderr).not.toContain('customer.avsc'); // _schemas-0's orders-value refers to subject customer
    expect(r.stderr).not.toContain(`${join(fx.files, 'plain-value.avsc')}:`);
    expect(r.stderr).not.toContain('money.proto'); // payments.proto imports it
  });

  it('--help says how files are mapped', () => {
    const help = klx('fetch', '--help').stdout.replace(/\s+/g, ' ');
    expect(help).toContain('<schemaId>.avsc');
    expect(help).toContain('<topic>-value.avsc');
    expect(help).toContain('ID=FILE');
    expect(help).toContain('SUBJECT=FILE');
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
      // klx query builds the decoded columns with the same saved choice, and says so as klx fetch does.
      const q = klxWithEnv(['query', fx.logDir, "SELECT key_format, value_format, count(*) AS n FROM records WHERE topic = 'orders' GROUP BY ALL ORDER BY 1, 2", '--json', '--no-cache'], env);
      // Then, as every --json query that reads values back, what that cost (the one batch of orders, its bytes in the .log).
      expect(q.stderr).toBe(`klx: note: decoding keys of orders as hex, the format saved in the app (${decodeChoicesFile(dataDir)}); --key-format overrides it\nklx: note: values read back from 1 batch (383 bytes) of the log\n`);
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
