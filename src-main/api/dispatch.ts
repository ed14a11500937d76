/**
 * The single entry point both transports call: `dispatch(method, rawRequest, options)`.
 *
 * In order: the method must be in the contract (`invalid-argument`); a write method is refused
 * when `options.readOnly` (`read-only`); the request is validated against the method's schema
 * (`invalid-argument`, with zod's message and the issues in `details.issues`); the handler runs (for
 * job methods it is started as a job and `{jobId}` is answered); the answer is checked against the
 * response schema (a mismatch is a bug: `internal`). It never throws: every failure is an
 * {@link Envelope} with an {@link ErrorInfo}.
 */
import { z } from 'zod';
import { contract, isJobMethod, isMethodName, type MethodName } from '../../src-shared/contract.ts';
import type { ErrorInfo } from '../../src-shared/errors.ts';
import { toWireError, type Envelope } from '../../src-shared/wire.ts';
import { toErrorInfo } from '../engine/errors.ts';
import type { ApiContext, CallContext, Handlers, JobContext } from './types.ts';

/** Per-call options given by the transport. */
export type DispatchOptions = CallContext;

/** The dispatch function of one context. */
export type Dispatch = (method: string, rawRequest: unknown, options: DispatchOptions) => Promise<Envelope<unknown>>;

function invalid(method: string, error: z.ZodError): ErrorInfo {
  return {
    code: 'invalid-argument',
    message: `${method}: ${z.prettifyError(error)}`,
    details: { issues: error.issues.map((i) => ({ code: i.code, path: i.path.map(String), message: i.message })) },
  };
}

/** Builds `dispatch` over the handlers of a context. */
export function createDispatch(ctx: ApiContext, handlers: Handlers): Dispatch {
  return async (method, rawRequest, options) => {
    try {
      if (typeof method !== 'string' || !isMethodName(method)) {
        return { ok: false, error: { code: 'invalid-argument', message: `unknown method: ${String(method)}` } };
      }
      const spec = contract[method];
      if (spec.write && options.readOnly) {
        return { ok: false, error: { code: 'read-only', message: `${method} changes files and is refused: opened read-only` } };
      }
      const parsed = spec.request.safeParse(rawRequest);
      if (!parsed.success) return { ok: false, error: invalid(method, parsed.error) };
      const call: CallContext = { readOnly: options.readOnly, allowedRoots: options.allowedRoots };

      if (isJobMethod(method)) {
        const resultSchema = contract[method].result;
        const handler = handlers[method] as (req: unknown, job: JobContext) => Promise<unknown>;
        const jobId = ctx.jobs.start(method, (run) => handler(parsed.data, { ...call, ...run }), (r) => resultSchema.parse(r));
        return { ok: true, result: { jobId } };
      }
      const handler = handlers[method as MethodName] as (req: unknown, call: CallContext) => Promise<unknown>;
      const answer = await handler(parsed.data, call);
      const checked = spec.response.safeParse(answer);
      if (!checked.success) {
        return { ok: false, error: { code: 'internal', message: `${method}: the answer does not match the contract: ${z.prettifyError(checked.error)}` } };
      }
      return { ok: true, result: checked.data };
    } catch (err) {
      return { ok: false, error: toWireError(toErrorInfo(err)) };
    }
  };
}
