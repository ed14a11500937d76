/**
 * Exports write decoded values: `klx query --json/--csv` (the same writers as the app's
 * `sql.export`) on records whose bodies python3-avro / python3-protobuf wrote and whose schemas a
 * `_schemas` topic written by `klx append --records` holds. NDJSON carries `key_decoded` /
 * `value_decoded` as JSON values (int64 exact); CSV writes a text key as its text, a binary key
 * as base64, the decoded JSON as its text.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchemaFixtures, type SchemaFixtures } from '../engine/decode/schema-fixtures.ts';
import { REPO_ROOT } from '../support/real-data.ts';

let fx: SchemaFixtures;
beforeAll(() => {
  fx = buildSchemaFixtures();
}, 120_000);
afterAll(() => fx?.cleanup());

function query(sql: string, format: '--json' | '--csv'): string {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'query', fx.logDir, sql, format, '--no-cache'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  // Nothing but the read-back note when values were read (its counts are tested in query-robustness.test.ts).
  expect(r.stderr).toMatch(/^(?:klx: note: values read back from \d+ batch(?:es)? \([\d.]+ (?:bytes|KiB|MiB)\) of the log\n)?$/);
  expect(r.status).toBe(0);
  return r.stdout;
}

const csvQuote = (s: string) => `"${s.replaceAll('"', '""')}"`;

describe('klx query exports decoded values (python3-avro / python3-protobuf bodies)', () => {
  it('NDJSON: the decoded key and value as JSON values, int64 beyond 2^53 exact', () => {
    const out = query(`SELECT "offset", key, key_format, key_decoded, value_decoded, schema_id FROM records WHERE topic = 'orders' AND "offset" < 2 ORDER BY "offset"`, '--json');
    const o1 = fx.expected.orders[0]!; // as python3-avro's datum printed by json.dumps, compact
    const o2 = fx.expected.orders[1]!;
    expect(out).toBe(
      [
        `{"offset":0,"key":"AAAAAAAAAAE=","key_format":"long","key_decoded":1,"value_decoded":${o1},"schema_id":7}`,
        `{"offset":1,"key":"AAAAAAAAAAI=","key_format":"long","key_decoded":2,"value_decoded":${o2},"schema_id":7}`,
        '',
      ].join('\n'),
    );
    // The long 2^63-1 survives as digits (JSON.parse would round it).
    expect(out).toContain('"big":9223372036854775807,');
    expect(out).toContain('"big":-9223372036854775808,');
    // A JSON value printed over lines is re-printed on one line, its long exact.
    expect(query(`SELECT '{\n  "a": 12345678901234567890,\n  "b": [1, "x"]\n}'::JSON AS j, 'x' || chr(10) || 'y' AS s`, '--json')).toBe('{"j":{"a":12345678901234567890,"b":[1,"x"]},"s":"x\\ny"}\n');
  });

  it('CSV: a text key as its text, a binary key as base64, the decoded value as its JSON text', () => {
    const pay = query(`SELECT "offset", key, value_decoded FROM records WHERE topic = 'payments' AND "offset" IN (2, 3) ORDER BY "offset"`, '--csv');
    expect(pay).toBe(['offset,key,value_decoded', `2,k2,${csvQuote('{"sku":"solo","qty":7}')}`, `3,k3,${csvQuote('{"trace":"t-9"}')}`, ''].join('\n'));
    const orders = query(`SELECT "offset", key, key_decoded, value_decoded FROM records WHERE topic = 'orders' AND "offset" IN (2, 4) ORDER BY "offset"`, '--csv');
    // Offset 4 names schema id 12, which no schema source has: no decoded value (NULL, an empty field).
    expect(orders).toBe(['offset,key,key_decoded,value_decoded', `2,AAAAAAAAAAM=,3,${csvQuote(fx.expected.orders[2]!)}`, '4,unknown,"""unknown""",', ''].join('\n'));
  });
});
