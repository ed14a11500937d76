/**
 * The Groups view on the crafted groups log directory (test/support/groups-scenario.ts: keys and
 * values of `__consumer_offsets` from the independent Python codec): the group list, a group's
 * offsets with the kafka-consumer-groups.sh columns plus record lag and diagnosis, the commit-history
 * chart, the diagnosis badge jumping to the records at the committed offset, the absent
 * `__consumer_offsets` partitions named, and the hole map marking the groups' committed offsets.
 * Screenshots: `groups.png`, `groups-dark.png`, `groups-streams.png`, `groups-streams-dark.png`, `groups-hole-map.png`.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGroupsScenario, SCENARIO_NOW } from '../../support/groups-scenario.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

let tmp: string;
let logDir: string;

test.beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-groups-')));
  logDir = join(tmp, 'kafka-logs');
  buildGroupsScenario(logDir);
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('groups, offsets with diagnosis, commit history, the jump to records, and the hole map marks', async ({ page, bridge }) => {
  test.setTimeout(90_000);
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-groups').click();
  await page.getByTestId('groups-now').fill(String(SCENARIO_NOW));
  await page.getByTestId('groups-load').click();
  await expect(page.getByTestId('groups-summary')).toContainText('16 groups');
  await expect(page.getByTestId('groups-absent')).toContainText('of the 50 __consumer_offsets partitions');
  await expect(page.getByTestId('groups-problem')).toHaveCount(2);

  // every column of the group list is inside the list and the window (at 1600 px the last one was cut)
  const list = (await page.getByTestId('groups-list').boundingBox())!;
  for (const cells of [page.locator('[data-testid=groups-list] .thead > div'), page.locator('[data-testid=groups-row][data-group="g-ok"] > div')]) {
    await expect(cells).toHaveCount(7);
    const last = (await cells.last().boundingBox())!;
    expect(last.x + last.width).toBeLessThanOrEqual(list.x + list.width + 0.5);
    expect(last.x + last.width).toBeLessThanOrEqual(VIEWPORT.width);
  }
  // and no header of the list, nor the type of a group, is cut short: every line of their text ends inside the cell's padding
  const cut = (sel: string) =>
    page.locator(sel).evaluateAll((els) =>
      els
        .filter((el) => {
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          const right = el.getBoundingClientRect().right - parseFloat(el.ownerDocument.defaultView!.getComputedStyle(el).paddingRight);
          return el.scrollWidth > el.clientWidth || [...range.getClientRects()].some((line) => line.right > right + 0.5);
        })
        .map((el) => el.textContent),
    );
  expect(await cut('[data-testid=groups-list] .thead > div')).toEqual([]);
  expect(await cut('[data-testid=groups-row] > div:nth-child(2)')).toEqual([]);
  await expect(page.locator('[data-testid=groups-list] .thead > div').last()).toHaveText('Record lag');

  // g-ok: classic, Stable, one member; the offsets table has the describe columns
  await page.locator('[data-testid=groups-row][data-group="g-ok"]').click();
  await expect(page.getByTestId('groups-detail')).toContainText('g-ok');
  // its __consumer_offsets partition holds a key the coordinator cannot deserialize: a broker fails to load it (CoordinatorLoaderImpl)
  await expect(page.locator('[data-testid=groups-row][data-group="g-ok"] [data-testid=groups-load-fails]')).toHaveText('not loadable');
  await expect(page.getByTestId('groups-load-failure')).toContainText('A broker would fail to load __consumer_offsets-');
  await expect(page.getByTestId('groups-load-failure')).toContainText('group: needs 40 bytes, 1 left');
  const row = page.locator('[data-testid=groups-offset-row][data-topic="orders"]');
  await expect(row).toContainText('ok-m1');
  await expect(row).toContainText('/10.0.0.7');
  await expect(row.locator('div').nth(2)).toHaveText('4');
  await expect(row.locator('div').nth(3)).toHaveText('10');
  await expect(row.locator('div').nth(4)).toHaveText('6');
  // The offsets table's headers (the describe columns) are whole: no word cut ("PAR…", "CURRE… OFFSET" before), the last column inside the window.
  const oheads = page.locator('[data-testid=groups-offsets] .thead > div');
  // (soft hyphens: the words may break there, with a hyphen, instead of being cut)
  await expect(oheads).toHaveText(['Topic', 'Par\u00adti\u00adtion', 'Cur\u00adrent offset', 'Log end offset', 'Lag', 'Con\u00adsumer id', 'Host', 'Client id', 'Record lag', 'Next offset', 'Diagnosis']);
  expect(await cut('[data-testid=groups-offsets] .thead > div')).toEqual([]);
  const lastHead = (await oheads.last().boundingBox())!;
  expect(lastHead.x + lastHead.width).toBeLessThanOrEqual(VIEWPORT.width);
  await expect(page.getByTestId('groups-history')).toHaveAttribute('data-points', '3');
  await expect(page.locator('[data-testid=groups-history] canvas').first()).toBeVisible();
  await expect(page.getByTestId('groups-members')).toContainText('client-ok-m1');
  // the commit-history y axis (offsets 0..10) ticks at even integer steps (was 0, 3, 5, 8, 10: 2.5 rounded)
  const ticks = (await page.getByTestId('groups-history').getAttribute('data-y-ticks'))!.split(' ').map(Number);
  expect(ticks.length).toBeGreaterThanOrEqual(3);
  for (const t of ticks) expect(Number.isInteger(t)).toBe(true);
  expect(new Set(ticks.slice(1).map((t, i) => t - ticks[i]!)).size).toBe(1);
  // no header of the members table is cut (SESSION… was), nor a host or client id in the offsets and members rows
  expect(await cut('[data-testid=groups-members] .thead > div')).toEqual([]);
  const wrapped = '[data-testid=groups-offset-row] > div:nth-child(7), [data-testid=groups-offset-row] > div:nth-child(8), [data-testid=groups-member-row] > div:nth-child(2), [data-testid=groups-member-row] > div:nth-child(3)';
  expect(await cut(wrapped)).toEqual([]);
  await page.screenshot({ path: `${SCREENSHOTS}/groups.png` });

  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(200);
  await page.screenshot({ path: `${SCREENSHOTS}/groups-dark.png` });
  await page.getByTestId('theme-toggle').click();

  // a streams group (KIP-1071): its member runs task 0_0, so it owns orders-0; long client ids wrap whole
  await page.locator('[data-testid=groups-row][data-group="streams-app"]').click();
  await expect(page.getByTestId('groups-detail')).toContainText('streams');
  await expect(page.getByTestId('groups-detail')).toContainText('Stable');
  const srow = page.locator('[data-testid=groups-offset-row][data-topic="orders"]');
  await expect(srow).toContainText('sm-1');
  await expect(srow).toContainText('streams-app-StreamThread-1');
  await expect(page.getByTestId('groups-members')).toContainText('streams-app-StreamThread-1');
  expect(await cut(wrapped)).toEqual([]);
  await page.screenshot({ path: `${SCREENSHOTS}/groups-streams.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(200);
  await page.screenshot({ path: `${SCREENSHOTS}/groups-streams-dark.png` });
  await page.getByTestId('theme-toggle').click();

  // g-hole: in a hole of compacted-0; the badge shows the records there
  await page.locator('[data-testid=groups-row][data-group="g-hole"]').click();
  const hole = page.locator('[data-testid=groups-offset-row][data-topic="compacted"]');
  await expect(hole).toHaveAttribute('data-diagnosis', 'in-hole');
  await expect(page.getByTestId('groups-offset-detail')).toContainText('the consumer continues at 5');
  await hole.getByTestId('groups-diagnosis').click();
  await expect(page.getByTestId('tab-records')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('partition-header')).toContainText('compacted-0');
  await expect(page.locator('[data-testid=record-row][data-offset="5"]')).toBeVisible();

  // the hole map of orders-0 marks the committed offsets of its groups
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-holes').click();
  await expect(page.getByTestId('holes-group-marks')).toContainText('g-ok @ 4');
  await expect(page.getByTestId('hole-map')).toHaveAttribute('data-group-marks', /g-ok@4/);
  await page.screenshot({ path: `${SCREENSHOTS}/groups-hole-map.png` });
});
