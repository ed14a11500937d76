/**
 * Schema files given in the UI for a folder without a `_schemas` topic (issue 11: user-supplied
 * `.avsc` / `.proto` mapped to a topic), through the bridge in Debian's Chromium. Bodies and schema
 * files come from the independent encoders (python3-avro, python3-protobuf; see
 * test/engine/decode/schema-fixtures.ts): `orders` values are Confluent-framed Avro with schema id 7,
 * `payments` values Confluent-framed Protobuf with schema id 9 importing common/money.proto; this
 * log directory holds neither `_schemas` nor any other schema source.
 *
 * - Before: "unknown schema id 7". Loading order.avsc for the values of orders decodes the table and
 *   the inspector, whose reason names the file; payments.proto with money.proto (picked together,
 *   payments.proto found as the schema) decodes payments.
 * - A file that does not compile is refused with its name; kept for the folder (a new page shows
 *   them); Remove brings the typed error back. The opened folder is never written.
 * Screenshots light and dark: schema-files-*.png.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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
let work: string;
let logDir: string;
let bridge: Bridge;
let before: string[];


test.beforeAll(async () => {
  fx = buildSchemaFixtures();
  work = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-schema-files-')));
  logDir = join(work, 'logs');
  for (const topic of ['orders', 'payments']) {
    const lines = readFileSync(join(fx.files, `${topic}.ndjson`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key?: string; keyBase64?: string; valueBase64: string; timestamp: number });
    createPartition(logDir, topic, 0);
    const w = PartitionWriter.open(join(logDir, `${topic}-0`));
    try {
      w.append(lines.map((o) => ({ key: o.keyBase64 !== undefined ? new Uint8Array(Buffer.from(o.keyBase64, 'base64')) : (o.key ?? null), value: new Uint8Array(Buffer.from(o.valueBase64, 'base64')), timestamp: BigInt(o.timestamp) })));
    } finally {
      w.close();
    }
  }
  writeFileSync(join(work, 'broken.avsc'), '{"type": "record", "name": "Broken"}');
  before = folderSnapshot(logDir);
  bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR, dataDir: join(work, 'data') });
});

test.afterAll(async () => {
  await bridge?.close();
  fx?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

const shots = (page: Page, name: string): Promise<void> => lightAndDarkShots(page, `schema-files-${name}`);

test.setTimeout(240_000);

const row = (page: Page, offset: number) => page.locator(`[data-testid=record-row][data-offset="${offset}"]`);

test('schema files loaded in the records header decode Confluent Avro and Protobuf of a folder without _schemas; kept per folder; a bad file is refused', async ({ page }) => {
  await page.setViewportSize(VIEWPORT);
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  // The first page starts the log worker: slow on a loaded machine.
  await expect(row(page, 0)).toContainText('unknown schema id 7', { timeout: 60_000 });

  await page.getByTestId('schemas-toggle').click();
  await expect(page.getByTestId('schema-given-value')).toHaveText('none');
  // A schema that does not compile: refused, naming the file.
  await page.getByTestId('schema-file-value').setInputFiles(join(work, 'broken.avsc'));
  await expect(page.getByTestId('error-notice')).toContainText('broken.avsc');
  await expect(page.getByTestId('error-notice')).toContainText('broken.avsc: cannot use this schema: Avro schema orders-value v1 does not compile');
  await page.getByTestId('error-notice').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
  await expect(page.getByTestId('schema-given-value')).toHaveText('none');

  await page.getByTestId('schema-file-value').setInputFiles(join(fx.files, 'order.avsc'));
  await expect(page.getByTestId('schema-given-value')).toHaveText('order.avsc');
  await expect(row(page, 0)).toContainText('"id":"o-1"');
  await expect(row(page, 0)).toContainText('"big":9223372036854775807');
  await expect(page.getByTestId('schemas-count')).toHaveText('1');
  await shots(page, 'avro');

  await page.getByTestId('schemas-toggle').click();
  await expect(page.getByTestId('schemas-panel')).toHaveCount(0);
  await row(page, 1).click();
  await expect(page.getByTestId('decoded-schema')).toHaveText('id 7 · orders-value v1');
  await expect(page.getByTestId('decoded-reason')).toContainText('schema id 7 is in no schema source; read with the schema file order.avsc given for orders values');

  // Protobuf with its import picked together: payments.proto is found as the schema (money.proto is imported by it).
  await selectPartition(page, 'payments-0');
  await expect(row(page, 0)).toContainText('unknown schema id 9');
  await page.getByTestId('schemas-toggle').click();
  await page.getByTestId('schema-file-value').setInputFiles([join(fx.files, 'common/money.proto'), join(fx.files, 'payments.proto')]);
  await expect(page.getByTestId('schema-pending')).toBeVisible();
  await expect(page.getByTestId('schema-main').locator('option:checked')).toHaveText('payments.proto');
  await shots(page, 'protobuf-pick');
  await page.getByTestId('schema-use').click();
  await expect(page.getByTestId('schema-given-value')).toHaveText('payments.proto + 1 import');
  await expect(row(page, 0)).toContainText('"id":"p-1"');
  await expect(row(page, 0)).toContainText('"amount_cents":"9223372036854775807"');

  // Kept for this folder: a new page decodes with them; Remove brings the typed error back.
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await expect(row(page, 0)).toContainText('"id":"o-1"');
  await page.getByTestId('schemas-toggle').click();
  await page.getByTestId('schema-remove-value').click();
  await expect(row(page, 0)).toContainText('unknown schema id 7');
  await expect(page.getByTestId('schema-given-value')).toHaveText('none');
  expect(folderSnapshot(logDir)).toEqual(before);
});
