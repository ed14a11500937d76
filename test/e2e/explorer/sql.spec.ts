/**
 * The SQL view in the browser: a generated log directory with two partitions (the issue's
 * six-record compacted-topic example `prices-0`, and `orders-0`), opened through the bridge.
 * Completion of tables and columns while typing, running with Ctrl+Enter and reading the grid,
 * a syntax error as a message and an editor marker, the State view (from the view and from the
 * partition header) with exactly the live keys of the selected partition, the CSV export as a
 * download, and the real compacted __consumer_offsets partitions when the data is there.
 * Screenshots: sql.png, sql-dark.png, sql-error.png, sql-state.png.
 */
import { readFileSync, realpathSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { configureSql } from '../../../src-main/api/sql/sql.ts';
import type { Bridge } from '../../../src-main/bridge/server.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { SCREENSHOTS, copyRealData, expect, HAVE_REAL_DATA, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });
test.describe.configure({ timeout: 60_000 });

let tmp: string;
let logDir: string;

test.beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-sql-')));
  logDir = join(tmp, 'kafka-logs');
  // Keys 17, 28, 17, 28, 17, 39; values alpha, one, beta, (tombstone), gamma, two; offsets 0–5.
  buildPartition(logDir, {
    topic: 'prices',
    segments: [{ batches: singles(rec('17', 'alpha', 1_717_000_000_000), rec('28', 'one', 1_717_000_001_000), rec('17', 'beta', 1_717_000_002_000), rec('28', null, 1_717_000_003_000), rec('17', 'gamma', 1_717_000_004_000), rec('39', 'two', 1_717_000_005_000)) }],
  });
  buildPartition(logDir, { topic: 'orders', segments: [{ batches: singles(rec('o-1', '{"amount":12.5}', 1_717_000_000_000), rec('o-2', '{"amount":7}', 1_717_000_001_000)) }] });
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Keeps the bridge's SQL tables in the test's temp folder. */
function useTempCache(bridge: Bridge): void {
  configureSql(bridge.api.ctx, { cacheDir: join(tmp, 'cache') });
}

/** Opens the log dir, selects prices-0 and the SQL tab; waits for the 16 tables (9 log tables, schemas, transactions, cluster_metadata and the 4 group tables). */
async function openSql(page: Page, bridge: Bridge, partition = 'prices-0', dir = logDir, tables = 16): Promise<void> {
  useTempCache(bridge);
  await openFolder(page, bridge.url, dir);
  await selectPartition(page, partition);
  await page.getByTestId('tab-sql').click();
  // The tables are the selected partition's by default (issue 14); these tests read the whole folder.
  if (dir === logDir) await expect(page.getByTestId('sql-scope')).toHaveValue('partition');
  if ((await page.getByTestId('sql-scope').count()) > 0) await page.getByTestId('sql-scope').selectOption('folder');
  await expect(page.locator('[data-testid=sql-table]')).toHaveCount(tables, { timeout: 30_000 });
}

/** Replaces the editor's text by typing (Monaco reads keys through EditContext: click, then type). */
async function typeSql(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid=sql-editor] .monaco-editor .view-lines').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) await page.keyboard.press('Enter');
    await page.keyboard.type(lines[i]!);
    await page.keyboard.press('Escape'); // close a completion list, so Enter starts a new line
  }
}

/** The grid's cells, row by row, as shown. */
async function gridRows(page: Page): Promise<string[][]> {
  // (Browser code: this file is type-checked without the DOM library, hence the loose types.)
  type El = { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> };
  return page.locator('[data-testid=sql-row]').evaluateAll((rows) => rows.map((r) => Array.from((r as unknown as El).querySelectorAll('[data-testid=sql-cell]')).map((c) => c.textContent ?? '')));
}

async function gridColumns(page: Page): Promise<string[]> {
  return page.locator('[data-testid=sql-col] .hname').allTextContents();
}

