/**
 * The single entry point both transports call: `dispatch(method, rawRequest, options)`.
 *
 * In order: the method must be in the contract (`invalid-argument`); a write method is refused
 * when `options.readOnly` (`read-only`); the request is validated against the method's schema
 * (`invalid-argument`, with zod's message and the issues in `details.issues`); the handler runs (for
 * job methods it is started as a job and `{jobId}` is answered); the answer is checked against the
 * response schema (a mismatch is a bug: `internal`). It never throws: every failure is an
 * {@link Envelope} with an {@link ErrorInfo}.
 *
 * How much of an answer is checked ({@link ResponseCheck}): `full` checks every element (tests, dev,
 * `KLX_CHECK_RESPONSES=full`); `sampled` (the default otherwise) checks everything but the elements
 * of long arrays (a records page's 200 rows, a batches page), of which it checks the first, the last,
 * the first of each `kind`, and {@link SAMPLE_SPREAD} more spread over the array from a random start.
 * A full check of a 200-row `log.records` page costs several ms of the bridge's (or main process's)
 * only thread per page while the user scrolls (`npm run bench -- dispatch`); the handlers build their
 * answers from typed code, so a full check in every test run plus the spot check here catch a
 * contract break without paying for it on every page. Request arguments are always fully checked.
 */
import { z } from 'zod';
import { contract, isJobMethod, isMethodName, type MethodName } from '../../../src-shared/contract.ts';
import type { ErrorInfo } from '../../../src-shared/errors.ts';
import { toWireError, type Envelope } from '../../../src-shared/wire.ts';
import { toErrorInfo } from '../../engine/errors.ts';
import type { ApiContext, CallContext, Handlers, JobContext } from './types.ts';

/** Per-call options given by the transport. */
export type DispatchOptions = CallContext;

/** How answers are checked against the contract: every element (`full`) or long arrays spot-checked (`sampled`). See the module comment. */
export type ResponseCheck = 'full' | 'sampled';

/** Options of {@link createDispatch}. */
export interface CreateDispatchOptions {
  /** Default: {@link defaultResponseCheck}. */
  responseCheck?: ResponseCheck;
}

/** Arrays with more elements than this are spot-checked in `sampled` mode. */
export const SAMPLE_OVER = 32;
/** Elements checked in a long array besides the first, the last and the first of each `kind`. */
export const SAMPLE_SPREAD = 14;

/**
 * `full` under test runners and in development (`NODE_ENV` `test` or `development`, `VITEST` set) or
 * when `KLX_CHECK_RESPONSES=full`; `sampled` otherwise (the packaged app, `klx serve`).
 */
export function defaultResponseCheck(env: NodeJS.ProcessEnv = process.env): ResponseCheck {
  if (env.KLX_CHECK_RESPONSES === 'full' || env.KLX_CHECK_RESPONSES === 'sampled') return env.KLX_CHECK_RESPONSES;
  return env.NODE_ENV === 'test' || env.NODE_ENV === 'development' || env.VITEST !== undefined ? 'full' : 'sampled';
}

/** The indexes of `items` a sampled check looks at (see the module comment), ascending. */
export function sampleIndexes(items: readonly unknown[], random: () => number = Math.random): number[] {
  const n = items.length;
  const picked = new Set<number>([0, n - 1]);
  const kinds = new Set<unknown>();
  for (let i = 0; i < n; i++) {
    const item = items[i];
    const kind = typeof item === 'object' && item !== null ? (item as { kind?: unknown }).kind : undefined;
    if (kind !== undefined && !kinds.has(kind)) {
      kinds.add(kind);
      picked.add(i);
    }
  }
  const step = n / SAMPLE_SPREAD;
  const phase = random() * step;
  for (let j = 0; j < SAMPLE_SPREAD; j++) picked.add(Math.min(n - 1, Math.floor(phase + j * step)));
  return [...picked].sort((a, b) => a - b);
}

type Checked = { success: true; data: unknown } | { success: false; error: z.ZodError };

/**
 * Checks `answer` against `schema` with the long arrays of a top-level object spot-checked: the
 * object is checked with each long array replaced by its sample; the result carries the full
 * arrays (their elements as the handler made them). Issues name the real element indexes.
 */
function checkSampled(schema: z.ZodType, answer: unknown): Checked {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return schema.safeParse(answer);
  const long = Object.entries(answer).filter((e): e is [string, unknown[]] => Array.isArray(e[1]) && e[1].length > SAMPLE_OVER);
  if (long.length === 0) return schema.safeParse(answer);
  const probe: Record<string, unknown> = { ...answer };
  const indexes = new Map<string, number[]>();
  for (const [k, items] of long) {
    const at = sampleIndexes(items);
    indexes.set(k, at);
    probe[k] = at.map((i) => items[i]);
  }
  const checked = schema.safeParse(probe);
  if (!checked.success) {
    const issues = checked.error.issues.map((issue) => {
      const at = indexes.get(String(issue.path[0]));
      return at && typeof issue.path[1] === 'number' ? { ...issue, path: [issue.path[0]!, at[issue.path[1]]!, ...issue.path.slice(2)] } : issue;
    });
    return { success: false, error: new z.ZodError(issues) };
  }
  if (typeof checked.data !== 'object' || checked.data === null) return checked;
  const data: Record<string, unknown> = { ...checked.data };
  for (const [k, items] of long) if (k in data) data[k] = items;
  return { success: true, data };
}

/** The dispatch function of one context. */
export type Dispatch = (method: string, rawRequest: unknown, options: DispatchOptions) => Promise<Envelope<unknown>>;

function invalid(method: string, error: z.ZodError): ErrorInfo {
  return {
    code: 'invalid-argument',
    message: `${method}: ${z.prettifyError(error)}`,
    details: { issues: error.issues.map((i) => ({ code: i.code, path: i.path.map(String), message: i.message })) },
  };
}

/**
 * Marks a handler that refuses every call before anything runs (no job is started): its value is the
 * `test-only` message. Set on the `demo.*` handlers of a context not started for tests (demo.ts).
 */
export const REFUSED_METHOD = Symbol('refused method');

/** Builds `dispatch` over the handlers of a context. */
export function createDispatch(ctx: ApiContext, handlers: Handlers, dispatchOptions: CreateDispatchOptions = {}): Dispatch {
  const responseCheck = dispatchOptions.responseCheck ?? defaultResponseCheck();
  return async (method, rawRequest, options) => {
    try {
      if (typeof method !== 'string' || !isMethodName(method)) {
        return { ok: false, error: { code: 'invalid-argument', message: `unknown method: ${String(method)}` } };
      }
      const spec = contract[method];
      const refusal = (handlers[method] as { [REFUSED_METHOD]?: string })[REFUSED_METHOD];
      if (refusal !== undefined) return { ok: false, error: { code: 'test-only', message: refusal } };
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
      const checked = responseCheck === 'full' ? spec.response.safeParse(answer) : checkSampled(spec.response, answer);
      if (!checked.success) {
        return { ok: false, error: { code: 'internal', message: `${method}: the answer does not match the contract: ${z.prettifyError(checked.error)}` } };
      }
      return { ok: true, result: checked.data };
    } catch (err) {
      return { ok: false, error: toWireError(toErrorInfo(err)) };
    }
  };
}
