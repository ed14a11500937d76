/**
 * `klx dump --deep --json` over every real broker-written data set equals the independent decoder's
 * EXPECTED.jsonl (kafka-python 2.0.2): every field of every batch and every record.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { indexFileJson } from '../../src-main/cli/commands/dump-index.ts';
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

/** .index + .timeindex entries per case in EXPECTED-index.json (1,792 in all), so a case that lost its entries fails. */
const ENTRIES_COMPARED: Record<string, number> = { 'gzip-mixed-bitnami': 465, 'kafka-2.7.1-compacted-offsets': 3, 'kraft-3x-metadata-2seg': 836, 'multisegment-rolled': 458, 'retention-log-start': 30 };

describeRealData('klx dump of .index/.timeindex files equals EXPECTED-index.json, field by field', () => {
  // EXPECTED-index.json is kafka-python's independent decoding; its entry fields carry kafka-dump-log.sh's
  // names (`offset`, `position` = the batch's byte position in the .log; `timestamp`). Every field it has
  // must be ours under the same name with the same value: a renamed field (the old `logPosition`) fails.
  const withIndexes = realDataCases().filter((c) => existsSync(join(REAL_DATA, c, 'EXPECTED-index.json')));
  for (const c of withIndexes) {
    it(c, () => {
      const expected = JSON.parse(readFileSync(join(REAL_DATA, c, 'EXPECTED-index.json'), 'utf8')).indexes as { file: string; kind: string; entries: Record<string, number>[]; trailingZeroEntries: number; trailingBytes: number; size: number; entryCount: number }[];
      let checked = 0;
      let entriesCompared = 0;
      for (const x of expected) {
        const path = join(REAL_DATA, c, x.file);
        if (!existsSync(path)) continue;
        const objs = indexFileJson(path, x.file);
        const entries = objs.filter((o) => o.type === (x.kind === 'index' ? 'index-entry' : 'timeindex-entry'));
        const summary = objs.find((o) => o.type === 'index-summary')!;
        expect(summary).toMatchObject({ size: x.size, entries: x.entryCount, trailingZeroEntries: x.trailingZeroEntries, trailingBytes: x.trailingBytes });
        expect(entries.length, x.file).toBe(x.entries.length);
        x.entries.forEach((want, i) => {
          for (const [field, value] of Object.entries(want)) {
            if (entries[i]![field] !== value) expect(entries[i]![field], `${x.file} entry ${i} field ${field}`).toBe(value);
          }
          // Our own additions name the entry's place in the index file.
          expect(entries[i]).toMatchObject({ slot: i, indexPosition: i * (x.kind === 'index' ? 8 : 12) });
          entriesCompared++;
        });
        checked++;
      }
      expect(checked).toBe(expected.length);
      expect(entriesCompared).toBe(ENTRIES_COMPARED[c] ?? 0);
    });
  }

  it('through the CLI: klx dump --json on one broker-written .index and .timeindex', () => {
    const dir = join(REAL_DATA, 'multisegment-rolled', 'invoice-1');
    const run = (f: string, json: boolean) => execFileSync(process.execPath, [join(REPO_ROOT, 'bin/klx.mjs'), 'dump', ...(json ? ['--json'] : []), join(dir, f)], { encoding: 'utf8' }).split('\n')[0]!;
    // kafka-dump-log.sh prints this entry as `offset: 664 position: 4225`.
    expect(JSON.parse(run('00000000000000000000.index', true))).toEqual({ type: 'index-entry', file: '00000000000000000000.index', offset: 664, position: 4225, relativeOffset: 664, slot: 0, indexPosition: 0 });
    expect(run('00000000000000000000.index', false)).toBe('offset: 664 position: 4225 relativeOffset: 664 slot: 0 indexPosition: 0');
    // ... and this one `timestamp: 1718446825645 offset: 662` (the batch's max timestamp is record 662's).
    expect(JSON.parse(run('00000000000000000000.timeindex', true))).toEqual({ type: 'timeindex-entry', file: '00000000000000000000.timeindex', timestamp: 1718446825645, offset: 662, relativeOffset: 662, slot: 0, indexPosition: 0 });
    expect(run('00000000000000000000.timeindex', false)).toBe('timestamp: 1718446825645 offset: 662 relativeOffset: 662 slot: 0 indexPosition: 0');
  });
});
