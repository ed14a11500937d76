/**
 * UI speed on a 5,000,000-record partition, measured in Debian's Chromium through the loopback
 * bridge (the same page and API the app serves), with the page's own clock (`performance.now()`
 * inside `page.evaluate`) and a `requestAnimationFrame` frame-time recorder:
 *
 * - **select → first records**: from the click on the partition in the log tree to the frame that
 *   paints its first record rows (goal < 0.5 s). Each iteration first selects a tiny partition, so
 *   the big one is really loaded again (its summary, segments and first page).
 * - **frames while scrolling and paging**: the longest frame and the 95th percentile while the wheel
 *   scrolls ~2,000 rows through pages fetched on demand, PgDn/PgUp page, End/Home jump across the
 *   whole log, and the scrollbar is dragged to the middle (goal: longest frame ≤ 50 ms), plus the
 *   main-thread tasks over 50 ms the Long Tasks API reports (goal: none). Frame times are whole
 *   vsync intervals (16.7 ms steps); on a small machine the in-process bridge and the browser share
 *   the CPUs, so a frame can wait for a core even when no task of the page is long.
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
import { generateBigPartition } from '../test/e2e/explorer/big-partition.ts';
import { fmt3, fmtInt, median, printTable, type BenchOptions } from './lib.ts';

/** Bump when the data layout changes so old data is regenerated. */
const GENERATOR = 1;
const SELECT_GOAL_MS = 500;
const FRAME_GOAL_MS = 50;

interface DataMeta {
  generator: number;
  records: number;
  logDir: string;
}

function ensureData(dataDir: string): DataMeta {
  const dir = join(dataDir, 'ui-5m');
  const metaFile = join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DataMeta;
    if (meta.generator === GENERATOR && existsSync(join(meta.logDir, 'clicks-0'))) {
      console.log(`data: reusing ${dir}`);
      return meta;
    }
  }
  console.log(`data: generating 5,000,000 records into ${dir} (once; reused by later runs)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const logDir = join(dir, 'broker-1');
  const big = generateBigPartition(logDir);
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
async function timeSelect(page: Page, name: string, firstKey: string): Promise<number> {
  return page.evaluate(`new Promise((resolve, reject) => {
    const node = document.querySelector('[data-testid=tree-partition][data-name=${JSON.stringify(name)}]');
    if (!node) return reject(new Error('no tree node ' + ${JSON.stringify(name)}));
    const t0 = performance.now();
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

export async function run(opts: BenchOptions): Promise<void> {
  if (opts.sizeMb !== undefined) console.log('note: --size-mb is ignored by the UI bench (the partition is 5,000,000 records)');
  if (!existsSync('/usr/bin/chromium')) {
    console.log('ui: /usr/bin/chromium is missing (apt-get install -y chromium); skipped');
    return;
  }
  if (ensureRendererBuilt({ ifStale: true })) console.log('built the renderer');
  const meta = ensureData(opts.dataDir);
  const bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(bridge.url);
    await page.locator('[data-testid=app-loaded]').waitFor();
    await page.getByTestId('folder-input').fill(meta.logDir);
    await page.getByTestId('folder-input').press('Enter');
    await page.locator('[data-testid=tree-partition][data-name="clicks-0"]').waitFor();
    await page.getByTestId('tab-records').click();

    // Select → first records, alternating with the tiny partition.
    const selects: number[] = [];
    for (let i = 0; i < opts.iterations + 1; i++) {
      await timeSelect(page, 'tiny-0', 'tiny-0');
      const ms = await timeSelect(page, 'clicks-0', 'user-0000');
      if (i > 0) selects.push(ms); // the first is a warm-up (JIT, caches)
    }
    await page.waitForTimeout(300);

    // Frames while scrolling: wheel through ~2,000 rows (pages fetched on demand).
    const table = page.getByTestId('records-table');
    const box = (await table.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await startFrames(page);
    for (let i = 0; i < 120; i++) {
      await page.mouse.wheel(0, 360);
      await page.waitForTimeout(12);
    }
    await page.waitForTimeout(200);
    const wheelFrames = await stopFrames(page);
    const wheelLong = await longTasks(page);
    const afterWheel = await firstOffset(page);

    // Paging with the keyboard, then End and Home across the whole log.
    await table.focus();
    await startFrames(page);
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('PageDown');
      await page.waitForTimeout(15);
    }
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('PageUp');
      await page.waitForTimeout(15);
    }
    await page.keyboard.press('End');
    await page.locator('[data-testid=record-row][data-offset="4999999"]').waitFor();
    await page.keyboard.press('Home');
    await page.locator('[data-testid=record-row][data-offset="0"]').waitFor();
    // Drag the scrollbar to the middle.
    const thumb = (await page.getByTestId('records-scroll-thumb').boundingBox())!;
    const track = (await page.getByTestId('records-scrollbar').boundingBox())!;
    await page.mouse.move(thumb.x + thumb.width / 2, thumb.y + 4);
    await page.mouse.down();
    await page.mouse.move(thumb.x + thumb.width / 2, track.y + track.height / 2, { steps: 20 });
    await page.mouse.up();
    await page.waitForTimeout(500);
    const pageFrames = await stopFrames(page);
    const pageLong = await longTasks(page);
    const pageRows: number[] = await page.evaluate("performance.getEntriesByName('klx:page-rows').map((e) => e.duration)");
    const middle = await firstOffset(page);

    const rows: string[][] = [];
    const sel = median(selects);
    rows.push(['select → first records on screen (median)', `${fmt3(sel)} ms`, `< ${SELECT_GOAL_MS} ms`, sel < SELECT_GOAL_MS ? 'ok' : 'MISSED']);
    rows.push(['  each run', selects.map((x) => fmt3(x)).join(', ') + ' ms', '', '']);
    for (const [name, frames, long] of [
      ['wheel scroll, ~2,000 rows', wheelFrames, wheelLong],
      ['PgDn/PgUp, End/Home, scrollbar drag', pageFrames, pageLong],
    ] as const) {
      const max = Math.max(...frames);
      rows.push([`${name}: longest frame`, `${fmt3(max)} ms`, `≤ ${FRAME_GOAL_MS} ms`, max <= FRAME_GOAL_MS ? 'ok' : 'MISSED']);
      rows.push([`  p95 frame · frames over 50 ms`, `${fmt3(percentile(frames, 95))} ms · ${frames.filter((f) => f > FRAME_GOAL_MS).length} of ${fmtInt(frames.length)}`, '', '']);
      rows.push([`  main-thread tasks over 50 ms (Long Tasks API)`, long.length === 0 ? 'none' : `${long.length}, longest ${Math.max(...long)} ms`, 'none', long.length === 0 ? 'ok' : 'MISSED']);
    }
    rows.push(['rows of one page made ready for the table (max)', `${fmt3(Math.max(...pageRows))} ms`, '', '']);
    console.log(`partition: ${fmtInt(meta.records)} records; after the wheel the table showed offset ${fmtInt(afterWheel)}, after the drag ${fmtInt(middle)}`);
    printTable(['measure', 'result', 'goal', ''], rows);
    await page.close();
  } finally {
    await browser.close();
    await bridge.close();
  }
}
