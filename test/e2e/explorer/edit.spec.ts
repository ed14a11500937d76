/**
 * The Edit view in the browser: the "switch on writing" state, composing a batch (a JSON value
 * with a header, a tombstone), the preview's offsets, the append (records table, partition header
 * and the bytes on disk agree), a segment roll (a new segment row), and the read-only window.
 * Screenshots: `edit.png`, `edit-dark.png`, `edit-readonly.png`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { scanLogFile, type BatchEntry } from '../../../src-main/engine/format/log-reader.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

/** An hour ago, on a whole second: recent enough that a record stamped "now" does not roll the segment by segment.ms (7 days). */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
/** T0 + 1 minute as typed into the timestamp field ("2024-05-29 16:27:40.000", UTC). */
const TYPED_TS = new Date(T0 + 60_000).toISOString().replace('T', ' ').replace('Z', '');

/** `<tmp>/kafka-logs/payments-0` with offsets 0..4 (five JSON orders, one batch each). */
function paymentsLog(root: string): { logDir: string; dir: string } {
  const logDir = join(root, 'kafka-logs');
  const records = Array.from({ length: 5 }, (_, i) => rec(`order-${1000 + i}`, JSON.stringify({ order: 1000 + i, amount: (i * 7.25).toFixed(2), currency: 'EUR' }), T0 + i * 1000));
  const dir = buildPartition(logDir, { topic: 'payments', segments: [{ batches: singles(...records) }] });
  return { logDir, dir };
}

/** Types into the Monaco value editor of the composer. */
async function typeValue(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid=value-editor] .monaco-editor .view-lines').click();
  await page.keyboard.type(text);
}

function stat(page: Page, label: string) {
  return page.getByTestId('partition-header').locator('.stat', { hasText: label }).locator('.mono').first();
}

