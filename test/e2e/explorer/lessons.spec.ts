/**
 * The Lessons view (issue 15): the textbook lab is created in the app's data folder
 * (`KLX_DATA_DIR`, a temp folder set before the bridge starts), previewed (retention: segments
 * walked oldest first, the prefix stops at segment 3), run (the answer and the figures: 3 records
 * and 210 of 280 bytes go, log start 3), then the compaction step previewed with the kafka and the
 * classic rules side by side (the keyless event@3 is the one difference), walked through with ←/→
 * and its decisions filtered by reason. Screenshots light and dark.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCREENSHOTS, expect, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });
test.setTimeout(120_000);

const root = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-lessons-')));
process.env.KLX_DATA_DIR = join(root, 'data');
test.afterAll(() => rmSync(root, { recursive: true, force: true }));

test('textbook lab: create, preview the retention walk, run it, then kafka vs classic side by side', async ({ page, bridge }) => {
  await page.goto(bridge.url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await page.getByTestId('lessons-toggle').click();
  await expect(page.getByTestId('lessons-view')).toBeVisible();
  await page.getByTestId('lab-textbook').click();
  await page.getByTestId('lesson-create').click();
  await expect(page.getByTestId('lesson-question')).toContainText('With retention.ms 100 at now 300, which segments go');

  await page.getByTestId('lesson-preview').click();
  const cells = page.locator('[data-testid=side-retention] [data-testid=decision-cell]');
  await expect(cells).toHaveCount(4);
  expect(await cells.evaluateAll((els) => els.map((e) => [e.getAttribute('data-offset'), e.getAttribute('data-decision')]))).toEqual([
    ['0', 'remove'],
    ['1', 'remove'],
    ['2', 'remove'],
    ['3', 'keep'],
  ]);
  // The three segments and the one that stops the prefix, then the result.
  await expect(page.getByTestId('walk-position')).toHaveText('1 / 5');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('walk-position')).toHaveText('4 / 5');
  await expect(page.getByTestId('walk-current')).toContainText('prefix stops at segment 3: time retention: max timestamp t=250 ms is 50 ms old > retention.ms 100 (100 ms)? no');
  await page.keyboard.press('ArrowRight');
  // Four segments of one 70-byte batch each (61-byte v2 header + a 9-byte record): three deleted.
  await expect(page.getByTestId('walk-current')).toHaveAttribute('data-phase', 'result');
  await expect(page.getByTestId('walk-current')).toHaveText('Result: segments 0: 70 B, 1: 70 B, 2: 70 B deleted; 3 records removed; log start offset 0 → 3.');
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-retention-walk.png` });

  await page.getByTestId('lesson-run').click();
  await expect(page.getByTestId('lesson-result-summary')).toContainText('3 records removed; 280 → 70 bytes; log start offset 0 → 3');
  await expect(page.getByTestId('lesson-answer')).toContainText('The log start offset becomes 3');
  await expect(page.getByTestId('lesson-question')).toContainText('Compact with the classic rules at now 10');

  await page.getByTestId('lesson-preview').click();
  await expect(page.getByTestId('side-kafka')).toBeVisible();
  await expect(page.getByTestId('side-classic')).toBeVisible();
  const diffs = page.getByTestId('difference');
  await expect(diffs).toHaveCount(1);
  await expect(diffs.first()).toHaveText('Offset 3: Kafka — keyless: dropped (kafka rules; counted as an invalid message); classic — keyless: kept (classic rules).');
  await expect(page.locator('[data-testid=side-kafka] [data-testid=decision-cell][data-offset="3"]')).toHaveAttribute('data-decision', 'remove');
  await expect(page.locator('[data-testid=side-classic] [data-testid=decision-cell][data-offset="3"]')).toHaveAttribute('data-decision', 'keep');
  // The walkthrough of the kafka side: the cleanable range, the offset map key by key, each
  // decision, the swap, the result.
  const cur = page.getByTestId('walk-current');
  await expect(cur).toHaveAttribute('data-phase', 'range');
  await expect(cur).toContainText('Cleanable range: offsets 0 up to 4 (exclusive). It starts at the log start offset (no cleaner checkpoint yet) and ends at 4, bounded by the active segment (never cleaned)');
  await page.keyboard.press('ArrowRight');
  await expect(cur).toHaveText('Offset map: put a → 0; 1 key in the map.');
  await page.keyboard.press('ArrowRight');
  await expect(cur).toHaveText('Offset map: put b → 1; 2 keys in the map.');
  await page.keyboard.press('ArrowRight');
  await expect(cur).toHaveText('Offset map: put a → 2 (replaces 0); 2 keys in the map.');
  await expect(page.locator('[data-testid=side-kafka] [data-testid=decision-cell][data-offset="2"]')).toHaveClass(/here/);
  await page.keyboard.press('ArrowRight');
  await expect(cur).toHaveAttribute('data-phase', 'decision');
  await expect(cur).toHaveAttribute('data-offset', '0');
  await expect(cur).toContainText('superseded by offset 2 (key a)');
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-walk-map.png` });
  const [, total] = (await page.getByTestId('walk-position').innerText()).split(' / ');
  for (let i = 5; i < Number(total) - 1; i++) await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('walk-position')).toHaveText(`${Number(total) - 1} / ${total}`);
  await expect(cur).toHaveAttribute('data-phase', 'swap');
  await expect(cur).toContainText('.cleaned, renamed to .swap');
  await expect(cur).toContainText("Kafka's LogLoader completes the .swap files (deleting the segments they replace) once every .cleaned became a .swap");
  await page.keyboard.press('ArrowRight');
  await expect(cur).toHaveAttribute('data-phase', 'result');
  await expect(cur).toContainText('log start offset 0 → 0; cleaner checkpoint none → 4.');
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-walk-result.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await page.waitForTimeout(150);
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-walk-result-dark.png` });
  await page.getByTestId('theme-toggle').click();

  await page.getByTestId('decision-filter').selectOption('superseded');
  const rows = page.locator('[data-testid=decision-row]');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('superseded by offset 2 (key a)');
  await page.getByTestId('decision-filter').selectOption('');
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-side-by-side.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/lessons-side-by-side-dark.png` });
  await page.getByTestId('theme-toggle').click();
});
