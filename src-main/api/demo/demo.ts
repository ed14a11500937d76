/**
 * `demo.*` handlers: the smallest job and the smallest write, used by the tests of the job
 * machinery, of read-only mode and of path confinement (through both transports).
 *
 * They exist only for tests: a context built without `testMethods` (the option of createServerApi,
 * or KLX_TEST_METHODS=1 in the environment, which the test harness and the e2e fixtures set) answers
 * every `demo.*` call with a `test-only` error and runs nothing (`demo.touch` changes file mtimes).
 */
import { utimes } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { KlxError } from '../../engine/errors.ts';
import { REFUSED_METHOD } from '../core/dispatch.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Whether test-only methods are on when createServerApi is not told: KLX_TEST_METHODS=1. */
export function testMethodsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.KLX_TEST_METHODS === '1';
}

/** The names of the test-only methods (every `demo.*` method of the contract). */
export const TEST_ONLY_METHODS = ['demo.sleepJob', 'demo.touch'] as const;

/**
 * Builds the `demo.*` handlers; with `enabled` false each one is refused by dispatch with a
 * `test-only` error naming the method and how a test turns them on (KlxError `test-only` if called directly).
 */
export function demoHandlers(ctx: ApiContext, enabled = testMethodsFromEnv()): DomainHandlers<'demo'> {
  if (!enabled) {
    // Refused by dispatch before any job starts (REFUSED_METHOD); the throw is for a direct call.
    const refuse = (method: string) => {
      const message = `${method} is a test-only method, not available on this bridge or app (tests start it with testMethods, or KLX_TEST_METHODS=1)`;
      return Object.assign(
        async (): Promise<never> => {
          throw new KlxError('test-only', message);
        },
        { [REFUSED_METHOD]: message },
      );
    };
    return { 'demo.sleepJob': refuse('demo.sleepJob'), 'demo.touch': refuse('demo.touch') };
  }
  return {
    /** Ticks `ticks` times `intervalMs` apart; progress `done` = ticks so far, `bytes` = 1024 × ticks. Fails at `failAt`. */
    'demo.sleepJob': async (req, job) => {
      job.progress({ phase: 'sleeping', done: 0, total: req.ticks, bytes: 0 });
      for (let tick = 1; tick <= req.ticks; tick++) {
        await sleep(req.intervalMs, undefined, { signal: job.signal });
        if (req.failAt === tick) throw new KlxError('internal', `demo.sleepJob: failure requested at tick ${tick}`);
        job.progress({ phase: 'sleeping', done: tick, total: req.ticks, bytes: tick * 1024 });
      }
      return { ticks: req.ticks };
    },
    /**
     * Touches an existing file or folder inside an opened folder: a write, so only with "Open for
     * writing" on, like every other write (issue 17, defect 11). Errors: `invalid-argument`
     * (outside), `read-only` (write mode off, or a read-only app/bridge), `not-found`.
     */
    'demo.touch': async (req, call) => {
      const path = await ctx.session.resolveForWriting(req.path, call);
      const now = new Date();
      await utimes(path, now, now);
      return { path };
    },
  };
}
