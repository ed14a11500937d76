/**
 * UI speed on a 5,000,000-record partition (or `--size-mb N`: N/10240 × 50 M records of ~215 bytes, issue 16's 10 GB partition at 10240), measured in Debian's Chromium through the loopback
 * bridge (the same page and API the app serves), with the page's own clock (`performance.now()`
 * inside `page.evaluate`) and a `requestAnimationFrame` frame-time recorder:
 *
 * - **select → first records**: from the click on the partition in the log tree to the frame that
 *   paints its first record rows (goal < 0.5 s). Each iteration first selects a tiny partition, so
 *   the big one is really loaded again (its summary, segments and first page).
 * - **frames while scrolling and paging**, in four phases, each run `--iterations` times (after one
 *   warm-up run): the wheel scrolls ~2,000 rows through pages fetched on demand; PgDn ×40 then
 *   PgUp ×20; End and Home ×3 (jumps across the whole log); the scrollbar dragged to the middle and
 *   back to the top. Per run: the longest frame and the 95th percentile (goal: longest frame
 *   ≤ 50 ms), and the main-thread tasks over 50 ms the Long Tasks API reports (goal: none);
 *   reported as min / median / max over the runs. Frame times are whole vsync intervals (16.7 ms
 *   steps).
 * - **a traced run** (not counted above): the same phases once more under Chromium's performance
 *   trace (`chrome-trace.ts`), to tell what a long frame was: the renderer main thread's tasks
 *   with their wall time and the CPU time the thread really ran. On a small machine the in-process
 *   bridge, the browser's other processes and whatever else runs share the CPUs, so a task's wall
 *   time can be several times its CPU time: the thread waited for a core. The longest task by CPU
 *   time is what the page itself costs.
 *
 * The load average is printed before and after: other processes running meanwhile make the wall
 * times noisy (the CPU times much less so).
 *
 * Data (generated once into bench/.data/ui-5m/, reused while the generator is unchanged): the
 * partition of `test/e2e/explorer/big-partition.ts` (50,000 batches × 100 records, 5 segments,
 * broker-built indexes) plus a 10-record partition. There is no peer UI to run beside it; the goals
 * above are the bar.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { ensureRendererBuilt, RENDERER_DIR } from '../src-main/bridge/build.ts';
import { startBridge } from '../src-main/bridge/server.ts';
import { buildPartition, rec, singles } from '../test/support/log-builder.ts';
import { generateBigPartition, type BigPartitionOptions } from '../test/e2e/explorer/big-partition.ts';
import { describeParts, describeTask, mainThreadTasks, meanParts, type MainTask } from './chrome-trace.ts';
import { fmt3, fmtInt, loadLine, median, printTable, type BenchOptions } from './lib.ts';

/** Bump when the data layout changes so old data is regenerated. */
const GENERATOR = 1;
const SELECT_GOAL_MS = 500;
const FRAME_GOAL_MS = 50;
/** Issue 16's goal: no frame over 16 ms, i.e. none longer than one 60 Hz vsync interval (16.7 ms; rAF deltas come in whole intervals). */
const ISSUE_FRAME_GOAL_MS = 16;
const VSYNC_MS = 17;

interface DataMeta {
  generator: number;
  records: number;
  logDir: string;
}

/**
 * The partition for `--size-mb N`: N/10240 × 50,000,000 records (issue 16's 10 GB partition of 50 M
 * records at N = 10240) of ~215 bytes each (the values padded), in segments of ~1 GiB (Kafka's
 * default `segment.bytes`). Without `--size-mb`: the 5,000,000 small records of big-partition.ts.
 */
function sizedOptions(sizeMb: number | undefined): { dirName: string; opts: BigPartitionOptions; records: number } {
  if (sizeMb === undefined) return { dirName: 'ui-5m', opts: {}, records: 5_000_000 };
  const batches = Math.max(10, Math.round((sizeMb / 10240) * 500_000));
  return { dirName: `ui-${sizeMb}mb`, opts: { batches, recordsPerBatch: 100, segments: Math.max(1, Math.ceil(sizeMb / 1024)), valuePad: 158 }, records: batches * 100 };
}

