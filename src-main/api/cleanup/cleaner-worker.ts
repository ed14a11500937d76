/**
 * The cleaner worker: the module a `worker_threads` Worker runs for `cleanup.plan`, `cleanup.run`
 * and `cleanup.undo`, so that the engine's synchronous cleaner (minutes on GBs) never blocks the
 * main process' event loop (Electron's main thread, the bridge's HTTP server): progress, other
 * calls and `job.cancel` keep flowing while it works.
 *
 * Protocol (see `cleaner-worker-runner.ts`, which starts it):
 * - `workerData`: `{ task: CleanerTask, cancel: SharedArrayBuffer, tmpDir }` — the cancel flag is an Int32
 *   that the main thread sets to 1; the engine sees it as a signal whose `aborted` getter reads it
 *   (the cleaner reads nothing else of an AbortSignal);
 * - messages to the main thread: `{type: 'progress', progress}` any number of times, then exactly
 *   one `{type: 'result', result}` or `{type: 'error', error}` where `error` carries a `KlxError`'s
 *   code, reason, file, byte position and details (rebuilt as a `KlxError` on the other side).
 *
 * Built as a second main-process entry (`electron.vite.config.ts`: `out/main/cleaner-worker.js`);
 * run from TypeScript source under tsx, vitest and Playwright (the runner registers tsx first).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import { toWireError } from '../../../src-shared/wire.ts';
import { runCleanerTask } from './cleanup-task.ts';
import type { CleanerWorkerData, WorkerMessage } from './cleaner-worker-protocol.ts';

function post(m: WorkerMessage): void {
  parentPort!.postMessage(m);
}

function main(): void {
  const data = workerData as CleanerWorkerData;
  // This thread's own copy of the environment: the engine's plan clones go to the private folder.
  process.env.TMPDIR = process.env.TMP = process.env.TEMP = data.tmpDir;
  const flag = new Int32Array(data.cancel);
  const signal = {
    get aborted(): boolean {
      return Atomics.load(flag, 0) !== 0;
    },
  };
  try {
    const result = runCleanerTask(data.task, { signal, onProgress: (progress) => post({ type: 'progress', progress }) });
    post({ type: 'result', result });
  } catch (err) {
    const error =
      err instanceof KlxError
        ? { code: err.code, reason: err.reason, file: err.file, position: err.position, details: err.details }
        : (() => {
            const info = toErrorInfo(err);
            // The stack stays in this process's log: an API error never carries one.
            console.error('cleaner worker:', err);
            return { code: info.code, reason: info.message, file: info.file, position: info.position, details: undefined };
          })();
    try {
      post({ type: 'error', error });
    } catch {
      // Details that cannot be cloned: send them as JSON.
      post({ type: 'error', error: { ...error, details: toWireError({ code: error.code, message: error.reason, details: error.details }).details } });
    }
  }
}

if (parentPort) main();
