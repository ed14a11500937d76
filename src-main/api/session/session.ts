/**
 * `session.*` handlers: opening folders. Every later path argument must lie inside an opened
 * folder (see `SessionState.resolve`).
 */
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Builds the `session.*` handlers. */
export function sessionHandlers(ctx: ApiContext): DomainHandlers<'session'> {
  return {
    /** Opens an existing folder (inside the fixed roots, if any). Errors: `not-found`, `invalid-argument`. */
    'session.open': async (req, call) => {
      const path = await ctx.session.open(req.path, call);
      return { path, opened: ctx.session.opened() };
    },
    /** Opened and recent folders. */
    'session.folders': async () => ({ opened: ctx.session.opened(), recent: ctx.session.recent.list(), writeMode: ctx.session.writeMode }),
    /** Switches "Open for writing". Errors: `read-only` when enabling in a read-only app or bridge. */
    'session.setWriteMode': async (req, call) => ({ enabled: ctx.session.setWriteMode(req.enabled, call) }),
  };
}
