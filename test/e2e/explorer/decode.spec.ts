/**
 * Decoders in the UI (issue 11), through the bridge in Debian's Chromium, on data made by
 * independent encoders: Apache Avro's Python library writes the `orders` bodies (Confluent framing,
 * schema id 7 registered in a `_schemas` topic written with `klx append --records`; see
 * test/engine/decode/schema-fixtures.ts), and Python's `struct` writes `prices` values as
 * Kafka's DoubleSerializer does (8-byte big-endian IEEE 754).
 *
 * - The table and the inspector show main's decode: Avro fields, schema id/subject/version and auto's
 *   reason; a truncated body and an unknown schema id show their bytes and the typed reason.
 * - Picking "Double" for the values of `prices` in the records header re-renders the table and the
 *   inspector (12.5, not a long); the choice is kept per folder in the app's data folder (a reload
 *   of the page still shows it) and never written into the opened folder.
 * Screenshots light and dark: decode-*.png.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { RENDERER_DIR } from '../../../src-main/bridge/build.ts';
import { startBridge, type Bridge } from '../../../src-main/bridge/server.ts';
import { createPartition } from '../../../src-main/engine/log/partition-create.ts';
import { PartitionWriter } from '../../../src-main/engine/log/partition-writer.ts';
import { buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';
import { expect, folderSnapshot, lightAndDarkShots, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

let fx: SchemaFixtures;
let dataDir: string;
let bridge: Bridge;

let before: string[];

test.beforeAll(async () => {
  fx = buildSchemaFixtures();
  // prices-0: values as Kafka's DoubleSerializer writes them, by Python's struct (not this project's code).
  const lines = execFileSync('/usr/bin/python3', ['-c', 'import struct,base64\nfor v in (12.5, -0.75, 1e21): print(base64.b64encode(struct.pack(">d", v)).decode())'], { encoding: 'utf8' }).trim().split('\n');
  createPartition(fx.logDir, 'prices', 0);
  const w = PartitionWriter.open(join(fx.logDir, 'prices-0'));
  try {
    w.append(lines.map((b64, i) => ({ key: `p${i}`, value: new Uint8Array(Buffer.from(b64, 'base64')), timestamp: 1700000000000n + BigInt(i) })));
  } finally {
    w.close();
  }
  before = folderSnapshot(fx.logDir);
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-data-')));
  bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR, dataDir });
});

test.afterAll(async () => {
  await bridge?.close();
  fx?.cleanup();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const shots = (page: Page, name: string): Promise<void> => lightAndDarkShots(page, `decode-${name}`);

const row = (page: Page, offset: number) => page.locator(`[data-testid=record-row][data-offset="${offset}"]`);
const editorText = (page: Page) => page.getByTestId('inspector-content').locator('.monaco-editor .view-lines');

test('Confluent Avro from python3-avro: decoded fields in the table and the inspector, with schema id, subject, version and reason; typed errors keep the bytes', async ({ page }) => {
  await page.setViewportSize(VIEWPORT);
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await expect(row(page, 0)).toContainText('"id":"o-1"');
  await expect(row(page, 0)).toContainText('"big":9223372036854775807');
  await expect(row(page, 4)).toContainText('unknown schema id 12');

  await row(page, 0).click();
  await expect(page.getByTestId('decoder-decoded')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('decoded-format')).toContainText('Confluent Schema Registry framing (confluent)');
  await expect(page.getByTestId('decoded-schema')).toHaveText('id 7 · orders-value v1');
  await expect(page.getByTestId('decoded-reason')).toContainText(`schema id 7 (Avro, orders-value v1) found in _schemas-0 of ${fx.logDir}`);
  await expect(editorText(page)).toContainText('"big": 9223372036854775807');
  await expect(editorText(page)).toContainText('"name": "Ann"');
  await shots(page, 'avro');

  // A truncated Avro body: the bytes as hex, and why.
  await row(page, 3).click();
  await expect(page.getByTestId('decoded-error')).toContainText('Avro: read past the end of the 38-byte datum');
  await expect(page.getByTestId('decoded-error')).toContainText('(truncated');
  await expect(editorText(page)).toContainText('00000000');
  // An unknown schema id.
  await row(page, 4).click();
  await expect(page.getByTestId('decoded-error')).toContainText('unknown schema id 12 (unknown-schema');
  await expect(page.getByTestId('decoded-schema')).toHaveText('id 12');
  await shots(page, 'unknown-schema');
});

test('picking "Double" for the values of prices re-renders the table and the inspector; the choice is kept per folder', async ({ page }) => {
  await page.setViewportSize(VIEWPORT);
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'prices-0');
  await page.getByTestId('tab-records').click();
  await expect(page.getByTestId('records-format-value')).toHaveValue('auto');
  await expect(row(page, 0)).toBeVisible();
  await expect(row(page, 0)).not.toContainText('12.5');
  await row(page, 0).click();

  await page.getByTestId('records-format-value').selectOption('double');
  await expect(row(page, 0)).toContainText('12.5');
  await expect(row(page, 1)).toContainText('-0.75');
  await expect(row(page, 2)).toContainText('1e+21');
  await expect(page.getByTestId('inspector-format-value')).toHaveValue('double');
  await expect(page.getByTestId('decoded-format')).toContainText('Double (IEEE 754, 64-bit) (double) · chosen');
  await expect(page.getByTestId('decoded-reason')).toHaveText('Double (IEEE 754, 64-bit): chosen for values of prices');
  await expect(editorText(page)).toContainText('12.5');
  await shots(page, 'double');

  // The inspector's switcher changes the same choice: keys as hex.
  await page.getByTestId('part-key').click();
  await page.getByTestId('inspector-format-key').selectOption('hex');
  await expect(page.getByTestId('records-format-key')).toHaveValue('hex');
  await expect(row(page, 0)).toContainText('7030'); // "p0"
  await expect(editorText(page)).toContainText('"7030"');

  // Kept for this folder: a fresh page shows the same choices and decodes with them.
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'prices-0');
  await page.getByTestId('tab-records').click();
  await expect(page.getByTestId('records-format-value')).toHaveValue('double');
  await expect(row(page, 0)).toContainText('12.5');

  // Back to auto.
  await page.getByTestId('records-format-value').selectOption('auto');
  await page.getByTestId('records-format-key').selectOption('auto');
  await expect(row(page, 0)).not.toContainText('12.5');
  await expect(row(page, 0)).toContainText('p0');
  // Opening read-only: nothing was written into the opened folder.
  expect(folderSnapshot(fx.logDir)).toEqual(before);
});
