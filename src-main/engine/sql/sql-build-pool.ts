/**
 * The worker threads that decode segments for the SQL build (issue 16): `log-tables.ts` submits
 * every segment of every partition (and every partition's holes walk) in order, the threads work
 * on them in parallel, and the building thread consumes each task's output in submission order,
 * so the tables come out as a one-thread build writes them (see `segment-rows.ts`).
 *
 * - **Bounded memory**: a thread posts at most {@link MAX_UNACKED} chunks of a task before the
 *   building thread has taken one, then waits; tasks start in submission order and at most
 *   2 × threads tasks ahead of the one being read, so at most (2 × threads + 1) × MAX_UNACKED
 *   chunks exist at once. The oldest unfinished task always runs, so every wait ends.
 * - **Errors** cross as KlxError (code, reason, file, byte position); a thread that dies rejects
 *   with `internal` naming the task.
 * - **Cancel**: {@link SqlBuildPool.close} ends the threads (they only read; `stopWorker`, which never ends a thread while DuckDB works in it).
 *
 * The engine never locates built entry files itself: the caller gives a `startWorker` that starts
 * {@link SQL_BUILD_WORKER} (`sql-build-worker.ts`) the way its host finds entries (the API's
 * `startEntryWorker`, built or from source).
 */
import type { Worker } from 'node:worker_threads';
import type { ErrorCode } from '../../../src-shared/errors.ts';
import { KlxError } from '../errors.ts';
import { stopWorker } from './duckdb-gate.ts';
import type { OffsetHole } from '../log/holes.ts';
import type { GroupRowsChunk } from './group-table-rows.ts';
import type { RowsChunk } from './segment-rows.ts';

/** The worker entry: its file name (without `.ts`/`.js`) and a module URL in its source folder. */
export const SQL_BUILD_WORKER = { entry: 'sql-build-worker', near: import.meta.url } as const;

/** Starts one thread on {@link SQL_BUILD_WORKER}. */
export type StartSqlBuildWorker = () => Worker;

/** Chunks a thread may have posted for a task that the building thread has not taken yet. */
export const MAX_UNACKED = 2;

/** Holes per message of a holes task. */
export const HOLES_PER_MESSAGE = 4096;

/**
 * A task: decode `[0, end)` of one segment (only its entries starting at or after `from` when given,
 * see `segment-rows.ts` `SegmentPart`), walk one partition's holes, or make the rows of the
 * consumer-group tables from the partitions `dirs` (group-table-rows.ts).
 */
export type SqlBuildTask = { kind: 'segment'; dir: string; baseOffset: bigint; end: number; from?: number } | { kind: 'holes'; dir: string } | { kind: 'groups'; dirs: string[] };

/** Main → worker. */
export type ToSqlBuildWorker = { type: 'run'; id: number; task: SqlBuildTask } | { type: 'ack'; id: number };

/** Worker → main (`ready`: the thread has loaded and takes tasks). */
export type FromSqlBuildWorker =
  | { type: 'ready' }
  | { type: 'chunk'; id: number; chunk: RowsChunk }
  | { type: 'holes'; id: number; holes: OffsetHole[] }
  | { type: 'rows'; id: number; chunk: GroupRowsChunk }
  | { type: 'done'; id: number }
  | { type: 'error'; id: number; error: { code: ErrorCode; reason: string; file?: string; position?: number } };

type Output = RowsChunk | OffsetHole[] | GroupRowsChunk;

interface TaskState {
  id: number;
  task: SqlBuildTask;
  items: Output[];
  done: boolean;
  error: KlxError | null;
  wake: (() => void) | null;
  slot: Slot | null;
}

interface Slot {
  worker: Worker;
  task: TaskState | null;
}

/** See the module comment. */
export class SqlBuildPool {
  private readonly slots: Slot[] = [];
  private readonly queue: TaskState[] = [];
  private nextId = 1;
  /** Id of the last task whose output was read to its end (tasks are read in submission order). */
  private read = 0;
  private closed = false;
  /** Threads that have said they are ready. */
  private readyThreads = 0;

