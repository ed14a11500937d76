/**
 * `klx query` and `klx export` take fetch's decode options (`--key-format`, `--value-format`,
 * `--schemas`, one meaning: src-main/cli/decode-options.ts) for every topic under the folder. The
 * fixture is a customer's log copy without a `_schemas` topic: python3-avro (not this project's
 * code) wrote a schema file `42.avsc` and the Avro bodies of topic signups (offsets 0-2 framed as
 * Confluent's serializer frames them, schema id 42; offsets 3-4 plain Avro); topic audit holds JSON
 * text. The folders are written with `klx create` and `klx append --records`, as a user would.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeChoicesFile, fileDecodeChoicesStore } from '../../src-main/api/core/decode-choices-store.ts';
import { parseJsonExact, toJsonText } from '../../src-main/engine/decode/json-text.ts';
import { klx, klxWithEnv, type KlxRun } from '../support/klx-cli.ts';
import { tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

let root: string;
let files: string;
let logs: string;
/** An empty data folder: no format saved in the app. */
let dataDir: string;
let expected: { datums: string[]; names: string[] };

/** `klx ...args` with no format saved in the app (an empty $KLX_DATA_DIR). */
const run = (...args: string[]): KlxRun => withoutReadBackNote(klxWithEnv(args, { KLX_DATA_DIR: dataDir }));

/** A run with `klx query`'s read-back note taken out of stderr (the note is tested in query-robustness.test.ts). */
function withoutReadBackNote(r: KlxRun): KlxRun {
  return { ...r, stderr: r.stderr.replace(/^klx: note: values read back from \d+ batch(?:es)? \([\d.]+ (?:bytes|KiB|MiB)\) of the log\n/m, '') };
}
const rows = (r: KlxRun) => r.stdout.trim().split('\n').filter(Boolean).map((l) => parseJsonExact(l) as Record<string, unknown>);

beforeAll(() => {
  root = tempDir('klx-log-copy-');
  files = join(root, 'files');
  logs = join(root, 'logs');
  dataDir = join(root, 'data');
  try {
    execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'test/engine/decode/fixtures/encode_log_copy.py'), files], { stdio: 'pipe' });
  } catch (e) {
    throw new Error(`the fixture encoder needs /usr/bin/python3 with python3-avro (apt-get install python3-avro): ${(e as { stderr?: Buffer }).stderr?.toString() ?? e}`);
  }
  for (const topic of ['signups', 'audit']) {
    const c = klx('create', join(logs, `${topic}-0`));
    expect(c.status, c.stderr).toBe(0);
    const a = klx('append', join(logs, `${topic}-0`), '--records', join(files, `${topic}.ndjson`));
    expect(a.status, a.stderr).toBe(0);
  }
  expected = JSON.parse(readFileSync(join(files, 'expected.json'), 'utf8')) as typeof expected;
  // The same schema under a name that maps it to nothing.
  writeFileSync(join(files, 'pay.avsc'), readFileSync(join(files, '42.avsc')));
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SIGNUPS = `SELECT "offset", value_format, value_decoded, value_decoded->>'name' AS name, schema_id, decode_error FROM records WHERE topic = 'signups' ORDER BY "offset"`;

