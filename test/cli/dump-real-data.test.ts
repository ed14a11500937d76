/**
 * `klx dump --deep --json` over every real broker-written data set equals the independent decoder's
 * EXPECTED.jsonl (kafka-python 2.0.2): every field of every batch and every record.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeRealData, expectedBatches, REAL_DATA, REPO_ROOT, realDataCases } from '../support/real-data.ts';

function dump(caseName: string): Record<string, unknown>[] {
  const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', '--deep', '--json', join(REAL_DATA, caseName)], { maxBuffer: 1 << 30, encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describeRealData('klx dump --deep --json equals EXPECTED.jsonl', () => {
  for (const c of realDataCases()) {
    it(c, () => {
      const expected = expectedBatches(c);
      const actual = dump(c);
      expect(actual.length).toBe(expected.length);
      let records = 0;
      for (let i = 0; i < expected.length; i++) {
        const a = actual[i]!;
        const recs = (a.records as Record<string, unknown>[]).map(({ control, ...r }) => {
          // `control` is our addition on control records; its fields repeat controlKeyVersion/controlType.
          if (control) expect((control as { type: string }).type).toBe(r.controlType);
          return r;
        });
        const mine = { ...a, records: recs };
        if (JSON.stringify(sortKeys(mine)) !== JSON.stringify(sortKeys(expected[i]))) {
          expect(mine, `batch ${i} of ${c} (${expected[i]!.file} @ ${expected[i]!.position})`).toEqual(expected[i]);
        }
        records += recs.length;
      }
      expect(records).toBeGreaterThan(0);
    });
  }
});

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}