  /** @param size threads at most (≥ 1). */
  constructor(
    private readonly startWorker: StartSqlBuildWorker,
    private readonly size: number,
  ) {}

  /** Starts every thread now, before any task is submitted (they load while the caller works). */
  startThreads(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
  }

  /** True once a thread has loaded and takes tasks. */
  get anyReady(): boolean {
    return this.readyThreads > 0;
  }

  /** Submits a task; its output is read with {@link SqlBuildPool.chunks} / {@link SqlBuildPool.holes}. */
  submit(task: SqlBuildTask): TaskState {
    const t: TaskState = { id: this.nextId++, task, items: [], done: false, error: null, wake: null, slot: null };
    this.queue.push(t);
    this.dispatch();
    return t;
  }

  /** The chunks of a segment task, in file order. @throws the task's KlxError. */
  async *chunks(t: TaskState): AsyncGenerator<RowsChunk> {
    for await (const item of this.outputs(t)) yield item as RowsChunk;
  }

  /** The holes of a holes task, in offset order. @throws the task's KlxError. */
  async *holes(t: TaskState): AsyncGenerator<OffsetHole> {
    for await (const item of this.outputs(t)) yield* item as OffsetHole[];
  }

  /** The row chunks of a groups task, in the order made. @throws the task's KlxError. */
  async *groupRows(t: TaskState): AsyncGenerator<GroupRowsChunk> {
    for await (const item of this.outputs(t)) yield item as GroupRowsChunk;
  }

  private async *outputs(t: TaskState): AsyncGenerator<Output> {
    for (;;) {
      const item = t.items.shift();
      if (item !== undefined) {
        t.slot?.worker.postMessage({ type: 'ack', id: t.id } satisfies ToSqlBuildWorker);
        yield item;
        continue;
      }
      if (t.error) throw t.error;
      if (t.done) {
        this.read = Math.max(this.read, t.id);
        this.dispatch();
        return;
      }
      await new Promise<void>((resolve) => (t.wake = resolve));
      t.wake = null;
    }
  }

  /** Terminates the threads (tasks not finished reject nothing more: stop reading them). */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => stopWorker(s.worker)));
  }

  private dispatch(): void {
    // Tasks start at most 2 × size ahead of the one being read, so finished output waiting to be
    // read stays bounded too.
    while (!this.closed && this.queue.length > 0 && this.queue[0]!.id <= this.read + 2 * this.size) {
      let slot = this.slots.find((s) => s.task === null);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const t = this.queue.shift()!;
      slot.task = t;
      t.slot = slot;
      slot.worker.postMessage({ type: 'run', id: t.id, task: t.task } satisfies ToSqlBuildWorker);
    }
  }

  private spawn(): Slot {
    const worker = this.startWorker();
    worker.unref();
    const slot: Slot = { worker, task: null };
    this.slots.push(slot);
    const wake = (t: TaskState) => t.wake?.();
    worker.on('message', (m: FromSqlBuildWorker) => {
      if (m.type === 'ready') {
        this.readyThreads++;
        return;
      }
      const t = slot.task;
      if (!t || t.id !== m.id) return;
      if (m.type === 'chunk') t.items.push(m.chunk);
      else if (m.type === 'holes') t.items.push(m.holes);
      else if (m.type === 'rows') t.items.push(m.chunk);
      else {
        if (m.type === 'error') t.error = new KlxError(m.error.code, m.error.reason, { file: m.error.file, position: m.error.position });
        t.done = true;
        slot.task = null;
        this.dispatch();
      }
      wake(t);
    });
    const fail = (why: string) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      const t = slot.task;
      slot.task = null;
      if (t && !t.done) {
        const what = t.task.kind === 'segment' ? `decoding segment ${t.task.baseOffset} of ${t.task.dir}` : t.task.kind === 'holes' ? `decoding the holes of ${t.task.dir}` : 'making the consumer-group tables';
        t.error = new KlxError('internal', `the SQL build thread ${what} stopped: ${why}`);
        t.done = true;
        wake(t);
      }
      this.dispatch();
    };
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => {
      if (!this.closed) fail(`exit code ${code}`);
    });
    return slot;
  }
}
