/**
 * Records you can take away (issue 14, capability 3), in the browser: select records (click,
 * Shift+click, Ctrl+A), Ctrl+C and the context menu's "copy as" (JSON, CSV, kcat-style text,
 * `klx append --records` lines), the selected offsets in the status bar, and the export dialog:
 * the selection to Parquet (read back by DuckDB in the test), search matches to NDJSON (parsed),
 * an export into the opened folder refused, and a long export stopped with Cancel (the partial
 * file removed). Bodies were written by python3-avro (encode_fixtures.py), so the decoded values
 * and the bytes are checked against an independent encoder. Fails on any page error (fixture
 * rule). Screenshots `take-away-*-light.png` / `-dark.png`.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { DuckDBInstance } from '@duckdb/node-api';
import { addSecondOrdersPartition, buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';
import { generateBigPartition } from './big-partition.ts';
import { expect, lightAndDarkShots, openFolder, selectPartition, test as base, VIEWPORT } from './explorer-fixtures.ts';

const test = base.extend<{ fx: SchemaFixtures; outDir: string }>({
  fx: async ({}, use) => {
    const fx = buildSchemaFixtures();
    addSecondOrdersPartition(fx);
    await use(fx);
    fx.cleanup();
  },
  outDir: async ({}, use) => {
    const d = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-out-')));
    await use(d);
    rmSync(d, { recursive: true, force: true });
  },
});

test.use({ viewport: VIEWPORT });
test.describe.configure({ timeout: 240_000 });

const shots = (page: Page, name: string): Promise<void> => lightAndDarkShots(page, `take-away-${name}`);

/** The page's clipboard text (the page's `navigator`; this file is typechecked without the DOM lib). */
const clipboard = (page: Page): Promise<string> => page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
/** JSON.parse keeping integers beyond 2^53 as their digits. */
const parseExact = (t: string): unknown => JSON.parse(t.replace(/(?<=[:\[,])(-?\d{16,})(?=[,}\]])/g, '"$1"'));

