/**
 * A broker's cleaner only compacts logs whose cleanup.policy lists `compact` (LogCleanerManager.grabFilthiestCompactedLog
 * filters on LogConfig.compact): on a copy of a broker-written `delete` partition (multisegment-rolled/invoice-1,
 * 3 rolled segments + the active one, 99,523 records), `--like-broker` plans nothing and says why; an explicit
 * compaction still plans the rewrite but says it is not what a broker would do; compact,delete is compacted.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { planCompaction } from '../../../src-main/engine/cleaner/compaction.ts';
import { reportText } from '../../../src-main/engine/cleaner/cleaner-plan.ts';
import { tempDir } from '../../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../../support/real-data.ts';

const NOW = 1_900_000_000_000;
const WHY =
  "a broker's log cleaner only picks logs whose cleanup.policy includes compact (LogCleanerManager.grabFilthiestCompactedLog filters on LogConfig.compact); it only deletes whole segments by retention (UnifiedLog.deleteOldSegments)";

function copyInvoice(): string {
  const root = tempDir('klx-policy-');
  cpSync(join(REAL_DATA, 'multisegment-rolled'), root, { recursive: true });
  return join(root, 'invoice-1');
}

describeRealData('cleanup.policy=delete: a broker never compacts', () => {
  it('--like-broker on the default policy plans nothing and names LogCleanerManager.grabFilthiestCompactedLog', () => {
    const dir = copyInvoice();
    const p = planCompaction(dir, { now: NOW, likeBroker: true });
    expect(p.nothingToDo).toBe(true);
    expect([p.segments.rewritten.length, p.segments.created.length]).toEqual([0, 0]);
    expect(p.cleanable).toMatchObject({ firstDirtyOffset: 0n, firstUncleanableOffset: 90748n, brokerWouldClean: false });
    expect(p.cleanable!.brokerNeverCompacts).toBe(`cleanup.policy is delete (the default), and ${WHY}`);
    expect(reportText(p)).toEqual([`invoice-1: compaction (rules: kafka): nothing to clean: a broker never compacts this topic: cleanup.policy is delete (the default), and ${WHY}`]);
  });

  it('an explicit compaction of a delete topic (--config cleanup.policy=delete) still plans the rewrite, noting a broker would not', () => {
    const dir = copyInvoice();
    const p = planCompaction(dir, { now: NOW, config: { 'cleanup.policy': ['delete'] } });
    expect(p.segments.rewritten.map((s) => s.file)).toEqual(['00000000000000000000.log', '00000000000000030620.log', '00000000000000060492.log']);
    expect(p.segments.created.map((s) => [s.file, s.bytes, s.records])).toEqual([['00000000000000000000.log', 2_983_958, 90_748]]);
    expect(p.notes.at(-1)).toBe(`not what a broker would do (LogCleanerManager.grabFilthiestCompactedLog): a broker never compacts this topic: cleanup.policy is delete (--config / the request), and ${WHY}`);
    expect(reportText(p)).toContain('  cleanable range 0..90748 (bounded by the active segment), dirty ratio 1.000 (min.cleanable.dirty.ratio 0.5); a broker never compacts this topic (LogCleanerManager.grabFilthiestCompactedLog)');
  });

  it('compact,delete is compacted by a broker (LogConfig.compact is true): --like-broker plans the clean', () => {
    const dir = copyInvoice();
    const p = planCompaction(dir, { now: NOW, likeBroker: true, config: { 'cleanup.policy': ['compact', 'delete'], 'retention.ms': -1n } });
    expect(p.cleanable).toMatchObject({ brokerNeverCompacts: null, brokerWouldClean: true, dirtyRatio: 1 });
    expect(p.segments.created.map((s) => [s.file, s.records])).toEqual([['00000000000000000000.log', 90_748]]);
    expect(p.notes.filter((n) => n.includes('never compacts'))).toEqual([]);
  });
});