function ensureData(dataDir: string, sizeMb: number | undefined): DataMeta {
  const sized = sizedOptions(sizeMb);
  const dir = join(dataDir, sized.dirName);
  const metaFile = join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DataMeta;
    if (meta.generator === GENERATOR && existsSync(join(meta.logDir, 'clicks-0'))) {
      console.log(`data: reusing ${dir}`);
      return meta;
    }
  }
  console.log(`data: generating ${fmtInt(sized.records)} records into ${dir} (once; reused by later runs; remove it when done)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const logDir = join(dir, 'broker-1');
  const big = generateBigPartition(logDir, sized.opts);
  buildPartition(logDir, { topic: 'tiny', segments: [{ batches: singles(...Array.from({ length: 10 }, (_, i) => rec(`tiny-${i}`, `small value ${i}`, 1_700_000_000_000 + i))) }] });
  const meta: DataMeta = { generator: GENERATOR, records: big.records, logDir };
  writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return meta;
}

/*
 * Browser-side code is passed to `page.evaluate` as source text: this file is type-checked without
 * the DOM library, and tsx's name-keeping helper (`__name`) does not exist in the page.
 */

/** Clicks a partition in the tree and resolves with the ms until the frame that paints its first record rows. */
export async function timeSelect(page: Page, name: string, firstKey: string): Promise<number> {
  return page.evaluate(`new Promise((resolve, reject) => {
    const node = document.querySelector('[data-testid=tree-partition][data-name=${JSON.stringify(name)}]');
    if (!node) return reject(new Error('no tree node ' + ${JSON.stringify(name)}));
    const t0 = performance.now();
    window.__selectT0 = t0;
    node.click();
    const deadline = t0 + 20000;
    const check = () => {
      const row = document.querySelector('[data-testid=record-row]');
      if (row && row.textContent.includes(${JSON.stringify(firstKey)})) {
        // The rows are in the DOM in this frame; the next callback comes after it was painted.
        requestAnimationFrame(() => resolve(performance.now() - t0));
      } else if (performance.now() > deadline) reject(new Error('no record on screen after 20 s'));
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  })`);
}

/** An API call the page made (resource timing, ms from the click): when it was sent, when its answer began and ended. */
interface ApiCall {
  method: string;
  start: number;
  /** From sending the request to the first byte of the answer: the server's time (queueing included). */
  server: number;
  end: number;
}

/** The API calls made since the last {@link timeSelect}'s click, in the order they were sent (resource timing). */
async function callsSinceSelect(page: Page): Promise<ApiCall[]> {
  return page.evaluate(`performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/api/') && !e.name.includes('/api/events') && e.startTime >= window.__selectT0)
    .map((e) => ({ method: e.name.split('/api/')[1].split('?')[0], start: e.startTime - window.__selectT0, server: e.responseStart - e.requestStart, end: e.responseEnd - window.__selectT0 }))`);
}

/** Starts recording frame times (rAF deltas) in the page. */
async function startFrames(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.__frames = [];
    window.__long = window.__long || [];
    if (!window.__lto) {
      window.__lto = new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(Math.round(e.duration)); });
      window.__lto.observe({ type: 'longtask', buffered: false });
    }
    window.__framesOn = true;
    let last = 0;
    const tick = (t) => {
      if (!window.__framesOn) return;
      window.__frames.push(t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(tick);
    });
  })()`);
}

/** Stops the recorder; returns the frame times (ms between animation frames). */
async function stopFrames(page: Page): Promise<number[]> {
  return page.evaluate(`(() => {
    window.__framesOn = false;
    return window.__frames;
  })()`);
}

