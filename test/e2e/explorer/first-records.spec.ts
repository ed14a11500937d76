/**
 * Issue 16: a selected partition's first records are on screen before its summary (`log.partition`:
 * every segment's index files, the quick check) arrives, and the summary fills in after. The
 * summary call is held back here by a route until the rows are checked; meanwhile the header and
 * the segment pane say "checking…" (no invented figure), and logStartOffset/logEndOffset come from
 * the first records page. Both a folder whose tree already has the partition's summary (few
 * partitions) and a partition the tree still lists as "checking…" (a many-partition folder).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { expect, lightAndDarkShots, test, VIEWPORT } from './explorer-fixtures.ts';
import { generateManyPartitions } from './many-partitions.ts';

test.use({ viewport: VIEWPORT });
test.describe.configure({ timeout: 90_000 });

/** Holds every `log.partition` call until `release()`; `calls` counts them (sent, not answered). */
async function holdSummaries(page: Page): Promise<{ release: () => void; calls: () => number }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let n = 0;
  await page.route('**/api/log.partition', async (route) => {
    n++;
    await gate;
    await route.continue();
  });
  return { release, calls: () => n };
}

test('the first records of a partition are shown before its summary arrives; the summary and segments fill in after', async ({ page, bridge }) => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-first-')));
  try {
    // Two segments: offsets 0..29 and 30..59.
    const logDir = join(tmp, 'broker-1');
    const seg = (from: number) => ({ batches: singles(...Array.from({ length: 30 }, (_, i) => rec(`key-${from + i}`, `value of offset ${from + i}`, 1_717_000_000_000 + (from + i) * 1000))) });
    buildPartition(logDir, { topic: 'orders', segments: [seg(0), seg(30)] });
    const held = await holdSummaries(page);
    // The order of what the page did: the summary must be asked for after the first page was answered, not before.
    const order: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/log.partition')) order.push('log.partition asked');
    });
    page.on('response', (r) => {
      if (r.url().endsWith('/api/log.records')) order.push('log.records answered');
    });
    await page.goto(bridge.url);
    await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
    await page.getByTestId('folder-input').fill(logDir);
    await page.getByTestId('folder-input').press('Enter');

    // Opening selects orders-0: its first records come while log.partition is held.
    const first = page.locator('[data-testid=record-row][data-offset="0"]');
    await expect(first).toContainText('key-0');
    await expect(first).toContainText('value of offset 0');
    await expect(page.locator('[data-testid=record-row][data-offset="29"]')).toContainText('key-29');
    await expect.poll(held.calls).toBe(1);
    expect(order.slice(0, 2)).toEqual(['log.records answered', 'log.partition asked']);
    // The tree's summary (from log.open) is shown; the header says the partition is being read again.
    await expect(page.getByTestId('partition-header')).toHaveAttribute('data-state', 'read');
    await expect(page.getByTestId('partition-checking')).toHaveText('checking…');
    await lightAndDarkShots(page, 'first-records-summary-pending');
    await page.getByTestId('tab-segments').click();
    await expect(page.getByTestId('segments-checking')).toContainText('checking…');
    await expect(page.locator('[data-testid=segment-row]')).toHaveCount(0);
    await lightAndDarkShots(page, 'first-records-segments-pending');

    held.release();
    const rows = page.locator('[data-testid=segment-row]');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toHaveAttribute('data-base', '0');
    await expect(rows.nth(1)).toHaveAttribute('data-base', '30');
    await expect(page.getByTestId('segments-checking')).toHaveCount(0);
    await expect(page.getByTestId('partition-checking')).toHaveCount(0);
    await lightAndDarkShots(page, 'first-records-segments-read');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a partition the tree still lists as "checking…" shows its records and the offsets of its first page before its summary', async ({ page, bridge }) => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-first-many-')));
  try {
    // 2 topics × 20 partitions (over the tree's 32: listed only), 2 segments of 4 batches × 5 records: offsets 0..39.
    const many = generateManyPartitions(join(tmp, 'broker-1'), { topics: 2, partitionsPerTopic: 20, batchesPerSegment: 4 });
    // The tree's summaries and the selected partition's own are both held.
    let releaseTree!: () => void;
    const treeGate = new Promise<void>((resolve) => (releaseTree = resolve));
    await page.route('**/api/log.summaries', async (route) => {
      await treeGate;
      await route.continue();
    });
    const held = await holdSummaries(page);
    await page.goto(bridge.url);
    await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
    await page.getByTestId('folder-input').fill(many.logDir);
    await page.getByTestId('folder-input').press('Enter');
    const p5 = page.locator('[data-testid=tree-partition][data-name="topic-01-5"]');
    await expect(p5).toHaveAttribute('data-state', 'checking');
    await p5.click();
    await page.getByTestId('tab-records').click();

    await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('{"topic":"topic-01","partition":5,"offset":0}');
    const header = page.getByTestId('partition-header');
    await expect(header).toHaveAttribute('data-state', 'checking');
    await expect(header).toContainText('topic-01-5');
    const stats = page.getByTestId('summary-checking');
    // From the first records page: logStartOffset 0, logEndOffset 40; the rest is not known yet and says so.
    await expect(stats.locator('.stat').nth(0)).toHaveText(/logStartOffset\s*0$/);
    await expect(stats.locator('.stat').nth(1)).toHaveText(/logEndOffset\s*40$/);
    for (const label of ['high watermark', 'records', 'size', 'segments']) await expect(stats.locator('.stat', { hasText: label })).toContainText('checking…');
    await expect(header.getByTestId('health-badge')).toHaveText('checking…');
    await lightAndDarkShots(page, 'first-records-checking-partition');
    // The views that need the summary wait for it.
    await page.getByTestId('tab-holes').click();
    await expect(page.getByTestId('view-checking')).toContainText('checking… the summary of topic-01-5');
    await page.getByTestId('tab-records').click();

    held.release();
    await expect(header).toHaveAttribute('data-state', 'read');
    await expect(header).toContainText('logEndOffset');
    await expect(page.getByTestId('summary-checking')).toHaveCount(0);
    await expect(p5).toHaveAttribute('data-state', 'read');
    await expect(p5.getByTestId('tree-segments')).toHaveText('2 segments');
    await page.getByTestId('tab-segments').click();
    await expect(page.locator('[data-testid=segment-row]')).toHaveCount(2);
    releaseTree();
    await expect(page.locator('[data-testid=tree-partition][data-state=checking]')).toHaveCount(0, { timeout: 30_000 });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
