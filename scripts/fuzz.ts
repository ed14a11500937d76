/**
 * `npm run fuzz -- [--minutes N] [--iterations N] [--seed S] [--replay K] [--out DIR] [--hang-ms MS] [--hang-wall-ms MS] [--sql-every N] [--api-every N]`
 *
 * The mutation fuzzer of the read paths (issue 17). Inputs and recipes: `fuzz-inputs.ts` (input K
 * of seed S is a pure function of S and K). The inputs are made and run on one worker thread of the
 * API's pool (`src-main/api/core/worker-pool.ts`) in chunks (`fuzz-worker.ts`: open, deep scan,
 * dump, verify, holes, fetch both ways, time lookup, repair plan, retention and compaction
 * previews; the SQL table build every `--sql-every` inputs and the bridge's API handlers every
 * `--api-every` inputs): no process and no thread start per input.
 *
 * Counted: crashes (an error that is not a typed `KlxError`, an `internal` API error, a thread
 * that dies), hangs (one input taking more than `--hang-ms`, 5 s, of the process's CPU time, every
 * thread's, DuckDB's included, or more than `--hang-wall-ms`, 60 s, of wall time, for a thread
 * that waits forever: the thread is terminated and the campaign goes on after that input; CPU time
 * so that a campaign on a loaded machine does not count the machine's load as hangs), typed errors that name no file or byte position, and the
 * process's peak RSS (every thread's memory, sampled every 100 ms, and the kernel's maxRSS). Each
 * failing input is kept in `--out` (`K.log`, its other files, `K.json` with the recipe and
 * outcomes) and replays alone with `--replay K` (same `--seed`). `--out`/current-input names the
 * input being run (within 50 ms), for a native abort that takes the whole process down.
 *
 * Exit code 1 when anything failed. CI runs a short fixed-seed campaign through vitest
 * (`test/fuzz-harness.test.ts`); long campaigns run by hand
 * (`nice -n 15 npm run fuzz -- --minutes 60 --seed 11`).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WorkerPool } from '../src-main/api/core/worker-pool.ts';
import type { ChunkArgs, ChunkResult, OpOutcome } from './fuzz-worker.ts';
import { generatedSeeds, inputAt, realSeeds } from './fuzz-inputs.ts';
import { parseOrExit, wholeNumber } from './script-args.ts';

interface Options {
  minutes: number;
  iterations: number;
  seed: number;
  replay: number | null;
  out: string;
  hangMs: number;
  hangWallMs: number;
  sqlEvery: number;
  apiEvery: number;
  chunk: number;
  realSeeds: number;
  fullEvery: number;
}

const USAGE = 'usage: npm run fuzz -- [--minutes N] [--iterations N] [--seed S] [--replay K] [--out DIR] [--hang-ms MS] [--hang-wall-ms MS] [--sql-every N] [--api-every N] [--chunk N] [--real-seeds N] [--full-every N]';

/** The options, or (on a bad argument) the reason and the usage on stderr and exit code 2. */
function parse(argv: string[]): Options {
  return parseOrExit(USAGE, () => parseOrThrow(argv));
}

