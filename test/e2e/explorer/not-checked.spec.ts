/**
 * A real, very compressible batch (2 records of 1.5 MiB of zeros, gzip) past this tool's default
 * decompression bound: Verify lists it as a note "batch-not-checked", not as an error, and its
 * button raises the bound (app.decompressionBound) and verifies again, which then checks it. And
 * the SQL sidebar's notice about records past damage.
 */
import { join } from 'node:path';
import { configureSql } from '../../../src-main/api/sql/sql.ts';
import { expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test('Verify ranks the batch as not checked (a note, no error); "Read batches up to 1 GiB" verifies it', async ({ page, bridge, compressible }) => {
  await openFolder(page, bridge.url, compressible.logDir);
  await selectPartition(page, 'blobs-0');
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-run').click();
  const summary = page.getByTestId('verify-summary');
  await expect(summary).toContainText('0 errors');
  await expect(summary).toContainText('1 note');
  const row = page.locator('[data-testid=finding-row][data-code="batch-not-checked"]');
  await expect(row).toHaveClass(/info/);
  await expect(row).toContainText(/not checked: its gzip records area would inflate to \d+ bytes, past this tool's decompression bound of 2097176 bytes/);
  await expect(page.getByTestId('verify-not-checked')).toContainText('1 batch not checked');
  await page.getByTestId('verify-raise-bound').click();
  await expect(page.getByTestId('verify-not-checked')).toHaveCount(0);
  await expect(summary).toContainText('0 notes');
  await expect(summary).toContainText('3 records');
  await expect(page.getByTestId('verify-findings')).toContainText('Nothing to report');
});

test('the SQL sidebar says how many records lie past damage (a batch failing its CRC at offset 7 of refunds-0)', async ({ page, bridge, crcDamaged }) => {
  configureSql(bridge.api.ctx, { cacheDir: join(crcDamaged.logDir, '..', 'sql-cache') });
  await openFolder(page, bridge.url, crcDamaged.logDir);
  await selectPartition(page, 'refunds-0');
  await page.getByTestId('tab-sql').click();
  const notices = page.getByTestId('sql-notices');
  await expect(notices).toContainText('refunds-0: 13 records of records lie past damage in the log (the first: crc-mismatch at 00000000000000000000.log position', { timeout: 30_000 });
  await expect(notices).toContainText('13 keys of latest have their latest value past damage');
});