/** Main-thread tasks longer than 50 ms (the Long Tasks API) since the last call, in ms. */
async function longTasks(page: Page): Promise<number[]> {
  return page.evaluate('window.__long.splice(0)');
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

async function firstOffset(page: Page): Promise<number> {
  return Number(await page.locator('[data-testid=record-row]').first().getAttribute('data-offset'));
}

/** Back to the first record, settled, the mouse over the table (between phases; not measured). */
async function home(page: Page): Promise<void> {
  const box = (await page.getByTestId('records-table').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.getByTestId('records-table').focus();
  await page.keyboard.press('Home');
  await page.locator('[data-testid=record-row][data-offset="0"]').waitFor();
  await page.waitForTimeout(300);
}

/** The scrolling phases: each starts at the first record with the table focused and the mouse over it. */
const PHASES: { name: string; run: (page: Page, lastOffset: number) => Promise<void> }[] = [
  {
    name: 'wheel scroll, ~2,000 rows',
    run: async (page) => {
      for (let i = 0; i < 120; i++) {
        await page.mouse.wheel(0, 360);
        await page.waitForTimeout(12);
      }
    },
  },
  {
    name: 'PgDn ×40, PgUp ×20',
    run: async (page) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('PageDown');
        await page.waitForTimeout(15);
      }
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('PageUp');
        await page.waitForTimeout(15);
      }
    },
  },
  {
    name: 'End, Home ×3',
    run: async (page, last) => {
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press('End');
        await page.locator(`[data-testid=record-row][data-offset="${last}"]`).waitFor();
        await page.waitForTimeout(100);
        await page.keyboard.press('Home');
        await page.locator('[data-testid=record-row][data-offset="0"]').waitFor();
        await page.waitForTimeout(100);
      }
    },
  },
  {
    name: 'scrollbar drag to the middle and back',
    run: async (page) => {
      const thumb = (await page.getByTestId('records-scroll-thumb').boundingBox())!;
      const track = (await page.getByTestId('records-scrollbar').boundingBox())!;
      const x = thumb.x + thumb.width / 2;
      await page.mouse.move(x, thumb.y + 4);
      await page.mouse.down();
      await page.mouse.move(x, track.y + track.height / 2, { steps: 20 });
      await page.mouse.up();
      await page.waitForTimeout(400);
      const at = (await page.getByTestId('records-scroll-thumb').boundingBox())!;
      await page.mouse.move(x, at.y + 4);
      await page.mouse.down();
      await page.mouse.move(x, track.y + 2, { steps: 20 });
      await page.mouse.up();
      await page.waitForTimeout(200);
    },
  },
];

interface PhaseRun {
  /** Longest frame and 95th percentile, ms. */
  max: number;
  p95: number;
  frames: number;
  over: number;
  /** Long tasks (ms) the Long Tasks API reported. */
  long: number[];
  /** Frames longer than one 60 Hz vsync interval (> 17 ms: a dropped frame). */
  over16: number;
}

const range = (xs: number[]): string => `${fmt3(Math.min(...xs))} / ${fmt3(median(xs))} / ${fmt3(Math.max(...xs))}`;