/** The encoder's output lines for a topic (python3-avro bodies as base64, timestamps). */
function encoderLines(fx: SchemaFixtures, topic: string): { keyBase64?: string; key?: string; valueBase64: string; timestamp: number }[] {
  return readFileSync(join(fx.files, `${topic}.ndjson`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('select, copy as JSON / CSV / kcat / klx append lines, export the selection to Parquet', async ({ page, context, bridge, fx, outDir }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  const row = (o: number) => page.locator(`[data-testid=record-row][data-offset="${o}"]`);
  await expect(row(0)).toBeVisible({ timeout: 60_000 }); // the log worker's first start on a loaded machine

  // Click 1, Shift+click 3: offsets 1..3 selected, the status bar says so.
  await row(1).click();
  await row(3).click({ modifiers: ['Shift'] });
  for (const o of [1, 2, 3]) await expect(row(o)).toHaveAttribute('aria-selected', 'true');
  for (const o of [0, 4]) await expect(row(o)).toHaveAttribute('aria-selected', 'false');
  await expect(page.getByTestId('selected-offset')).toHaveText('selected offsets 1 – 3');

  // Ctrl+C: a JSON array of the three records, decoded as python3-avro wrote them.
  await page.keyboard.press('Control+c');
  await expect(page.getByTestId('copy-note')).toHaveText(/Copied 3 records as JSON\./);
  const json = parseExact(await clipboard(page)) as { offset: number; key_decoded: number; value_decoded: Record<string, unknown>; value: string }[];
  const enc = encoderLines(fx, 'orders');
  expect(json.map((r) => r.offset)).toEqual([1, 2, 3]);
  expect(json.map((r) => r.value)).toEqual([enc[1]!.valueBase64, enc[2]!.valueBase64, enc[3]!.valueBase64]);
  expect(json[0]!.value_decoded).toEqual(parseExact(fx.expected.orders[1]!));
  expect(json[0]!.value_decoded.big).toBe('-9223372036854775808');

  // The context menu on a selected row keeps the selection; klx append --records lines carry the bytes.
  await row(2).click({ button: 'right' });
  await expect(page.getByTestId('records-menu')).toBeVisible();
  await expect(page.getByTestId('records-menu')).toContainText('offsets 1 – 3');
  await shots(page, 'menu');
  // The theme toggle's click closed the menu: open it again.
  if ((await page.getByTestId('records-menu').count()) === 0) await row(2).click({ button: 'right' });
  await page.getByTestId('copy-as-append').click();
  await expect(page.getByTestId('records-menu')).toHaveCount(0);
  await expect(page.getByTestId('copy-note')).toHaveText(/Copied 3 records as klx append --records lines\./);
  const appendLines = (await clipboard(page)).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(appendLines).toEqual([1, 2, 3].map((i) => ({ ...(enc[i]!.keyBase64 !== undefined ? { keyBase64: enc[i]!.keyBase64 } : { key: enc[i]!.key }), valueBase64: enc[i]!.valueBase64, timestamp: enc[i]!.timestamp })));

  await row(2).click({ button: 'right' });
  await page.getByTestId('copy-as-csv').click();
  await expect(page.getByTestId('copy-note')).toHaveText(/Copied 3 records as CSV\./);
  const csv = (await clipboard(page)).trimEnd().split('\n');
  expect(csv[0]!.startsWith('topic,partition,offset,timestamp,timestamp_type,key,value,')).toBe(true);
  expect(csv.slice(1).map((l) => l.split(',').slice(0, 4).join(','))).toEqual([1, 2, 3].map((i) => `orders,0,${i},${enc[i]!.timestamp}`));

  // kcat-style text of one record (a plain click selects just it).
  await row(0).click();
  await expect(page.getByTestId('selected-offset')).toHaveText('selected offset 0');
  await row(0).click({ button: 'right' });
  await page.getByTestId('copy-as-kcat').click();
  await expect(page.getByTestId('copy-note')).toHaveText(/Copied 1 record as kcat-style text\./);
  const body = Buffer.from(enc[0]!.valueBase64, 'base64');
  expect(await clipboard(page)).toBe(`Topic orders[0], offset: 0, key: 1, payload: ${body.length} bytes: ${fx.expected.orders[0]}\n`);

  // Ctrl+A: the whole partition; export it as Parquet with the dialog.
  await page.getByTestId('records-table').focus();
  await page.keyboard.press('Control+a');
  const count = enc.length;
  await expect(page.getByTestId('selected-offset')).toHaveText(`selected offsets 0 – ${count - 1} (all)`);
  await page.getByTestId('records-table').click({ button: 'right', position: { x: 200, y: 30 } });
  await page.getByTestId('export-selection').click();
  const dialog = page.getByTestId('export-dialog');
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('export-out')).toHaveValue(`~/orders-0-0-${count - 1}.parquet`);
  const file = join(outDir, 'orders.parquet');
  await page.getByTestId('export-out').fill(file);
  await page.getByTestId('export-run').click();
  await expect(page.getByTestId('export-result')).toContainText(`Wrote ${count} records`);
  await expect(page.getByTestId('export-result')).toContainText(file);
  await shots(page, 'exported');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const rows = (await (await c.run(`SELECT "offset", base64("value") AS v, value_decoded->>'id' AS id FROM read_parquet('${file}') ORDER BY "offset"`)).getRowObjectsJS()) as { offset: bigint; v: string; id: string | null }[];
  c.closeSync();
  db.closeSync();
  expect(rows.map((r) => Number(r.offset))).toEqual(enc.map((_, i) => i));
  expect(rows.map((r) => r.v)).toEqual(enc.map((e) => e.valueBase64));
  expect(rows.slice(0, 3).map((r) => r.id)).toEqual(['o-1', 'o-2', 'o-3']);

  // Exporting into the opened folder is refused with main's reason; nothing is written there.
  await page.getByTestId('export-out').fill(join(fx.logDir, 'orders-0', 'x.csv'));
  await page.getByTestId('export-format-csv').click();
  await page.getByTestId('export-run').click();
  await expect(page.getByTestId('export-note')).toContainText('inside the opened folder');
  expect(existsSync(join(fx.logDir, 'orders-0', 'x.csv'))).toBe(false);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
});

test('search matches across partitions exported to NDJSON', async ({ page, bridge, fx, outDir }) => {
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('search-condition').fill('value.amount > 10 && value.customer.name != "Cy"');
  await page.getByTestId('search-scope').selectOption('topic');
  await page.getByTestId('search-run').click();
  await expect(page.locator('[data-testid=search-match]')).toHaveCount(3, { timeout: 60_000 });
  await page.getByTestId('search-export').click();
  await expect(page.getByTestId('export-scope-records')).toContainText('3 listed');
  await expect(page.getByTestId('export-scope-records').locator('input')).toBeChecked();
  await page.getByTestId('export-format-ndjson').click();
  const file = join(outDir, 'matches.ndjson');
  await page.getByTestId('export-out').fill(file);
  await page.getByTestId('export-run').click();
  await expect(page.getByTestId('export-result')).toContainText('Wrote 3 records');
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => parseExact(l) as { topic: string; partition: number; offset: number; value_decoded: Record<string, unknown> });
  expect(lines.map((l) => `${l.topic}-${l.partition}@${l.offset}`)).toEqual(['orders-0@0', 'orders-0@1', 'orders-1@1']);
  expect(lines[0]!.value_decoded).toEqual(parseExact(fx.expected.orders[0]!));
});

test('a long export shows progress and stops on Cancel, removing the partial file', async ({ page, bridge, outDir }) => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-long-')));
  try {
    generateBigPartition(join(tmp, 'broker-1'), { batches: 2000, recordsPerBatch: 100, segments: 2, topic: 'clicks' });
    await openFolder(page, bridge.url, join(tmp, 'broker-1'));
    await selectPartition(page, 'clicks-0');
    await page.getByTestId('tab-records').click();
    await expect(page.locator('[data-testid=record-row]').first()).toBeVisible({ timeout: 60_000 });
    await page.getByTestId('export-open').click();
    await page.getByTestId('export-scope-partition').locator('input').check();
    await page.getByTestId('export-format-ndjson').click();
    const file = join(outDir, 'clicks.ndjson');
    await page.getByTestId('export-out').fill(file);
    await page.getByTestId('export-run').click();
    await expect(page.getByTestId('export-progress')).toBeVisible();
    await expect(page.getByTestId('export-progress')).toContainText(/reading records: [1-9]/, { timeout: 30_000 });
    await shots(page, 'progress');
    await page.getByTestId('export-cancel').click();
    await expect(page.getByTestId('export-note')).toHaveText('Export cancelled; the partial file was removed.');
    expect(existsSync(file)).toBe(false);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
