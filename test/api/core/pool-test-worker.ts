/**
 * A worker entry for `worker-pool.test.ts`: tasks that answer, fail typed, fail untyped, report
 * progress, spin without ever yielding, and loop while yielding and checking their signal; and
 * one that tells the thread's decompression bound and the one a thread it starts inherits.
 */
import { KlxError } from '../../../src-main/engine/errors.ts';
import { serveTasks } from '../../../src-main/api/core/worker-tasks.ts';
import { maxInflatedBytes, MAX_INFLATED_BYTES_ENV } from '../../../src-main/engine/format/compression.ts';
import { Worker } from 'node:worker_threads';

serveTasks({
  /** This thread's decompression bound and what a thread it starts now finds in its environment. */
  bound: async () => {
    const child = new Worker(`require('node:worker_threads').parentPort.postMessage(process.env.${MAX_INFLATED_BYTES_ENV} ?? null)`, { eval: true });
    const childEnv = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('error', reject);
    });
    await child.terminate();
    return { own: maxInflatedBytes(), childEnv };
  },
  echo: (args: unknown) => ({ echoed: args }),
  failTyped: () => {
    throw new KlxError('corrupt-batch', 'recordsCount 7 cannot fit', { file: '/x/00000000000000000000.log', position: 4096, details: { claimed: 7 } });
  },
  failUntyped: () => {
    throw new RangeError('Invalid typed array length: 4294967295');
  },
  progress: (args: { steps: number }, run) => {
    for (let i = 1; i <= args.steps; i++) run.progress({ phase: 'stepping', done: i, total: args.steps, bytes: i * 10 });
    return { steps: args.steps };
  },
  spin: () => {
    // Never yields: only terminating the thread stops it.
    for (;;) Math.sqrt(Math.random());
  },
  polite: async (_args: unknown, run) => {
    for (;;) {
      if (run.signal.aborted) throw new KlxError('cancelled', 'polite task saw its signal');
      await new Promise((r) => setTimeout(r, 2));
    }
  },
});
