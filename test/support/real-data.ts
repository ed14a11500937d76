/**
 * Where the broker-written data sets live: `<repo>/../shared/kafka-real-data`, read in place.
 * Tests that need them use {@link describeRealData}, which skips with a clear message when absent.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { describe } from 'vitest';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const REAL_DATA = resolve(REPO_ROOT, '../shared/kafka-real-data');
export const HAVE_REAL_DATA = existsSync(REAL_DATA);

/** The case folders (each a log directory or a folder of log directories). */
export function realDataCases(): string[] {
  if (!HAVE_REAL_DATA) return [];
  return readdirSync(REAL_DATA).filter((n) => statSync(join(REAL_DATA, n)).isDirectory()).sort();
}

/** `describe` that skips, saying why, when ../shared/kafka-real-data is absent. */
export function describeRealData(name: string, fn: () => void): void {
  if (HAVE_REAL_DATA) describe(name, fn);
  else describe.skip(`${name} (../shared/kafka-real-data not found: real-data tests skipped)`, fn);
}

/** The lines of a case's EXPECTED.jsonl (or .jsonl.gz), parsed. */
export function expectedBatches(caseName: string): Record<string, unknown>[] {
  const dir = join(REAL_DATA, caseName);
  const plain = join(dir, 'EXPECTED.jsonl');
  const text = existsSync(plain) ? readFileSync(plain, 'utf8') : gunzipSync(readFileSync(join(dir, 'EXPECTED.jsonl.gz'))).toString('utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
