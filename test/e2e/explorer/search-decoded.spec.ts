/**
 * Search over decoded values in the browser: a condition on Avro values (bodies written by
 * python3-avro, their schemas in a `_schemas` topic written by `klx append --records`) over every
 * partition of a topic, matches naming partition and offset with the decoded value, a click that
 * selects the other partition and shows the record; a condition that does not parse shows the
 * character main named. Fails on any page error (fixture rule). Screenshots
 * `search-decoded-*-light.png` / `-dark.png`.
 */
import type { Page } from '@playwright/test';
import { addSecondOrdersPartition, buildSchemaFixtures, type SchemaFixtures } from '../../engine/decode/schema-fixtures.ts';
import { expect, lightAndDarkShots, openFolder, selectPartition, test as base, VIEWPORT } from './explorer-fixtures.ts';

const test = base.extend<{ fx: SchemaFixtures }>({
  fx: async ({}, use) => {
    const fx = buildSchemaFixtures();
    addSecondOrdersPartition(fx); // orders-1: a second partition of the topic
    await use(fx);
    fx.cleanup();
  },
});

test.use({ viewport: VIEWPORT });
test.describe.configure({ timeout: 90_000 });

const shots = (page: Page, name: string): Promise<void> => lightAndDarkShots(page, `search-decoded-${name}`);

test('a condition on decoded Avro values over every partition of the topic; a click shows the match in its partition', async ({ page, bridge, fx }) => {
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('search-condition').fill('value.amount > 10 && value.customer.name != "Cy"');
  await page.getByTestId('search-scope').selectOption('topic');
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-summary')).toHaveText('3 matches in 9 records of 2 partitions (every partition of orders searched)');
  const matches = page.locator('[data-testid=search-match]');
  await expect(matches).toHaveCount(3);
  expect(await matches.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-partition')}@${e.getAttribute('data-offset')}`))).toEqual(['0@0', '0@1', '1@1']);
  // The decoded value (python3-avro's datum as JSON), the long key as its number.
  await expect(matches.nth(1).getByTestId('match-value')).toContainText('"id":"o-2","amount":99.25');
  await expect(matches.nth(1).getByTestId('match-key')).toHaveText('2');
  await expect(matches.nth(2)).toContainText('p1 @ 1');
  await shots(page, 'topic');

  // The match in orders-1: its partition is selected and the record shown.
  await matches.nth(2).click();
  await expect(page.getByTestId('partition-header')).toContainText('orders-1');
  await expect(page.locator('[data-testid=record-row][data-offset="1"]')).toHaveClass(/selected/);
  await expect(page.locator('[data-testid=record-row][data-offset="1"]')).toContainText('"id":"o-1"');

  // Text found only in the decoded value (Avro writes the enum PAID as an index), over the folder.
  await page.getByTestId('search-condition').fill('');
  await page.getByTestId('search-input').fill('PAID');
  await page.getByTestId('search-in-key').click();
  await page.getByTestId('search-in-header').click();
  await page.getByTestId('search-case').click();
  await page.getByTestId('search-scope').selectOption('folder');
  await page.getByTestId('search-run').click();
  await expect(page.getByTestId('search-summary')).toContainText('(whole folder searched)');
  expect(await matches.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-topic')}-${e.getAttribute('data-partition')}@${e.getAttribute('data-offset')}`))).toEqual([
    '_schemas-0@2',
    '_schemas-0@4',
    '_schemas-0@11',
    'orders-0@0',
    'orders-1@1',
    'payments-0@0',
  ]);
});

test('a condition that does not parse: the reason and the character marked, no page error', async ({ page, bridge, fx }) => {
  await openFolder(page, bridge.url, fx.logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('search-condition').fill('value.amount >> 10');
  await page.getByTestId('search-condition').press('Enter');
  const err = page.getByTestId('search-condition-error');
  await expect(err).toContainText('condition: expected a path or a value, not this at character 15');
  await expect(err.locator('mark')).toHaveText('>');
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
  await shots(page, 'bad-condition');
});