test('compose a JSON record with a header and a tombstone, preview, append, see them in the records, then roll a segment', async ({ page, bridge }) => {
  const { logDir, dir } = paymentsLog(test.info().outputPath('logs'));
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'payments-0');
  await expect(stat(page, 'logEndOffset')).toHaveText('5');

  // Read-only session: the Edit tab explains and offers the switch.
  await page.getByTestId('tab-edit').click();
  await expect(page.getByTestId('edit-write-off')).toContainText('The session is read-only');
  await expect(page.getByTestId('edit-write-off')).toContainText('logEndOffset 5');
  await page.screenshot({ path: `${SCREENSHOTS}/edit-write-off.png` });
  await page.getByTestId('edit-enable-writing').click();
  await expect(page.getByTestId('write-mode')).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByTestId('edit-composer')).toBeVisible();

  // Record 1: text key, JSON value, one header.
  await page.getByTestId('edit-key').fill('order-1005');
  // (Monaco closes brackets and quotes as you type and types over them: the text ends up as typed.)
  await typeValue(page, '{"order":1005,"amount":"36.25"}');
  await expect(page.getByTestId('value-status')).toHaveText(/valid JSON · 31 B/);
  await page.keyboard.press('End');
  await page.keyboard.type('x');
  await expect(page.getByTestId('value-status')).toContainText('line 1, column 32');
  await expect(page.getByTestId('edit-preview')).toBeDisabled();
  await page.keyboard.press('Backspace');
  await expect(page.getByTestId('value-status')).toHaveText(/valid JSON · 31 B/);
  await page.getByTestId('add-header').click();
  await page.getByTestId('header-key').fill('trace-id');
  await page.getByTestId('header-value').fill('4bf92f35');
  await page.getByTestId('ts-set').click();
  await page.getByTestId('edit-timestamp').fill(TYPED_TS);
  // Record 2: a tombstone for order-1001.
  await page.getByTestId('edit-add-record').click();
  await expect(page.getByTestId('edit-record-row')).toHaveCount(2);
  await page.getByTestId('edit-key').fill('order-1001');
  // Switching the key to hex shows its bytes; back to text gives the text again.
  await page.getByTestId('key-mode-hex').click();
  await expect(page.getByTestId('edit-key')).toHaveValue('6f 72 64 65 72 2d 31 30 30 31');
  await page.getByTestId('key-mode-text').click();
  await expect(page.getByTestId('edit-key')).toHaveValue('order-1001');
  await page.getByTestId('edit-tombstone').check();
  await expect(page.getByTestId('value-status')).toContainText('tombstone');
  await page.getByTestId('edit-compression').selectOption('gzip');

  // Preview with Ctrl+Enter.
  await page.getByTestId('edit-key').press('Control+Enter');
  await expect(page.getByTestId('preview-offsets')).toHaveText('5 – 6');
  await expect(page.getByTestId('preview-leo')).toHaveText('5 → 7');
  await expect(page.getByTestId('preview-segment')).toHaveText('00000000000000000000.log');
  await expect(page.getByTestId('preview-no-roll')).toContainText('No roll');
  await expect(page.getByTestId('edit-record-row').nth(0)).toContainText('5');
  await expect(page.getByTestId('edit-record-row').nth(1)).toContainText('TOMBSTONE');
  const size = Number((await page.getByTestId('preview-size').innerText()).replace(/[^0-9]/g, ''));
  expect(size).toBeGreaterThan(61);
  await expect(page.getByTestId('append-run')).toHaveText('Append 2 records at 5 – 6');
  await page.getByTestId('edit-record-row').nth(0).click();
  await page.screenshot({ path: `${SCREENSHOTS}/edit.png` });

  // A change makes the preview outdated; previewing again makes it current.
  await page.getByTestId('edit-compression').selectOption('none');
  await expect(page.getByTestId('preview-outdated')).toBeVisible();
  await expect(page.getByTestId('append-run')).toBeDisabled();
  await page.getByTestId('edit-compression').selectOption('gzip');
  await page.getByTestId('edit-preview').click();
  await expect(page.getByTestId('append-run')).toBeEnabled();

  // Dark theme screenshot of the same state.
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/edit-dark.png` });
  await page.getByTestId('theme-toggle').click(); // back to system

  // Append.
  await page.getByTestId('append-run').click();
  await expect(page.getByTestId('append-result')).toContainText('Appended 2 records at offsets 5 – 6');
  await expect(page.getByTestId('append-result')).toContainText(`${size} bytes to 00000000000000000000.log`);
  await expect(page.getByTestId('no-undo-note')).toContainText('deleteBeforeOffset 7');
  await expect(stat(page, 'logEndOffset')).toHaveText('7');
  await expect(page.getByTestId('show-in-records')).toBeEnabled();
  await page.screenshot({ path: `${SCREENSHOTS}/edit-result.png` });

  // The bytes on disk: one gzip batch at 5..6 with exactly what was typed.
  const batches = [...scanLogFile(join(dir, '00000000000000000000.log'), { deep: true })].filter((e): e is BatchEntry => e.type === 'batch');
  const last = batches[batches.length - 1]!;
  expect(last.header).toMatchObject({ baseOffset: 5n, lastOffset: 6n, size, compression: 'gzip', crcValid: true });
  const [a, b] = last.records!;
  expect(Buffer.from(a!.key!).toString()).toBe('order-1005');
  expect(Buffer.from(a!.value!).toString()).toBe('{"order":1005,"amount":"36.25"}');
  expect(a!.timestamp).toBe(BigInt(T0 + 60_000));
  expect(a!.headers.map((h) => [h.key, Buffer.from(h.value!).toString()])).toEqual([['trace-id', '4bf92f35']]);
  expect(Buffer.from(b!.key!).toString()).toBe('order-1001');
  expect(b!.value).toBeNull();

  // Show in records: the two new offsets, the tombstone marked.
  await page.getByTestId('show-in-records').click();
  await expect(page.getByTestId('tab-records')).toHaveAttribute('aria-selected', 'true');
  const r5 = page.locator('[data-testid=record-row][data-offset="5"]');
  const r6 = page.locator('[data-testid=record-row][data-offset="6"]');
  await expect(r5).toContainText('order-1005');
  await expect(r5).toContainText('{"order":1005,"amount":"36.25"}');
  await expect(r5).toHaveClass(/selected/);
  await expect(r6).toContainText('order-1001');
  await expect(r6.getByTestId('flag')).toHaveText(['TOMBSTONE']);

  // Roll: preview names the new segment, the roll creates it, Segments shows two rows.
  await page.getByTestId('tab-edit').click();
  await page.getByTestId('roll-open').click();
  await expect(page.getByTestId('roll-new-segment')).toHaveText('00000000000000000007.log');
  await expect(page.getByTestId('roll-preview')).toContainText('00000000000000000000.log');
  await page.screenshot({ path: `${SCREENSHOTS}/edit-roll.png` });
  await page.getByTestId('roll-run').click();
  await expect(page.getByTestId('roll-result')).toContainText('New active segment 00000000000000000007.log');
  expect(readdirSync(dir).filter((f) => f.endsWith('.log')).sort()).toEqual(['00000000000000000000.log', '00000000000000000007.log']);
  await page.getByTestId('roll-show-segments').click();
  await expect(page.getByTestId('segment-row')).toHaveCount(2);
  await expect(page.locator('[data-testid=segment-row][data-base="7"]')).toContainText('active');
  await expect(stat(page, 'segments')).toHaveText('2');
});

test('a stale preview is refused with "preview again"; a change announced by another client marks it outdated', async ({ page, bridge }) => {
  const { logDir, dir } = paymentsLog(test.info().outputPath('logs'));
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'payments-0');
  await page.getByTestId('tab-edit').click();
  await page.getByTestId('edit-enable-writing').click();
  await page.getByTestId('edit-key').fill('k');
  await page.getByTestId('value-mode-text').click();
  await typeValue(page, 'hello');
  await page.getByTestId('edit-preview').click();
  await expect(page.getByTestId('preview-offsets')).toHaveText('5');
  // Another writer appends meanwhile (the engine directly, as a klx process would).
  const { PartitionWriter } = await import('../../../src-main/engine/log/partition-writer.ts');
  const w = PartitionWriter.open(dir);
  try {
    w.append([{ key: 'other', value: 'x' }]);
  } finally {
    w.close();
  }
  await page.getByTestId('append-run').click();
  await expect(page.getByTestId('edit-error')).toContainText('the partition changed since the append preview');
  await page.getByTestId('edit-error').getByRole('button', { name: 'Preview again' }).click();
  await expect(page.getByTestId('preview-offsets')).toHaveText('6');
  // Another client of the same bridge appends: its log.changed event marks this preview outdated at once.
  const other = { dir, records: [{ key: { text: 'other-window' }, value: { text: 'y' } }] };
  const op = await bridge.api.dispatch('edit.preview', other, bridge.dispatchOptions);
  expect(op.ok).toBe(true);
  const fp = (op as { result: { fingerprint: string; now: string } }).result;
  expect(await bridge.api.dispatch('edit.append', { ...other, now: fp.now, fingerprint: fp.fingerprint }, bridge.dispatchOptions)).toMatchObject({ ok: true, result: { baseOffset: '6' } });
  await expect(page.getByTestId('preview-stale-reason')).toHaveText('The partition changed on disk since this preview: preview again.');
  await expect(page.getByTestId('append-run')).toBeDisabled();
  await expect(stat(page, 'logEndOffset')).toHaveText('7');
  await page.getByTestId('edit-preview').click();
  await expect(page.getByTestId('preview-offsets')).toHaveText('7');
  await page.getByTestId('append-run').click();
  await expect(page.getByTestId('append-result')).toContainText('Appended 1 record at offset 7');
  // The way back: Cleanup with retention and deleteBeforeOffset 8 filled in.
  await page.getByTestId('goto-cleanup').click();
  await expect(page.getByTestId('tab-cleanup')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('cleanup-delete-before')).toHaveValue('8');
});

test('a read-only window says so and offers no way to write', async ({ page, readOnlyBridge, logDir }) => {
  buildPartition(logDir, { topic: 'payments', segments: [{ batches: singles(rec('order-1000', '{"order":1000}', T0)) }] });
  await openFolder(page, readOnlyBridge.url, logDir);
  await selectPartition(page, 'payments-0');
  await page.getByTestId('tab-edit').click();
  await expect(page.getByTestId('edit-window-read-only')).toContainText('This window is read-only');
  await expect(page.getByTestId('edit-enable-writing')).toHaveCount(0);
  await expect(page.getByTestId('edit-composer')).toHaveCount(0);
  await page.screenshot({ path: `${SCREENSHOTS}/edit-readonly.png` });
});
