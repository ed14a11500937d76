/**
 * The bugs a first day with the app found (issue 14), each reproduced as a user meets it, on the
 * demo log directory (`generateDemoLogDir`: clickstream-0 holds 2,000 records in 5 segments) and a
 * small second folder (orders-0: 70 records, offsets 0 – 69). Every test also fails on any page
 * error (fixture rule of ../fixtures.ts). Screenshots `daily-*-light.png` / `daily-*-dark.png`.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { generateDemoLogDir } from '../../../src-main/app/demo-log.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test as base, VIEWPORT } from './explorer-fixtures.ts';

const test = base.extend<{ demo: { demoDir: string; smallDir: string } }>({
  demo: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-daily-')));
    const demoDir = join(tmp, 'demo-logs');
    generateDemoLogDir(demoDir);
    const smallDir = join(tmp, 'small-logs');
    const records = Array.from({ length: 70 }, (_, i) => rec(`order-${i}`, JSON.stringify({ order: i }), 1_717_000_000_000 + i * 1000));
    buildPartition(smallDir, { topic: 'orders', segments: [{ batches: singles(...records) }] }, { highWatermark: 70n });
    await use({ demoDir, smallDir });
    rmSync(tmp, { recursive: true, force: true });
  },
});

test.use({ viewport: VIEWPORT });
test.describe.configure({ timeout: 90_000 });

/** Opens a folder through the folder field of the page already loaded. */
async function openAnother(page: Page, path: string): Promise<void> {
  await page.getByTestId('folder-input').fill(path);
  await page.getByTestId('folder-input').press('Enter');
  await expect(page.getByTestId('opened-folders')).toContainText(path);
}

/** Saves `daily-<name>-light.png` and `daily-<name>-dark.png` (the toggle cycles system → light → dark). */
async function shots(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}/daily-${name}-light.png` });
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== 'dark'; i++) await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/daily-${name}-dark.png` });
}

test('opening another folder while 200+ records are shown reads only the new partition (no stale "offset 200" page load)', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await expect(page.getByTestId('partition-header')).toContainText('clickstream');
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toBeVisible();
  await page.locator('[data-testid=record-row][data-offset="0"]').click();
  for (let i = 0; i < 4; i++) await page.keyboard.press('PageDown');
  await openAnother(page, demo.smallDir);
  await expect(page.getByTestId('partition-header')).toContainText('orders');
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('order-0');
  await page.waitForTimeout(500);
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
});

test('"Go to offset" past the log end: an inline note with the log end offset and the last record, no error overlay', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toBeVisible();
  await page.getByTestId('jump-offset').fill('200000');
  await page.getByTestId('jump-offset').press('Enter');
  await expect(page.getByTestId('jump-note')).toHaveText(/offset 200,000 is past the log end offset 2,000; the last record is offset 1,999/);
  await expect(page.getByTestId('inspector-title')).toHaveText('Record 1,999');
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
  await shots(page, 'offset-past-end');
});

test('search: the popover leaves the Search button clickable, "no match" names the search that ran, keys read as the table shows them', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toBeVisible();
  const keyInTable = (await page.locator('[data-testid=record-row][data-offset="0"] .c-key').textContent())!.trim();
  await page.getByTestId('search-input').fill(keyInTable);
  await page.getByTestId('search-in-value').click();
  await page.getByTestId('search-in-header').click();
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-summary')).toContainText('whole partition searched');
  const first = page.locator('[data-testid=search-match]').first();
  await expect(first.locator('[data-testid=match-key]')).toHaveText(keyInTable);
  // The Search button is not covered by the popover: a click runs the search again.
  const run = page.getByTestId('search-run');
  const box = (await run.boundingBox())!;
  const hit = await page.evaluate(`document.elementFromPoint(${box.x + box.width / 2}, ${box.y + box.height / 2})?.getAttribute('data-testid')`);
  expect(hit).toBe('search-run');
  await page.getByTestId('search-input').fill('no-such-text-zz');
  await run.click();
  await expect(page.getByTestId('search-summary')).toContainText('0 matches');
  await page.getByTestId('search-input').fill('typed after the search');
  await expect(page.getByTestId('search-none')).toHaveText('No record contains “no-such-text-zz”.');
  await shots(page, 'search');
});

