/**
 * `cleanup.plan` / `cleanup.run` with `explain`: the cleaner's decision per record, batch and segment
 * crosses the worker and the wire (offsets as decimal strings), the run lists the same decisions as
 * its preview, and a big log is capped (rows one by one up to the limit, the rest folded into
 * per-segment ranges with exact counts). The expected verdicts follow Kafka's `Cleaner.shouldRetainRecord`
 * (latest offset per key in the offset map wins; keyless records are dropped; a tombstone cleaned for
 * the first time is kept until its delete horizon) and `UnifiedLog.deleteOldSegments` (oldest first,
 * the prefix stops at the first segment that does not qualify).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import { CLEANUP_DECISION_LIMIT, type CleanupPartitionOutcome } from '../../../src-shared/cleanup-types.ts';
import { buildCompactedOrders, buildPartition, rec, singles } from '../../support/log-builder.ts';
import { tempDir, useTrashDir } from '../helpers.ts';

const TS = 1_700_000_000_000;
const DAY = 86_400_000;
const NOW = String(TS + 2 * DAY);
const tmp = tempDir('klx-cleanup-decisions-');
let n = 0;

useTrashDir(join(tmp.dir, 'trash'), () => tmp.remove());

/** 0: k1=a k2=b k1=c k3=d k2=<tombstone> k4=e | 6: k1=f k3=g <no key>=x k5=h | 10 (active): k1=i k6=j */
function compacted(): { logDir: string; dir: string } {
  const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
  const dir = buildCompactedOrders(logDir, TS);
  return { logDir, dir };
}

