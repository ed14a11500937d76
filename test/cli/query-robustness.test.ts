/**
 * `klx query` robustness, from a tester's findings: DuckDB's out-of-memory is its own error (exit
 * 1) with `--memory-limit` to raise the limit; the read-back note counts distinct batches and
 * their bytes in the log, also under --json/--csv (on stderr); Ctrl-C stops a query decoding every
 * value at once and says what was left; a cache folder that cannot be made is an error at once
 * (not a spin under /proc); what killed runs left in the temp folder is removed by the next run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPartition, rec, singles, tempDir, type BatchInput } from '../support/log-builder.ts';
import { REPO_ROOT } from '../support/real-data.ts';

const KLX = join(REPO_ROOT, 'bin/klx.mjs');

function klx(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [KLX, 'query', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 26, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `batches` batches of `perBatch` records, JSON values of ~120 bytes, keys k0..k999. */
function jsonLog(batches: number, perBatch: number): string {
  const bs: BatchInput[] = [];
  for (let b = 0; b < batches; b++) {
    const records = [];
    for (let i = 0; i < perBatch; i++) {
      const n = b * perBatch + i;
      records.push(rec(`k${n % 1000}`, JSON.stringify({ n, name: `name-${n}`, pad: 'p'.repeat(80) }), 1000 + n));
    }
    bs.push({ baseOffset: BigInt(b * perBatch), records });
  }
  const half = Math.floor(batches / 2);
  return buildPartition(tempDir(), { topic: 'events', segments: [{ batches: bs.slice(0, half) }, { batches: bs.slice(half) }] });
}

/** Bytes of the `.log` files of a partition folder. */
function logBytes(dir: string): number {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .reduce((a, n) => a + statSync(join(dir, n)).size, 0);
}

/** Sizes (12 + batchLength) of the batches of the `.log` files, in offset order. */
function batchSizes(dir: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync(dir).filter((f) => f.endsWith('.log')).sort()) {
    const buf = readFileSync(join(dir, n));
    for (let pos = 0; pos + 12 <= buf.length; pos += 12 + buf.readInt32BE(pos + 8)) out.push(12 + buf.readInt32BE(pos + 8));
  }
  return out;
}

/** True when process `pid` has a file under `dir` open (Linux: /proc/PID/fd). */
function holdsFileUnder(pid: number, dir: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir + '/');
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