test('the tree\'s second line keeps one meaning (segments) when a partition is selected and counted', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await expect(page.getByTestId('record-count')).toContainText('2,000');
  const lines = page.locator('[data-testid=tree-partition] [data-testid=tree-line2]');
  await expect(lines.first()).toBeVisible();
  for (const line of await lines.all()) await expect(line.locator('> span').first()).toHaveText(/^\d[\d,]* segments?$/);
  await expect(page.locator('[data-testid=tree-partition][data-name="clickstream-0"] [data-testid=tree-line2] > span').first()).toHaveText('5 segments');
});

test('cleanup: a fixed now chosen for one partition is reset for another partition and for the other mode; an override drops the "default" badge', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-op-retention').click();
  await page.getByTestId('cleanup-now-fixed').click();
  await expect(page.getByTestId('cleanup-now-fixed')).toHaveAttribute('aria-checked', 'true');
  await page.getByTestId('cleanup-op-compaction').click();
  await expect(page.getByTestId('cleanup-now-wall')).toHaveAttribute('aria-checked', 'true');
  await page.getByTestId('cleanup-now-fixed').click();
  await selectPartition(page, 'payments-0');
  await expect(page.getByTestId('cleanup-now-wall')).toHaveAttribute('aria-checked', 'true');
  // The "default" badge of a field follows what the run will use.
  await page.getByTestId('cleanup-op-retention').click();
  const badge = page.getByTestId('src-retention.ms');
  await expect(badge).toHaveText('default');
  await page.getByTestId('cfg-retention.ms').fill('1000');
  await expect(badge).toHaveText('your value');
  await shots(page, 'cleanup-form');
});

test('cleanup: a preview made with a fixed now says so prominently', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.demoDir);
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-op-retention').click();
  await page.getByTestId('cleanup-now-fixed').click();
  await page.getByTestId('cleanup-now').fill('2030-01-01T00:00');
  await page.getByTestId('cleanup-preview').click();
  await expect(page.getByTestId('cleanup-fixed-now')).toContainText('now is fixed at 2030-01-01 00:00:00.000, not the clock');
});

test.describe('at 1280 × 720', () => {
  test.use({ viewport: { width: 1280, height: 720 } });
  test('clipped text: the "Go to time" placeholder fits its field', async ({ page, bridge, demo }) => {
    await openFolder(page, bridge.url, demo.demoDir);
    const input = page.getByTestId('jump-time');
    await expect(input).toBeVisible();
    const fits = await input.evaluate(`(() => {
      const el = document.querySelector('[data-testid=jump-time]');
      const cs = getComputedStyle(el);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = cs.fontStyle + ' ' + cs.fontWeight + ' ' + cs.fontSize + ' ' + cs.fontFamily;
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      return { text: ctx.measureText(el.placeholder).width, room };
    })()`) as { text: number; room: number };
    expect(fits.text).toBeGreaterThan(50);
    expect(fits.text).toBeLessThanOrEqual(fits.room);
  });
});

test('the folder suggestions close on Open, on Enter and on Escape, even when pressed before they arrived', async ({ page, bridge, demo }) => {
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  const input = page.getByTestId('folder-input');
  const list = page.getByTestId('folder-suggestions');
  await input.fill(join(demo.demoDir, 'click'));
  await expect(list).toBeVisible();
  await input.press('Escape');
  await expect(list).toHaveCount(0);
  // Typed and closed at once (the suggestions are asked for 120 ms after the last key).
  await input.fill(join(demo.demoDir, 'c'));
  await input.press('Escape');
  await page.waitForTimeout(700);
  await expect(list).toHaveCount(0);
  await input.fill(`${demo.demoDir}/`);
  await input.press('Enter');
  await expect(page.getByTestId('opened-folders')).toContainText(demo.demoDir);
  await page.waitForTimeout(700);
  await expect(list).toHaveCount(0);
  await input.fill(`${demo.smallDir}/`);
  await page.getByTestId('folder-open').click();
  await expect(page.getByTestId('opened-folders')).toContainText(demo.smallDir);
  await page.waitForTimeout(700);
  await expect(list).toHaveCount(0);
  await shots(page, 'folder-field');
});
