/**
 * `api/core/`: what every domain's handlers share: these types, `dispatch` (validation, read-only
 * gate, errors), the job manager, the event hub, path confinement, the session's opened folders and
 * the cache of opened partition logs.
 *
 * Types of the handler layer: the context handlers are built with, the per-call context, and the
 * handler types derived from the contract (so a missing or misspelled handler is a compile error).
 */
import type { z } from 'zod';
import type { Contract, JobProgress, MethodName, ParsedReq } from '../../../src-shared/contract.ts';
import type { CallContext } from './call-context.ts';
import type { EventHub } from './events.ts';
import type { JobManager } from './job-manager.ts';
import type { SessionState } from './session-state.ts';

export type { CallContext } from './call-context.ts';

/** Long-lived state shared by all calls of one app window or one bridge. */
export interface ApiContext {
  /** The application version (package.json's). */
  readonly version: string;
  /** Which transport serves this context (reported by `app.info`). */
  readonly transport: 'electron' | 'bridge';
  /** Absolute path of the demo log directory, if there is one. */
  readonly demoDir?: string;
  /** The home folder `fs.complete` expands `~` to and resolves relative input against (default `os.homedir()`). */
  readonly homeDir: string;
  /** Events to the renderer (job progress/end, folder opened); both transports subscribe to it. */
  readonly events: EventHub;
  readonly jobs: JobManager;
  readonly session: SessionState;
}

/** What a job handler receives besides its request. */
export interface JobContext extends CallContext {
  readonly jobId: string;
  /** Aborted by `job.cancel` (or shutdown). Stop promptly and throw (any error: it is reported as `cancelled`). */
  readonly signal: AbortSignal;
  /** Reports progress; cheap to call often (events are throttled by the job manager). */
  progress(progress: JobProgress): void;
}

type Spec<M extends MethodName> = Contract[M];

/** A handler: plain methods answer their response; job methods run the job and answer its result. */
export type Handler<M extends MethodName> =
  Spec<M> extends { job: true; result: infer R extends z.ZodType }
    ? (request: ParsedReq<M>, job: JobContext) => Promise<z.input<R>>
    : (request: ParsedReq<M>, call: CallContext) => Promise<z.input<Spec<M>['response']>>;

/** One handler per contract method. */
export type Handlers = { readonly [M in MethodName]: Handler<M> };

/** The handlers of one domain: every method whose name starts with `<domain>.` (and no other). */
export type DomainHandlers<D extends string> = { readonly [M in Extract<MethodName, `${D}.${string}`>]: Handler<M> };