test('completion offers tables and columns; Ctrl+Enter runs; the grid shows the rows', async ({ page, bridge }) => {
  await openSql(page, bridge);
  await expect(page.getByTestId('sql-table').filter({ hasText: 'records' })).toContainText('8'); // 6 + 2 records in the folder
  await page.locator('[data-testid=sql-editor] .monaco-editor .view-lines').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  const suggest = page.locator('.suggest-widget');

  await page.keyboard.type('SELECT key_text, value_t');
  await expect(suggest).toBeVisible();
  await expect(suggest).toContainText('value_text');
  await page.keyboard.press('Enter');
  // "offset" is a keyword: completion inserts it quoted.
  await page.keyboard.type(', off');
  await expect(suggest).toContainText('offset');
  await page.keyboard.press('Enter');
  await page.keyboard.type(' FROM la');
  await expect(suggest).toContainText('latest');
  await page.keyboard.press('Enter');
  await page.keyboard.type(' WHERE topic = ');
  await page.keyboard.press('Escape');
  await page.keyboard.type("'prices' ORDER BY 3");
  await page.keyboard.press('Escape');
  await expect(page.locator('[data-testid=sql-editor] .view-lines')).toContainText(`SELECT key_text, value_text, "offset" FROM latest WHERE topic = 'prices' ORDER BY 3`);

  // After `latest l.`-style qualification only that table's columns are offered; with a table named, its columns rank first.
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect(page.getByTestId('sql-row-count')).toHaveText('3 rows');
  expect(await gridColumns(page)).toEqual(['key_text', 'value_text', 'offset']);
  expect(await gridRows(page)).toEqual([
    ['28', 'NULL', '3'],
    ['17', 'gamma', '4'],
    ['39', 'two', '5'],
  ]);
  // NULL is shown distinctly; numbers right-aligned.
  await expect(page.locator('[data-testid=sql-cell].null')).toHaveCount(1);
  await expect(page.locator('[data-testid=sql-cell].num').first()).toHaveCSS('text-align', 'right');
  await page.locator('[data-testid=sql-cell]').nth(4).click();
  await expect(page.getByTestId('sql-cellbar')).toContainText('row 2 · value_text');
  await expect(page.getByTestId('sql-cellbar')).toContainText('gamma');

  // A whole-record query for the screenshot: BLOB keys/values, timestamps, headers.
  await page.getByTestId('sql-example-compaction').click();
  await expect(page.getByTestId('sql-row-count')).toHaveText('3 rows');
  expect((await gridRows(page)).map((r) => r.slice(0, 4))).toEqual([
    ['0', '17', 'alpha', 'false'],
    ['1', '28', 'one', 'false'],
    ['2', '17', 'beta', 'false'],
  ]);
  await page.getByTestId('sql-table').filter({ hasText: 'latest' }).getByRole('button', { name: /Show the columns/ }).click();
  await page.screenshot({ path: `${SCREENSHOTS}/sql.png` });
});

test('a syntax error shows DuckDB\'s message and marks the position in the editor', async ({ page, bridge }) => {
  await openSql(page, bridge);
  await typeSql(page, 'SELECT offset, key_text\nFROM records');
  await page.getByTestId('sql-run').click();
  await expect(page.getByTestId('sql-error')).toContainText('Parser Error: syntax error at or near ","');
  await expect(page.getByTestId('sql-error')).toContainText('hint: offset is an SQL keyword; write the column as "offset" (in double quotes)');
  await expect(page.getByTestId('sql-status')).toContainText('at line 1, column 14');
  const squiggle = page.locator('[data-testid=sql-editor] .squiggly-error');
  await expect(squiggle).toHaveCount(1);
  await page.screenshot({ path: `${SCREENSHOTS}/sql-error.png` });

  // A refused statement: the marker goes, the refusal is said plainly.
  await typeSql(page, 'DELETE FROM records');
  await expect(squiggle).toHaveCount(0);
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect(page.getByTestId('sql-error')).toContainText('DELETE statements are refused: the SQL tables of a log are read-only');
  await expect(page.getByTestId('sql-status')).toContainText('refused');
});

test('a running query shows its progress and can be cancelled', async ({ page, bridge }) => {
  await openSql(page, bridge);
  await typeSql(page, 'SELECT count(*) AS n FROM range(100000000000) a');
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect(page.getByTestId('sql-progress')).toHaveText('Running…');
  await page.getByTestId('sql-cancel').click();
  await expect(page.getByTestId('sql-cancelled')).toBeVisible();
  await expect(page.getByTestId('sql-run')).toBeEnabled();
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
  // The tables still answer.
  await typeSql(page, 'SELECT count(*) AS n FROM records');
  await page.keyboard.press('ControlOrMeta+Enter');
  await expect(page.getByTestId('sql-row-count')).toHaveText('1 row');
  expect(await gridRows(page)).toEqual([['8']]);
});

