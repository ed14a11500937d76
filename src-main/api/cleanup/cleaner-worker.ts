/**
 * The cleaner worker: the module a `worker_threads` Worker runs for `cleanup.plan`, `cleanup.run`,
 * `cleanup.undo`, `cleanup.repairPlan` and `cleanup.repair`, so that the engine's synchronous cleaner (minutes on GBs) never blocks the
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
import { runRepairTask } from './repair-task.ts';
import type { CleanerWorkerData, WorkerMessage } from './cleaner-worker-protocol.ts';
import type { JobProgress } from '../../../src-shared/contract.ts';

function post(m: WorkerMessage): void {
  parentPort!.postMessage(m);
}

async function main(): Promise<void> {
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
    const env = { signal, onProgress: (progress: JobProgress) => post({ type: 'progress', progress }) };
    // Repair (cleanup.repairPlan / cleanup.repair) is the engine's asynchronous recovery: awaited here.
    const result = data.task.kind === 'repairPlan' || data.task.kind === 'repairRun' ? await runRepairTask(data.task, env) : runCleanerTask(data.task, env);
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

if (parentPort) void main();
