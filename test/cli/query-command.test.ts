/**
 * `klx query PATH "SQL"`: the text table, NDJSON and CSV outputs on the six-record log, --limit,
 * the cache folder ($XDG_CACHE_HOME by default, --cache-dir, --no-cache), refused statements and
 * DuckDB syntax errors on stderr with exit status 1, and usage errors with exit status 2.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

function klx(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'query', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function sixRecordLog(): string {
  return buildPartition(tempDir(), { topic: 'prices', segments: [{ batches: singles(rec('17', 'alpha'), rec('28', 'one'), rec('17', 'beta'), rec('28', null), rec('17', 'gamma'), rec('39', 'two')) }] });
}

describe('klx query', () => {
  it('prints a text table: state holds 17 = gamma at 4 and 39 = two at 5; the cache goes to $XDG_CACHE_HOME/kafka-log-explorer', () => {
    const dir = sixRecordLog();
    const xdg = tempDir('klx-xdg-');
    const r = klx([dir, 'SELECT key_text, value_text, "offset" FROM state ORDER BY "offset"'], { XDG_CACHE_HOME: xdg });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(['key_text | value_text | offset', '---------+------------+-------', '17       | gamma      |      4', '39       | two        |      5', '(2 rows; values read back from 2 batches (148 bytes) of the log)', ''].join('\n'));
    expect(readdirSync(join(xdg, 'kafka-log-explorer')).filter((n) => n.endsWith('.duckdb'))).toHaveLength(1);
  });

  it('--json prints NDJSON: BLOB as base64, NULL as null, BIGINT beyond 2^53 as a string', () => {
    const dir = sixRecordLog();
    const r = klx([dir, 'SELECT "offset", key, value, value_text, is_tombstone, 9007199254740993::BIGINT AS big FROM latest ORDER BY "offset"', '--json', '--cache-dir', tempDir()]);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { offset: 3, key: Buffer.from('28').toString('base64'), value: null, value_text: null, is_tombstone: true, big: '9007199254740993' },
      { offset: 4, key: Buffer.from('17').toString('base64'), value: Buffer.from('gamma').toString('base64'), value_text: 'gamma', is_tombstone: false, big: '9007199254740993' },
      { offset: 5, key: Buffer.from('39').toString('base64'), value: Buffer.from('two').toString('base64'), value_text: 'two', is_tombstone: false, big: '9007199254740993' },
    ]);
  });

  it('--csv prints a header line and RFC 4180 fields', () => {
    const dir = sixRecordLog();
    const r = klx([dir, `SELECT "offset", value_text, 'a,"b"' AS q, headers FROM records WHERE "offset" IN (2, 3) ORDER BY 1`, '--csv', '--no-cache']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(['offset,value_text,q,headers', '2,beta,"a,""b""",[]', '3,,"a,""b""",[]', ''].join('\n'));
  });

  it('--limit stops after N rows and says so', () => {
    const dir = sixRecordLog();
    const text = klx([dir, 'SELECT "offset" FROM records ORDER BY 1', '--limit', '2', '--no-cache']);
    expect(text.stdout).toBe(['offset', '------', '     0', '     1', '(2 rows; more not shown, --limit 2)', ''].join('\n'));
    const json = klx([dir, 'SELECT "offset" FROM records ORDER BY 1', '--limit', '2', '--json', '--no-cache']);
    expect(json.stdout).toBe('{"offset":0}\n{"offset":1}\n');
    expect(json.stderr).toBe('klx: output stopped at --limit 2 rows\n');
  });

  it('--no-cache leaves the cache folder alone', () => {
    const dir = sixRecordLog();
    const xdg = tempDir('klx-xdg-');
    const r = klx([dir, 'SELECT count(*) AS n FROM records', '--no-cache', '--json'], { XDG_CACHE_HOME: xdg });
    expect(r.stdout).toBe('{"n":6}\n');
    expect(existsSync(join(xdg, 'kafka-log-explorer'))).toBe(false);
  });

  it('a statement that changes the tables is refused: exit 1, the statement type named on stderr', () => {
    const dir = sixRecordLog();
    const r = klx([dir, 'DELETE FROM records', '--no-cache']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('klx: read-only: DELETE statements are refused: the SQL tables of a log are read-only (run one SELECT, WITH, EXPLAIN, DESCRIBE, SHOW, SUMMARIZE or PRAGMA table_info statement)\n');
  });

  it('a syntax error shows DuckDB\'s message with its line and caret: exit 2 (invalid-argument, a refusal of what was asked)', () => {
    const dir = sixRecordLog();
    const r = klx([dir, 'SELECT * FORM records', '--no-cache']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(['klx: invalid-argument: Parser Error: syntax error at or near "records"', '', 'LINE 1: SELECT * FORM records', '                      ^', ''].join('\n'));
  });

  it('usage errors exit 2; a missing folder exits 1 with not-found', () => {
    const dir = sixRecordLog();
    const both = klx([dir, 'SELECT 1', '--json', '--csv']);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("option '--json' cannot be used with option '--csv'");
    expect(klx([dir]).status).toBe(2);
    const missing = klx([join(tempDir(), 'nope'), 'SELECT 1', '--no-cache']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^klx: not-found: /);
  });
});
