/**
 * Folders that follow the disk (issue 14, capability 2), in a browser through the bridge: `klx
 * append` and `klx create` run in a terminal (child processes) while the app shows the folder; the
 * banner says what changed, the tree and the records view follow, Verify's result is marked stale.
 * Close and Reload of an opened folder, "Open recent" (a folder that went is greyed with the
 * reason), and a status bar that keeps only the last ended job. Screenshots light and dark.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RENDERER_DIR } from '../../../src-main/bridge/build.ts';
import { startBridge } from '../../../src-main/bridge/server.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { expect, lightAndDarkShots, openFolder, SCREENSHOTS, selectPartition, test, VIEWPORT, visibleOffsets } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

const run = promisify(execFile);
const KLX = join(process.cwd(), 'bin', 'klx.mjs');
/** Runs `klx ARGS` as a user does in a terminal; answers its stdout. */
async function klx(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [KLX, ...args], { encoding: 'utf8', timeout: 60_000 });
  return stdout;
}

const T0 = 1_717_000_000_000;

/** `<tmp>/kafka-logs/prices-0`: offsets 0..2, one segment. */
function pricesLog(): { tmp: string; logDir: string; dir: string } {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-follow-')));
  const logDir = join(tmp, 'kafka-logs');
  const dir = buildPartition(logDir, { topic: 'prices', segments: [{ batches: singles(rec('sku-1', '10.00', T0), rec('sku-2', '11.50', T0 + 1000), rec('sku-3', '9.99', T0 + 2000)) }] }, { highWatermark: 3n, recoveryPoint: 3n });
  return { tmp, logDir, dir };
}