export async function run(opts: BenchOptions): Promise<void> {
  if (!existsSync('/usr/bin/chromium')) {
    console.log('ui: /usr/bin/chromium is missing (apt-get install -y chromium); skipped');
    return;
  }
  if (ensureRendererBuilt({ ifStale: true })) console.log('built the renderer');
  const meta = ensureData(opts.dataDir, opts.sizeMb);
  console.log(`before: ${loadLine()}`);
  const bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    page.setDefaultTimeout(120_000);
    await page.goto(bridge.url);
    await page.locator('[data-testid=app-loaded]').waitFor();
    await page.getByTestId('folder-input').fill(meta.logDir);
    await page.getByTestId('folder-input').press('Enter');
    await page.locator('[data-testid=tree-partition][data-name="clicks-0"]').waitFor();
    await page.getByTestId('tab-records').click();

    // Select → first records, alternating with the tiny partition.
    const selects: number[] = [];
    let coldSelect = 0;
    for (let i = 0; i < opts.iterations + 1; i++) {
      await timeSelect(page, 'tiny-0', 'tiny-0');
      const ms = await timeSelect(page, 'clicks-0', 'user-0000');
      if (i > 0) selects.push(ms); // the first is a warm-up (JIT, caches)
      else coldSelect = ms;
    }
    await page.waitForTimeout(300);

    // One traced select: the API calls in the order sent (with the server's time) and the renderer
    // main thread's work between the click and the frame with the first rows.
    await timeSelect(page, 'tiny-0', 'tiny-0');
    await page.waitForTimeout(300);
    await page.evaluate('performance.clearResourceTimings()');
    await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel'] });
    const tracedSelectMs = await timeSelect(page, 'clicks-0', 'user-0000');
    const selectTasks = mainThreadTasks(JSON.parse((await browser.stopTracing()).toString('utf8')));
    await page.waitForTimeout(2000);
    const selectCalls = await callsSinceSelect(page);
    await page.waitForTimeout(300);

    // The phases, each run iterations + 1 times (the first is a warm-up).
    const runs = PHASES.map(() => [] as PhaseRun[]);
    let afterWheel = 0;
    let middle = 0;
    await page.evaluate("performance.clearMeasures('klx:page-rows'); performance.clearMeasures('klx:warm-rows')");
    for (let it = 0; it < opts.iterations + 1; it++) {
      for (const [p, phase] of PHASES.entries()) {
        await home(page);
        await startFrames(page);
        await phase.run(page, meta.records - 1);
        await page.waitForTimeout(300);
        const frames = await stopFrames(page);
        const long = await longTasks(page);
        if (p === 0) afterWheel = await firstOffset(page);
        if (it > 0) runs[p]!.push({ max: Math.max(...frames), p95: percentile(frames, 95), frames: frames.length, over: frames.filter((f) => f > FRAME_GOAL_MS).length, long, over16: frames.filter((f) => f > VSYNC_MS).length });
      }
    }
    // How far the drag went (once more, stopping in the middle).
    await home(page);
    {
      const thumb = (await page.getByTestId('records-scroll-thumb').boundingBox())!;
      const track = (await page.getByTestId('records-scrollbar').boundingBox())!;
      await page.mouse.move(thumb.x + thumb.width / 2, thumb.y + 4);
      await page.mouse.down();
      await page.mouse.move(thumb.x + thumb.width / 2, track.y + track.height / 2, { steps: 20 });
      await page.mouse.up();
      await page.waitForTimeout(500);
      middle = await firstOffset(page);
    }
    const pageRows: number[] = await page.evaluate("performance.getEntriesByName('klx:page-rows').map((e) => e.duration)");
    const warmRows: number[] = await page.evaluate("performance.getEntriesByName('klx:warm-rows').map((e) => e.duration)");

    // The traced run: what the main thread did, wall vs CPU.
    const traced: { name: string; tasks: MainTask[] }[] = [];
    for (const phase of PHASES) {
      await home(page);
      await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel'] });
      await phase.run(page, meta.records - 1);
      await page.waitForTimeout(300);
      const buf = await browser.stopTracing();
      traced.push({ name: phase.name, tasks: mainThreadTasks(JSON.parse(buf.toString('utf8'))) });
    }

    const rows: string[][] = [];
    const sel = median(selects);
    rows.push(['select → first records on screen', `${range(selects)} ms`, `< ${SELECT_GOAL_MS} ms`, sel < SELECT_GOAL_MS ? 'ok' : 'MISSED']);
    rows.push(['  the first select of the session (cold: not counted above)', `${fmt3(coldSelect)} ms`, `< ${SELECT_GOAL_MS} ms`, coldSelect < SELECT_GOAL_MS ? 'ok' : 'MISSED']);
    for (const [p, phase] of PHASES.entries()) {
      const r = runs[p]!;
      const maxes = r.map((x) => x.max);
      const med = median(maxes);
      const longCounts = r.map((x) => x.long.length);
      const allLong = r.flatMap((x) => x.long);
      rows.push([`${phase.name}: longest frame`, `${range(maxes)} ms`, `≤ ${FRAME_GOAL_MS} ms`, med <= FRAME_GOAL_MS ? 'ok' : 'MISSED']);
      rows.push([`  issue 16: frames over ${ISSUE_FRAME_GOAL_MS} ms (longer than one vsync, of all frames)`, r.map((x) => `${x.over16} of ${x.frames}`).join(', '), 'none', median(r.map((x) => x.over16)) === 0 ? 'ok' : 'MISSED']);
      rows.push(['  p95 frame', `${range(r.map((x) => x.p95))} ms`, '', '']);
      rows.push(['  frames over 50 ms (of all frames)', r.map((x) => `${x.over} of ${x.frames}`).join(', '), '', '']);
      rows.push(['  main-thread tasks over 50 ms (Long Tasks API)', `${longCounts.join(', ')}${allLong.length ? `; longest ${Math.max(...allLong)} ms` : ''}`, 'none', median(longCounts) === 0 ? 'ok' : 'MISSED']);
    }
    rows.push(['rows of one page made (klx:page-rows), max', `${fmt3(Math.max(0, ...pageRows))} ms`, '', '']);
    rows.push(['display strings made in an idle slice (klx:warm-rows), max', `${fmt3(Math.max(0, ...warmRows))} ms`, '', '']);
    console.log(`partition: ${fmtInt(meta.records)} records; after the wheel the table showed offset ${fmtInt(afterWheel)}, after the drag ${fmtInt(middle)}`);
    console.log('ranges are min / median / max over the runs');
    printTable(['measure', 'result', 'goal', ''], rows);

    console.log(`\ntraced select (${fmt3(tracedSelectMs)} ms to the first rows): API calls in the order sent, ms from the click (server: request sent → first byte of the answer)`);
    printTable(['call', 'sent', 'server', 'answered', ''], selectCalls.map((c) => [c.method, fmt3(c.start), fmt3(c.server), fmt3(c.end), c.end <= tracedSelectMs ? 'before the first rows' : 'after']));
    const before = selectTasks.filter((t) => t.at <= tracedSelectMs);
    const cpuSum = before.reduce((n, t) => n + (Number.isNaN(t.cpu) ? 0 : t.cpu), 0);
    const top = [...before].sort((a, b) => (b.cpu || 0) - (a.cpu || 0)).slice(0, 3);
    console.log(`renderer main thread until the first rows: ${before.length} tasks, ${fmt3(cpuSum)} ms CPU; longest by CPU: ${top.map((t) => `at ${fmt3(t.at)} ms ${describeTask(t)}`).join('; ') || 'none'}`);

    console.log('\ntraced run (Chromium performance trace of the renderer main thread; not counted above):');
    const trows: string[][] = [];
    for (const { name, tasks } of traced) {
      const long = tasks.filter((t) => t.wall > FRAME_GOAL_MS);
      const byCpu = [...tasks].sort((a, b) => (b.cpu || 0) - (a.cpu || 0))[0];
      const byWall = [...tasks].sort((a, b) => b.wall - a.wall)[0];
      const input = tasks.filter((t) => t.inputs.length > 0 && !Number.isNaN(t.cpu));
      trows.push([name, `${long.length} task${long.length === 1 ? '' : 's'} over 50 ms wall${long.length ? `, their CPU ${long.map((t) => fmt3(t.cpu)).join(', ')} ms` : ''}`]);
      if (input.length) {
        trows.push(['  input tasks: CPU per task (median · max)', `${fmt3(median(input.map((t) => t.cpu)))} · ${fmt3(Math.max(...input.map((t) => t.cpu)))} ms over ${input.length} tasks`]);
        trows.push(['  input tasks: CPU per task by part (mean)', describeParts(meanParts(input))]);
      }
      const gc = tasks.map((t) => t.parts.gc).filter((x) => x > 0);
      if (gc.length) trows.push(['  GC in main-thread tasks (count · longest · total)', `${gc.length} · ${fmt3(Math.max(...gc))} · ${fmt3(gc.reduce((a, b) => a + b, 0))} ms CPU`]);
      if (byWall) trows.push(['  longest task by wall time', describeTask(byWall)]);
      if (byCpu && byCpu !== byWall) trows.push(['  longest task by CPU time', describeTask(byCpu)]);
    }
    printTable(['phase', 'main thread'], trows);
    console.log(`after: ${loadLine()}`);
    await page.close();
  } finally {
    await browser.close();
    await bridge.close();
  }
}
