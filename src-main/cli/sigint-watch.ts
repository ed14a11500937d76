/**
 * A Ctrl-C (SIGINT) that can be seen synchronously, while the JS thread is busy.
 *
 * `process.on('SIGINT')` handlers run from the event loop. While DuckDB's threads call klx's record
 * functions (`engine/sql/record-functions.ts`), Node runs those calls back to back (up to 1000 per
 * turn of the loop), so a Ctrl-C waited seconds (7.6 s measured on a query decoding every value).
 * Node's SIGINT watchdog (the one the REPL and `vm`'s `breakOnSigint` use) records the signal in
 * native code and answers "is one pending?" at once; `klx query` asks it before each chunk of rows
 * the record functions decode, and every 50 ms from a timer (the build, DuckDB's own work).
 *
 * The watchdog is reached through `process.binding('contextify')` (`startSigintWatchdog`,
 * `watchdogHasPendingSigint`, `stopSigintWatchdog`, Node 12+): not a public API, so when it is not
 * there {@link watchSigint} falls back to a `process.on('SIGINT')` listener (a Ctrl-C then waits
 * for the event loop). While the watchdog runs, SIGINT reaches no `process.on` listener; once it is
 * stopped, Node restores the default action (a later SIGINT ends the process, as without
 * listeners), which is what a command ending anyway wants.
 */

interface WatchdogBinding {
  startSigintWatchdog(): unknown;
  stopSigintWatchdog(): boolean;
  watchdogHasPendingSigint(): boolean;
}

function watchdogBinding(): WatchdogBinding | null {
  try {
    const b = (process as unknown as { binding(name: string): Partial<WatchdogBinding> }).binding('contextify');
    if (typeof b.startSigintWatchdog === 'function' && typeof b.stopSigintWatchdog === 'function' && typeof b.watchdogHasPendingSigint === 'function') return b as WatchdogBinding;
  } catch {
    // not available in this runtime
  }
  return null;
}

/** A watch over SIGINT (see the module comment). */
export interface SigintWatch {
  /** True once a SIGINT arrived (checked synchronously, cheap: one native call). Calls `onSigint` the first time. */
  pending(): boolean;
  /** Ends the watch. */
  stop(): void;
}

/**
 * Watches SIGINT until {@link SigintWatch.stop}: `onSigint` runs once, at the first SIGINT, from
 * {@link SigintWatch.pending} or a 50 ms timer (or from the event loop, without the watchdog).
 */
export function watchSigint(onSigint: () => void): SigintWatch {
  let fired = false;
  const fire = () => {
    if (fired) return;
    fired = true;
    onSigint();
  };
  const binding = watchdogBinding();
  if (!binding) {
    process.once('SIGINT', fire);
    return { pending: () => fired, stop: () => process.removeListener('SIGINT', fire) };
  }
  binding.startSigintWatchdog();
  let stopped = false;
  const pending = () => {
    if (!fired && !stopped && binding.watchdogHasPendingSigint()) fire();
    return fired;
  };
  const timer = setInterval(pending, 50);
  timer.unref();
  return {
    pending,
    stop: () => {
      if (stopped) return;
      pending();
      stopped = true;
      clearInterval(timer);
      binding.stopSigintWatchdog();
    },
  };
}
