/**
 * Starts the cleaner worker (`cleaner-worker.ts`) for one task and turns it into a promise: progress
 * messages go to `onProgress`, the result resolves, the worker's error rejects as a `KlxError` with
 * its code, file, byte position and details intact.
 *
 * Cancellation: aborting `signal` sets the shared Int32 flag the engine polls (`signal.aborted`);
 * a run then stops at its next check before the commit point ("nothing was changed") or, past it,
 * completes and resolves normally. With `terminateOnAbort` (previews, which write nothing) the
 * worker is also terminated at once, since the engine's plan functions do not poll the flag.
 * Each worker gets a private temporary folder (its `TMPDIR`, set by the worker itself so tsx's
 * transpile cache still lives in the usual one), removed when it ends, so a terminated preview
 * leaves no clone of symbolic links behind.
 *
 * Where the worker module is: `cleaner-worker.js` next to the main bundle in the built app,
 * `cleaner-worker.ts` next to this file from source (see `core/entry-worker.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { KlxError } from '../../engine/errors.ts';
import { stopWorker } from '../../engine/sql/duckdb-gate.ts';
import { startEntryWorker } from '../core/entry-worker.ts';
import type { CleanerWorkerData, WorkerMessage } from './cleaner-worker-protocol.ts';
import type { CleanerTask, CleanerTaskResult } from './cleanup-task.ts';

/** Options of {@link runInWorker}. */
export interface WorkerRunOptions {
  signal?: AbortSignal;
  onProgress?: (p: JobProgress) => void;
  /** Terminate the worker when `signal` aborts (only for work that writes nothing). */
  terminateOnAbort?: boolean;
}

function startWorker(data: CleanerWorkerData): Worker {
  return startEntryWorker('cleaner-worker', import.meta.url, { workerData: data });
}

/**
 * Runs a cleaner task in a worker thread (see the module comment).
 * @throws KlxError as the worker threw it; `cancelled` for a terminated preview; `internal` when the
 *   worker cannot start or stops without an answer.
 */
export function runInWorker<R extends CleanerTaskResult>(task: CleanerTask, opts: WorkerRunOptions = {}): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const tmp = mkdtempSync(join(tmpdir(), 'klx-cleaner-'));
    let settled = false;
    let terminated = false;
    let worker: Worker;
    const cleanup = (): void => {
      opts.signal?.removeEventListener('abort', onAbort);
      rmSync(tmp, { recursive: true, force: true });
    };
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      fn();
    };
    const onAbort = (): void => {
      Atomics.store(flag, 0, 1);
      if (opts.terminateOnAbort && !settled) {
        terminated = true;
        void stopWorker(worker);
      }
    };
    try {
      worker = startWorker({ task, cancel: flag.buffer, tmpDir: tmp });
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      reject(err instanceof KlxError ? err : new KlxError('internal', `cannot start the cleaner worker: ${(err as Error).message}`, { cause: err }));
      return;
    }
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') {
        if (!settled) opts.onProgress?.(m.progress);
      } else if (m.type === 'result') {
        // The worker's work (and its temporary files) is over once it answers; it only exits after.
        cleanup();
        settle(() => resolve(m.result as R));
      } else {
        const e = m.error;
        cleanup();
        settle(() => reject(new KlxError(e.code, e.reason, { ...(e.file !== undefined ? { file: e.file } : {}), ...(e.position !== undefined ? { position: e.position } : {}), ...(e.details !== undefined ? { details: e.details } : {}) })));
      }
    });
    worker.on('error', (err) => settle(() => reject(new KlxError('internal', `the cleaner worker failed: ${err.message}`, { cause: err }))));
    worker.on('exit', (code) => {
      settle(() =>
        reject(
          terminated
            ? new KlxError('cancelled', `${task.kind === 'plan' ? 'preview' : task.kind} cancelled: nothing was changed`, { file: task.path })
            : new KlxError('internal', `the cleaner worker stopped without an answer (exit code ${code})`, { file: task.path }),
        ),
      );
      cleanup();
    });
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
