/**
 * A damaged partition (its last batch cut off mid-write, its offset index missing, no clean
 * shutdown): every view says what is wrong, in which file, at which byte, and what to do about it.
 * Reading is never refused: the 40 intact records are all shown.
 */
import { SCREENSHOTS, expect, openFolder, selectPartition, test, visibleOffsets, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test('the records table shows the intact records, then the cut batch as a truncated-tail row with its byte position', async ({ page, bridge, damaged }) => {
  await openFolder(page, bridge.url, damaged.logDir);
  await selectPartition(page, 'payments-0');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]').first()).toHaveAttribute('data-offset', '0');
  await page.getByTestId('records-table').focus();
  await page.keyboard.press('End');
  const tail = page.locator('[data-testid=hole-row][data-cause="truncated-tail"]');
  await expect(tail).toBeVisible();
  await expect(tail).toHaveAttribute('title', new RegExp(`byte position ${damaged.cutAt}`));
  expect((await visibleOffsets(page)).at(-1)).toBe('39');
  // The damage met while reading: code, file, byte position and the way forward.
  const problems = page.getByTestId('read-problems');
  await expect(problems).toContainText('truncated-batch');
  await expect(problems).toContainText(`00000000000000000000.log @ byte ${damaged.cutAt.toLocaleString('en-US')}`);
  await expect(problems).toContainText('klx repair');
  await tail.click();
  await expect(page.getByTestId('inspector-hole')).toContainText('truncated-tail');
  await expect(page.getByTestId('inspector-hole')).toContainText(`bytes at position ${damaged.cutAt}`);
  await page.screenshot({ path: `${SCREENSHOTS}/damaged-records.png` });
});

test('the header and the segments view name the missing index and the invalid tail', async ({ page, bridge, damaged }) => {
  await openFolder(page, bridge.url, damaged.logDir);
  await selectPartition(page, 'payments-0');
  // The quick tail check already ranks the cut last batch an error, as Verify will (issue 13 finding 11).
  await expect(page.getByTestId('health-badge')).toContainText('1 error');
  await expect(page.locator('[data-testid=tree-partition][data-name="payments-0"] [data-testid=health-dot]')).toHaveClass(/error/);
  await page.getByTestId('health-badge').click();
  const details = page.getByTestId('health-details');
  await expect(details).toContainText('invalid-tail');
  await expect(details).toContainText('missing-index');
  await expect(details).toContainText('00000000000000000000.index');
  await expect(details).toContainText('klx repair');
  await page.getByTestId('health-badge').click();
  await page.getByTestId('tab-segments').click();
  const seg = page.locator('[data-testid=segment-row]').first();
  await expect(seg).toContainText('missing');
  // The 40 batches, then the damage: End goes to the last entry of the segment.
  await expect(page.locator('[data-testid=batch-row]').first()).toHaveAttribute('data-position', '0');
  await page.getByTestId('batches-table').focus();
  await page.keyboard.press('End');
  const damage = page.locator('[data-testid=damage-row]');
  await expect(damage).toHaveCount(1);
  await expect(damage).toHaveAttribute('data-position', String(damaged.cutAt));
  await expect(damage).toContainText('invalid-tail');
  await expect(damage).toContainText('klx repair');
  await page.screenshot({ path: `${SCREENSHOTS}/damaged-segments.png` });
});

test('Verify lists the invalid tail and the missing index with file and position; the tree badge turns to the result', async ({ page, bridge, damaged }) => {
  await openFolder(page, bridge.url, damaged.logDir);
  await selectPartition(page, 'payments-0');
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-run').click();
  await expect(page.getByTestId('verify-summary')).toContainText('1 error');
  const tail = page.locator('[data-testid=finding-row][data-code="invalid-tail"]');
  await expect(tail).toContainText(`00000000000000000000.log @ byte ${damaged.cutAt.toLocaleString('en-US')}`);
  await expect(page.locator('[data-testid=finding-row][data-code="missing-index"]')).toContainText('00000000000000000000.index');
  await expect(page.getByTestId('health-badge')).toContainText('1 error');
  await expect(page.locator('[data-testid=tree-partition][data-name="payments-0"] [data-testid=health-dot]')).toHaveClass(/error/);
  // Every CRC matched, but the partition has an error: no green "CRC ✓" beside it; the tag says what
  // was checked and what failed.
  const node = page.locator('[data-testid=tree-partition][data-name="payments-0"]');
  await expect(node).not.toContainText('CRC ✓');
  const tag = node.getByTestId('tree-verify-tag');
  await expect(tag).toHaveText('verify ✗1');
  await expect(tag).toHaveClass(/err/);
  await expect(tag).toHaveAttribute('title', /^Verify checked every batch: all CRCs match; 1 error: invalid-tail at 00000000000000000000\.log @ byte \d+/);
  await page.screenshot({ path: `${SCREENSHOTS}/verify.png` });
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== 'dark'; i++) await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/verify-dark.png` });
});

test('an offset past the log end is an inline note naming the log end offset, not an error overlay (issue 14)', async ({ page, bridge, damaged }) => {
  await openFolder(page, bridge.url, damaged.logDir);
  await selectPartition(page, 'payments-0');
  await page.getByTestId('tab-records').click();
  await page.getByTestId('jump-offset').fill('99');
  await page.getByTestId('jump-offset').press('Enter');
  await expect(page.getByTestId('jump-note')).toHaveText(/offset 99 is past the log end offset 40; the last record is offset 39/);
  await expect(page.getByTestId('error-notice')).toHaveCount(0);
  await page.screenshot({ path: `${SCREENSHOTS}/error-notice.png` });
});

test('a batch whose CRC fails: its record is shown flagged, the inspector and the batches view give the stored and computed CRC-32C (issue 13 finding 1)', async ({ page, bridge, crcDamaged }) => {
  const kafkaText = `Record is corrupt (stored crc = ${crcDamaged.stored}, computed crc = ${crcDamaged.computed}; CRC-32C)`;
  await openFolder(page, bridge.url, crcDamaged.logDir);
  await selectPartition(page, 'refunds-0');
  await page.getByTestId('tab-records').click();
  const row = page.locator('[data-testid=record-row][data-offset="7"]');
  await expect(row.getByTestId('flag')).toHaveText('CRC');
  expect(await page.locator('[data-testid=record-row] [data-testid=flag]', { hasText: 'CRC' }).count()).toBe(1);
  await row.click();
  await expect(page.getByTestId('inspector-crc')).toHaveText(`MISMATCH: ${kafkaText}`);
  await page.screenshot({ path: `${SCREENSHOTS}/crc-record-light.png` });
  await page.getByTestId('tab-segments').click();
  const bad = page.locator(`[data-testid=batch-row][data-position="${crcDamaged.position}"]`);
  await expect(bad).toContainText('MISMATCH');
  await expect(page.getByTestId('batch-crc-detail')).toContainText(`1 loaded batch fails the CRC. Offsets 7..7 at byte ${crcDamaged.position.toLocaleString('en-US')}: ${kafkaText}.`);
  await page.screenshot({ path: `${SCREENSHOTS}/crc-batches-light.png` });
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== 'dark'; i++) await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/crc-batches-dark.png` });
  await page.getByTestId('tab-records').click();
  await row.click();
  await page.screenshot({ path: `${SCREENSHOTS}/crc-record-dark.png` });
});
