/**
 * The groups worker: the module a `worker_threads` Worker runs for the `groups.*` handlers, so that
 * loading `__consumer_offsets` (seconds on millions of commits) and computing lag and record lag
 * never run on the main process' event loop (Electron's main thread, the bridge's HTTP server).
 * One long-lived thread holds the loaded folders ({@link GroupsTasks}) between calls.
 *
 * Protocol (`groups-worker-protocol.ts`; the client is `groups-worker-client.ts`): `run` messages
 * start tasks (several may be under way: each yields between batches), `cancel` aborts one (it stops
 * at its next yield, about every 20 ms), `invalidate` marks loaded folders stale. Each task answers
 * `progress` messages, then one `result` or `error` (a `KlxError`'s code, reason, file, byte position
 * and details, rebuilt as a `KlxError` on the other side).
 *
 * Built as a main-process entry (`electron.vite.config.ts`: `out/main/groups-worker.js`); run from
 * TypeScript source under tsx, vitest and Playwright (see `core/entry-worker.ts`).
 */
import { parentPort } from 'node:worker_threads';
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import { toWireError } from '../../../src-shared/wire.ts';
import { GroupsTasks } from './groups-tasks.ts';
import type { FromGroupsWorker, GroupsWorkerError, ToGroupsWorker } from './groups-worker-protocol.ts';

function post(m: FromGroupsWorker): void {
  parentPort!.postMessage(m);
}

function errorOf(err: unknown): GroupsWorkerError {
  if (err instanceof KlxError) return { code: err.code, reason: err.reason, file: err.file, position: err.position, details: err.details };
  const info = toErrorInfo(err);
  // The stack stays in this process's log: an API error never carries one.
  console.error('groups worker:', err);
  return { code: info.code, reason: info.message, file: info.file, position: info.position };
}

function main(): void {
  const tasks = new GroupsTasks();
  const running = new Map<number, AbortController>();
  parentPort!.on('message', (m: ToGroupsWorker) => {
    if (m.type === 'invalidate') {
      tasks.invalidate(m.dirs);
      return;
    }
    if (m.type === 'cancel') {
      running.get(m.id)?.abort();
      return;
    }
    const ac = new AbortController();
    running.set(m.id, ac);
    tasks
      .run(m.kind, m.args, { signal: ac.signal, progress: (progress) => post({ type: 'progress', id: m.id, progress }) })
      .then(
        (result) => post({ type: 'result', id: m.id, result }),
        (err: unknown) => {
          const error = errorOf(err);
          try {
            post({ type: 'error', id: m.id, error });
          } catch {
            // Details that cannot be cloned: send them as JSON.
            post({ type: 'error', id: m.id, error: { ...error, details: toWireError({ code: error.code, message: error.reason, details: error.details }).details } });
          }
        },
      )
      .finally(() => running.delete(m.id));
  });
}

if (parentPort) main();
