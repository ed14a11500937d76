/**
 * When a worker thread may be ended: never while a DuckDB call is in flight in it.
 *
 * Ending a worker thread (`worker.terminate()`, or the process exiting while the thread runs) while
 * a call of DuckDB's native binding is in flight in that thread aborts the whole process: an
 * asynchronous call's completion callback (a query, a prepare, a chunk fetch, opening a
 * database...), or the rest of a synchronous one (closing a database, which checkpoints it; an
 * appender flush...), then runs in an environment that can no longer call JavaScript and throws a
 * C++ exception nothing catches ("terminate called after throwing an instance of 'Napi::Error'",
 * exit status 134). A thread in which no such call is in flight ends cleanly, DuckDB databases open
 * or not.
 *
 * The same abort follows when the thread is ended while it runs a scalar function written in
 * JavaScript that a DuckDB thread called (see {@link trackConnection}), which can happen while no
 * call of ours is in flight but not while none of the thread's connections is open.
 *
 * So each thread started through {@link gateNewWorker} gets a gate: one shared Int32 counting the
 * DuckDB calls in flight in that thread (`duckdb.ts`, the only module that loads DuckDB, wraps every
 * function of the native binding with {@link gated}) and its open connections ({@link trackConnection}),
 * or {@link CLOSED} once the starting thread
 * decided to end it. {@link stopWorker} closes the gate only when the count is 0 and then terminates; while
 * calls are in flight it waits (polling every few ms) for them to finish: a cancelled task's DuckDB
 * work is interrupted by its thread ({@link interruptDuckDb}, called on the task's cancel message),
 * and a closed gate makes every new DuckDB call fail with `cancelled` instead of starting. A thread
 * whose JavaScript never yields while a DuckDB call is in flight is therefore never ended (it is
 * left to finish; its pool has already answered `cancelled` and stopped using it): a leaked thread
 * costs a core, an abort costs the user's session.
 *
 * A leaf: imports no DuckDB (workers that never use DuckDB load this module for nothing but a counter).
 */
import { getEnvironmentData, setEnvironmentData, type Worker } from 'node:worker_threads';
import { KlxError } from '../errors.ts';

/** The `worker_threads` environment-data key under which a new thread finds its gate's buffer. */
export const GATE_KEY = 'klx.duckdb-gate';

/**
 * The gate value once the thread is being ended: no new DuckDB call may start. Far below zero, so
 * that a call's increment of a closed gate still reads as closed (the call then takes it back).
 */
export const CLOSED = -(2 ** 30);

/** Milliseconds between two checks of a gate that has calls in flight. */
const POLL_MS = 5;

function ownGate(): Int32Array {
  const shared = getEnvironmentData(GATE_KEY);
  return new Int32Array(shared instanceof SharedArrayBuffer ? shared : new SharedArrayBuffer(4));
}

/** This thread's gate (a private one in a thread not started through {@link gateNewWorker}, e.g. a main thread). */
const gate = ownGate();

/** Interrupters of this thread's DuckDB connections (weakly held: a closed, dropped connection goes). */
const interrupters = new Set<{ target: WeakRef<object>; interrupt: (target: object) => void }>();

/**
 * Wraps a function of DuckDB's native binding so that each call is counted in this thread's gate
 * while in flight: a synchronous call until it returns, an asynchronous one (it returns a promise)
 * until its promise settles.
 * @returns the wrapper; it throws (synchronous) or rejects (asynchronous) KlxError `cancelled`
 *   without calling `fn` once the thread is being ended.
 */
export function gated<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args: A): R => {
    if (Atomics.add(gate, 0, 1) < 0) {
      Atomics.sub(gate, 0, 1);
      throw new KlxError('cancelled', 'this thread is stopping: DuckDB work is not started');
    }
    let result: R;
    try {
      result = fn(...args);
    } catch (err) {
      Atomics.sub(gate, 0, 1);
      throw err;
    }
    if (result instanceof Promise) {
      const leave = (): void => void Atomics.sub(gate, 0, 1);
      result.then(leave, leave);
    } else Atomics.sub(gate, 0, 1);
    return result;
  };
}

/**
 * Marks this thread's DuckDB as not counted (DuckDB was loaded before `duckdb.ts` could count its
 * calls): its gate then never closes, so a thread using it is never ended while it runs.
 */
export function gateUncounted(): void {
  Atomics.add(gate, 0, 1 << 20);
}

/** Connections of this thread that count in the gate until disconnected (see {@link trackConnection}). */
const held = new WeakSet<object>();

/** Takes back the gate count of a connection that was dropped without being disconnected (its native finalizer disconnects it). */
const dropped = new FinalizationRegistry<{ released: boolean }>((h) => {
  if (!h.released) {
    h.released = true;
    Atomics.sub(gate, 0, 1);
  }
});
const holds = new WeakMap<object, { released: boolean }>();

