/**
 * A small pool of `worker_threads` workers that runs the engine's heavy work (scans, verify,
 * search, records pages over big or compressed batches...) off the event loop that answers
 * requests (Electron's main thread, the bridge's HTTP server), so that one slow or hostile input
 * never freezes other calls, progress events or `job.cancel`.
 *
 * Use (main side):
 *
 *     const pool = new WorkerPool({ entry: 'log-worker', near: import.meta.url }); // log-worker.ts beside this module
 *     const result = await pool.run<VerifyResult>('verify', { dir, deep }, { signal: job.signal, onProgress: job.progress });
 *
 * and the worker entry (`log/log-worker.ts`) calls `serveTasks({ verify: ... })` (`worker-tasks.ts`).
 *
 * - **Bounded size**: at most `size` threads (default {@link defaultPoolSize}), started on demand;
 *   tasks beyond that wait in a first-in first-out queue. A task goes to an idle thread when there
 *   is one (with an `affinity` key, e.g. the partition folder, preferably the one that last ran that
 *   key: its caches are warm there), else to a new thread while fewer than `size` run.
 *   Idle threads do not keep the process alive (`unref`).
 * - **Cancellation** through the task's `signal` (the job's): a queued task is dropped at once; a
 *   running one gets a `cancel` message (its `TaskRun.signal` aborts at its next check) and, if it
 *   has not answered `cancelGraceMs` (default 50 ms) later, its thread is ended (V8 stops even
 *   a loop that never yields) and replaced on demand. A thread is never ended while a DuckDB call
 *   is in flight in it (that aborts the process): the cancel message interrupts the thread's DuckDB
 *   connections, and the thread is ended once their calls have returned (`engine/sql/duckdb-gate.ts`). Either way the promise rejects with a
 *   `KlxError` `cancelled` within about `cancelGraceMs`, since this thread is never the one working.
 *   Only work that writes nothing may run here: a terminated task stops anywhere.
 * - **Typed errors** cross the boundary: a task's `KlxError` rejects here as a `KlxError` with the
 *   same code, reason, file, byte position and details; a thread that dies (out of its heap limit,
 *   `resourceLimits`, default 2 GiB old generation) rejects its task with `internal` naming the
 *   task, never with a stack.
 *
 * Where the worker module is (found and started by `entry-worker.ts`):
 * - built app: `<entry>.js` next to the main bundle (an entry of the electron-vite main build, see
 *   `electron.vite.config.ts`), or one folder up when this code sits in a chunk folder;
 * - from TypeScript source (tsx, vitest, Playwright): `<entry>.ts` beside the module whose URL is
 *   `near` (the pool's creator), run through a small
 *   bootstrap that registers tsx's ESM loader in the worker first (Node 20 does not apply
 *   `--import` loaders given in a Worker's `execArgv` to its entry module).
 */
import { availableParallelism } from 'node:os';
import type { ResourceLimits, Worker } from 'node:worker_threads';
import type { JobProgress } from '../../../src-shared/contract.ts';
import { KlxError } from '../../engine/errors.ts';
import { stopWorker } from '../../engine/sql/duckdb-gate.ts';
import { maxInflatedBytes } from '../../engine/format/compression.ts';
import { startEntryWorker } from './entry-worker.ts';
import type { FromWorker, ToWorker, WorkerError } from './worker-protocol.ts';

/** Threads a pool runs at most by default: the cores but one, at least 2 (so one stuck task never queues every other), at most 4. */
export function defaultPoolSize(cores: number = availableParallelism()): number {
  return Math.max(2, Math.min(4, cores - 1));
}

/** Options of a {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** The entry's file name without `.js` (built) or `.ts` (source), e.g. `log-worker`. */
  entry: string;
  /** `import.meta.url` of a module beside the entry's TypeScript source (the pool's creator). */
  near: string;
  /** Threads at most (default {@link defaultPoolSize}). */
  size?: number;
  /** Milliseconds between a running task's cancel message and its thread's termination (default 50). */
  cancelGraceMs?: number;
  /** Heap limits of each thread (default: 2048 MB old generation). */
  resourceLimits?: ResourceLimits;
}