describe('klx query robustness', () => {
  it("DuckDB's out-of-memory is out-of-memory, exit 1, naming the limit and --memory-limit (not a usage error advising SET)", () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', 'x')) }] });
    // 100 000 strings of 1000 bytes in one string_agg group: ~100 MB that DuckDB cannot spill.
    const r = klx([dir, "SELECT length(string_agg(repeat(value_text, 1000), ',')) FROM records, range(100000)", '--no-cache', '--memory-limit', '32MiB']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^klx: out-of-memory: the query needs more memory than DuckDB's memory limit of 32 MiB \(what it could not spill to disk; DuckDB: Out of Memory Error: failed to allocate data of size [\d.]+ [KMG]iB \([\d.]+ [KMG]iB\/32\.0 MiB used\)\); raise the limit with --memory-limit SIZE \(klx query, e\.g\. --memory-limit 2GiB\), or aggregate less per group\n$/);
    expect(r.stderr).not.toContain('SET ');
  });

  it('--memory-limit is validated (exit 2) and given to DuckDB', () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', 'x')) }] });
    const bad = klx([dir, 'SELECT 1', '--no-cache', '--memory-limit', 'lots']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--memory-limit must be a size such as 512MiB or 2GiB, got 'lots'");
    const small = klx([dir, 'SELECT 1', '--no-cache', '--memory-limit', '1MiB']);
    expect(small.status).toBe(2);
    expect(small.stderr).toContain('--memory-limit 1MiB is below the 16 MiB DuckDB needs to open the tables');
    const huge = klx([dir, 'SELECT 1', '--no-cache', '--memory-limit', '100TiB']);
    expect(huge.status).toBe(2);
    expect(huge.stderr).toContain("--memory-limit 100TiB is more than this machine's memory");
    const ok = klx([dir, "SELECT current_setting('memory_limit') AS m", '--no-cache', '--json', '--memory-limit', '96MiB']);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe('{"m":"96.0 MiB"}\n');
    const gb = klx([dir, "SELECT current_setting('memory_limit') AS m", '--no-cache', '--json', '--memory-limit', '0.5 GB']);
    expect(gb.stdout).toBe('{"m":"476.8 MiB"}\n');
  });

  it('the read-back note counts distinct batches and their bytes in the log, in text and on stderr under --json/--csv', () => {
    // 40 batches of 25 records in two segments.
    const dir = jsonLog(40, 25);
    const cache = tempDir();
    const bytes = logBytes(dir);
    const text = klx([dir, "SELECT count(*) AS n FROM records WHERE value_text LIKE '%name-7%'", '--cache-dir', cache]);
    expect(text.stderr).toBe('');
    expect(text.stdout.split('\n').at(-2)).toBe(`(1 row; values read back from 40 batches (${(bytes / 1024).toFixed(1)} KiB) of the log)`);
    expect(bytes).toBeGreaterThan(10 * 1024);
    const json = klx([dir, 'SELECT value_decoded->>\'n\' AS n FROM records WHERE "offset" BETWEEN 20 AND 30 ORDER BY "offset"', '--json', '--cache-dir', cache]);
    expect(json.stdout.trim().split('\n')).toHaveLength(11);
    // Offsets 20..30: batches 0 (0..24) and 1 (25..49), each counted once, with its size on disk.
    const two = batchSizes(dir).slice(0, 2);
    expect(two[0]).not.toBe(two[1]);
    expect(json.stderr).toBe(`klx: note: values read back from 2 batches (${two[0]! + two[1]!} bytes) of the log\n`);
    const csv = klx([dir, 'SELECT count(value) AS n FROM records', '--csv', '--cache-dir', cache]);
    expect(csv.stdout).toBe('n\n1000\n');
    expect(csv.stderr).toBe(`klx: note: values read back from 40 batches (${(bytes / 1024).toFixed(1)} KiB) of the log\n`);
  });

  it('a cache folder that cannot be made (/proc/nope) is an io-error naming it, at once (was a 100 % CPU spin)', () => {
    const dir = buildPartition(tempDir(), { segments: [{ batches: singles(rec('a', 'x')) }] });
    const started = Date.now();
    const r = klx([dir, 'SELECT 1', '--cache-dir', '/proc/nope']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("klx: io-error: /proc/nope: cannot create the SQL cache folder: ENOENT: no such file or directory, mkdir '/proc/nope'\n");
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a SIGKILLed --no-cache run leaves klx-sql-<pid>-*; the next run removes it and DuckDB spill folders of gone processes', async () => {
    const dir = jsonLog(200, 500);
    const tmp = tempDir('klx-tmp-');
    const env = { ...process.env, TMPDIR: tmp };
    const child = spawn(process.execPath, [KLX, 'query', dir, 'SELECT count(*) FROM records', '--no-cache'], { env, stdio: 'ignore' });
    // Killed while it builds: its temporary table folder is there.
    const deadline = Date.now() + 30_000;
    while (!readdirSync(tmp).some((n) => n.startsWith(`klx-sql-${child.pid}-`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const left = readdirSync(tmp);
    expect(left.filter((n) => n.startsWith(`klx-sql-${child.pid}-`))).toHaveLength(1);
    mkdirSync(join(tmp, `klx-duckdb-${child.pid}`));
    writeFileSync(join(tmp, `klx-duckdb-${child.pid}`, 'spill.tmp'), 'x');
    mkdirSync(join(tmp, `klx-duckdb-${process.pid}`)); // a live process's: kept
    const again = klx([dir, 'SELECT count(*) AS n FROM records', '--no-cache', '--json'], { TMPDIR: tmp });
    expect(again.stdout).toBe('{"n":100000}\n');
    expect(readdirSync(tmp).filter((n) => n.startsWith('klx-'))).toEqual([`klx-duckdb-${process.pid}`]);
    // A killed export leaves its spill folder the same way: the next export through DuckDB (parquet) removes it too.
    mkdirSync(join(tmp, `klx-duckdb-${child.pid}`));
    const out = join(tempDir(), 'out.parquet');
    const exp = spawnSync(process.execPath, [KLX, 'export', dir, '--format', 'parquet', '--out', out], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp }, timeout: 60_000 });
    expect(exp.status, exp.stderr).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('klx-'))).toEqual([`klx-duckdb-${process.pid}`]);
  }, 120_000);

  it('Ctrl-C stops a query decoding every value within a few seconds and says what was left (was 7.6 s)', async () => {
    const dir = jsonLog(400, 1000);
    const cache = tempDir();
    // Build the tables first, so the interrupt lands in the query.
    expect(klx([dir, 'SELECT count(*) AS n FROM records', '--cache-dir', cache, '--json']).stdout).toBe('{"n":400000}\n');
    // 400 000 values decoded (JSON) and their headers read: several seconds.
    const sql = "SELECT count(*) FROM records WHERE value_decoded->>'name' LIKE '%9%' AND headers IS NOT NULL";
    const child = spawn(process.execPath, [KLX, 'query', dir, sql, '--cache-dir', cache], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Wait until the tables are open (the process holds the cache file), then 1 s of decoding.
    const opened = Date.now() + 60_000;
    while (Date.now() < opened && !holdsFileUnder(child.pid!, cache)) await new Promise((r) => setTimeout(r, 20));
    expect(holdsFileUnder(child.pid!, cache)).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    const sent = performance.now();
    child.kill('SIGINT');
    const code = await exited;
    const stopMs = performance.now() - sent;
    console.log(`query stopped ${stopMs.toFixed(0)} ms after SIGINT`);
    expect(code).toBe(1);
    expect(stderr).toBe('klx: cancelled: interrupted (Ctrl-C): the query was stopped after 0 rows of its result; the log was only read, nothing in it changed\n');
    expect(stopMs).toBeLessThan(3000);
    // The same query left to run takes longer than the 1 s waited plus the stop: the interrupt cut it short.
    const t0 = performance.now();
    const full = klx([dir, sql, '--cache-dir', cache, '--json']);
    const fullMs = performance.now() - t0;
    console.log(`the whole query: ${fullMs.toFixed(0)} ms`);
    expect(full.stdout).toMatch(/^\{"count_star\(\)":\d+\}\n$/);
    // 400 batches read by two DuckDB threads: each counted once, their bytes those of the .log files.
    expect(full.stderr).toBe(`klx: note: values read back from 400 batches (${(logBytes(dir) / (1 << 20)).toFixed(1)} MiB) of the log\n`);
    expect(fullMs).toBeGreaterThan(1000 + stopMs);
  }, 180_000);

  it('Ctrl-C during the build says the tables were not finished nor cached', async () => {
    const dir = jsonLog(200, 500);
    const cache = tempDir();
    const child = spawn(process.execPath, [KLX, 'query', dir, 'SELECT 1', '--cache-dir', cache], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const deadline = Date.now() + 30_000;
    while (!(existsSync(cache) && readdirSync(cache).some((n) => n.includes('.building-'))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(stderr).toBe('klx: cancelled: interrupted (Ctrl-C): the SQL tables were not finished and nothing was cached (the next query builds them from the start); the log was only read, nothing in it changed\n');
    expect(readdirSync(cache).filter((n) => n.endsWith('.duckdb'))).toEqual([]);
  }, 120_000);
});
