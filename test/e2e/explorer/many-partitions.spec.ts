/**
 * A folder of many partitions (more than the tree's LAZY_ABOVE, 32) opens listed only: every
 * partition is in the tree at once, marked "checking…" (no offsets, size or health badge yet), and
 * their summaries fill in afterwards (`log.summaries`). A partition selected while still checking
 * shows its records. Once filled in, each node shows what `log.open` gives for it (offset range,
 * segments, a healthy dot), and the first partition was selected.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, lightAndDarkShots, test, VIEWPORT } from './explorer-fixtures.ts';
import { generateManyPartitions } from './many-partitions.ts';

test.use({ viewport: VIEWPORT });

test.describe.configure({ timeout: 90_000 });

test('120 partitions: the tree lists them at once as "checking…", a checking partition shows its records, the summaries fill in', async ({ page, bridge }) => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-many-')));
  try {
    // 3 topics × 40 partitions × 2 segments of 4 batches × 5 records: offsets 0..39 in each partition.
    const many = generateManyPartitions(join(tmp, 'broker-1'), { topics: 3, partitionsPerTopic: 40, batchesPerSegment: 4 });
    expect(many.partitions).toBe(120);
    // Hold the summaries back until the tree's first state is checked.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let summaryCalls = 0;
    await page.route('**/api/log.summaries', async (route) => {
      summaryCalls++;
      await gate;
      await route.continue();
    });
    await page.goto(bridge.url);
    await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
    await page.getByTestId('folder-input').fill(many.logDir);
    await page.getByTestId('folder-input').press('Enter');

    const nodes = page.locator('[data-testid=tree-partition]');
    await expect(nodes).toHaveCount(120);
    await expect(page.locator('[data-testid=tree-partition][data-state=checking]')).toHaveCount(120);
    const p7 = page.locator('[data-testid=tree-partition][data-name="topic-01-7"]');
    await expect(p7).toContainText('p7');
    await expect(p7).toContainText('checking…');
    await expect(p7.getByTestId('tree-verify-tag')).toHaveCount(0);
    // Topics in name order, partitions by number (topic-00-10 after topic-00-9, not after topic-00-1).
    const names = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    expect(names.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, i) => `topic-00-${i}`));
    expect(names[40]).toBe('topic-01-0');
    expect(summaryCalls).toBe(1);
    // The topic's size is not known yet, and says so.
    await expect(page.locator('.node.topic').first().locator('.meta')).toHaveText('…');
    await lightAndDarkShots(page, 'many-partitions-checking');

    // Selecting a partition that is still checking shows it and its records.
    await p7.click();
    await expect(p7).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('partition-header')).toContainText('topic-01');
    await page.getByTestId('tab-records').click();
    const first = page.locator('[data-testid=record-row][data-offset="0"]');
    await expect(first).toContainText('k-0');
    await expect(first).toContainText('{"topic":"topic-01","partition":7,"offset":0}');
    await expect(page.locator('[data-testid=record-row][data-offset="1"]')).toContainText('{"topic":"topic-01","partition":7,"offset":1}');
    // Its summary came with the selection (log.partition): its node is filled in, the others still checking.
    await expect(p7).toHaveAttribute('data-state', 'read');
    await expect(p7.getByTestId('tree-segments')).toHaveText('2 segments');
    await expect(page.locator('[data-testid=tree-partition][data-state=checking]')).toHaveCount(119);

    // Let the summaries in: every node is filled in with the partition's facts.
    release();
    await expect(page.locator('[data-testid=tree-partition][data-state=checking]')).toHaveCount(0, { timeout: 30_000 });
    await expect(nodes).toHaveCount(120);
    expect(summaryCalls).toBeGreaterThanOrEqual(2); // 25, then up to 100 at a time
    const last = page.locator('[data-testid=tree-partition][data-name="topic-02-39"]');
    await expect(last.getByTestId('tree-segments')).toHaveText('2 segments');
    await expect(last).toContainText(/0\s*[–-]\s*39/);
    await expect(last.getByTestId('health-dot')).toHaveClass(/ok/);
    await expect(page.locator('.node.topic').first().locator('.meta')).toHaveText(/^\d[\d.,]* (B|KiB)$/);
    // The user's selection was kept (the first partition is selected only when nothing is).
    await expect(p7).toHaveAttribute('aria-selected', 'true');
    await lightAndDarkShots(page, 'many-partitions-filled');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a many-partition folder opened with nothing selected selects its first partition once known', async ({ page, bridge }) => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-many-')));
  try {
    const many = generateManyPartitions(join(tmp, 'broker-1'), { topics: 2, partitionsPerTopic: 20, batchesPerSegment: 2 });
    await page.goto(bridge.url);
    await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
    await page.getByTestId('folder-input').fill(many.logDir);
    await page.getByTestId('folder-input').press('Enter');
    await expect(page.locator('[data-testid=tree-partition]')).toHaveCount(40);
    await expect(page.locator('[data-testid=tree-partition][data-name="topic-00-0"]')).toHaveAttribute('aria-selected', 'true');
    await expect(page.locator('[data-testid=tree-partition][data-state=checking]')).toHaveCount(0);
    await page.getByTestId('tab-records').click();
    await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('{"topic":"topic-00","partition":0,"offset":0}');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
