/**
 * The worker pool (issue 17, defect 4): tasks run on worker threads, answers and typed errors
 * cross the boundary intact (never a stack), progress is forwarded, the pool never runs more
 * threads than its size, and a cancelled task answers `cancelled` within 100 ms even when it
 * never yields (its thread is terminated and replaced). The event loop's delay is measured in
 * `test/api/log/engine-off-loop.test.ts` (two threads spinning flat out on a 2-core machine would
 * measure the scheduler, not the pool).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KlxError } from '../../../src-main/engine/errors.ts';
import { defaultPoolSize, WorkerPool } from '../../../src-main/api/core/worker-pool.ts';
import { setMaxInflatedBytes } from '../../../src-main/engine/format/compression.ts';

const pool = new WorkerPool({ entry: 'pool-test-worker', near: import.meta.url, size: 2, cancelGraceMs: 50 });
afterAll(() => pool.shutdown());

async function rejection(p: Promise<unknown>): Promise<KlxError> {
  try {
    await p;
  } catch (err) {
    return err as KlxError;
  }
  throw new Error('expected a rejection');
}

describe('worker pool', () => {
  it('a task runs with the decompression bound set before it was submitted, and threads it starts inherit it (review of stop 26)', async () => {
    await Promise.all([pool.run('echo', 1), pool.run('echo', 2)]); // both threads running before the bound is set
    try {
      setMaxInflatedBytes(4_000_000);
      // Submitted at once: the task message carries the bound (the broadcast may land after the task).
      const set = await Promise.all([pool.run('bound', null), pool.run('bound', null)]);
      expect(set).toEqual([{ own: 4_000_000, childEnv: '4000000' }, { own: 4_000_000, childEnv: '4000000' }]);
    } finally {
      setMaxInflatedBytes(null);
    }
    expect(await pool.run('bound', null)).toEqual({ own: null, childEnv: null });
  });

  it('runs a task on a thread and answers its (structured-cloned) result', async () => {
    expect(await pool.run('echo', { a: [1, 2], s: '9223372036854775807' })).toEqual({ echoed: { a: [1, 2], s: '9223372036854775807' } });
  });

  it('a KlxError crosses with its code, reason, file, byte position and details; another error as its code without a stack', async () => {
    const e = await rejection(pool.run('failTyped', null));
    expect(e).toBeInstanceOf(KlxError);
    expect(e.toInfo()).toEqual({ code: 'corrupt-batch', message: '/x/00000000000000000000.log: position 4096: recordsCount 7 cannot fit', file: '/x/00000000000000000000.log', position: 4096, details: { claimed: 7 } });
    const u = await rejection(pool.run('failUntyped', null));
    expect(u.toInfo()).toEqual({ code: 'internal', message: 'Invalid typed array length: 4294967295' });
    const unknown = await rejection(pool.run('nope', null));
    expect(unknown.toInfo()).toEqual({ code: 'internal', message: 'this worker has no task "nope"' });
  });

  it('prestart starts one thread ahead of the first task, never a second one, and the first task runs on it', async () => {
    const fresh = new WorkerPool({ entry: 'pool-test-worker', near: import.meta.url, size: 2 });
    try {
      expect(fresh.stats().threads).toBe(0);
      fresh.prestart();
      expect(fresh.stats()).toMatchObject({ threads: 1, busy: 0, queued: 0 });
      fresh.prestart();
      expect(fresh.stats().threads).toBe(1);
      expect(await fresh.run('echo', { n: 7 })).toEqual({ echoed: { n: 7 } });
      expect(fresh.stats().threads).toBe(1);
    } finally {
      await fresh.shutdown();
    }
    fresh.prestart(); // shut down: nothing starts
    expect(fresh.stats().threads).toBe(0);
  });

  it('forwards progress reports in order', async () => {
    const seen: number[] = [];
    expect(await pool.run('progress', { steps: 4 }, { onProgress: (p) => seen.push(p.done) })).toEqual({ steps: 4 });
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('never runs more threads than its size; a queued task is cancelled at once; a task that never yields is cancelled within 100 ms', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const c = new AbortController();
    const spinA = rejection(pool.run('spin', null, { signal: a.signal, label: 'spin A' }));
    const spinB = rejection(pool.run('spin', null, { signal: b.signal }));
    const queued = rejection(pool.run('spin', null, { signal: c.signal }));
    await new Promise((r) => setTimeout(r, 300));
    expect(pool.stats()).toMatchObject({ threads: 2, busy: 2, queued: 1 });
    c.abort();
    expect((await queued).code).toBe('cancelled');
    expect(pool.stats().queued).toBe(0);
    const t0 = performance.now();
    a.abort();
    const ea = await spinA;
    const took = performance.now() - t0;
    expect(ea.toInfo()).toEqual({ code: 'cancelled', message: 'spin A cancelled' });
    expect(took).toBeLessThan(100);
    b.abort();
    expect((await spinB).code).toBe('cancelled');
    expect(pool.stats()).toMatchObject({ busy: 0, queued: 0, terminated: 2 });
    // The pool starts new threads on demand afterwards.
    expect(await pool.run('echo', 1)).toEqual({ echoed: 1 });
  });

  it('a task that checks its signal stops by itself on cancel (its thread is kept)', async () => {
    const before = pool.stats().terminated;
    const ac = new AbortController();
    const p = rejection(pool.run('polite', null, { signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    expect((await p).code).toBe('cancelled');
    expect(pool.stats().terminated).toBe(before);
  });

  it('sizes itself from the cores: at least 2, at most 4, one core left to the rest', () => {
    expect([1, 2, 3, 4, 8, 64].map((c) => defaultPoolSize(c))).toEqual([2, 2, 2, 3, 4, 4]);
  });
});
