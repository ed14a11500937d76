/**
 * The Open view and the app chrome: what can be opened, a dropped folder (a browser gives only its
 * name: the view explains it), recent folders, the "Open for writing" switch (state kept and shown,
 * read-only by default), a folder that is not a Kafka log (a clear reason), the dark theme, and
 * keyboard navigation of the log tree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCREENSHOTS, copyRealData, expect, HAVE_REAL_DATA, openFolder, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test('the Open view explains what to open; a dropped folder gives only its name, and the view says so', async ({ page, bridge }) => {
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await expect(page.getByTestId('open-view')).toContainText('Open a Kafka log directory');
  await expect(page.getByTestId('write-mode')).toHaveText(/Read-only/);
  await page.screenshot({ path: `${SCREENSHOTS}/open.png` });
  // Drop a "folder": the page receives a File named after it, with no path.
  // (Browser code as text: this file is type-checked without the DOM library.)
  await page.evaluate(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([], 'kafka-logs'));
    document.querySelector('[data-testid=drop-zone]').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  })()`);
  await expect(page.getByTestId('drop-note')).toContainText('"kafka-logs"');
  await expect(page.getByTestId('drop-note')).toContainText('Type its full path');
  await expect(page.getByTestId('folder-input')).toBeFocused();
});

test('"Open for writing" is a switch whose state is kept and shown (read-only by default); a read-only app disables it', async ({ page, bridge, readOnlyBridge }) => {
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  const sw = page.getByTestId('write-mode');
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await sw.click();
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  await expect(sw).toHaveText(/Open for writing/);
  await expect(page.locator('footer')).toContainText('open for writing');
  await page.goto(readOnlyBridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await expect(page.getByTestId('write-mode')).toBeDisabled();
});

test('a folder that is not a Kafka log: the reason, the folder, and what to open instead', async ({ page, bridge }) => {
  const dir = test.info().outputPath('not-a-log');
  mkdirSync(join(dir, 'photos'), { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'hello');
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await page.getByTestId('folder-input').fill(dir);
  await page.getByTestId('folder-input').press('Enter');
  const notice = page.getByTestId('error-notice');
  await expect(notice).toContainText('Not a Kafka log directory');
  await expect(notice).toContainText('no meta.properties');
  await expect(page.getByTestId('error-where')).toContainText(dir);
  await expect(notice).toContainText('Open a broker log directory');
  await expect(page.getByTestId('opened-folders')).toContainText(dir);
});

test('dark theme and keyboard navigation of the log tree', async ({ page, bridge }) => {
  test.skip(!HAVE_REAL_DATA, '../shared/kafka-real-data not found');
  const real = copyRealData('kafka-2.8.0-snappy');
  try {
    await openFolder(page, bridge.url, real.dir);
    await page.getByTestId('theme-toggle').click(); // system → light
    await page.getByTestId('theme-toggle').click(); // light → dark
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    const tree = page.getByTestId('log-tree');
    await tree.focus();
    const names = await page.locator('[data-testid=tree-partition]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    expect(names.length).toBeGreaterThan(1);
    // Walk down to the second partition with ↓ and open it with Enter.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('ArrowDown');
      const focused = await page.locator('.node.focused').getAttribute('data-name');
      if (focused === names[1]) break;
    }
    await page.keyboard.press('Enter');
    await expect(page.locator(`[data-testid=tree-partition][data-name="${names[1]}"]`)).toHaveAttribute('aria-selected', 'true');
    await page.getByTestId('tab-records').click();
    await expect(page.locator('[data-testid=record-row]').first()).toBeVisible();
    await page.locator('[data-testid=record-row]').first().click();
    await page.screenshot({ path: `${SCREENSHOTS}/dark.png` });
  } finally {
    real.remove();
  }
});
