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
        // `computedCrc` / `crcAlgorithm` are our additions (issue 13 finding 1): the computed CRC equals
        // the stored one for these intact batches, and the algorithm follows the magic.
        const { computedCrc, crcAlgorithm, ...header } = a as Record<string, unknown>;
        expect(computedCrc).toBe(a.crc);
        expect(crcAlgorithm).toBe(a.magic === 2 ? 'CRC-32C' : 'CRC-32');
        const mine = { ...header, records: recs };
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

describeRealData('klx dump of .index/.timeindex files equals EXPECTED-index.json', () => {
  for (const c of realDataCases()) {
    it(c, async () => {
      const { readFileSync, existsSync } = await import('node:fs');
      const { indexFileJson } = await import('../../src-main/cli/commands/dump-index.ts');
      const expected = JSON.parse(readFileSync(join(REAL_DATA, c, 'EXPECTED-index.json'), 'utf8')).indexes as { file: string; kind: string; entries: Record<string, number>[]; trailingZeroEntries: number; trailingBytes: number; size: number }[];
      let checked = 0;
      for (const x of expected) {
        const path = join(REAL_DATA, c, x.file);
        if (!existsSync(path)) continue;
        const objs = indexFileJson(path, x.file);
        const entries = objs.filter((o) => o.type === 'index-entry' || o.type === 'timeindex-entry');
        const summary = objs.find((o) => o.type === 'index-summary')!;
        expect(summary).toMatchObject({ size: x.size, trailingZeroEntries: x.trailingZeroEntries, trailingBytes: x.trailingBytes });
        expect(entries.map((e) => (x.kind === 'index' ? { offset: e.offset, relativeOffset: e.relativeOffset, position: e.logPosition } : { offset: e.offset, relativeOffset: e.relativeOffset, timestamp: e.timestamp }))).toEqual(x.entries);
        checked++;
      }
      expect(checked).toBe(expected.length);
    });
  }

  it('through the CLI: klx dump --json on one broker-written .index', () => {
    const file = join(REAL_DATA, 'multisegment-rolled');
    const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', '--json', join(file, 'invoice-1/00000000000000000000.index')], { encoding: 'utf8' });
    const first = JSON.parse(out.split('\n')[0]!);
    expect(first).toEqual({ type: 'index-entry', file: '00000000000000000000.index', slot: 0, position: 0, offset: 664, relativeOffset: 664, logPosition: 4225 });
  });
});
