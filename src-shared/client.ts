/**
 * The transport-agnostic typed client: turns a {@link Transport} into a {@link KlxApi} (promises
 * that reject with {@link KlxApiError}, which keeps the {@link ErrorInfo} intact) plus helpers for
 * events and jobs. Used by the renderer (over `window.klx` or HTTP) and by tests.
 *
 * No Node or DOM imports.
 */
import {
  METHOD_NAMES,
  type JobMethodName,
  type JobProgressEvent,
  type JobResult,
  type KlxApi,
  type KlxEvent,
  type MethodName,
  type Req,
} from './contract.ts';
import type { ErrorCode, ErrorInfo } from './errors.ts';
import type { EventListener, Transport } from './transport.ts';

/** A failed call, as thrown by the client. `info` is the error exactly as the main process sent it. */
export class KlxApiError extends Error {
  readonly info: ErrorInfo;
  readonly code: ErrorCode;
  constructor(info: ErrorInfo) {
    super(info.message);
    this.name = 'KlxApiError';
    this.info = info;
    this.code = info.code;
  }
}

/** Options of {@link KlxClient.runJob}. */
export interface RunJobOptions {
  /** Called with each progress event of the job. */
  onProgress?: (event: JobProgressEvent) => void;
  /** Aborting it calls `job.cancel`; the promise then rejects with code `cancelled`. */
  signal?: AbortSignal;
  /** Called once the job has its id (e.g. to show it in a job list). */
  onStarted?: (jobId: string) => void;
}

/** The typed client. */
export interface KlxClient {
  /** One function per contract method. */
  readonly api: KlxApi;
  /** Subscribes to all main-process events; returns the unsubscribe function. */
  onEvent(listener: EventListener): () => void;
  /** Starts a job method and resolves with its final result (rejects with its error, e.g. `cancelled`). */
  runJob<M extends JobMethodName>(method: M, request: Req<M>, options?: RunJobOptions): Promise<JobResult<M>>;
}

/** Builds the client over a transport. The method list comes from the contract. */
export function createClient(transport: Transport): KlxClient {
  const entries = METHOD_NAMES.map((method) => [
    method,
    async (request: unknown) => {
      const envelope = await transport.call(method, request);
      if (!envelope.ok) throw new KlxApiError(envelope.error);
      return envelope.result;
    },
  ]);
  const api = Object.freeze(Object.fromEntries(entries)) as KlxApi;

  async function runJob<M extends JobMethodName>(method: M, request: Req<M>, options: RunJobOptions = {}): Promise<JobResult<M>> {
    const { signal, onProgress, onStarted } = options;
    if (signal?.aborted) throw new KlxApiError({ code: 'cancelled', message: `${method}: cancelled before it started` });
    await transport.ready();
    return new Promise<JobResult<M>>((resolve, reject) => {
      let id: string | undefined;
      const early: KlxEvent[] = []; // events that arrive before the `{jobId}` answer
      const cancel = (): void => {
        if (id !== undefined) api['job.cancel']({ jobId: id }).catch(() => undefined);
      };
      const finish = (): void => {
        unsubscribe();
        signal?.removeEventListener('abort', cancel);
      };
      const handle = (event: KlxEvent): void => {
        if ((event.type !== 'job.progress' && event.type !== 'job.end') || event.jobId !== id) return;
        if (event.type === 'job.progress') {
          onProgress?.(event);
        } else {
          finish();
          if (event.ok) resolve(event.result as JobResult<M>);
          else reject(new KlxApiError(event.error));
        }
      };
      const unsubscribe = transport.subscribe((event) => (id === undefined ? early.push(event) : handle(event)));
      signal?.addEventListener('abort', cancel, { once: true });
      const start = api[method as MethodName] as (req: unknown) => Promise<{ jobId: string }>;
      start(request).then(
        (started) => {
          id = started.jobId;
          onStarted?.(id);
          for (const event of early.splice(0)) handle(event);
          if (signal?.aborted) cancel();
        },
        (err: unknown) => {
          finish();
          reject(err);
        },
      );
    });
  }

  return { api, onEvent: (listener) => transport.subscribe(listener), runJob };
}
