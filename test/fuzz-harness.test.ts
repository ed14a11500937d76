/**
 * `npm run fuzz` in CI (issue 17): a short fixed-seed campaign of the mutation fuzzer over the read
 * paths must find no crash, no hang and no typed error without a file or byte position, and print
 * its figures. Long campaigns are run by hand (`npm run fuzz -- --minutes 10`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

it('a 400-input campaign with seed 7 (every path on every 20th input, SQL and the API on one) finds nothing and reports its figures', () => {
  const out = mkdtempSync(join(tmpdir(), 'klx-fuzz-ci-'));
  try {
    const text = execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'fuzz.ts'), '--iterations', '400', '--seed', '7', '--full-every', '20', '--sql-every', '200', '--api-every', '100', '--out', out], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    const last = text.trim().split('\n').at(-1)!;
    expect(text).toMatch(/operations run \(count, mean ms\): parse-log 400 /);
    expect(text).toMatch(/ sql 2 /);
    expect(text).toMatch(/ api:log\.records 4 /);
    expect(last).toMatch(/^fuzz: 400 inputs in \d+ s \([\d.]+\/s\), \d+ operations: 0 crashes, 0 hangs \(> 5000 ms CPU or 60000 ms wall\), 0 typed errors without file\/position, \d+ typed errors/);
    expect(last).toMatch(/peak RSS \d+ MiB$/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 180_000);
