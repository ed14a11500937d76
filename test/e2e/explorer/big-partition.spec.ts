/**
 * A 5,000,000-record partition (50,000 batches × 100 records in 5 segments, generated once per
 * run): it opens, shows its first records at once, scrolls with the wheel and the keyboard, goes to
 * the end and back, lands exactly on an offset typed in "Go to offset" and on a time typed in "Go to
 * time", and drags the scrollbar to the middle. The DOM holds only the rows on screen (recycled
 * while scrolling, in offset order), and the window of loaded rows stays bounded however far the
 * table is scrolled.
 */
import { SCREENSHOTS, expect, openFolder, selectPartition, test, visibleOffsets, VIEWPORT } from './explorer-fixtures.ts';
import { BIG_T0 } from './big-partition.ts';

test.use({ viewport: VIEWPORT });

test.describe.configure({ timeout: 120_000 });

test('5 M records: first page, End, Home, Go to offset and Go to time land exactly', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-records').click();
  const rows = page.locator('[data-testid=record-row]');
  await expect(rows.first()).toHaveAttribute('data-offset', '0');
  await expect(page.getByTestId('partition-header')).toContainText('5,000,000');
  // Only the rows on screen are in the DOM.
  expect(await rows.count()).toBeLessThan(60);
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('user-0000');
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('"seq":"0000000000"');

  // End: the last record of the log.
  await page.getByTestId('records-table').focus();
  await page.keyboard.press('End');
  await expect(page.locator('[data-testid=record-row][data-offset="4999999"]')).toBeVisible();
  await expect(page.locator('[data-testid=record-row][data-offset="4999999"]')).toHaveClass(/selected/);
  await expect(page.locator('[data-testid=record-row][data-offset="4999999"]')).toContainText('"seq":"0004999999"');
  // Home: back to the first.
  await page.keyboard.press('Home');
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toBeVisible();

  // Go to offset: lands on it, selected, its value carries its own offset.
  await page.getByTestId('jump-offset').fill('3,333,333');
  await page.getByTestId('jump-offset').press('Enter');
  const target = page.locator('[data-testid=record-row][data-offset="3333333"]');
  await expect(target).toBeVisible();
  await expect(target).toHaveClass(/selected/);
  await expect(target).toContainText('"seq":"0003333333"');
  await expect(page.getByTestId('inspector')).toContainText('Record 3,333,333');
  // ↓ moves to the next record, across the page boundary the jump loaded around.
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('[data-testid=record-row][data-offset="3333334"]')).toHaveClass(/selected/);
  // The inspector follows the keyboard once the keys pause.
  await expect(page.getByTestId('inspector')).toContainText('Record 3,333,334');

  // Go to time: the first record at or after T0 + 4,200,000.5 s is offset 4,200,001 (timestamps are T0 + offset ms).
  await page.getByTestId('jump-time').fill(String(BIG_T0 + 4_200_001n));
  await page.getByTestId('jump-time').press('Enter');
  await expect(page.locator('[data-testid=record-row][data-offset="4200001"]')).toHaveClass(/selected/);
  await expect(page.getByTestId('jump-note')).toContainText('offset 4,200,001');
  await page.screenshot({ path: `${SCREENSHOTS}/records-5m.png` });
});

