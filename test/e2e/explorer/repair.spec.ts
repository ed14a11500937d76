/**
 * Repair in the UI (issue 14, capability 1): Verify for the whole opened folder (a row per partition
 * with its errors and what a repair would do; progress and Cancel), and on a damaged copy (a bad CRC
 * in the first segment, below the recovery point, valid batches after it; a cut last batch in the
 * active segment) the repair plan of `klx repair`: what a broker does at startup (cut the partial
 * tail of the segment it recovers) apart from what you may choose (truncate at corruption: cut the
 * first segment at the bad batch and delete the later one), run after "Open for writing", then Undo
 * puts every byte back. The trash goes to a temp folder (`KLX_TRASH_DIR`, set before the bridge starts).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { expect, lightAndDarkShots, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });
// Each preview, run and undo starts a worker thread (about a second from TypeScript source, more on a busy machine).
test.setTimeout(180_000);

const root = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-repair-')));
process.env.KLX_TRASH_DIR = join(root, 'trash');
test.afterAll(() => rmSync(root, { recursive: true, force: true }));

const TS = 1_717_000_000_000;
let n = 0;

/** sha256 of every file under `dir`, by relative path. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * A log directory with `orders-0`: segment 0 (offsets 0..9; the batch at offset 4 fails its CRC,
 * 5 valid batches follow), segment 10 (10..14, then the first 30 bytes of batch 15: a cut write),
 * recovery point 10, no clean shutdown; and a clean `customers-0`.
 */
function damagedCopy(): { logDir: string; dir: string; crcAt: number; cutAt: number } {
  const logDir = join(root, `logs-${++n}`, 'kafka-logs');
  const orders = (from: number, to: number) => singles(...Array.from({ length: to - from }, (_, i) => rec(`order-${from + i}`, JSON.stringify({ order: from + i, amount: (from + i) * 3 }), TS + (from + i) * 1000)));
  const partial = encodeBatch({ baseOffset: 15n, records: [rec('order-15', '{"order":15}', TS + 15_000)] }).subarray(0, 30);
  const dir = buildPartition(logDir, { topic: 'orders', segments: [{ batches: orders(0, 10) }, { baseOffset: 10n, batches: orders(10, 15), tail: partial }] }, { recoveryPoint: 10n, highWatermark: 15n });
  buildPartition(logDir, { topic: 'customers', segments: [{ batches: singles(...Array.from({ length: 8 }, (_, i) => rec(`c${i}`, `v${i}`, TS + i))) }] }, {});
  const file = join(dir, '00000000000000000000.log');
  const b = readFileSync(file);
  let crcAt = 0;
  for (let i = 0; i < 4; i++) crcAt += 12 + b.readInt32BE(crcAt + 8);
  const size = 12 + b.readInt32BE(crcAt + 8);
  b[crcAt + size - 3] ^= 0x20;
  writeFileSync(file, b);
  return { logDir, dir, crcAt, cutAt: statSync(join(dir, '00000000000000000010.log')).size - 30 };
}

test('Verify of the whole folder: a row per partition with its errors and what a repair would do; Cancel stops it', async ({ page, bridge }) => {
  // A folder with a large partition, so that its verify lasts long enough to be cancelled.
  const bulkDir = join(root, 'bulk-logs');
  buildPartition(bulkDir, { topic: 'bulk', segments: [{ batches: Array.from({ length: 160 }, (_, i) => ({ baseOffset: BigInt(i), records: [rec(`k${i}`, 'x'.repeat(1 << 20), TS + i)] })) }] }, {});
  await openFolder(page, bridge.url, bulkDir);
  await selectPartition(page, 'bulk-0');
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-scope-folder').click();
  await page.getByTestId('folder-verify-run').click();
  await expect(page.getByTestId('folder-verify-progress')).toBeVisible();
  await page.getByTestId('folder-verify-cancel').click();
  await expect(page.getByTestId('folder-verify-notice')).toHaveText('Verify of the folder cancelled. Nothing was changed (Verify only reads).');
  await expect(page.getByTestId('folder-verify-summary')).toHaveCount(0);

  const { logDir } = damagedCopy();
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-scope-folder').click();
  await page.getByTestId('folder-verify-run').click();
  // Every partition of the opened folder holding orders-0: orders-0 and customers-0.
  await expect(page.getByTestId('folder-verify-summary')).toContainText('2 partitions', { timeout: 60_000 });
  const rows = page.locator('[data-testid=folder-verify-row]');
  await expect(rows).toHaveCount(2);
  const orders = page.locator('[data-testid=folder-verify-row][data-name="orders-0"]');
  await expect(orders.locator('td').nth(1)).toHaveText('2');
  await expect(orders).toContainText('crc-mismatch 00000000000000000000.log @ byte');
  await expect(orders.getByTestId('folder-verify-repair')).toHaveText('1 as a broker at startup · 1 left in place');
  const customers = page.locator('[data-testid=folder-verify-row][data-name="customers-0"]');
  await expect(customers).toContainText('clean');
  await expect(customers.getByTestId('folder-verify-repair')).toHaveText('nothing to do');
  await lightAndDarkShots(page, 'repair-folder-verify');
});