test('State view: exactly the live keys of the selected partition; also from the partition header', async ({ page, bridge }) => {
  await openSql(page, bridge);
  await page.getByTestId('sql-state-view').click();
  await expect(page.getByTestId('sql-row-count')).toHaveText('2 rows');
  const cols = await gridColumns(page);
  const rows = await gridRows(page);
  const pick = (name: string) => rows.map((r) => r[cols.indexOf(name)]);
  expect(pick('topic')).toEqual(['prices', 'prices']);
  expect(pick('key_text')).toEqual(['17', '39']);
  expect(pick('value_text')).toEqual(['gamma', 'two']);
  expect(pick('offset')).toEqual(['4', '5']);
  // The folder holds two partitions: the statement filters on this one.
  await expect(page.locator('[data-testid=sql-editor] .view-lines')).toContainText(`WHERE topic = 'prices' AND "partition" = 0`);
  await page.screenshot({ path: `${SCREENSHOTS}/sql-state.png` });

  // From the header of another partition, starting in the records view.
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('state-sql').click();
  await expect(page.getByTestId('sql-view')).toBeVisible();
  await expect(page.getByTestId('sql-row-count')).toHaveText('2 rows');
  const orders = await gridRows(page);
  const ocols = await gridColumns(page);
  expect(orders.map((r) => [r[ocols.indexOf('key_text')], r[ocols.indexOf('value_text')]])).toEqual([
    ['o-1', '{"amount":12.5}'],
    ['o-2', '{"amount":7}'],
  ]);
});

test('export CSV downloads the full result in the format of klx query --csv', async ({ page, bridge }) => {
  await openSql(page, bridge);
  await page.getByTestId('sql-limit').selectOption('100');
  await typeSql(page, `SELECT key_text, value_text, "offset", key FROM latest ORDER BY "offset"`);
  const download = page.waitForEvent('download');
  await page.getByTestId('sql-export-csv').click();
  const d = await download;
  expect(d.suggestedFilename()).toMatch(/^kafka-logs-query-\d{8}-\d{6}\.csv$/);
  const text = readFileSync((await d.path())!, 'utf8');
  expect(text).toBe(['key_text,value_text,offset,key', 'o-1,"{""amount"":12.5}",0,o-1', 'o-2,"{""amount"":7}",1,o-2', '28,,3,28', '17,gamma,4,17', '39,two,5,39', ''].join('\n'));
  await expect(page.getByTestId('sql-exported')).toContainText('5 rows');
});

test('dark theme', async ({ page, bridge }) => {
  await page.addInitScript(() => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('klx.settings.v1', JSON.stringify({ theme: 'dark' })));
  await openSql(page, bridge);
  await page.getByTestId('sql-example-versions').click();
  await expect(page.getByTestId('sql-row-count')).toHaveText('3 rows');
  expect(await gridRows(page)).toEqual([
    ['17', '3', '0', '4'],
    ['28', '2', '1', '3'],
    ['39', '1', '0', '5'],
  ]);
  await expect(page.locator('[data-testid=sql-editor] .monaco-editor')).toHaveClass(/vs-dark/);
  await page.locator('[data-testid=sql-cell]').first().click();
  await page.screenshot({ path: `${SCREENSHOTS}/sql-dark.png` });
});

test('building the tables of a 5 M-record partition shows progress and can be cancelled', async ({ page, bridge, big }) => {
  test.setTimeout(240_000);
  useTempCache(bridge);
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-sql').click();
  const loading = page.getByTestId('sql-schema-loading');
  await expect(loading).toContainText(/Building tables: \d+ % · [\d.]+ [KMG]iB of [\d.]+ [KMG]iB of \.log read/, { timeout: 30_000 });
  await expect(page.getByTestId('jobs')).toContainText('SQL tables of clicks-0');
  await page.screenshot({ path: `${SCREENSHOTS}/sql-building.png` });
  await loading.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('sql-schema-unbuilt')).toBeVisible();
  await expect(page.getByTestId('sql-build')).toBeVisible();
  await expect(page.getByTestId('error-notice')).toHaveCount(0); // a cancel is not an error
});

