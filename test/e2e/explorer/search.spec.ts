/**
 * Search by key, value or header text: it streams through the partition as a job with progress,
 * lists the matches (a click shows the record), continues after the first 100, and can be cancelled.
 */
import { SCREENSHOTS, expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test.describe.configure({ timeout: 120_000 });

test('search the 5 M-record partition: progress, a match near the end, a click shows it', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('search-input').fill('"seq":"0004999990"');
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-progress')).toBeVisible();
  await page.screenshot({ path: `${SCREENSHOTS}/search-progress.png` });
  await expect(page.getByTestId('search-summary')).toContainText('1 match in 5,000,000 records (whole partition searched)', { timeout: 90_000 });
  const match = page.locator('[data-testid=search-match]');
  await expect(match).toHaveCount(1);
  await expect(match).toHaveAttribute('data-offset', '4999990');
  await match.click();
  await expect(page.locator('[data-testid=record-row][data-offset="4999990"]')).toHaveClass(/selected/);
  await page.screenshot({ path: `${SCREENSHOTS}/search.png` });
});

test('search by key stops at 100 matches and goes on from there; a running search can be cancelled', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-records').click();
  // Keys user-0000..user-9999: "user-1234" is one key in 10,000.
  await page.getByTestId('search-input').fill('USER-1234');
  await page.getByTestId('search-in-value').click(); // keys and headers only
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-summary')).toContainText('100 matches', { timeout: 60_000 });
  const first = page.locator('[data-testid=search-match]').first();
  await expect(first).toContainText('key');
  await expect(page.getByRole('button', { name: /Search on from/ })).toBeVisible();
  await page.getByRole('button', { name: /Search on from/ }).click();
  await expect(page.getByTestId('search-summary')).toContainText('200 matches', { timeout: 60_000 });

  // Something that is nowhere: cancel it while it runs.
  await page.getByTestId('search-input').fill('no such text anywhere');
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-progress')).toBeVisible();
  await page.getByTestId('search-cancel').click();
  await expect(page.getByTestId('search-results')).toContainText('Search cancelled.');
  await expect(page.getByTestId('search-run')).toBeVisible();
});
