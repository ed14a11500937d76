/**
 * The cleaner on broker-written log directories (`../shared/kafka-real-data`, read in place): plans
 * touch nothing; runs on temporary copies (never inside the repository) keep the latest value of
 * every key, only remove offsets, write batches whose CRCs check, and retention removes a prefix.
 */
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { compact, retention } from '../../../src-main/engine/cleaner/cleaner.ts';
import { scanLogFile } from '../../../src-main/engine/format/log-reader.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
import { tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';
import { visibleRecords, type Rec } from './support.ts';

const NOW = 1_900_000_000_000;

function treeState(dir: string): Map<string, string> {
  const m = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else m.set(p, `${st.size}:${st.mtimeMs}`);
    }
  };
  walk(dir);
  return m;
}

function latest(recs: Rec[]): Map<string, Rec> {
  const m = new Map<string, Rec>();
  for (const r of recs) if (r.key !== null && !r.control) m.set(r.key, r);
  return m;
}

describeRealData('cleaner on real broker-written data', () => {
  for (const c of ['kafka-2.7.1-compacted-offsets', 'retention-log-start', 'cp-5.1-lz4-connect']) {
    it(`${c}: compaction and retention plans touch nothing and report no error`, () => {
      const root = join(REAL_DATA, c);
      const before = treeState(root);
      const p = compact(root, { now: NOW, dryRun: true, trashDir: tempDir('klx-trash-') });
      const r = retention(root, { now: NOW, dryRun: true, trashDir: tempDir('klx-trash-'), config: { 'retention.ms': 1n } });
      expect(p.partitions.length).toBeGreaterThan(0);
      expect(p.partitions.filter((x) => x.error).map((x) => `${x.rel}: ${x.error!.message}`)).toEqual([]);
      expect(r.partitions.filter((x) => x.error).map((x) => `${x.rel}: ${x.error!.message}`)).toEqual([]);
      expect(treeState(root)).toEqual(before);
    });

    it(`${c}: compaction on a copy keeps the latest value per key, only removes offsets, and writes valid batches`, () => {
      const copy = tempDir('klx-real-');
      cpSync(join(REAL_DATA, c), copy, { recursive: true, preserveTimestamps: true });
      const parts = allPartitions(openPath(copy));
      const before = new Map(parts.map(({ log }) => [log.dir, visibleRecords(log.dir)]));
      const out = compact(copy, { now: NOW, trashDir: tempDir('klx-trash-') });
      expect(out.partitions.filter((x) => x.error).map((x) => `${x.rel}: ${x.error!.message}`)).toEqual([]);
      let removed = 0;
      for (const { log } of parts) {
        const b = before.get(log.dir)!;
        const a = visibleRecords(log.dir);
        const byOffset = new Map(b.map((x) => [x.offset, x]));
        for (const x of a) expect(byOffset.get(x.offset)).toEqual(x);
        for (const [k, v] of latest(b)) if (v.value !== null) expect(latest(a).get(k)).toEqual(v);
        removed += b.length - a.length;
        for (const f of readdirSync(log.dir).filter((n) => n.endsWith('.log'))) {
          for (const e of scanLogFile(join(log.dir, f))) {
            expect(e.type).toBe('batch');
            if (e.type === 'batch') expect(e.header.crcValid).toBe(true);
          }
        }
      }
      const reported = out.partitions.reduce((sum, x) => sum + Object.values(x.report!.removed).reduce((a, r) => a + r!.records, 0), 0);
      expect(removed).toBe(reported);
    });
  }

  it('retention-log-start: retention.ms=1 on a copy removes a prefix of every partition and nothing else', () => {
    const copy = tempDir('klx-real-');
    cpSync(join(REAL_DATA, 'retention-log-start'), copy, { recursive: true, preserveTimestamps: true });
    const parts = allPartitions(openPath(copy));
    const before = new Map(parts.map(({ log }) => [log.dir, visibleRecords(log.dir)]));
    const out = retention(copy, { now: NOW, trashDir: tempDir('klx-trash-'), config: { 'retention.ms': 1n, 'cleanup.policy': ['delete'] } });
    expect(out.partitions.filter((x) => x.error)).toEqual([]);
    let deleted = 0;
    for (const { log } of parts) {
      const b = before.get(log.dir)!;
      const a = visibleRecords(log.dir);
      expect(a).toEqual(b.slice(b.length - a.length));
      deleted += b.length - a.length;
    }
    expect(deleted).toBeGreaterThan(0);
  });
});