test.describe('real data', () => {
  test.skip(!HAVE_REAL_DATA, '../shared/kafka-real-data not found: real-data browser tests skipped');
  let real: { dir: string; remove: () => void };
  test.beforeAll(() => {
    real = copyRealData('kafka-2.7.1-compacted-offsets');
  });
  test.afterAll(() => real.remove());

  test('the compacted __consumer_offsets partitions: latest keeps tombstones, state is empty', async ({ page, bridge }) => {
    await openSql(page, bridge, '__consumer_offsets-39', real.dir);
    await page.getByTestId('sql-state-view').click();
    await expect(page.getByTestId('sql-row-count')).toHaveText('0 rows');
    await expect(page.getByTestId('sql-grid')).toContainText('The query returned no rows.');
    // What the cleaner kept of each key: the last record, here always a tombstone (every group was deleted).
    await typeSql(page, `SELECT "partition", "offset", is_tombstone, segment_base_offset FROM latest WHERE topic = '__consumer_offsets' ORDER BY ALL`);
    await page.keyboard.press('ControlOrMeta+Enter');
    await expect(page.getByTestId('sql-row-count')).toHaveText('7 rows');
    expect(await gridRows(page)).toEqual([
      ['8', '2', 'true', '0'],
      ['17', '2', 'true', '1'],
      ['28', '2', 'true', '2'],
      ['33', '2', 'true', '0'],
      ['39', '4', 'true', '0'],
      ['39', '18', 'true', '18'],
      ['39', '19', 'true', '18'],
    ]);
  });
});

test('the grid sorts by a header click: in the grid for a whole result, again in DuckDB with ORDER BY for a limited one; a header drag resizes its column; the tables default to the selected partition', async ({ page, bridge }) => {
  useTempCache(bridge);
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'prices-0');
  await page.getByTestId('tab-sql').click();
  await expect(page.getByTestId('sql-scope')).toHaveValue('partition');
  await expect(page.locator('[data-testid=sql-table]').filter({ hasText: 'records' })).toContainText('6', { timeout: 30_000 }); // prices-0 only
  await typeSql(page, 'SELECT key_text, "offset" FROM records');
  await page.getByTestId('sql-run').click();
  await expect(page.getByTestId('sql-row-count')).toHaveText('6 rows');
  const keyHead = page.locator('[data-testid=sql-col]').nth(0);
  const offHead = page.locator('[data-testid=sql-col]').nth(1);
  await offHead.click();
  await expect(offHead).toHaveAttribute('data-sort', 'asc');
  await offHead.click();
  await expect(offHead).toHaveAttribute('data-sort', 'desc');
  expect((await gridRows(page)).map((r) => r[1])).toEqual(['5', '4', '3', '2', '1', '0']);
  await keyHead.click();
  await expect(keyHead).toHaveAttribute('aria-sort', 'ascending');
  expect(await gridRows(page)).toEqual([['17', '0'], ['17', '2'], ['17', '4'], ['28', '1'], ['28', '3'], ['39', '5']]);
  await expect(page.getByTestId('sql-sorted-server')).toHaveCount(0);
  // Resize: drag the grip at the right edge of key_text 80 px to the right.
  const before = (await keyHead.boundingBox())!;
  const grip = keyHead.locator('.grip');
  const g = (await grip.boundingBox())!;
  await page.mouse.move(g.x + g.width / 2, g.y + g.height / 2);
  await page.mouse.down();
  await page.mouse.move(g.x + g.width / 2 + 80, g.y + g.height / 2, { steps: 4 });
  await page.mouse.up();
  expect(Math.round((await keyHead.boundingBox())!.width - before.width)).toBe(80);
  await expect(keyHead).toHaveAttribute('aria-sort', 'ascending'); // the drag did not sort
  // A limited result (2,000 rows, limit 100): sorting the 100 rows shown would be wrong, so the query runs again with ORDER BY.
  await page.getByTestId('sql-limit').selectOption('100');
  await typeSql(page, 'SELECT range AS n FROM range(2000)');
  await page.getByTestId('sql-run').click();
  await expect(page.getByTestId('sql-truncated')).toHaveText('limited to 100 rows');
  const nHead = page.locator('[data-testid=sql-col]').nth(0);
  await nHead.click();
  await nHead.click();
  await expect(page.getByTestId('sql-sorted-server')).toContainText('sorted by n ▼: ran again with ORDER BY');
  await expect(nHead).toHaveAttribute('data-sort', 'desc');
  expect((await gridRows(page)).slice(0, 3)).toEqual([['1999'], ['1998'], ['1997']]);
  await page.screenshot({ path: `${SCREENSHOTS}/sql-sorted-light.png` });
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== 'dark'; i++) await toggle.click();
  await page.screenshot({ path: `${SCREENSHOTS}/sql-sorted-dark.png` });
  await nHead.click();
  await expect(page.getByTestId('sql-sorted-server')).toHaveCount(0);
  // The query runs again without ORDER BY: wait for its rows (read at once, they were the sorted ones at load 8).
  await expect.poll(async () => (await gridRows(page)).slice(0, 2)).toEqual([['0'], ['1']]);
});
