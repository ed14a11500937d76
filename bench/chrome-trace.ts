/**
 * Reads a Chromium performance trace (the JSON `browser.startTracing`/`stopTracing` returns, i.e.
 * the Trace Event Format of `chrome://tracing`) and sums up the renderer's main thread: its
 * top-level tasks (`RunTask`) with their wall time (`dur`) and the CPU time the thread really ran
 * (`tdur`, thread time), and what the task spent its time on (script, style, layout, paint...).
 *
 * Why: a frame of the page can be long because the page had much to do, or because its thread
 * waited for a core while other processes ran (on a 2-core VM the browser, its compositor and the
 * in-process bridge share the CPUs with everything else). Wall time much longer than thread time
 * is that waiting, and is outside the page's control. Used by `ui.bench.ts`.
 */

/** One complete ("X") trace event, as much of it as is read here. */
interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string; data?: { type?: string } };
}

/** What a main-thread task spent its CPU time on, ms (thread time; wall time when the trace has none). Parts may nest: a GC inside a script, a forced layout inside a script. */
export interface TaskParts {
  script: number;
  style: number;
  layout: number;
  paint: number;
  gc: number;
}

/** A top-level task of the renderer's main thread. */
export interface MainTask {
  /** Start, ms from the first task of the trace. */
  at: number;
  /** Wall time, ms. */
  wall: number;
  /** CPU time of the thread during the task, ms (thread time; NaN when the trace has none). */
  cpu: number;
  /** The input events the task dispatched (`wheel`, `keydown`...). */
  inputs: string[];
  /** CPU ms of each kind of work (the outermost event of each kind only, so an event inside one of its own kind is not counted twice). */
  parts: TaskParts;
}

const PARTS: Record<keyof TaskParts, readonly string[]> = {
  script: ['EventDispatch', 'FunctionCall', 'TimerFire', 'FireAnimationFrame', 'RunMicrotasks', 'XHRLoad', 'XHRReadyStateChange', 'FireIdleCallback', 'EvaluateScript'],
  style: ['UpdateLayoutTree', 'RecalculateStyles'],
  layout: ['Layout'],
  paint: ['PrePaint', 'Paint', 'Layerize', 'Commit', 'UpdateLayer'],
  gc: ['MinorGC', 'MajorGC', 'V8.GC_SCAVENGER', 'BlinkGC.AtomicPhase'],
};
const INPUTS = new Set(['wheel', 'keydown', 'keyup', 'pointermove', 'pointerdown', 'pointerup', 'mousedown', 'mouseup', 'mousemove']);

/**
 * The top-level tasks of the main thread of the renderer (the `CrRendererMain` thread with the
 * most events), in time order.
 * @param trace the trace JSON: `{ traceEvents: [...] }` or a bare array.
 */
export function mainThreadTasks(trace: unknown): MainTask[] {
  const events: TraceEvent[] = Array.isArray(trace) ? trace : ((trace as { traceEvents?: TraceEvent[] }).traceEvents ?? []);
  const mains = new Set<string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain') mains.add(`${e.pid}:${e.tid}`);
  const counts = new Map<string, number>();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (mains.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!main) return [];
  const xs = events.filter((e) => e.ph === 'X' && e.dur !== undefined && `${e.pid}:${e.tid}` === main).sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  const tasks: MainTask[] = [];
  let t0 = -1;
  let i = 0;
  while (i < xs.length) {
    const top = xs[i]!;
    if (top.name !== 'RunTask' && top.name !== 'ThreadControllerImpl::RunTask') {
      i++;
      continue;
    }
    if (t0 < 0) t0 = top.ts;
    const end = top.ts + top.dur!;
    const parts: TaskParts = { script: 0, style: 0, layout: 0, paint: 0, gc: 0 };
    const until: Record<string, number> = {};
    const inputs: string[] = [];
    let j = i + 1;
    for (; j < xs.length && xs[j]!.ts < end; j++) {
      const e = xs[j]!;
      if (e.name === 'EventDispatch' && e.args?.data?.type && INPUTS.has(e.args.data.type)) inputs.push(e.args.data.type);
      for (const [part, names] of Object.entries(PARTS) as [keyof TaskParts, readonly string[]][]) {
        if (names.includes(e.name) && e.ts >= (until[part] ?? -1)) {
          parts[part] += (e.tdur ?? e.dur!) / 1000;
          until[part] = e.ts + e.dur!;
        }
      }
    }
    tasks.push({ at: (top.ts - t0) / 1000, wall: top.dur! / 1000, cpu: top.tdur !== undefined ? top.tdur / 1000 : Number.NaN, inputs, parts });
    i = j;
  }
  return tasks;
}

/** The mean CPU ms of each part over `tasks` (e.g. the wheel steps of a phase: where a step's time goes). */
export function meanParts(tasks: readonly MainTask[]): TaskParts {
  const sum: TaskParts = { script: 0, style: 0, layout: 0, paint: 0, gc: 0 };
  for (const t of tasks) for (const k of Object.keys(sum) as (keyof TaskParts)[]) sum[k] += t.parts[k];
  for (const k of Object.keys(sum) as (keyof TaskParts)[]) sum[k] /= Math.max(1, tasks.length);
  return sum;
}

/** `script 1.20, layout 1.05, …` (CPU ms, two decimals, every part). */
export function describeParts(p: TaskParts): string {
  return (Object.entries(p) as [string, number][]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
}

/** A one-line account of a task: wall vs CPU, and its parts. */
export function describeTask(t: MainTask): string {
  const parts = (Object.entries(t.parts) as [string, number][])
    .filter(([, v]) => v >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ');
  return `${t.wall.toFixed(1)} ms wall, ${Number.isNaN(t.cpu) ? '?' : t.cpu.toFixed(1)} ms CPU${parts ? ` (CPU ms: ${parts})` : ''}`;
}
