/**
 * `job.*` handlers: listing and cancelling the jobs started by job methods (see `job-manager.ts`).
 */
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Builds the `job.*` handlers. */
export function jobHandlers(ctx: ApiContext): DomainHandlers<'job'> {
  return {
    /** Requests cancellation. `{cancelled: false}` when the job had already ended; unknown id: `not-found`. */
    'job.cancel': async (req) => ({ cancelled: ctx.jobs.cancel(req.jobId) }),
    /** Running and recently ended jobs. */
    'job.list': async () => ({ jobs: ctx.jobs.list() }),
  };
}