function parseOrThrow(argv: string[]): Options {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      minutes: { type: 'string' },
      iterations: { type: 'string' },
      seed: { type: 'string' },
      replay: { type: 'string' },
      out: { type: 'string' },
      'hang-ms': { type: 'string' },
      'hang-wall-ms': { type: 'string' },
      'sql-every': { type: 'string' },
      'api-every': { type: 'string' },
      chunk: { type: 'string' },
      'real-seeds': { type: 'string' },
      'full-every': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (v.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const o: Options = {
    minutes: wholeNumber('minutes', v.minutes, 0),
    iterations: wholeNumber('iterations', v.iterations, 0),
    seed: wholeNumber('seed', v.seed, 1),
    replay: v.replay === undefined ? null : wholeNumber('replay', v.replay, 0),
    out: v.out === undefined ? '' : resolve(v.out),
    hangMs: wholeNumber('hang-ms', v['hang-ms'], 5000, 1),
    hangWallMs: wholeNumber('hang-wall-ms', v['hang-wall-ms'], 60_000, 1),
    sqlEvery: wholeNumber('sql-every', v['sql-every'], 500),
    apiEvery: wholeNumber('api-every', v['api-every'], 50),
    chunk: wholeNumber('chunk', v.chunk, 200, 1),
    realSeeds: wholeNumber('real-seeds', v['real-seeds'], 8),
    fullEvery: wholeNumber('full-every', v['full-every'], 1, 1),
  };
  if (o.minutes <= 0 && o.iterations <= 0) o.iterations = 200;
  o.out ||= join(tmpdir(), `klx-fuzz-${o.seed}`);
  return o;
}

interface Tally {
  inputs: number;
  ops: number;
  typed: number;
  crashes: number;
  hangs: number;
  unplaced: number;
  kept: number;
}

/** Keeps one failing input: its files (made again from seed and number) and its recipe. */
function keep(o: Options, k: number, bad: OpOutcome[]): void {
  const seeds = keep.seeds ??= [...generatedSeeds(), ...realSeeds(o.realSeeds)];
  const m = inputAt(seeds, o.seed, k);
  writeFileSync(join(o.out, `${k}.log`), m.log);
  if (m.index) writeFileSync(join(o.out, `${k}.index`), m.index);
  if (m.timeIndex) writeFileSync(join(o.out, `${k}.timeindex`), m.timeIndex);
  writeFileSync(join(o.out, `${k}.json`), JSON.stringify({ seed: o.seed, input: k, from: m.from, recipe: m.recipe, partitionFiles: m.partitionFiles, dirFiles: m.dirFiles, failures: bad, replay: `npm run fuzz -- --seed ${o.seed} --replay ${k}` }, null, 2));
}
keep.seeds = null as ReturnType<typeof generatedSeeds> | null;

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  mkdirSync(o.out, { recursive: true });
  const pool = new WorkerPool({ entry: 'fuzz-worker', near: import.meta.url, size: 1, cancelGraceMs: 20 });
  const tally: Tally = { inputs: 0, ops: 0, typed: 0, crashes: 0, hangs: 0, unplaced: 0, kept: 0 };
  const byCode = new Map<string, number>();
  const opCounts = new Map<string, number>();
  const opMs = new Map<string, number>();
  const started = Date.now();
  const deadline = o.minutes > 0 ? started + o.minutes * 60_000 : Infinity;
  let slowest = { ms: 0, k: -1, cpuMs: 0 };
  let costliest = { ms: 0, k: -1, cpuMs: 0 };
  let peakRssKb = 0;
  const sampler = setInterval(() => (peakRssKb = Math.max(peakRssKb, Math.round(process.memoryUsage.rss() / 1024))), 100);
  const heartbeat = new SharedArrayBuffer(4);
  const beat = new Int32Array(heartbeat);
  const scratch = new Set<string>();
  const nSeeds = generatedSeeds().length + realSeeds(o.realSeeds).length;
  console.log(`fuzz: seed ${o.seed}, ${nSeeds} seeds, ${o.replay !== null ? `replay of input ${o.replay}` : o.minutes > 0 ? `${o.minutes} min` : `${o.iterations} inputs`}, file-level paths every ${o.fullEvery}, SQL every ${o.sqlEvery}, API every ${o.apiEvery} inputs; failing inputs kept in ${o.out}`);
  const record = (k: number, bad: OpOutcome[], from: string, recipe: string[]) => {
    tally.kept++;
    keep(o, k, bad);
    if (tally.kept <= 20 || o.replay !== null) console.log(`input ${k} (${from}; ${recipe.join(', ')}): ${JSON.stringify(bad)}`);
  };
  const ensureThread = async () => {
    if (pool.stats().threads === 0) scratch.add(await pool.run<string>('scratchDir', { sql: o.sqlEvery > 0, api: o.apiEvery > 0, realSeeds: o.realSeeds }));
  };
  let k = o.replay ?? 0;
  const end = o.replay !== null ? o.replay + 1 : o.iterations > 0 ? o.iterations : Number.MAX_SAFE_INTEGER;
  let lastReport = 0;
  while (k < end && Date.now() < deadline) {
    await ensureThread();
    const to = Math.min(end, k + o.chunk);
    Atomics.store(beat, 0, k);
    const ac = new AbortController();
    // The watchdog: the input being run (heartbeat) must change within hangMs of the process's CPU
    // time (every thread; this thread's 50 ms ticks cost microseconds) and within hangWallMs.
    let seen = k;
    let since = Date.now();
    let cpuSince = process.cpuUsage();
    let hungAt = -1;
    const watchdog = setInterval(() => {
      const now = Atomics.load(beat, 0);
      if (now !== seen) {
        seen = now;
        since = Date.now();
        cpuSince = process.cpuUsage();
        // A native abort (C++ terminate in an addon) ends the whole process: this file still names the input.
        writeFileSync(join(o.out, 'current-input'), `${now}\n`);
        return;
      }
      const c = process.cpuUsage(cpuSince);
      const over = (c.user + c.system) / 1000 > o.hangMs || Date.now() - since > o.hangWallMs;
      if (over && hungAt < 0) {
        hungAt = now;
        ac.abort();
      }
    }, 50);
    const args: ChunkArgs = { seed: o.seed, from: k, to, heartbeat, sqlEvery: o.sqlEvery, apiEvery: o.apiEvery, realSeeds: o.realSeeds, fullEvery: o.replay !== null ? 1 : o.fullEvery, all: o.replay !== null };
    try {
      const r = await pool.run<ChunkResult>('chunk', args, { signal: ac.signal, label: `inputs ${k}..${to - 1}` });
      tally.inputs += r.inputs;
      tally.ops += r.ops;
      tally.typed += r.typed;
      for (const [c, n] of Object.entries(r.byCode)) byCode.set(c, (byCode.get(c) ?? 0) + n);
      for (const [c, n] of Object.entries(r.opCounts)) opCounts.set(c, (opCounts.get(c) ?? 0) + n);
      for (const [c, n] of Object.entries(r.opMs)) opMs.set(c, (opMs.get(c) ?? 0) + n);
      if (r.slowest.ms > slowest.ms) slowest = r.slowest;
      if (r.costliest.cpuMs > costliest.cpuMs) costliest = r.costliest;
      for (const f of r.failures) {
        const bad = f.bad.filter((x) => x.outcome === 'crash' || x.unplaced);
        tally.crashes += bad.filter((x) => x.outcome === 'crash').length;
        tally.unplaced += bad.filter((x) => x.unplaced).length;
        if (bad.length > 0) record(f.k, bad, f.from, f.recipe);
        else if (o.replay !== null) console.log(`input ${f.k} (${f.from}; ${f.recipe.join(', ')}): ${JSON.stringify(f.bad)}`);
      }
      k = to;
    } catch (err) {
      // The thread was terminated (hang) or died (crash) at the heartbeat's input; the inputs
      // before it in this chunk ran clean but their counts are lost with the thread: rerun them.
      const at = hungAt >= 0 ? hungAt : Atomics.load(beat, 0);
      const hang = hungAt >= 0;
      if (hang) tally.hangs++;
      else tally.crashes++;
      const seeds = (keep.seeds ??= [...generatedSeeds(), ...realSeeds(o.realSeeds)]);
      const m = inputAt(seeds, o.seed, at);
      record(at, [{ op: 'all', outcome: 'crash', code: hang ? 'hang' : 'thread', message: (err as Error).message }], m.from, m.recipe);
      if (at > k) {
        clearInterval(watchdog);
        await ensureThread();
        const r = await pool.run<ChunkResult>('chunk', { ...args, to: at });
        tally.inputs += r.inputs;
        tally.ops += r.ops;
        tally.typed += r.typed;
      }
      tally.inputs++;
      k = at + 1;
    } finally {
      clearInterval(watchdog);
    }
    if (tally.inputs - lastReport >= 20_000) {
      lastReport = tally.inputs;
      const secs = (Date.now() - started) / 1000;
      console.log(`  ${tally.inputs} inputs, ${secs.toFixed(0)} s (${(tally.inputs / secs).toFixed(0)}/s), crashes ${tally.crashes}, hangs ${tally.hangs}, unplaced ${tally.unplaced}, peak RSS ${(peakRssKb / 1024).toFixed(0)} MiB`);
    }
  }
  clearInterval(sampler);
  peakRssKb = Math.max(peakRssKb, process.resourceUsage().maxRSS);
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
  await pool.shutdown();
  const secs = (Date.now() - started) / 1000;
  console.log(`fuzz: operations run (count, mean ms): ${[...opCounts].map(([c, n]) => `${c} ${n} ${((opMs.get(c) ?? 0) / n).toFixed(2)}`).join(', ')}`);
  console.log(
    `fuzz: ${tally.inputs} inputs in ${secs.toFixed(0)} s (${(tally.inputs / secs).toFixed(1)}/s), ${tally.ops} operations: ${tally.crashes} crashes, ${tally.hangs} hangs (> ${o.hangMs} ms CPU or ${o.hangWallMs} ms wall), ${tally.unplaced} typed errors without file/position, ${tally.typed} typed errors (${[...byCode].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ')}); slowest input ${slowest.k} ${slowest.ms} ms (${slowest.cpuMs} ms CPU), costliest input ${costliest.k} ${costliest.cpuMs} ms CPU (${costliest.ms} ms); peak RSS ${(peakRssKb / 1024).toFixed(0)} MiB`,
  );
  process.exitCode = tally.crashes + tally.hangs + tally.unplaced > 0 ? 1 : 0;
}

await main();
