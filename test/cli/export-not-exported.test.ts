/**
 * `klx export` never drops records silently (fresh tester's findings on issue 16's export):
 * - a damaged batch (a length of 0x7ffffff0, a negative length, a records count of 2^31−1 under a
 *   valid CRC) in the active segment: the records after it are exported as `klx query` lists them
 *   (flagged past_damage), and the damage is named per partition with file, byte position and
 *   reason on stderr and in `notExported` of `--json`;
 * - a batch past the decompression bound: named as not checked with the `--max-inflated-bytes` hint,
 *   and exported with the bound raised;
 * - a high watermark below the log end: read_uncommitted stops there by default as a consumer does
 *   (UnifiedLog.read, FetchIsolation.HIGH_WATERMARK) and names the records left out, `--up-to
 *   log-end` exports them; read_committed stops there too and says so.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../src-main/engine/format/crc.ts';
import { encodeBatch } from '../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, tempDir } from '../support/log-builder.ts';
import { klx } from '../support/klx-cli.ts';
import { REPO_ROOT } from '../support/real-data.ts';

/** Single-record batches at offsets 0..8, values `v<offset>`; `damage` edits the batch at offset 5. */
function partition(damage: ((b: Buffer) => void) | null, hw?: bigint, count = 9): { root: string; dir: string; batches: Buffer[] } {
  const root = tempDir('klx-export-damage-');
  const batches = Array.from({ length: count }, (_, o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`k${o}`, `v${o}`, 1000 + o)] }));
  if (damage) damage(batches[5]!);
  const dir = buildPartition(root, { topic: 'odd', segments: [{ batches }] }, hw !== undefined ? { highWatermark: hw } : {});
  return { root, dir, batches };
}

/** Runs `klx export ... --format ndjson --json`; returns the summary, stderr and the offsets and past_damage written. */
function exportNdjson(dir: string, ...more: string[]) {
  const out = join(tempDir('klx-export-out-'), 'x.ndjson');
  const r = klx('export', dir, '--format', 'ndjson', '--out', out, '--json', ...more);
  expect(r.status, r.stderr).toBe(0);
  const rows = readFileSync(out, 'utf8').trimEnd().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { offset: number; value: string; past_damage: boolean; log_dir: string });
  return { summary: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr, rows };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('klx export and damage', () => {
  it.each([
    ['a batch length of 0x7ffffff0', (b: Buffer) => b.writeInt32BE(0x7ffffff0, 8), 'truncated-batch'],
    ['a negative batch length', (b: Buffer) => b.writeInt32BE(-5, 8), 'batch-length-out-of-range'],
    [
      'a records count of 2^31−1 under a valid CRC',
      (b: Buffer) => {
        b.writeInt32BE(0x7fffffff, 57);
        b.writeUInt32BE(crc32c(b.subarray(21)) >>> 0, 17);
      },
      'corrupt-batch',
    ],
  ])('%s: the records after it are exported flagged past_damage, and the damage is named with file, position and reason', (_name, damage, code) => {
    const { dir, batches } = partition(damage);
    const position = batches.slice(0, 5).reduce((n, b) => n + b.length, 0);
    expect(position).toBe(360);
    const { summary, stderr, rows } = exportNdjson(dir);
    expect(rows.map((r) => [r.offset, r.value, r.past_damage, r.log_dir])).toEqual([
      [0, b64('v0'), false, '.'],
      [1, b64('v1'), false, '.'],
      [2, b64('v2'), false, '.'],
      [3, b64('v3'), false, '.'],
      [4, b64('v4'), false, '.'],
      [6, b64('v6'), true, '.'],
      [7, b64('v7'), true, '.'],
      [8, b64('v8'), true, '.'],
    ]);
    expect(summary.records).toBe(8);
    const file = join(dir, '00000000000000000000.log');
    expect(summary.notExported).toEqual([{ topic: 'odd', partition: 0, logDir: '.', file, position: 360, size: expect.any(Number), kind: 'damage', code, reason: expect.any(String), fromOffset: 5, toOffset: 5 }]);
    expect(stderr).toMatch(new RegExp(`^klx: odd-0: not exported \\(offsets 5\\): damage at ${file} position 360 \\(\\d+ bytes\\): .+\\n$`));
  });

  it('a batch past the decompression bound is named as not checked with the --max-inflated-bytes hint; with the bound raised its records are exported', () => {
    const root = tempDir('klx-export-inflate-');
    const zeros = '\0'.repeat(1.5 * 1024 * 1024);
    const batches = [
      encodeBatch({ baseOffset: 0n, records: [rec('a', 'small', 1000)] }),
      encodeBatch({ baseOffset: 1n, compression: 'gzip', records: [rec('z1', zeros, 1001), rec('z2', zeros, 1002)] }),
      encodeBatch({ baseOffset: 3n, records: [rec('b', 'after', 1003)] }),
    ];
    const dir = buildPartition(root, { topic: 'blobs', segments: [{ batches }] });
    const { summary, stderr, rows } = exportNdjson(dir);
    expect(rows.map((r) => [r.offset, r.past_damage])).toEqual([
      [0, false],
      [3, false], // not damage: a consumer reads the batch
    ]);
    expect(summary.notExported).toEqual([
      { topic: 'blobs', partition: 0, logDir: '.', file: join(dir, '00000000000000000000.log'), position: batches[0]!.length, size: batches[1]!.length, kind: 'not-checked', code: 'decompression-limit', reason: expect.stringContaining('not checked'), fromOffset: 1, toOffset: 2 },
    ]);
    expect(stderr).toContain(`klx: blobs-0: not exported (offsets 1..2): not checked (past the decompression bound; --max-inflated-bytes N reads it) at ${join(dir, '00000000000000000000.log')} position ${batches[0]!.length}`);
    const raised = exportNdjson(dir, '--max-inflated-bytes', String(8 << 20));
    expect(raised.rows.map((r) => [r.offset, Buffer.from(r.value, 'base64').length])).toEqual([
      [0, 5],
      [1, zeros.length],
      [2, zeros.length],
      [3, 5],
    ]);
    expect([raised.summary.notExported, raised.stderr]).toEqual([[], '']);
  });
});