/** Options of one {@link WorkerPool.run}. */
export interface TaskOptions {
  /** Cancels the task (see the module comment). */
  signal?: AbortSignal;
  /** Progress reports the task posts (`TaskRun.progress`). */
  onProgress?: (progress: JobProgress) => void;
  /** A key (e.g. a partition folder): prefer the idle thread that last ran the same key. */
  affinity?: string;
  /** Names the task in errors (e.g. the partition folder); default the task's kind. */
  label?: string;
}

interface Task {
  id: number;
  kind: string;
  args: unknown;
  opts: TaskOptions;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  onAbort?: () => void;
  slot?: Slot;
  graceTimer?: ReturnType<typeof setTimeout>;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  lastKey?: string;
  dead: boolean;
}

/** How a pool is doing (for tests and diagnostics). */
export interface PoolStats {
  threads: number;
  busy: number;
  queued: number;
  /** Threads terminated because a cancelled task did not stop in time. */
  terminated: number;
}

function errorOf(e: WorkerError): KlxError {
  return new KlxError(e.code, e.reason, { ...(e.file !== undefined ? { file: e.file } : {}), ...(e.position !== undefined ? { position: e.position } : {}), ...(e.details !== undefined ? { details: e.details } : {}) });
}

/** A bounded pool of task workers (see the module comment). */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private readonly size: number;
  private readonly cancelGraceMs: number;
  private readonly resourceLimits: ResourceLimits;
  private nextId = 1;
  private terminated = 0;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.size = Math.max(1, Math.floor(options.size ?? defaultPoolSize()));
    this.cancelGraceMs = options.cancelGraceMs ?? 50;
    this.resourceLimits = options.resourceLimits ?? { maxOldGenerationSizeMb: 2048 };
  }

  /**
   * Runs the task `kind` of the worker entry with `args` on a pool thread.
   * @returns what the task returned (structured-cloned).
   * @throws KlxError as the task threw it; `cancelled` when `opts.signal` aborts first; `internal`
   *   when the thread cannot start or dies without an answer, or the pool is shut down.
   */
  run<R>(kind: string, args: unknown, opts: TaskOptions = {}): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.closed) {
        reject(new KlxError('internal', `${this.options.entry}: the worker pool is shut down`));
        return;
      }
      const task: Task = { id: this.nextId++, kind, args, opts, resolve: resolve as (v: unknown) => void, reject, settled: false };
      if (opts.signal?.aborted) {
        reject(this.cancelled(task));
        return;
      }
      if (opts.signal) {
        task.onAbort = () => this.cancel(task);
        opts.signal.addEventListener('abort', task.onAbort, { once: true });
      }
      this.queue.push(task);
      this.pump();
    });
  }

  /**
   * Starts one thread ahead of the first task when no thread runs, so that the first task does not
   * wait for a thread to start and load the entry's modules (hundreds of ms; e.g. a folder was just
   * opened and its first records page is about to be asked for). Idle, it does not keep the process
   * alive. Does nothing on a shut-down pool or when a thread runs already; a thread that cannot
   * start is reported by the first task instead.
   */
  prestart(): void {
    if (this.closed || this.slots.some((s) => !s.dead)) return;
    try {
      this.spawn();
    } catch {
      // pump() tries again for the first task and rejects it with the reason.
    }
  }

  /** Threads, busy threads, queued tasks, terminations. */
  stats(): PoolStats {
    const live = this.slots.filter((s) => !s.dead);
    return { threads: live.length, busy: live.filter((s) => s.task).length, queued: this.queue.length, terminated: this.terminated };
  }

  /** Rejects queued and running tasks (`cancelled`) and terminates every thread. The pool refuses new tasks afterwards. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) this.settle(t, () => t.reject(this.cancelled(t)));
    await Promise.all(
      this.slots.splice(0).map(async (s) => {
        s.dead = true;
        if (s.task) this.settle(s.task, () => s.task!.reject(this.cancelled(s.task!)));
        if (s.task) s.worker.postMessage({ type: 'cancel', id: s.task.id } satisfies ToWorker);
        await stopWorker(s.worker);
      }),
    );
  }

  private cancelled(task: Task): KlxError {
    return new KlxError('cancelled', `${task.opts.label ?? task.kind} cancelled`);
  }

  private settle(task: Task, fn: () => void): void {
    if (task.settled) return;
    task.settled = true;
    if (task.graceTimer) clearTimeout(task.graceTimer);
    if (task.onAbort) task.opts.signal?.removeEventListener('abort', task.onAbort);
    fn();
  }

  private cancel(task: Task): void {
    if (task.settled) return;
    const queued = this.queue.indexOf(task);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(task, () => task.reject(this.cancelled(task)));
      return;
    }
    const slot = task.slot;
    if (!slot || slot.dead) return;
    slot.worker.postMessage({ type: 'cancel', id: task.id } satisfies ToWorker);
    task.graceTimer = setTimeout(() => {
      if (task.settled || slot.task !== task) return;
      // The task did not stop in time (a loop that never yields, a long native call): end the thread
      // (at once, or when the DuckDB calls in flight in it have finished: see duckdb-gate.ts).
      this.terminated++;
      this.retire(slot);
      this.settle(task, () => task.reject(this.cancelled(task)));
      void stopWorker(slot.worker);
      this.pump();
    }, this.cancelGraceMs);
  }

  private retire(slot: Slot): void {
    slot.dead = true;
    slot.task = null;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const idle = this.slots.filter((s) => !s.dead && !s.task);
      let slot: Slot | undefined;
      const task = this.queue[0]!;
      if (task.opts.affinity !== undefined) slot = idle.find((s) => s.lastKey === task.opts.affinity);
      slot ??= idle[0];
      if (!slot && this.slots.length < this.size) {
        try {
          slot = this.spawn();
        } catch (err) {
          this.queue.shift();
          this.settle(task, () => task.reject(err instanceof KlxError ? err : new KlxError('internal', `cannot start the worker ${this.options.entry}: ${(err as Error).message}`)));
          continue;
        }
      }
      if (!slot) return;
      this.queue.shift();
      task.slot = slot;
      slot.task = task;
      slot.lastKey = task.opts.affinity;
      slot.worker.ref();
      slot.worker.postMessage({ type: 'run', id: task.id, kind: task.kind, args: task.args, maxInflatedBytes: maxInflatedBytes() } satisfies ToWorker);
    }
  }

  private spawn(): Slot {
    const worker = startEntryWorker(this.options.entry, this.options.near, { resourceLimits: this.resourceLimits });
    const slot: Slot = { worker, task: null, dead: false };
    this.slots.push(slot);
    worker.on('message', (m: FromWorker) => {
      const task = slot.task;
      if (m.type === 'ready' || !task || m.id !== task.id) return;
      if (m.type === 'progress') {
        if (!task.settled) task.opts.onProgress?.(m.progress);
        return;
      }
      slot.task = null;
      worker.unref();
      if (m.type === 'result') this.settle(task, () => task.resolve(m.result));
      else this.settle(task, () => task.reject(errorOf(m.error)));
      this.pump();
    });
    const died = (why: string): void => {
      if (slot.dead) return;
      const task = slot.task;
      this.retire(slot);
      if (task) this.settle(task, () => task.reject(new KlxError('internal', `${task.opts.label ?? task.kind}: the worker thread stopped without an answer (${why})`)));
      this.pump();
    };
    worker.on('error', (err: Error & { code?: string }) => died(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it used more than its ${this.resourceLimits.maxOldGenerationSizeMb ?? '?'} MB heap limit` : err.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    worker.unref();
    return slot;
  }
}
