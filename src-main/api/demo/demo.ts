/**
 * `demo.*` handlers: the smallest job and the smallest write, used by the tests of the job
 * machinery, of read-only mode and of path confinement (through both transports).
 */
import { utimes } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { KlxError } from '../../engine/errors.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Builds the `demo.*` handlers. */
export function demoHandlers(ctx: ApiContext): DomainHandlers<'demo'> {
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