test('repair of a damaged copy: previewed (broker apart from your choice), run after Open for writing, undone byte for byte', async ({ page, bridge }) => {
  const { logDir, dir, crcAt, cutAt } = damagedCopy();
  const before = hashes(logDir);
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-run').click();
  await expect(page.locator('[data-testid=finding-row][data-code="crc-mismatch"]')).toContainText(`00000000000000000000.log @ byte ${crcAt}`, { timeout: 30_000 });

  // The default plan: what a broker does at startup, and the bad CRC left in place (a decision).
  await page.getByTestId('repair-preview').click();
  await expect(page.getByTestId('repair-plan')).toBeVisible({ timeout: 30_000 });
  const broker = page.locator('[data-testid=repair-action][data-origin="broker"]');
  await expect(broker.filter({ hasText: 'truncate-log' })).toContainText(`truncate 00000000000000000010.log from ${cutAt + 30} to ${cutAt} bytes`);
  await expect(page.locator('[data-testid=repair-action][data-origin="choice"]')).toHaveCount(0);
  const left = page.locator('[data-testid=repair-left]');
  await expect(left).toHaveCount(1);
  await expect(left).toContainText(`00000000000000000000.log @ byte ${crcAt}`);
  await expect(left).toContainText('below the recovery point 10');
  expect(hashes(logDir)).toEqual(before);

  // Your choice: cut at the corruption, deleting the later segment (its 5 valid records counted).
  await page.getByTestId('repair-truncate').check();
  await expect(page.getByTestId('repair-plan')).toHaveAttribute('data-stale', 'true');
  await page.getByTestId('repair-preview').click();
  await expect(page.getByTestId('repair-plan')).not.toHaveAttribute('data-stale', 'true');
  const choice = page.locator('[data-testid=repair-action][data-origin="choice"]');
  await expect(choice.filter({ hasText: 'delete-segment' })).toContainText('00000000000000000010.log', { timeout: 30_000 });
  // The index rebuild of the segment cut by your choice is your choice too.
  await expect(choice.filter({ hasText: 'rebuild-indexes' })).toContainText('00000000000000000000.timeindex');
  await expect(broker).toHaveCount(0);
  await expect(choice.filter({ hasText: 'truncate-log' })).toContainText(`truncate 00000000000000000000.log from`);
  await expect(choice.filter({ hasText: 'truncate-log' })).toContainText(`to ${crcAt} bytes`);
  await expect(page.getByTestId('repair-summary')).toContainText('log end offset 15 → 4');
  await expect(page.getByTestId('repair-summary')).toContainText('10 valid records dropped');
  await lightAndDarkShots(page, 'repair-plan');

  // Run: behind "Open for writing", confirmed, with the bytes going to the trash.
  await expect(page.getByTestId('repair-run')).toBeDisabled();
  await page.getByTestId('repair-write-switch').click();
  await expect(page.getByTestId('write-mode')).toHaveAttribute('aria-checked', 'true');
  await page.getByTestId('repair-run').click();
  await expect(page.getByTestId('repair-confirm')).toContainText('Undo puts every byte back');
  await page.getByTestId('repair-confirm-ok').click();
  await expect(page.getByTestId('repair-result')).toContainText('Repaired: 3 actions applied.', { timeout: 30_000 });
  expect(statSync(join(dir, '00000000000000000000.log')).size).toBe(crcAt);
  expect(readdirSync(dir)).not.toContain('00000000000000000010.log');
  await expect(page.getByTestId('verify-summary')).toContainText('0 errors');
  await lightAndDarkShots(page, 'repair-result');

  // Undo: every byte back.
  await page.getByTestId('repair-undo').click();
  await expect(page.getByTestId('repair-undone')).toContainText("repair reversed — 5 files restored.", { timeout: 30_000 });
  expect(hashes(logDir)).toEqual(before);
});
