/**
 * A partition left by an interrupted cleaner (issue 13 finding 4): `0.log.swap` holds the cleaned
 * offsets 15..19 beside the old segments 0 and 10 it replaces. The header (and the health popover)
 * must say that a swap is pending, what a broker does with it at startup (Kafka's `LogLoader.load`:
 * delete the segments with base offsets in [0, 20), rename the swap) and that the records shown are
 * the pre-swap ones, which the records table indeed shows (offset 0 first, 30 records).
 */
import { SCREENSHOTS, expect, openFolder, selectPartition, test, visibleOffsets, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test.setTimeout(90_000);

test('the header says a swap is pending, what a broker does with it, and that the pre-swap segments are shown', async ({ page, bridge, pendingSwap }) => {
  await openFolder(page, bridge.url, pendingSwap.logDir);
  await selectPartition(page, 'prices-0');
  const note = page.getByTestId('pending-swaps');
  await expect(note).toContainText('pending swap');
  await expect(note).toContainText('00000000000000000000.log.swap (offsets 15..19)');
  await expect(note).toContainText('At startup a broker completes it (LogLoader.load): it deletes the files of the segments with base offsets in [0, 20) (00000000000000000000.log, 00000000000000000010.log)');
  await expect(note).toContainText('the records shown here are those of the pre-swap segments');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]').first()).toHaveAttribute('data-offset', '0', { timeout: 30_000 });
  expect((await visibleOffsets(page)).slice(0, 3)).toEqual(['0', '1', '2']);
  await page.screenshot({ path: `${SCREENSHOTS}/pending-swap-light.png` });
  await page.getByTestId('health-badge').click();
  await expect(page.getByTestId('health-pending-swaps')).toContainText('LogLoader.load');
  await expect(page.getByTestId('health-details')).toContainText('leftover-file');
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== 'dark'; i++) await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/pending-swap-dark.png` });
});