/**
 * Registers a DuckDB connection of this thread for {@link interruptDuckDb}, and counts it in the
 * gate as in flight from its connect until {@link DISCONNECT_TAIL_MS} after its disconnect
 * ({@link releaseConnection}), or until its garbage collection.
 *
 * Why an open connection counts, not only its calls: a query's pipeline runs on DuckDB's own
 * threads, also between two calls (a streamed result's buffer is filled again after each fetch,
 * while no fetch is in flight), and a DuckDB thread that reaches a scalar function written in
 * JavaScript (the record functions, `record-functions.ts`) has that function run on this thread
 * through a thread-safe function, outside any call of ours. A thread ended then has its JavaScript
 * terminated inside that callback: the binding's call of the function fails, building the
 * `Napi::Error` for it fails again in the terminating environment, and the process aborts ("FATAL
 * ERROR: Error::Error napi_define_properties" or "terminate called after throwing an instance of
 * 'Napi::Error'", exit status 134; duckdb-node-neo's `DuckDBThreadCallbackDispatch`, which runs the
 * function). `test/api/core/duckdb-worker-stop.test.ts` ('udf') aborted so on every run without this.
 */
export function trackConnection(connection: object, interrupt: (connection: object) => void): void {
  if (interrupters.size >= 64) for (const e of interrupters) if (!e.target.deref()) interrupters.delete(e);
  interrupters.add({ target: new WeakRef(connection), interrupt });
  if (held.has(connection)) return;
  held.add(connection);
  Atomics.add(gate, 0, 1);
  const h = { released: false };
  holds.set(connection, h);
  dropped.register(connection, h, h);
}

/**
 * Milliseconds a disconnected connection still counts in the gate. A DuckDB thread that was waiting
 * for this thread to run a JavaScript scalar function when the connection was interrupted and
 * disconnected still has that call run here afterwards (the disconnect does not wait for it: it
 * cannot, this thread is the one that would run it); measured: one such call after the disconnect
 * in about one streamed query in three, run on this thread's next turn. Later calls do not come:
 * DuckDB's threads check the interrupt before the next chunk.
 */
export const DISCONNECT_TAIL_MS = 100;

/**
 * Takes back, {@link DISCONNECT_TAIL_MS} later, the gate count of a connection {@link trackConnection}
 * counted (call after its disconnect; once). The timer does not keep the thread alive.
 */
export function releaseConnection(connection: object): void {
  const h = holds.get(connection);
  if (!h || h.released) return;
  h.released = true;
  dropped.unregister(h);
  setTimeout(() => Atomics.sub(gate, 0, 1), DISCONNECT_TAIL_MS).unref();
}

/**
 * Interrupts every DuckDB connection of this thread (DuckDB's `interrupt`: the running query ends
 * with an "Interrupted" error at its next check, usually within milliseconds).
 * @returns how many connections were asked.
 */
export function interruptDuckDb(): number {
  let n = 0;
  for (const e of interrupters) {
    const c = e.target.deref();
    if (!c) {
      interrupters.delete(e);
      continue;
    }
    try {
      e.interrupt(c);
      n++;
    } catch {
      interrupters.delete(e); // closed already
    }
  }
  return n;
}

/** DuckDB calls in flight in this thread (for tests and diagnostics; {@link CLOSED} when ending). */
export function callsInFlight(): number {
  return Atomics.load(gate, 0);
}

const gates = new WeakMap<Worker, Int32Array>();

/** How many {@link stopWorker} calls found DuckDB calls in flight and had to wait (for tests and diagnostics). */
let deferred = 0;

/** How many stops of this thread's workers waited for DuckDB calls in flight. */
export function deferredStops(): number {
  return deferred;
}

/**
 * Starts a worker thread with a gate: `start` must create the `Worker` synchronously (the gate's
 * buffer is handed over as `worker_threads` environment data, read by the new thread at start).
 */
export function gateNewWorker(start: () => Worker): Worker {
  const buffer = new SharedArrayBuffer(4);
  setEnvironmentData(GATE_KEY, buffer);
  let worker: Worker;
  try {
    worker = start();
  } finally {
    setEnvironmentData(GATE_KEY, undefined);
  }
  gates.set(worker, new Int32Array(buffer));
  return worker;
}

/**
 * Ends a worker thread as soon as that is safe: at once when no DuckDB call is in flight in it
 * (its gate closes), else when the calls in flight have finished (interrupt them from inside the
 * thread, e.g. on the task's cancel message). A thread without a gate is terminated at once.
 * @returns resolves when the thread has exited.
 */
export function stopWorker(worker: Worker): Promise<void> {
  const cell = gates.get(worker);
  if (!cell) return worker.terminate().then(() => undefined);
  return new Promise<void>((resolve) => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const tryStop = (): boolean => {
      if (Atomics.load(cell, 0) >= 0 && Atomics.compareExchange(cell, 0, 0, CLOSED) !== 0) return false;
      if (timer) clearInterval(timer);
      worker.terminate().then(() => resolve(), () => resolve());
      return true;
    };
    if (tryStop()) return;
    deferred++;
    timer = setInterval(tryStop, POLL_MS);
    worker.once('exit', () => {
      clearInterval(timer);
      resolve();
    });
  });
}
