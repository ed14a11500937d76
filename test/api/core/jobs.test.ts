/**
 * The job machinery: progress events, cancellation through `job.cancel` and through the client's
 * AbortSignal, failures, result checking, history, and the typed client's `runJob` over both an
 * in-process transport and HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createClient, KlxApiError } from '../../../src-shared/client.ts';
import type { JobEndEvent, KlxEvent } from '../../../src-shared/contract.ts';
import { EventHub } from '../../../src-main/api/core/events.ts';
import { createServerApi } from '../../../src-main/api/index.ts';
import { JobManager } from '../../../src-main/api/core/job-manager.ts';
import { startBridge } from '../../../src-main/bridge/server.ts';
import { directTransport, nodeHttpTransport, tempDir } from '../helpers.ts';

const rw = { readOnly: false };

function collect(hub: EventHub): KlxEvent[] {
  const events: KlxEvent[] = [];
  hub.subscribe((e) => events.push(e));
  return events;
}

async function start(server: ReturnType<typeof createServerApi>, request: unknown): Promise<string> {
  const out = await server.dispatch('demo.sleepJob', request, rw);
  if (!out.ok) throw new Error(out.error.message);
  return (out.result as { jobId: string }).jobId;
}

describe('jobs through dispatch', () => {
  it('a job answers {jobId} at once, reports progress {jobId, phase, done, total, bytes} and ends with its result', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    const events = collect(server.ctx.events);
    const jobId = await start(server, { ticks: 3, intervalMs: 1 });
    expect(events).toEqual([]); // the answer leaves before the first event
    const end = await server.ctx.jobs.wait(jobId);
    expect(end).toEqual({ type: 'job.end', jobId, method: 'demo.sleepJob', ok: true, result: { ticks: 3 } });
    const progress = events.filter((e) => e.type === 'job.progress');
    expect(progress.map((e) => e.type === 'job.progress' && e.done)).toEqual([0, 1, 2, 3]);
    expect(progress.at(-1)).toEqual({ type: 'job.progress', jobId, method: 'demo.sleepJob', phase: 'sleeping', done: 3, total: 3, bytes: 3072 });
    expect(events.at(-1)).toEqual(end);
  });

  it('job.cancel stops a running job, which ends with code cancelled; cancelling again answers false', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const jobId = await start(server, { ticks: 1000, intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 30));
    expect(await server.dispatch('job.cancel', { jobId }, rw)).toEqual({ ok: true, result: { cancelled: true } });
    const end = await server.ctx.jobs.wait(jobId);
    expect(end).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(await server.dispatch('job.cancel', { jobId }, rw)).toEqual({ ok: true, result: { cancelled: false } });
    const list = await server.dispatch('job.list', {}, rw);
    expect(list).toMatchObject({ ok: true, result: { jobs: [{ jobId, state: 'cancelled', error: { code: 'cancelled' } }] } });
  });

  it('job.cancel of an unknown job is not-found', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    expect(await server.dispatch('job.cancel', { jobId: 'nope' }, rw)).toMatchObject({ ok: false, error: { code: 'not-found' } });
  });

  it('a failing job ends with its error and is listed as failed', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const jobId = await start(server, { ticks: 3, intervalMs: 1, failAt: 2 });
    expect(await server.ctx.jobs.wait(jobId)).toMatchObject({ ok: false, error: { code: 'internal', message: expect.stringContaining('tick 2') } });
    expect(server.ctx.jobs.list()).toMatchObject([{ jobId, state: 'failed', done: 1 }]);
  });

  it('job.list shows a running job with its latest progress', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const jobId = await start(server, { ticks: 1000, intervalMs: 5 });
    await new Promise((r) => setTimeout(r, 40));
    const out = await server.dispatch('job.list', {}, rw);
    expect(out).toMatchObject({ ok: true, result: { jobs: [{ jobId, method: 'demo.sleepJob', state: 'running', total: 1000, endedAt: null, error: null }] } });
    await server.ctx.jobs.shutdown();
    expect(server.ctx.jobs.list()[0].state).toBe('cancelled');
  });
});

describe('JobManager', () => {
  it('throttles progress but always sends the latest state before the end', async () => {
    const hub = new EventHub();
    const events = collect(hub);
    const jobs = new JobManager(hub, { progressIntervalMs: 10_000 });
    const id = jobs.start('x.y', async (run) => {
      for (let i = 0; i <= 1000; i++) run.progress({ phase: 'scan', done: i, total: null, bytes: i });
      return 'done';
    });
    await jobs.wait(id);
    const progress = events.filter((e) => e.type === 'job.progress');
    expect(progress.length).toBeLessThanOrEqual(3);
    expect(progress.at(-1)).toMatchObject({ done: 1000, bytes: 1000 });
  });

  it('sends a progress event on each phase change even within the throttle interval', async () => {
    const hub = new EventHub();
    const events = collect(hub);
    const jobs = new JobManager(hub, { progressIntervalMs: 10_000 });
    const id = jobs.start('x.y', async (run) => {
      for (const phase of ['open', 'scan', 'write']) run.progress({ phase, done: 0, total: null, bytes: 0 });
      return null;
    });
    await jobs.wait(id);
    expect(events.flatMap((e) => (e.type === 'job.progress' ? [e.phase] : []))).toEqual(['open', 'scan', 'write']);
  });

  it('a job that completes despite a cancel request reports its result (work done is not reported as undone)', async () => {
    const jobs = new JobManager(new EventHub());
    let release!: () => void;
    const id = jobs.start('x.y', () => new Promise((r) => (release = () => r(7))));
    await new Promise((r) => setImmediate(r));
    expect(jobs.cancel(id)).toBe(true);
    release();
    expect(await jobs.wait(id)).toMatchObject({ ok: true, result: 7 });
  });

  it('a result that fails the check ends the job with internal', async () => {
    const jobs = new JobManager(new EventHub());
    const id = jobs.start('x.y', async () => 1n, () => {
      throw new Error('not JSON');
    });
    expect(await jobs.wait(id)).toMatchObject({ ok: false, error: { code: 'internal' } });
  });

  it('keeps at most historyLimit ended jobs', async () => {
    const jobs = new JobManager(new EventHub(), { historyLimit: 2 });
    const ids = [1, 2, 3].map(() => jobs.start('x.y', async () => null));
    await Promise.all(ids.map((id) => jobs.wait(id)));
    expect(jobs.list().map((j) => j.jobId)).toEqual(ids.slice(1));
  });
});

describe('the typed client runJob', () => {
  it('resolves with the result and reports progress (in-process transport)', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge', jobs: { progressIntervalMs: 0 } });
    const client = createClient(directTransport(server, rw));
    const done: number[] = [];
    const result = await client.runJob('demo.sleepJob', { ticks: 2, intervalMs: 1 }, { onProgress: (e) => done.push(e.done) });
    expect(result).toEqual({ ticks: 2 });
    expect(done).toEqual([0, 1, 2]);
  });

  it('rejects with a KlxApiError keeping the ErrorInfo of a failed call', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const client = createClient(directTransport(server, rw));
    const err = await client.api['job.cancel']({ jobId: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KlxApiError);
    expect((err as KlxApiError).info).toMatchObject({ code: 'not-found' });
  });

  const tmp = tempDir('klx-jobs-');
  afterAll(() => tmp.remove());

  it('over HTTP: aborting the signal cancels the job, which rejects with cancelled', async () => {
    const bridge = await startBridge({ readOnly: false, roots: [], rendererDir: tmp.dir, jobs: { progressIntervalMs: 0 } });
    try {
      const client = createClient(nodeHttpTransport(bridge));
      const controller = new AbortController();
      const seen: number[] = [];
      const promise = client.runJob('demo.sleepJob', { ticks: 1000, intervalMs: 10 }, {
        signal: controller.signal,
        onProgress: (e) => {
          seen.push(e.done);
          if (e.done === 2) controller.abort();
        },
      });
      const err = (await promise.catch((e: unknown) => e)) as KlxApiError;
      expect(err).toBeInstanceOf(KlxApiError);
      expect(err.code).toBe('cancelled');
      expect(seen.slice(0, 3)).toEqual([0, 1, 2]);
      const ends = bridge.api.ctx.jobs.list();
      expect(ends[0].state).toBe('cancelled');
      expect(await client.runJob('demo.sleepJob', { ticks: 2, intervalMs: 1 })).toEqual({ ticks: 2 });
    } finally {
      await bridge.close();
    }
  });

  it('an end event that arrives before the {jobId} answer is not lost', async () => {
    const server = createServerApi({ version: '1', transport: 'bridge' });
    const transport = directTransport(server, rw);
    // Delay the answer until after the job has ended.
    const slow = {
      ...transport,
      call: async (method: Parameters<typeof transport.call>[0], request: unknown) => {
        const out = await transport.call(method, request);
        if (method === 'demo.sleepJob' && out.ok) await server.ctx.jobs.wait((out.result as { jobId: string }).jobId);
        return out;
      },
    };
    const end: JobEndEvent[] = [];
    server.ctx.events.subscribe((e) => e.type === 'job.end' && end.push(e));
    expect(await createClient(slow).runJob('demo.sleepJob', { ticks: 1, intervalMs: 0 })).toEqual({ ticks: 1 });
    expect(end).toHaveLength(1);
  });
});