test('5 M records: the wheel scrolls through pages, PgDn pages, and the loaded window stays bounded', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]').first()).toHaveAttribute('data-offset', '0');
  const table = page.getByTestId('records-table');
  const box = (await table.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  // The row elements are recycled: 5 rows further, the same elements show offsets 5.. in order (the
  // 5 that left the top now hold the 5 new rows at the bottom); none was created or dropped. The
  // step itself only patches the text of those 5 rows in place (no element added, moved or removed:
  // one batch of mutation records with text changes only); once scrolling pauses, the 5 elements
  // are moved back into screen order in the document (a later batch, moves only).
  const marked = await page.evaluate(`(() => {
    const rows = [...document.querySelectorAll('[data-testid=record-row]')];
    rows.forEach((r, i) => (r.__klxMark = i + 1));
    window.__klxBatches = [];
    window.__klxObserver = new MutationObserver((records) => window.__klxBatches.push({
      texts: records.filter((m) => m.type === 'characterData').length,
      textRows: new Set(records.filter((m) => m.type === 'characterData').map((m) => m.target.parentElement.closest('[data-slot]'))).size,
      moved: records.filter((m) => m.type === 'childList').reduce((n, m) => n + m.addedNodes.length, 0),
      removed: records.filter((m) => m.type === 'childList').reduce((n, m) => n + m.removedNodes.length, 0),
    }));
    window.__klxObserver.observe(rows[0].parentElement, { childList: true, characterData: true, subtree: true });
    return rows.length;
  })()`);
  expect(marked).toBeGreaterThan(20);
  await page.mouse.wheel(0, 5 * 22);
  await expect.poll(async () => (await visibleOffsets(page))[0]).toBe('5');
  expect((await visibleOffsets(page)).map(Number)).toEqual(Array.from({ length: marked as number }, (_, i) => 5 + i));
  expect(await page.evaluate("[...document.querySelectorAll('[data-testid=record-row]')].filter((r) => r.__klxMark).length")).toBe(marked);
  const batches = (await page.evaluate('(() => { window.__klxObserver.disconnect(); return window.__klxBatches; })()')) as { texts: number; textRows: number; moved: number; removed: number }[];
  expect(batches[0]!.textRows).toBe(5);
  expect(batches[0]!.moved + batches[0]!.removed).toBe(0);
  // Moving 5 elements back into order: each move is one removal and one insertion.
  expect(batches.slice(1).map((b) => [b.texts, b.moved, b.removed])).toEqual([[0, 5, 5]]);
  // 60 wheel notches of 600 px: about 1,600 rows, through several pages fetched on demand.
  for (let i = 0; i < 60; i++) {
    await page.mouse.wheel(0, 600);
    await page.waitForTimeout(16);
  }
  // The rows in document order once scrolling pauses (while it scrolls, the recycled elements stay
  // where they are in the document): consecutive offsets (a dense log has no hole), past 1,500.
  await expect
    .poll(async () => Math.min(...(await visibleOffsets(page)).map(Number)), { timeout: 10_000 })
    .toBeGreaterThan(1500);
  await expect
    .poll(async () => {
      const o = (await visibleOffsets(page)).map(Number);
      return o.filter((x, i) => x !== o[0]! + i).length;
    })
    .toBe(0);
  const first = Number((await visibleOffsets(page))[0]);
  // PgDn moves a screen further.
  await table.focus();
  await page.keyboard.press('PageDown');
  await expect.poll(async () => Number((await visibleOffsets(page))[0])).toBeGreaterThan(first + 20);
  // The store keeps a bounded window (MAX_ROWS), not everything scrolled over.
  const loaded = await page.locator('[data-testid=record-row]').count();
  expect(loaded).toBeLessThan(60);
});

test('5 M records: dragging the scrollbar to the middle shows offsets near 2,500,000', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]').first()).toHaveAttribute('data-offset', '0');
  const thumb = page.getByTestId('records-scroll-thumb');
  const track = (await page.getByTestId('records-scrollbar').boundingBox())!;
  const t = (await thumb.boundingBox())!;
  await page.mouse.move(t.x + t.width / 2, t.y + 5);
  await page.mouse.down();
  await page.mouse.move(t.x + t.width / 2, track.y + (track.height - t.height) / 2 + 5, { steps: 12 });
  await page.mouse.up();
  await expect.poll(async () => Number((await visibleOffsets(page))[0]), { timeout: 10_000 }).toBeGreaterThan(2_300_000);
  expect(Number((await visibleOffsets(page))[0])).toBeLessThan(2_700_000);
  await page.screenshot({ path: `${SCREENSHOTS}/records-5m-middle.png` });
});

test('5 M records: segments with their batch and record counts, batches paged in as the list scrolls', async ({ page, bridge, big }) => {
  await openFolder(page, bridge.url, big.logDir);
  await selectPartition(page, 'clicks-0');
  await page.getByTestId('tab-segments').click();
  const segs = page.locator('[data-testid=segment-row]');
  await expect(segs).toHaveCount(5);
  await expect(segs.nth(4)).toContainText('active');
  await expect(segs.nth(0)).toContainText('999,999');
  // Counts arrive from the background count job: 10,000 batches and 1,000,000 records per segment.
  await expect(segs.nth(0)).toContainText('10,000', { timeout: 30_000 });
  await expect(segs.nth(0)).toContainText('1,000,000');
  await expect(segs.nth(0)).toContainText('9,999'); // index entries
  await expect(page.locator('[data-testid=batch-row]').first()).toHaveAttribute('data-position', '0');
  const batches = page.getByTestId('batches-table');
  await batches.evaluate((el) => (el.scrollTop = 500 * 22));
  await expect(page.locator('[data-testid=batch-row][data-position="2566500"]')).toBeVisible({ timeout: 10_000 });
  await page.screenshot({ path: `${SCREENSHOTS}/segments-5m.png` });
});
