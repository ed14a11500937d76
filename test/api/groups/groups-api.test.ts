/**
 * The `groups.*` API over the crafted groups log directory (test/support/groups-scenario.ts):
 * list, describe (int64 as strings, the partition folder for links), the commit history, the
 * committed offsets of one partition for the hole map, and the missing-group message.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import type { JobResult, MethodName } from '../../../src-shared/contract.ts';
import { buildGroupsScenario, SCENARIO_NOW } from '../../support/groups-scenario.ts';
import { tempDir } from '../helpers.ts';

const CALL = { readOnly: true };
let tmp: { dir: string; remove: () => void };
let server: ServerApi;
let logDir: string;

async function job<M extends MethodName>(method: M, req: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: { code: string; message: string } }> {
  const env = await server.dispatch(method, req, CALL);
  if (!env.ok) return { ok: false, error: env.error };
  const end = await server.ctx.jobs.wait((env.result as { jobId: string }).jobId);
  return end.ok ? { ok: true, result: end.result } : { ok: false, error: end.error };
}

beforeAll(async () => {
  tmp = tempDir('klx-groups-api-');
  logDir = join(tmp.dir, 'kafka-logs');
  buildGroupsScenario(logDir);
  server = createServerApi({ version: 'test', transport: 'bridge' });
  await server.ctx.session.open(logDir, CALL);
});
afterAll(() => tmp.remove());

describe('groups.*', () => {
  it('list, describe, history and partitionCommits', async () => {
    const now = String(SCENARIO_NOW);
    const list = (await job('groups.list', { path: logDir, now })) as { ok: true; result: JobResult<'groups.list'> };
    expect(list.ok).toBe(true);
    expect(list.result.groups).toHaveLength(15);
    expect(list.result.now).toBe(now);
    expect(list.result.problems.map((p) => p.offset)).toEqual(['4', '5']);
    expect(list.result.groups.find((g) => g.group === 'g-ok')).toMatchObject({ type: 'classic', state: 'Stable', totalLag: '6', totalRecordLag: 6, members: 1 });

    const d = (await job('groups.describe', { path: logDir, group: 'g-txn', now, isolation: 'read_committed' })) as { ok: true; result: JobResult<'groups.describe'> };
    expect(d.result.offsets).toEqual([
      expect.objectContaining({ topic: 'txn', partition: 0, committedOffset: '0', logEndOffset: '13', lastStableOffset: '11', lag: '13', recordLag: 6, diagnosis: 'ok', dir: join(logDir, 'txn-0') }),
    ]);

    const h = (await job('groups.history', { path: logDir, group: 'g-ok', topic: 'orders', partition: 0 })) as { ok: true; result: JobResult<'groups.history'> };
    expect(h.result.points.map((p) => p.committedOffset)).toEqual(['1', '2', '4']);

    const c = (await job('groups.partitionCommits', { path: logDir, dir: join(logDir, 'compacted-0'), now })) as { ok: true; result: JobResult<'groups.partitionCommits'> };
    expect(c.result.commits).toEqual([{ group: 'g-hole', committedOffset: '3', diagnosis: 'in-hole', expired: true }]);
  });

  it('an unknown group names the __consumer_offsets partition it would live in', async () => {
    const r = await job('groups.describe', { path: logDir, group: 'nobody-here' });
    expect(r).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect((r as { error: { message: string } }).error.message).toMatch(/^group "nobody-here" (is not listed: it lives in|has no records in) __consumer_offsets-\d+ \(abs\(hashCode\) % 50/);
  });
});
