/**
 * The main-thread side of the groups worker (`groups-worker.ts`): one long-lived worker thread,
 * started on the first call (and again after it died), that runs the groups tasks and keeps the
 * loaded folders between calls. While no task runs it does not keep the process alive.
 *
 * - `run` resolves with the task's result; progress messages go to `onProgress`; the worker's error
 *   rejects as a `KlxError` with its code, reason, file, byte position and details intact.
 * - Aborting the task's `signal` rejects at once with `cancelled` and tells the worker, whose task
 *   stops at its next yield (about every 20 ms); this thread never waits for it.
 * - A worker that dies (out of memory, a crash) rejects its tasks with `internal`; the next call
 *   starts a new one (its loaded folders are then read again).
 */
import type { Worker } from 'node:worker_threads';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { KlxError } from '../../engine/errors.ts';
import { stopWorker } from '../../engine/sql/duckdb-gate.ts';
import { startEntryWorker } from '../core/entry-worker.ts';
import type { GroupsTaskArgs, GroupsTaskKind, GroupsTaskResults } from './groups-tasks.ts';
import type { FromGroupsWorker, ToGroupsWorker } from './groups-worker-protocol.ts';

/** Options of {@link GroupsWorkerClient.run}. */
export interface GroupsRunOptions {
  signal?: AbortSignal;
  onProgress?: (p: JobProgress) => void;
}

interface Pending {
  kind: GroupsTaskKind;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  onProgress?: (p: JobProgress) => void;
  done: () => void;
}

/** Heap limit of the worker: loaded folders grow with groups and committed partitions. */
const OLD_GENERATION_MB = 2048;

/** The groups worker thread, seen from the main thread (see the module comment). */
export class GroupsWorkerClient {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /**
   * Runs a groups task in the worker.
   * @throws KlxError as the task threw it; `cancelled` when `signal` aborts first; `internal` when the
   *   worker cannot start or dies without an answer.
   */
  run<K extends GroupsTaskKind>(kind: K, args: GroupsTaskArgs[K], opts: GroupsRunOptions = {}): Promise<GroupsTaskResults[K]> {
    return new Promise<GroupsTaskResults[K]>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new KlxError('cancelled', `groups ${kind}: cancelled`));
        return;
      }
      let worker: Worker;
      try {
        worker = this.ensureWorker();
      } catch (err) {
        reject(err instanceof KlxError ? err : new KlxError('internal', `cannot start the groups worker: ${(err as Error).message}`, { cause: err }));
        return;
      }
      const id = this.nextId++;
      const onAbort = (): void => {
        const p = this.pending.get(id);
        if (!p) return;
        this.settle(id);
        worker.postMessage({ type: 'cancel', id } satisfies ToGroupsWorker);
        reject(new KlxError('cancelled', `groups ${kind}: cancelled`));
      };
      this.pending.set(id, { kind, resolve: resolve as (v: unknown) => void, reject, onProgress: opts.onProgress, done: () => opts.signal?.removeEventListener('abort', onAbort) });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      worker.ref();
      worker.postMessage({ type: 'run', id, kind, args } satisfies ToGroupsWorker);
    });
  }

  /** Tells the worker (if started) that files in or around `dirs` changed. */
  invalidate(dirs: string[]): void {
    this.worker?.postMessage({ type: 'invalidate', dirs } satisfies ToGroupsWorker);
  }

  /** Stops the worker; running tasks reject with `cancelled`. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    for (const [id, p] of [...this.pending]) {
      this.settle(id);
      p.reject(new KlxError('cancelled', `groups ${p.kind}: cancelled (shut down)`));
    }
    if (w) await stopWorker(w);
  }

  private settle(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.done();
    if (this.pending.size === 0) this.worker?.unref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startEntryWorker('groups-worker', import.meta.url, { resourceLimits: { maxOldGenerationSizeMb: OLD_GENERATION_MB } });
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: FromGroupsWorker) => {
      const p = this.pending.get(m.id);
      if (!p) return; // cancelled here already
      if (m.type === 'progress') {
        p.onProgress?.(m.progress);
        return;
      }
      this.settle(m.id);
      if (m.type === 'result') p.resolve(m.result);
      else {
        const e = m.error;
        p.reject(new KlxError(e.code, e.reason, { ...(e.file !== undefined ? { file: e.file } : {}), ...(e.position !== undefined ? { position: e.position } : {}), ...(e.details !== undefined ? { details: e.details } : {}) }));
      }
    });
    const died = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const [id, p] of [...this.pending]) {
        this.settle(id);
        p.reject(new KlxError('internal', `groups ${p.kind}: the groups worker stopped without an answer (${why})`));
      }
    };
    worker.on('error', (err: Error & { code?: string }) => died(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it used more than its ${OLD_GENERATION_MB} MB heap limit` : err.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    return worker;
  }
}