describe('klx export and the high watermark', () => {
  it('read_uncommitted stops at the high watermark by default and names the records left out; --up-to log-end exports them', () => {
    const { dir } = partition(null, 5n, 8);
    const hw = exportNdjson(dir);
    expect(hw.rows.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    expect(hw.summary.highWatermarkStops).toEqual([{ topic: 'odd', partition: 0, logDir: '.', highWatermark: 5, logEndOffset: 8, records: 3, firstOffset: 5, lastOffset: 7 }]);
    expect(hw.stderr).toBe(
      'klx: odd-0: 3 records past the high watermark 5 not exported (offsets 5..7, log end offset 8): a consumer is not given them (UnifiedLog.read, FetchIsolation.HIGH_WATERMARK); --up-to log-end exports them\n',
    );
    const all = exportNdjson(dir, '--up-to', 'log-end');
    expect(all.rows.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect([all.summary.highWatermarkStops, all.stderr]).toEqual([[], '']);
  });

  it('read_committed stops at the high watermark too and says so', () => {
    const { dir } = partition(null, 5n, 8);
    const rc = exportNdjson(dir, '--isolation', 'read_committed');
    expect(rc.rows.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    expect(rc.summary.highWatermarkStops).toEqual([{ topic: 'odd', partition: 0, logDir: '.', highWatermark: 5, logEndOffset: 8, records: 3, firstOffset: 5, lastOffset: 7 }]);
    expect(rc.stderr).toMatch(/^klx: odd-0: 3 records past the high watermark 5 not exported \(offsets 5\.\.7, log end offset 8\): read_committed stops there/);
  });
});

describe('klx export: the output path', () => {
  it('--out through a symlink into the partition folder is refused and nothing is written there', () => {
    const { root, dir } = partition(null);
    const link = join(tempDir('klx-export-link-'), 'L');
    symlinkSync(dir, link);
    const r = klx('export', root, '--format', 'csv', '--out', join(link, 'x.csv'));
    expect([r.status, r.stderr]).toEqual([2, expect.stringContaining('never writes into the log folder')]);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000000.index', '00000000000000000000.log', '00000000000000000000.timeindex']);
  });

  it('--out - is refused with the reason, not written as a file named "-"; --json without --format is a JSON error', () => {
    const { dir } = partition(null);
    const cwd = tempDir('klx-export-cwd-');
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'export', dir, '--format', 'ndjson', '--out', '-'], { cwd, encoding: 'utf8' });
    expect([r.status, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toContain('--out - is not supported');
    expect(readdirSync(cwd)).toEqual([]);
    const j = klx('export', dir, '--out', join(cwd, 'x.csv'), '--json');
    expect([j.status, JSON.parse(j.stdout)]).toEqual([2, { type: 'error', code: 'invalid-argument', message: "required option '--format <format>' not specified" }]);
  });

  it('CSV: a null key is an empty field, an empty key a quoted empty field; DuckDB (allow_quoted_nulls = false) reads them back as NULL and ""', async () => {
    const root = tempDir('klx-export-csv-');
    const dir = buildPartition(root, { topic: 'keys', segments: [{ batches: [encodeBatch({ baseOffset: 0n, records: [rec(null, 'a', 1000), rec('', 'b', 1001)] })] }] });
    const out = join(tempDir('klx-export-out-'), 'k.csv');
    const r = klx('export', dir, '--format', 'csv', '--out', out, '--no-decode');
    expect(r.status, r.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(lines[1]!.split(',').slice(0, 7)).toEqual(['keys', '0', '0', '1000', 'CreateTime', '', 'a']);
    expect(lines[2]!.split(',').slice(0, 7)).toEqual(['keys', '0', '1', '1001', 'CreateTime', '""', 'b']);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const got = await (await c.run(`SELECT "offset", "key" FROM read_csv('${out}', all_varchar = true, allow_quoted_nulls = false) ORDER BY 1`)).getRowObjectsJS();
    c.closeSync();
    db.closeSync();
    expect(got).toEqual([
      { offset: '0', key: null },
      { offset: '1', key: '' },
    ]);
  });

  it('a 40 MiB record is exported byte for byte to Parquet and to NDJSON with --where; a bad --where fails before anything is written', async () => {
    const root = tempDir('klx-export-big-');
    const big = Buffer.alloc(40 << 20, 0x61);
    const dir = buildPartition(root, { topic: 'big', segments: [{ batches: [encodeBatch({ baseOffset: 0n, records: [{ key: Buffer.from('k'), value: big, timestamp: 1000n }, rec('k2', 'small', 1001)] })] }] });
    const outDir = tempDir('klx-export-big-out-');
    const pq = join(outDir, 'pq');
    const r = klx('export', dir, '--format', 'parquet', '--out', pq, '--no-decode');
    expect(r.status, r.stderr).toBe(0);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const got = await (await c.run(`SELECT "offset", octet_length("value") AS n, md5("value") AS h FROM read_parquet('${pq}/**/*.parquet') ORDER BY 1`)).getRowObjectsJS();
    c.closeSync();
    db.closeSync();
    expect(got).toEqual([
      { offset: 0n, n: BigInt(big.length), h: createHash('md5').update(big).digest('hex') },
      { offset: 1n, n: 5n, h: createHash('md5').update('small').digest('hex') },
    ]);
    const nd = join(outDir, 'w.ndjson');
    const w = klx('export', dir, '--format', 'ndjson', '--out', nd, '--no-decode', '--where', '"offset" = 0');
    expect(w.status, w.stderr).toBe(0);
    const line = JSON.parse(readFileSync(nd, 'utf8')) as { offset: number; value: string };
    expect([line.offset, Buffer.from(line.value, 'base64').equals(big)]).toEqual([0, true]);
    const bad = klx('export', dir, '--format', 'parquet', '--out', join(outDir, 'bad'), '--where', 'ofset > 5');
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringContaining('klx: invalid-argument: the where condition ofset > 5 cannot run: Binder Error: Referenced column "ofset" not found')]);
    expect(readdirSync(outDir).sort()).toEqual(['pq', 'w.ndjson']);
  }, 120_000);
});