describe('klx query --schemas / --value-format (a log copy without _schemas)', () => {
  it('--schemas 42.avsc: framed records give the values python3-avro wrote; SUBJECT=FILE adds the plain ones', () => {
    const r = run('query', logs, SIGNUPS, '--json', '--no-cache', '--schemas', join(files, '42.avsc'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const got = rows(r);
    expect(got.slice(0, 3).map((x) => [x.offset, x.value_format, x.name, x.schema_id, x.decode_error])).toEqual([
      [0, 'confluent', 'Ana', 42, null],
      [1, 'confluent', 'Bruno', 42, null],
      [2, 'confluent', 'Chloé', 42, null],
    ]);
    expect(got.slice(0, 3).map((x) => x.name)).toEqual(expected.names.slice(0, 3));
    // The whole datum as the encoder printed it, the long 2^53 + 1 exact.
    expect(got.slice(0, 3).map((x) => toJsonText(x.value_decoded))).toEqual(expected.datums.slice(0, 3));
    expect(r.stdout).toContain('"visits":9007199254740993');
    // Plain Avro needs the topic's schema: 42.avsc again as subject signups-value.
    const both = run('query', logs, SIGNUPS, '--json', '--no-cache', '--schemas', join(files, '42.avsc'), '--schemas', `signups-value=${join(files, '42.avsc')}`);
    expect(both.stderr).toBe('');
    expect(rows(both).map((x) => [x.value_format, toJsonText(x.value_decoded)])).toEqual([
      ...expected.datums.slice(0, 3).map((d) => ['confluent', d]),
      ...expected.datums.slice(3).map((d) => ['avro', d]),
    ]);
  });

  it('without --schemas: the decode error in decode_error, NULL value_decoded, exit 0', () => {
    const r = run('query', logs, SIGNUPS, '--json', '--no-cache');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const got = rows(r).slice(0, 3);
    expect(got.map((x) => [x.value_format, x.value_decoded, x.schema_id])).toEqual(Array(3).fill(['confluent', null, 42]));
    for (const x of got) expect(x.decode_error).toMatch(/^unknown schema id 42 \(no schema has an id: no _schemas topic in the opened folder/);
  });

  it('an unused schema file, an unknown format: exit 2 naming them, before any table is built', () => {
    const r = run('query', logs, 'SELECT 1', '--no-cache', '--schemas', join(files, 'pay.avsc'));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `klx: invalid-argument: ${join(files, 'pay.avsc')}: this schema file is not used: its name maps it to no schema id and no topic, and no schema imports it ` +
        '(files are mapped by name: <schemaId>.avsc e.g. 42.avsc, <topic>-value.avsc / <topic>-key.avsc e.g. audit-value.avsc); ' +
        'map it explicitly with --schemas 42=pay.avsc (schema id 42) or --schemas audit-value=pay.avsc (subject audit-value: the values of topic audit, framed or plain Avro)\n',
    );
    const bad = run('query', logs, 'SELECT 1', '--no-cache', '--key-format', 'nope');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^klx: invalid-argument: no format named "nope"; formats: auto, .*\bhex\n$/);
  });

  it('a lone unmapped .avsc with --value-format avro is the values\' schema when the folder holds one topic (a note); with two topics it must be mapped', () => {
    const lone = join(files, 'pay.avsc');
    const one = run('query', join(logs, 'signups-0'), SIGNUPS, '--json', '--no-cache', '--value-format', 'avro', '--schemas', lone);
    expect(one.stderr).toBe(`klx: note: reading values of signups with ${lone}, the only schema file given (--value-format avro); --schemas signups-value=FILE says so explicitly\n`);
    expect(rows(one).slice(3).map((x) => toJsonText(x.value_decoded))).toEqual(expected.datums.slice(3));
    const two = run('query', logs, SIGNUPS, '--no-cache', '--value-format', 'avro', '--schemas', lone);
    expect(two.status).toBe(2);
    expect(two.stderr).toContain(`klx: invalid-argument: ${lone}: this schema file is not used`);
  });

  it('--value-format applies to every topic and changes the answer on a cached folder without --rebuild (decoded columns are computed at query time)', () => {
    const cache = join(root, 'cache-formats');
    const q = `SELECT topic, "offset", value_format, value_decoded FROM records ORDER BY topic, "offset"`;
    const cacheFiles = () => readdirSync(cache).filter((n) => n.endsWith('.duckdb')).map((n) => `${n} ${statSync(join(cache, n)).ino} ${statSync(join(cache, n)).mtimeMs}`).sort();
    const auto = run('query', logs, q, '--json', '--cache-dir', cache, '--schemas', join(files, '42.avsc'));
    expect(auto.stderr).toBe('');
    const built = cacheFiles();
    expect(built).toHaveLength(1);
    expect(rows(auto).map((x) => x.value_format)).toEqual(['json', 'json', 'confluent', 'confluent', 'confluent', 'hex', 'hex']);
    const str = run('query', logs, q, '--json', '--cache-dir', cache, '--schemas', join(files, '42.avsc'), '--value-format', 'string');
    expect(str.stderr).toBe('');
    // The same table set, untouched: no rebuild.
    expect(cacheFiles()).toEqual(built);
    const got = rows(str);
    expect(got.map((x) => x.value_format)).toEqual(Array(7).fill('string'));
    expect(got[0]!.value_decoded).toBe('{"event": "login"}');
    // Signup 0's bytes as text: the frame (0, then schema id 42 = '*'), then the Avro body python3-avro wrote.
    expect(got[2]!.value_decoded).toBe('\u0000\u0000\u0000\u0000*\u0006Ana\u0006\u0000');
  });

  it('an edited schema file (mapped with ID=FILE) gives a new table set: the schemas table is never served stale', () => {
    const cache = join(root, 'cache-schemas');
    const file = join(files, 'signup.avsc');
    const schema = JSON.parse(readFileSync(join(files, '42.avsc'), 'utf8')) as { doc?: string };
    writeFileSync(file, JSON.stringify({ ...schema, doc: 'v1' }));
    utimesSync(file, 1700000000, 1700000000);
    const q = `SELECT id, subject, "schema"->>'doc' AS doc FROM schemas`;
    const first = run('query', logs, q, '--json', '--cache-dir', cache, '--schemas', `42=${file}`);
    expect(first.stderr).toBe('');
    expect(rows(first)).toEqual([{ id: 42, subject: 'id-42', doc: 'v1' }]);
    // Same size, same mtime: only the contents tell.
    const st = statSync(file);
    writeFileSync(file, JSON.stringify({ ...schema, doc: 'v2' }));
    utimesSync(file, 1700000000, 1700000000);
    expect([statSync(file).size, statSync(file).mtimeMs]).toEqual([st.size, st.mtimeMs]);
    const second = run('query', logs, q, '--json', '--cache-dir', cache, '--schemas', `42=${file}`);
    expect(second.stderr).toBe('');
    expect(rows(second)).toEqual([{ id: 42, subject: 'id-42', doc: 'v2' }]);
  });

  it('an option wins over the format saved in the app; without it the saved one applies, with a note', () => {
    const saved = join(root, 'data-saved');
    fileDecodeChoicesStore(decodeChoicesFile(saved)).set(realpathSync(logs), { signups: { value: 'hex' } });
    const env = { KLX_DATA_DIR: saved };
    const q = `SELECT DISTINCT topic, value_format FROM records ORDER BY ALL`;
    const byApp = withoutReadBackNote(klxWithEnv(['query', logs, q, '--json', '--no-cache'], env));
    expect(byApp.stderr).toBe(`klx: note: decoding values of signups as hex, the format saved in the app (${decodeChoicesFile(saved)}); --value-format overrides it\n`);
    expect(rows(byApp)).toEqual([{ topic: 'audit', value_format: 'json' }, { topic: 'signups', value_format: 'hex' }]);
    const byOption = withoutReadBackNote(klxWithEnv(['query', logs, q, '--json', '--no-cache', '--value-format', 'auto', '--schemas', join(files, '42.avsc')], env));
    expect(byOption.stderr).toBe('');
    expect(rows(byOption)).toEqual([{ topic: 'audit', value_format: 'json' }, { topic: 'signups', value_format: 'confluent' }, { topic: 'signups', value_format: 'hex' }]);
  });

  it('--help names the options and says they apply to every topic', () => {
    const help = klx('query', '--help').stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--key-format <format> decode the keys of every topic under PATH as FORMAT');
    expect(help).toContain('--schemas <path> schema files');
    expect(help).toContain('ID=FILE');
    expect(help).toContain("--schemas 42.avsc");
  });
});

describe('klx export --schemas / --value-format', () => {
  const exportNdjson = (name: string, ...args: string[]) => {
    const out = join(root, name);
    const r = run('export', logs, '--format', 'ndjson', '--out', out, '--where', `topic = 'signups'`, ...args);
    return { r, out, recs: existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').map((l) => parseJsonExact(l) as Record<string, unknown>) : [] };
  };

  it('value_decoded holds the values python3-avro wrote (framed with --schemas 42.avsc, plain with SUBJECT=FILE)', () => {
    const { r, recs } = exportNdjson('signups.ndjson', '--schemas', join(files, '42.avsc'), '--schemas', `signups-value=${join(files, '42.avsc')}`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(recs.map((x) => [x.offset, x.value_format, x.schema_id, x.decode_error, toJsonText(x.value_decoded)])).toEqual([
      ...expected.datums.slice(0, 3).map((d, i) => [i, 'confluent', 42, null, d]),
      ...expected.datums.slice(3).map((d, i) => [i + 3, 'avro', null, null, d]),
    ]);
  });

  it('without --schemas: the decode error, not a crash; --value-format string for every record', () => {
    const plain = exportNdjson('signups-none.ndjson');
    expect(plain.r.status).toBe(0);
    expect(plain.recs.slice(0, 3).map((x) => [x.value_decoded, String(x.decode_error).slice(0, 20)])).toEqual(Array(3).fill([null, 'unknown schema id 42']));
    const str = exportNdjson('signups-string.ndjson', '--value-format', 'string');
    expect(str.r.stderr).toBe('');
    expect(str.recs.map((x) => x.value_format)).toEqual(Array(5).fill('string'));
    expect(str.recs[3]!.value_decoded).toBe('\u0006Dev\u0000\u0002\bmail');
  });

  it('an unused schema file: exit 2 naming it, nothing written; --no-decode with a decode option is a usage error', () => {
    const { r, out } = exportNdjson('unused.ndjson', '--schemas', join(files, 'pay.avsc'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`klx: invalid-argument: ${join(files, 'pay.avsc')}: this schema file is not used`);
    expect(existsSync(out)).toBe(false);
    const both = exportNdjson('both.ndjson', '--no-decode', '--value-format', 'string');
    expect(both.r.status).toBe(2);
    expect(both.r.stderr).toContain("option '--value-format <format>' cannot be used with option '--no-decode'");
  });
});

describe('a partition folder: the _schemas partitions beside it are read, as klx fetch reads them', () => {
  let copy: string;
  let part: string;
  /** A Schema Registry registration record of `_schemas` (key and value JSON as the registry writes them: KafkaStoreMessage). */
  const registration = (subject: string, version: number, id: number, schema: string, offsetTs: number) =>
    JSON.stringify({
      key: JSON.stringify({ keytype: 'SCHEMA', subject, version, magic: 1 }),
      value: JSON.stringify({ subject, version, id, schema, deleted: false }),
      timestamp: offsetTs,
    });

  beforeAll(() => {
    copy = join(root, 'with-registry');
    part = join(copy, 'signups-0');
    for (const dir of [part, join(copy, '_schemas-0')]) expect(klx('create', dir).status).toBe(0);
    expect(klx('append', part, '--records', join(files, 'signups.ndjson')).status).toBe(0);
    const schema = readFileSync(join(files, '42.avsc'), 'utf8');
    writeFileSync(join(root, 'reg1.ndjson'), `${registration('signups-value', 1, 42, schema, 1_700_000_000_000)}\n`);
    const a = klx('append', join(copy, '_schemas-0'), '--records', join(root, 'reg1.ndjson'));
    expect(a.status, a.stderr).toBe(0);
  }, 60_000);

  it('klx query and klx export of signups-0 decode the framed records with schema 42 from _schemas-0 beside it (no --schemas)', () => {
    const q = run('query', part, SIGNUPS, '--json', '--no-cache');
    expect(q.stderr).toBe('');
    expect(q.status).toBe(0);
    expect(rows(q).slice(0, 3).map((x) => [x.offset, x.value_format, x.name, x.schema_id, x.decode_error])).toEqual(expected.names.slice(0, 3).map((n, i) => [i, 'confluent', n, 42, null]));
    const out = join(root, 'beside.ndjson');
    const e = run('export', part, '--format', 'ndjson', '--out', out);
    expect(e.status, e.stderr).toBe(0);
    const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => parseJsonExact(l) as Record<string, unknown>);
    expect(recs.slice(0, 3).map((x) => [x.schema_id, x.decode_error, toJsonText(x.value_decoded)])).toEqual(expected.datums.slice(0, 3).map((d) => [42, null, d]));
    // What klx fetch answers for the same partition.
    const f = run('fetch', part, '--offset', '0', '--json');
    expect(f.status, f.stderr).toBe(0);
    expect(rows(f).filter((x) => x.type === 'record').slice(0, 3).map((x) => toJsonText(x.valueDecoded))).toEqual(expected.datums.slice(0, 3));
  });

  it('a new registration in _schemas-0, or its removal, gives a new table set: the cached schemas table of signups-0 is not served stale', () => {
    const cache = join(root, 'beside-cache');
    const count = () => {
      const r = run('query', part, 'SELECT id, subject, version FROM schemas ORDER BY id', '--json', '--cache-dir', cache);
      expect(r.status, r.stderr).toBe(0);
      return rows(r).map((x) => [x.id, x.subject, x.version]);
    };
    expect(count()).toEqual([[42, 'signups-value', 1]]);
    writeFileSync(join(root, 'reg2.ndjson'), `${registration('signups-value', 2, 43, '"string"', 1_700_000_000_001)}\n`);
    expect(klx('append', join(copy, '_schemas-0'), '--records', join(root, 'reg2.ndjson')).status).toBe(0);
    expect(count()).toEqual([
      [42, 'signups-value', 1],
      [43, 'signups-value', 2],
    ]);
    // Removing the folder changes no file of the log directory itself (appends above also rewrote its checkpoints).
    rmSync(join(copy, '_schemas-0'), { recursive: true });
    expect(count()).toEqual([]);
  });
});
