/**
 * The worker side of a {@link WorkerPool} (`worker-pool.ts`): a worker entry module calls
 * {@link serveTasks} with its task table and the thread then runs one task at a time as the pool
 * sends them (protocol in `worker-protocol.ts`).
 *
 * A task function receives its `args` (as the main side passed them, structured-cloned) and a
 * {@link TaskRun}: an `AbortSignal` aborted by the pool's `cancel` message (seen at the task's next
 * `await` or `signal.aborted` check after the message is read: work that never yields is stopped
 * by the pool terminating the thread instead) and `progress`, which posts a job progress report.
 * What it returns (or resolves) must be structured-clonable (the API's wire shapes are: strings for
 * int64, no bigint, no class instances needed). What it throws travels as a typed error: a
 * `KlxError` keeps its code, reason, file, byte position and details; anything else becomes the
 * code {@link toErrorInfo} gives it (`io-error`, `not-found`, `internal`) with its message only; the
 * stack stays in this process's stderr and never reaches an API answer.
 *
 * Example, a domain's worker entry (`log/log-worker.ts`):
 *
 *     serveTasks({ verify: (args: VerifyArgs, run) => verifyTask(args, run) });
 */
import { parentPort } from 'node:worker_threads';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { toWireError } from '../../../src-shared/wire.ts';
import { KlxError, toErrorInfo } from '../../engine/errors.ts';
import { interruptDuckDb } from '../../engine/sql/duckdb-gate.ts';
import { applyMaxInflatedBytes, maxInflatedBytes } from '../../engine/format/compression.ts';
import type { FromWorker, ToWorker, WorkerError } from './worker-protocol.ts';

/** What a task function receives besides its arguments. */
export interface TaskRun {
  /** Aborted when the pool cancels the task. */
  readonly signal: AbortSignal;
  /** Posts a progress report to the main thread (the job manager throttles what it forwards). */
  progress(progress: JobProgress): void;
}

/** A task function: runs on the worker thread. */
export type TaskFn = (args: any, run: TaskRun) => unknown;

/** Task functions by kind. */
export type TaskTable = Readonly<Record<string, TaskFn>>;

/** The typed form of anything a task threw (see the module comment). */
export function workerErrorOf(err: unknown): WorkerError {
  if (err instanceof KlxError) {
    const out: WorkerError = { code: err.code, reason: err.reason };
    if (err.file !== undefined) out.file = err.file;
    if (err.position !== undefined) out.position = err.position;
    if (err.details !== undefined) out.details = err.details;
    return out;
  }
  const info = toErrorInfo(err);
  // The stack stays in this process's log: an API error never carries one.
  if (info.code === 'internal') console.error('worker task:', err);
  const out: WorkerError = { code: info.code, reason: info.message };
  if (info.file !== undefined) out.file = info.file;
  if (info.position !== undefined) out.position = info.position;
  return out;
}

/**
 * Serves `table` on this worker thread (see the module comment). Does nothing when called outside
 * a worker thread.
 */
export function serveTasks(table: TaskTable): void {
  const port = parentPort;
  if (!port) return;
  const post = (m: FromWorker): void => port.postMessage(m);
  const running = new Map<number, AbortController>();
  port.on('message', (m: ToWorker) => {
    if (m.type === 'cancel') {
      const task = running.get(m.id);
      if (!task) return;
      task.abort(new KlxError('cancelled', 'cancelled by the user'));
      // DuckDB work stops only when interrupted, and the thread cannot be ended while it runs.
      interruptDuckDb();
      return;
    }
    if (m.maxInflatedBytes !== maxInflatedBytes()) applyMaxInflatedBytes(m.maxInflatedBytes);
    const controller = new AbortController();
    running.set(m.id, controller);
    const run: TaskRun = { signal: controller.signal, progress: (progress) => post({ type: 'progress', id: m.id, progress }) };
    void (async () => {
      try {
        const fn = table[m.kind];
        if (!fn) throw new KlxError('internal', `this worker has no task "${m.kind}"`);
        const result = await fn(m.args, run);
        post({ type: 'result', id: m.id, result });
      } catch (err) {
        const error = controller.signal.aborted && !(err instanceof KlxError) ? { code: 'cancelled' as const, reason: 'cancelled by the user' } : workerErrorOf(err);
        try {
          post({ type: 'error', id: m.id, error });
        } catch {
          // Details that cannot be cloned: send them as JSON.
          post({ type: 'error', id: m.id, error: { ...error, details: toWireError({ code: error.code, message: error.reason, details: error.details }).details } });
        }
      } finally {
        running.delete(m.id);
      }
    })();
  });
  post({ type: 'ready' });
}