async function server(root: string, write: boolean): Promise<ServerApi> {
  const s = createServerApi({ version: '1', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
  expect(await s.dispatch('session.open', { path: root }, { readOnly: false })).toMatchObject({ ok: true });
  if (write) expect(await s.dispatch('session.setWriteMode', { enabled: true }, { readOnly: false })).toMatchObject({ ok: true });
  return s;
}

async function job(s: ServerApi, method: 'cleanup.plan' | 'cleanup.run', req: unknown): Promise<{ planId: string; partitions: CleanupPartitionOutcome[] }> {
  const env = await s.dispatch(method, req, { readOnly: false });
  if (!env.ok) throw new Error(env.error.message);
  const end = await s.ctx.jobs.wait((env.result as { jobId: string }).jobId);
  if (!end.ok) throw new Error(end.error.message);
  return end.result as { planId: string; partitions: CleanupPartitionOutcome[] };
}

describe('cleanup.plan/run with explain', () => {
  it('lists each record of a compaction with its verdict, reason and evidence, and the run lists the same', async () => {
    const { logDir, dir } = compacted();
    const s = await server(logDir, true);
    const req = { dir, operation: 'compaction', now: NOW, explain: true };
    const plan = await job(s, 'cleanup.plan', req);
    const d = plan.partitions[0]!.decisions!;
    expect(d.summarized).toBe(false);
    const records = d.rows.filter((r) => r.subject === 'record').map((r) => [r.offset, r.key, r.decision, r.reason]);
    expect(records).toEqual([
      ['0', 'k1', 'remove', 'superseded'],
      ['1', 'k2', 'remove', 'superseded'],
      ['2', 'k1', 'remove', 'superseded'],
      ['3', 'k3', 'remove', 'superseded'],
      ['4', 'k2', 'keep', 'tombstone-until-horizon'],
      ['5', 'k4', 'keep', 'latest-for-key'],
      ['6', 'k1', 'keep', 'latest-for-key'],
      ['7', 'k3', 'keep', 'latest-for-key'],
      ['8', null, 'remove', 'keyless'],
      ['9', 'k5', 'keep', 'latest-for-key'],
    ]);
    const byOffset = new Map(d.rows.filter((r) => r.subject === 'record').map((r) => [r.offset, r]));
    expect(byOffset.get('0')!.evidence).toBe('superseded by offset 6 (key k1)');
    expect(byOffset.get('1')!.evidence).toBe('superseded by offset 4 (key k2)');
    expect(byOffset.get('0')).toMatchObject({ segment: '0', value: 'a', timestamp: String(TS), lastOffset: null, count: null });
    expect(byOffset.get('4')).toMatchObject({ value: null, segment: '0' });
    // First cleaned at now: Kafka sets the batch's delete horizon to now + delete.retention.ms (1 day).
    expect(byOffset.get('4')!.evidence).toContain('2023-11-17 22:13:20.000');
    expect(byOffset.get('8')!.evidence).toBe('keyless: dropped (kafka rules; counted as an invalid message)');
    // One batch row per single-record batch; the tombstone's is rebuilt to carry its delete horizon
    // in the header (Kafka's MemoryRecords.filterTo never copies a batch whose horizon it sets).
    expect(d.rows.filter((r) => r.subject === 'batch').map((r) => [r.offset, r.reason])).toEqual([
      ['0', 'batch-dropped'], ['1', 'batch-dropped'], ['2', 'batch-dropped'], ['3', 'batch-dropped'], ['4', 'batch-rebuilt'],
      ['5', 'batch-copied'], ['6', 'batch-copied'], ['7', 'batch-copied'], ['8', 'batch-dropped'], ['9', 'batch-copied'],
    ]);
    // Without explain: no decisions.
    const quiet = await job(s, 'cleanup.plan', { dir, operation: 'compaction', now: NOW });
    expect(quiet.partitions[0]!.decisions).toBeNull();
    // The run: the same decisions, measured.
    const run = await job(s, 'cleanup.run', { ...req, planId: plan.planId });
    expect(run.partitions[0]!.report!.dryRun).toBe(false);
    expect(run.partitions[0]!.decisions!.rows.map((r) => [r.subject, r.offset, r.decision, r.reason, r.evidence])).toEqual(d.rows.map((r) => [r.subject, r.offset, r.decision, r.reason, r.evidence]));

    // Records carry their batch's delete horizon (the inspector shows it): only the tombstone k2 at
    // offset 4, first cleaned by this run, has one: the run's clock + delete.retention.ms (1 day).
    const page = await s.dispatch('log.records', { dir, from: 'start', limit: 20 }, { readOnly: true });
    if (!page.ok) throw new Error(page.error.message);
    const recs = (page.result as { rows: { kind: string; offset?: string; deleteHorizonMs?: string }[] }).rows.filter((r) => r.kind === 'record');
    expect(recs.map((r) => [r.offset, r.deleteHorizonMs ?? null])).toEqual([
      ['4', String(BigInt(NOW) + BigInt(DAY))],
      ['5', null],
      ['6', null],
      ['7', null],
      ['9', null],
      ['10', null],
      ['11', null],
    ]);

    // The run history: the run, and the holes it made with their reason and evidence.
    const h = await s.dispatch('cleanup.history', { dir, offsets: ['0', '1', '5', '8'] }, { readOnly: false });
    if (!h.ok) throw new Error(h.error.message);
    const hist = h.result as { runs: { runId: string; at: string; operation: string; rules: string | null; now: string; removed: unknown; ranges: unknown; undone: boolean }[]; causes: { offset: string; reason: string; text: string }[] };
    expect(hist.runs).toHaveLength(1);
    const r0 = hist.runs[0]!;
    expect(r0).toMatchObject({ operation: 'compaction', rules: 'kafka', now: NOW, undone: false });
    expect(r0.removed).toEqual([{ reason: 'superseded', records: 4 }, { reason: 'keyless', records: 1 }]);
    expect(r0.ranges).toEqual([{ reason: 'superseded', first: '0', last: '3' }, { reason: 'keyless', first: '8', last: '8' }]);
    const minute = `${r0.at.slice(0, 16).replace('T', ' ')} UTC`;
    // Offset 5 was kept: no cause.
    expect(hist.causes.map((c) => [c.offset, c.reason, c.text])).toEqual([
      ['0', 'superseded', `removed by the compaction of ${minute} (superseded by offset 6 (key k1))`],
      ['1', 'superseded', `removed by the compaction of ${minute} (superseded by offset 4 (key k2))`],
      ['8', 'keyless', `removed by the compaction of ${minute} (keyless: dropped (kafka rules; counted as an invalid message))`],
    ]);
    // Undo marks the run undone; its holes have no cause any more.
    expect(await s.dispatch('cleanup.undo', { dir }, { readOnly: false })).toMatchObject({ ok: true });
    const after = await s.dispatch('cleanup.history', { dir, offsets: ['0'] }, { readOnly: false });
    expect(after).toMatchObject({ ok: true, result: { runs: [{ runId: r0.runId, undone: true }], causes: [] } });
  });

  it('retention: one row per segment walked, the prefix stopping at the first segment inside retention.ms', async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    const dir = buildPartition(logDir, {
      topic: 'events',
      segments: [{ batches: singles(rec('a', '1', TS), rec('b', '2', TS + 1000)) }, { batches: singles(rec('c', '3', TS + DAY)) }, { batches: singles(rec('d', '4', TS + 8 * DAY)) }],
    });
    const s = await server(logDir, false);
    const plan = await job(s, 'cleanup.plan', { dir, operation: 'retention', now: String(TS + 7 * DAY + 1001), explain: true });
    const rows = plan.partitions[0]!.decisions!.rows;
    expect(rows.map((r) => [r.subject, r.offset, r.lastOffset, r.decision, r.reason])).toEqual([
      ['segment', '0', '1', 'remove', 'retention-time'],
      ['segment', '2', '2', 'keep', 'prefix-stop'],
      ['segment', '3', '3', 'keep', 'after-prefix'],
    ]);
    expect(rows[0]!.evidence).toBe('segment deleted: max timestamp 2023-11-14 22:13:21.000 is 7.00 days old > retention.ms 604800000 (7.00 days)? yes');
  });

  it(`caps a big plan: ${CLEANUP_DECISION_LIMIT} rows one by one, the rest folded per segment and reason with exact counts`, async () => {
    const logDir = join(tmp.dir, `case-${++n}`, 'kafka-logs');
    // 6,000 records, keys k0..k999 six times over, in batches of 500; then an active segment.
    const batches = Array.from({ length: 12 }, (_, b) => ({ records: Array.from({ length: 500 }, (_, i) => rec(`k${(b * 500 + i) % 1000}`, `v${b * 500 + i}`, TS + b * 500 + i)) }));
    const dir = buildPartition(logDir, { topic: 'big', segments: [{ batches }, { batches: singles(rec('z', 'z', TS + 7000)) }] });
    const s = await server(logDir, false);
    const plan = await job(s, 'cleanup.plan', { dir, operation: 'compaction', now: NOW, explain: true });
    const d = plan.partitions[0]!.decisions!;
    expect(d.summarized).toBe(true);
    // 6,000 records + 12 batches decided.
    expect(d.total).toBe(6012);
    const detailed = d.rows.filter((r) => r.subject === 'record');
    const ranges = d.rows.filter((r) => r.subject === 'range');
    expect(detailed.length + ranges.reduce((a, r) => a + (r.count ?? 0), 0)).toBe(6000);
    // The last 1,000 records (offsets 5000..5999) are the latest of their keys; all earlier ones are superseded.
    const removed = detailed.filter((r) => r.decision === 'remove').length + ranges.filter((r) => r.decision === 'remove').reduce((a, r) => a + r.count!, 0);
    expect(removed).toBe(5000);
    expect(ranges.find((r) => r.reason === 'latest-for-key')).toMatchObject({ segment: '0', lastOffset: '5999', decision: 'keep' });
  });
});
