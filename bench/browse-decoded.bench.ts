/**
 * Browsing decodes only what is on screen (issue 11): the first page of the records table (200
 * rows, as the Records view asks for it) of a 5,000,000-record partition of Confluent-framed Avro
 * values, with `_schemas-0` beside it, through the API as the app calls it (`log.open`, then
 * `log.records`: main decodes the page's keys and values). Each iteration starts a fresh API (cold:
 * the folder's decoder reads `_schemas` and compiles the schema on that first page). Limit: the
 * first rows on screen within 0.5 s; printed beside the same page read by the engine without
 * decoding (`readForward`, the peer) in the same run, and the machine load.
 *
 * Then on screen: the app's page in Debian's Chromium through the loopback bridge, each iteration a
 * fresh bridge (cold: no decoder, no `_schemas` read yet) and a fresh page that opens the folder;
 * timed with the page's clock from the click on `orders-0` in the tree to the frame that paints the
 * first row with its decoded value (`{"id":"order-0",…}`), as `npm run bench -- ui` times its select.
 * Beside it, in the same run, the same click on `_schemas-0` (1 record: the page's own fixed cost),
 * 1.5 s later (the inspector the first click opened has loaded by then).
 * The warm-up (the first page of the process, whose API starts the worker threads that read pages:
 * from source through tsx here, so slower than the built app) is printed too, not counted.
 *
 * Data: bodies encoded with avsc (bench data, not test fixtures), written once into
 * bench/.data/browse-avro-5m/ (reused while the parameters are unchanged).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import avro from 'avsc';
import { ensureRendererBuilt, RENDERER_DIR } from '../src-main/bridge/build.ts';
import { startBridge } from '../src-main/bridge/server.ts';
import { createServerApi } from '../src-main/api/index.ts';
import { openPath } from '../src-main/engine/log/log-dir.ts';
import { readForward } from '../src-main/engine/log/fetch.ts';
import type { RecordRow } from '../src-shared/log-types.ts';
import { ensureOrdersLog, frame, order, ORDER_AVRO_SCHEMA } from './avro-orders.ts';
import { collectGarbage, fmt3, fmtInt, loadLine, median, printTable, progress, timeIt, type BenchOptions } from './lib.ts';
import { timeSelect } from './ui.bench.ts';

const N = 5_000_000;
const PAGE = 200;
const LIMIT_S = 0.5;
const PARAMS = { generator: 1, records: N, perBatch: 1000 };
function ensureLog(dataDir: string): string {
  const type = avro.Type.forSchema(ORDER_AVRO_SCHEMA as avro.Schema);
  return ensureOrdersLog({ logDir: join(dataDir, 'browse-avro-5m'), topic: 'orders', records: N, perBatch: PARAMS.perBatch, params: PARAMS, value: (n) => frame(1, type.toBuffer(order(n))) });
}

export async function run(opts: BenchOptions): Promise<void> {
  const logDir = ensureLog(opts.dataDir);
  const dir = join(logDir, 'orders-0');
  const api: number[] = [];
  const peer: number[] = [];
  let check = '';
  for (let i = 0; i <= opts.iterations; i++) {
    collectGarbage();
    progress(`first page ${i === 0 ? '(warm-up)' : `#${i}`}`);
    const t = await timeIt(async () => {
      const server = createServerApi({ version: 'bench', transport: 'bridge' });
      const open = await server.dispatch('log.open', { path: logDir }, { readOnly: true });
      if (!open.ok) throw new Error(open.error.message);
      const page = await server.dispatch('log.records', { dir, from: 'start', limit: PAGE }, { readOnly: true });
      if (!page.ok) throw new Error(page.error.message);
      const rows = (page.result as { rows: RecordRow[] }).rows;
      return `${rows.length} rows, row 0 ${rows[0]!.valueDecoded?.format} id ${rows[0]!.valueDecoded?.schemaId}: ${rows[0]!.valueDecoded?.text?.slice(0, 40)}…`;
    });
    check = t.result;
    collectGarbage();
    const p = await timeIt(async () => {
      const log = openPath(logDir).logDirs[0]!.partitions.find((x) => x.topic === 'orders')!;
      return (await readForward(log, log.logStartOffset, PAGE, { includeControl: true })).records.length;
    });
    if (i > 0) {
      api.push(t.seconds);
      peer.push(p.seconds);
    }
  }
  progress('');
  const a = median(api);
  const b = median(peer);
  printTable(
    [`first page (${PAGE} rows) of ${fmtInt(N)} Avro records, cold (median of ${opts.iterations})`, 'seconds', 'note'],
    [
      ['engine page without decoding (peer)', fmt3(b), ''],
      ['log.open + log.records, decoded', fmt3(a), `${a <= LIMIT_S ? 'met' : 'NOT met'} (≤ ${LIMIT_S} s)`],
    ],
    new Set([1]),
  );
  console.log(`check: ${check}\n${loadLine()}`);
  await onScreen(logDir, opts.iterations);
}

/** The first decoded rows on screen (see the module comment), cold, in Chromium through the bridge. */
async function onScreen(logDir: string, iterations: number): Promise<void> {
  if (!existsSync('/usr/bin/chromium')) {
    console.log('on screen: /usr/bin/chromium is missing (apt-get install -y chromium); skipped');
    return;
  }
  if (ensureRendererBuilt({ ifStale: true })) console.log('built the renderer');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  const orders: number[] = [];
  const schemas: number[] = [];
  let first = 0;
  try {
    for (let i = 0; i <= iterations; i++) {
      progress(`on screen ${i === 0 ? '(warm-up)' : `#${i}`}`);
      const bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR });
      try {
        const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
        await page.goto(bridge.url);
        await page.locator('[data-testid=app-loaded]').waitFor();
        await page.getByTestId('folder-input').fill(logDir);
        await page.getByTestId('folder-input').press('Enter');
        await page.locator('[data-testid=tree-partition][data-name="orders-0"]').waitFor();
        await page.getByTestId('tab-records').click();
        const ms = await timeSelect(page, 'orders-0', '"id":"order-0"');
        // Let what the first click started (the inspector of the first record, its editor) finish first.
        await page.waitForTimeout(1500);
        const tiny = await timeSelect(page, '_schemas-0', 'orders-value');
        if (i === 0) first = ms / 1000;
        if (i > 0) {
          orders.push(ms / 1000);
          schemas.push(tiny / 1000);
        }
        await page.close();
      } finally {
        await bridge.close();
      }
    }
  } finally {
    await browser.close();
  }
  progress('');
  const a = median(orders);
  printTable(
    [`on screen in Chromium through the bridge, cold (median of ${iterations})`, 'seconds', 'note'],
    [
      ['click _schemas-0 → its 1 row on screen (peer)', fmt3(median(schemas)), ''],
      [`click orders-0 → first decoded rows on screen`, fmt3(a), `${a <= LIMIT_S ? 'met' : 'NOT met'} (≤ ${LIMIT_S} s); runs ${orders.map(fmt3).join(', ')}`],
      ['  the same, first in this process (warm-up: not counted)', fmt3(first), 'includes starting the worker threads that read pages'],
    ],
    new Set([1]),
  );
  console.log(loadLine());
}