test('klx append and klx create in a terminal: the banner says what changed, the tree and the records follow, Verify is stale', async ({ page, bridge }) => {
  test.setTimeout(90_000);
  const { tmp, logDir, dir } = pricesLog();
  try {
    await openFolder(page, bridge.url, logDir);
    await selectPartition(page, 'prices-0');
    await expect.poll(() => visibleOffsets(page), { timeout: 30_000 }).toEqual(['0', '1', '2']);

    // A verify before the change.
    await page.getByTestId('tab-verify').click();
    await page.getByTestId('verify-run').click();
    await expect(page.getByTestId('verify-summary')).toContainText('0 errors');
    await expect(page.getByTestId('verify-stale')).toHaveCount(0);

    const log = join(dir, '00000000000000000000.log');
    const before = statSync(log).size;
    await klx('append', dir, '--key', 'sku-4', '--value', '12.25', '--timestamp', String(T0 + 3000));
    const grown = statSync(log).size - before;
    expect(grown).toBeGreaterThan(61); // one v2 batch: 61 bytes of header and at least one record

    const banner = page.getByTestId('folder-change-banner');
    await expect(banner).toBeVisible();
    await expect(banner).toContainText(`prices-0: 00000000000000000000.log grew by ${grown} bytes`);
    await expect(banner).toContainText('Files changed on disk in kafka-logs at');
    // Verify's result stays, marked stale with the time the watcher noticed.
    await expect(page.getByTestId('verify-stale')).toHaveText(/^stale: files changed at \d\d:\d\d:\d\d; Verify again$/);
    // The tree and the records show offset 3.
    await expect(page.locator('[data-testid=tree-partition][data-name="prices-0"]')).toContainText('0 – 3');
    await page.getByTestId('tab-records').click();
    await expect.poll(() => visibleOffsets(page)).toEqual(['0', '1', '2', '3']);
    await expect(page.locator('[data-testid=record-row][data-offset="3"]')).toContainText('sku-4');

    // A partition created in the terminal appears in the tree.
    await klx('create', join(logDir, 'prices-1'));
    await expect(banner.getByTestId('folder-change-line').first()).toHaveText('prices-1: partition created (1 segment)');
    await expect(banner).toContainText('prices-0: 00000000000000000000.log grew by');
    await page.getByTestId('hide-empty').uncheck();
    await expect(page.locator('[data-testid=tree-partition][data-name="prices-1"]')).toBeVisible();
    await lightAndDarkShots(page, 'follow-disk-banner');

    // Verify again clears the stale note.
    await page.getByTestId('tab-verify').click();
    await page.getByTestId('verify-run').click();
    await expect(page.getByTestId('verify-stale')).toHaveCount(0);
    await expect(page.getByTestId('verify-summary')).toContainText('4 records');

    await banner.getByTestId('folder-change-dismiss').click();
    await expect(banner).toHaveCount(0);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('Reload and Close of an opened folder; the status bar keeps only the last ended job', async ({ page, bridge }) => {
  test.setTimeout(90_000);
  const { tmp, logDir } = pricesLog();
  try {
    await klx('create', join(logDir, 'prices-1'));
    await openFolder(page, bridge.url, logDir);
    await selectPartition(page, 'prices-0');
    const jobs = page.getByTestId('job');
    await expect(jobs.filter({ hasText: 'Counting records of prices-0' })).toContainText('done', { timeout: 30_000 });
    await selectPartition(page, 'prices-1');
    await expect(jobs.filter({ hasText: 'Counting records of prices-1' })).toContainText('done', { timeout: 30_000 });
    // The earlier ended job left the bar at once: one ended job is shown, never a pile of them.
    await expect(jobs).toHaveCount(1);

    const root = page.locator('[role=treeitem].root');
    await expect(root).toHaveCount(1);
    await root.hover();
    await lightAndDarkShots(page, 'follow-disk-root-actions');
    await page.getByTestId('root-reload').click();
    await expect(page.locator('[data-testid=tree-partition]')).toHaveCount(2);
    await expect(page.getByTestId('partition-header')).toContainText('prices');

    await page.getByTestId('root-close').click();
    await expect(page.locator('[data-testid=tree-partition]')).toHaveCount(0);
    await expect(page.getByTestId('opened-folders')).toContainText('Nothing opened yet');
    await expect(page.getByTestId('partition-header')).toHaveCount(0);
    // Closed in main too: a path inside it is refused.
    const r = await bridge.api.dispatch('log.partition', { dir: join(logDir, 'prices-0') }, bridge.dispatchOptions);
    expect(r.ok).toBe(false);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('Open recent lists the recent folders, one that went greyed with the reason; picking one opens it', async ({ page }) => {
  const a = pricesLog();
  const b = pricesLog();
  const data = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-recent-')));
  const bridge = await startBridge({ readOnly: true, roots: [], rendererDir: RENDERER_DIR, dataDir: data, recentFile: join(data, 'recent-folders.json') });
  try {
    await openFolder(page, bridge.url, a.logDir);
    await page.getByTestId('folder-input').fill(b.logDir);
    await page.getByTestId('folder-input').press('Enter');
    await expect(page.getByTestId('opened-folders')).toContainText(b.logDir);
    // Close both, then remove b from the disk.
    await page.getByTestId('root-close').first().click();
    await page.getByTestId('root-close').first().click();
    await expect(page.locator('[role=treeitem].root')).toHaveCount(0);
    rmSync(b.tmp, { recursive: true, force: true });

    await page.getByTestId('open-recent').click();
    const items = page.getByTestId('recent-item');
    // The Open view lists them too (asked again with the menu), the one that went greyed with the reason.
    await expect(page.getByTestId('open-view-recent')).toHaveCount(2);
    await expect(page.getByTestId('open-view-recent').nth(0)).toHaveAttribute('data-available', 'false');
    await expect(page.getByTestId('open-view-recent').nth(0)).toContainText(`${b.logDir} (no longer exists)`);
    await expect(items).toHaveCount(2);
    await expect(items.nth(0)).toContainText(b.logDir);
    await expect(items.nth(0)).toContainText('no longer exists');
    await expect(items.nth(0)).toBeDisabled();
    await expect(items.nth(1)).toContainText(a.logDir);
    await expect(items.nth(1)).toBeEnabled();
    // Light and dark through the system theme (clicking the theme toggle would close the list, as any press outside it does).
    await page.emulateMedia({ colorScheme: 'light' });
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.screenshot({ path: `${SCREENSHOTS}/follow-disk-open-recent-light.png` });
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    await page.screenshot({ path: `${SCREENSHOTS}/follow-disk-open-recent-dark.png` });
    await page.emulateMedia({ colorScheme: 'light' });
    await expect(page.getByTestId('recent-menu')).toBeVisible();

    await items.nth(1).click();
    await expect(page.getByTestId('recent-menu')).toHaveCount(0);
    await expect(page.getByTestId('opened-folders')).toContainText(a.logDir);
    await expect(page.locator('[data-testid=tree-partition][data-name="prices-0"]')).toBeVisible();
  } finally {
    await bridge.close();
    rmSync(a.tmp, { recursive: true, force: true });
    rmSync(b.tmp, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
});
