/**
 * The `groups.*` API over the crafted groups log directory (test/support/groups-scenario.ts):
 * list, describe (int64 as strings, the partition folder for links), the commit history, the
 * committed offsets of one partition for the hole map, and the missing-group message; the work
 * runs in the groups worker thread (never on this one), can be cancelled, and is redone when the
 * files change.
 */

// The engine's load and describe, watched on this thread: the handlers must never call them here.
vi.mock('../../../src-main/engine/groups/groups-load.ts', async (orig) => {
  const m = await orig<typeof import('../../../src-main/engine/groups/groups-load.ts')>();
  return { ...m, loadGroups: vi.fn(m.loadGroups) };
});
vi.mock('../../../src-main/engine/groups/group-offsets.ts', async (orig) => {
  const m = await orig<typeof import('../../../src-main/engine/groups/group-offsets.ts')>();
  return { ...m, describeGroups: vi.fn(m.describeGroups) };
});
import { appendFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GroupsWorkerClient } from '../../../src-main/api/groups/groups-worker-client.ts';
import * as groupsLoad from '../../../src-main/engine/groups/groups-load.ts';
import * as groupOffsets from '../../../src-main/engine/groups/group-offsets.ts';
import { createServerApi, type ServerApi } from '../../../src-main/api/index.ts';
import type { JobResult, MethodName } from '../../../src-shared/contract.ts';
import { buildGroupsScenario, encodeOffsetsRecords, SCENARIO_NOW } from '../../support/groups-scenario.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { offsetsPartitionFor } from '../../../src-main/engine/groups/offsets-topic.ts';
import { allPartitions, openPath } from '../../../src-main/engine/log/log-dir.ts';
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
    expect(list.result.groups).toHaveLength(16);
    expect(list.result.now).toBe(now);
    expect(list.result.problems.map((p) => p.offset)).toEqual(['4', '5']);
    expect(list.result.groups.find((g) => g.group === 'g-ok')).toMatchObject({ type: 'classic', state: 'Stable', totalLag: '6', totalRecordLag: 6, members: 1 });
    expect(list.result.groups.find((g) => g.group === 'streams-app')).toMatchObject({ type: 'streams', state: 'Stable', generation: 4, members: 1, totalLag: '2' });

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

describe('the groups worker thread', () => {
  it('loads and describes in the worker: the engine is never called on this thread', async () => {
    const r = await job('groups.list', { path: logDir, now: String(SCENARIO_NOW) });
    expect(r.ok).toBe(true);
    expect(vi.mocked(groupsLoad.loadGroups)).not.toHaveBeenCalled();
    expect(vi.mocked(groupOffsets.describeGroups)).not.toHaveBeenCalled();
  });

  it('a cancelled task rejects with cancelled at once, and the worker answers the next one', async () => {
    const client = new GroupsWorkerClient();
    try {
      const ac = new AbortController();
      const p = client.run('list', { root: logDir, isolation: 'read_uncommitted' }, { signal: ac.signal });
      ac.abort();
      await expect(p).rejects.toMatchObject({ code: 'cancelled' });
      const again = await client.run('describe', { root: logDir, isolation: 'read_uncommitted', group: 'g-ok', now: String(SCENARIO_NOW) });
      expect(again.offsets.map((o) => [o.topic, o.committedOffset, o.lag])).toEqual([['orders', '4', '6']]);
      // errors cross the thread as typed errors
      await expect(client.run('partitionCommits', { root: logDir, isolation: 'read_uncommitted', dir: join(logDir, 'nowhere-0') })).rejects.toMatchObject({ code: 'invalid-argument', reason: expect.stringContaining('not a partition folder') });
    } finally {
      await client.close();
    }
  });

  it('a commit appended to __consumer_offsets is seen on the next call (the listing changed)', async () => {
    const before = (await job('groups.describe', { path: logDir, group: 'g-ok', now: String(SCENARIO_NOW) })) as { ok: true; result: JobResult<'groups.describe'> };
    expect(before.result.offsets[0]).toMatchObject({ committedOffset: '4', lag: '6' });
    const p = offsetsPartitionFor('g-ok', 50);
    const folder = join(logDir, `__consumer_offsets-${p}`);
    const seg = readdirSync(folder).filter((f) => f.endsWith('.log')).sort().pop()!;
    const enc = encodeOffsetsRecords([{ type: 1, key: { group: 'g-ok', topic: 'orders', partition: 0 }, version: 3, value: { offset: 9, leaderEpoch: 0, metadata: '', commitTimestamp: SCENARIO_NOW - 1000 } }]);
    const base = allPartitions(openPath(folder))[0]!.log.logEndOffset;
    appendFileSync(join(folder, seg), encodeBatch({ baseOffset: base, records: [{ key: Buffer.from(enc[0]!.keyBase64, 'base64'), value: Buffer.from(enc[0]!.valueBase64!, 'base64'), timestamp: BigInt(SCENARIO_NOW - 1000) }] }));
    const after = (await job('groups.describe', { path: logDir, group: 'g-ok', now: String(SCENARIO_NOW) })) as { ok: true; result: JobResult<'groups.describe'> };
    expect(after.result.offsets[0]).toMatchObject({ committedOffset: '9', lag: '1' });
  });
});
