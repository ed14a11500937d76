/**
 * The app shell in a browser over the bridge: loads with the token (handed over in the URL
 * fragment, kept by the tab, never a cookie), shows the version from `app.info`, suggests folders through `fs.complete`, opens one, shows the read-only badge, and
 * runs under the strict CSP without console errors.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SCREENSHOTS, expect, test } from './fixtures.ts';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

test('loads with the token and shows the version from app.info', async ({ page, bridge }) => {
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));

  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Kafka Log Explorer' })).toBeVisible();
  await expect(page.getByTestId('app-version')).toHaveText(`v${version}`);
  await expect(page.getByTestId('read-only-badge')).toHaveCount(0);
  await expect(page.getByTestId('app-error')).toHaveCount(0);
  await page.screenshot({ path: `${SCREENSHOTS}/shell.png` });
  // The token came in the fragment: gone from the address bar, never a cookie (issue 17, defect 8),
  // kept in this tab's sessionStorage, so a reload still works.
  expect(bridge.url).toContain('/#token=');
  expect(page.url()).not.toContain(bridge.token);
  expect(await page.context().cookies()).toEqual([]);
  expect(await page.evaluate("sessionStorage.getItem('klx-token')")).toBe(bridge.token);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.reload();
  await expect(page.getByTestId('app-version')).toHaveText(`v${version}`);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(page.url()).toBe(`${bridge.origin}/`);
  await page.screenshot({ path: `${SCREENSHOTS}/shell-dark.png` });
  expect(problems).toEqual([]);
});

test('suggests sub-folders as a path is typed and opens the chosen folder', async ({ page, bridge, logDir }) => {
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  const input = page.getByTestId('folder-input');
  await input.fill(join(dirname(logDir), 'kafka'));
  await expect(page.getByTestId('folder-suggestions')).toContainText('kafka-logs/');
  await input.press('Tab');
  await expect(input).toHaveValue(`${logDir}/`);
  await expect(page.getByTestId('folder-suggestions').getByRole('option')).toHaveText(['orders-0/', 'orders-1/']);
  await page.screenshot({ path: `${SCREENSHOTS}/folder-suggestions.png` });
  await page.getByTestId('folder-open').click();
  await expect(page.getByTestId('opened-folders')).toContainText(logDir);
  await page.screenshot({ path: `${SCREENSHOTS}/folder-opened.png` });
});

test('shows the read-only badge on a read-only bridge and the served folder as opened', async ({ page, readOnlyBridge, logDir }) => {
  await page.goto(readOnlyBridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await expect(page.getByTestId('read-only-badge')).toBeVisible();
  await expect(page.getByTestId('opened-folders')).toContainText(logDir);
  await page.screenshot({ path: `${SCREENSHOTS}/read-only.png` });
});

test.describe('without the token', () => {
  test.use({ allowedConsoleErrors: ['status of 403 (Forbidden)'] });
  test('the page (the public bundle) loads, but the API refuses it: an error notice, no version', async ({ page, bridge }) => {
    const response = await page.goto(bridge.origin + '/');
    expect(response?.status()).toBe(200);
    await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
    const notice = page.getByTestId('error-notice');
    await expect(notice).toContainText('No access to this server');
    await expect(notice).toContainText('missing or wrong token');
    await expect(notice).toContainText('Open the app with the URL `klx serve` or `npm start` printed: the token follows its #token=');
    await expect(notice).not.toContainText('Check the value typed');
    // app.info was refused: the version (and the read-only badge) come only from its answer
    await expect(page.getByTestId('app-version')).toHaveCount(0);
    await page.screenshot({ path: `${SCREENSHOTS}/without-token.png` });
  });
});

test('klx serve DIR: opening a folder outside DIR says the server was started for DIR and how to open another', async ({ page, readOnlyBridge, logDir }) => {
  const other = test.info().outputPath('other-logs');
  (await import('node:fs')).mkdirSync(other, { recursive: true });
  await page.goto(readOnlyBridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await page.getByTestId('folder-input').fill(other);
  await page.getByTestId('folder-input').press('Enter');
  const notice = page.getByTestId('error-notice');
  await expect(notice).toContainText('Outside the served folder');
  await expect(notice).toContainText(`is outside ${logDir}: this server was started for that folder`);
  await expect(notice).toContainText('`klx serve` opens any folder');
  await expect(notice).toContainText(`klx serve ${logDir} ${other}`);
  await expect(notice).not.toContainText('Check the value typed');
  await page.screenshot({ path: `${SCREENSHOTS}/serve-outside.png` });
});
