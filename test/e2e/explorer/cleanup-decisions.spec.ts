/**
 * The Cleanup view lists the cleaner's decisions (issue 15): a compaction preview of a small
 * partition lists every record with its verdict, reason and evidence (Kafka's
 * `Cleaner.shouldRetainRecord`: the latest offset of a key wins, keyless records go, a tombstone
 * cleaned for the first time stays until its delete horizon), filters by reason and verdict, and
 * the measured result after Run lists the same decisions.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCompactedOrders } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });
test.setTimeout(300_000);

const root = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-decisions-')));
process.env.KLX_TRASH_DIR = join(root, 'trash');
test.afterAll(() => rmSync(root, { recursive: true, force: true }));

const TS = 1_700_000_000_000;

test('compaction preview and result list each decision, filtered by reason and verdict', async ({ page, bridge }) => {
  const logDir = join(root, 'kafka-logs');
  // 0: k1=a k2=b k1=c k3=d k2=<tombstone> k4=e | 6: k1=f k3=g <no key>=x k5=h | 10 (active): k1=i k6=j
  const dir = buildCompactedOrders(logDir, TS);
  writeFileSync(join(dir, 'klx-topic.properties'), 'cleanup.policy=compact\n');
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'orders-0');
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-op-compaction').click();
  // A fixed clock: 2023-11-15 00:00:00.000 UTC = 1700006400000 ms, after every record.
  await page.getByTestId('cleanup-now-fixed').click();
  await page.getByTestId('cleanup-now').fill('2023-11-15T00:00:00.000');
  // No batch carries a delete horizon yet: the preset is offered but disabled.
  await expect(page.getByTestId('cleanup-now-horizon')).toBeDisabled();
  await page.getByTestId('cleanup-preview').click();
  await expect(page.getByTestId('cleanup-summary')).toContainText('5 records removed (superseded 4, keyless 1)', { timeout: 60_000 });

  const list = page.getByTestId('decision-list');
  // 10 records and 10 single-record batches.
  await expect(list).toHaveAttribute('data-total', '20');
  await expect(list).toContainText('what the cleaner would do');
  const rows = page.locator('[data-testid=cleanup-decision-row][data-subject=record]');
  await expect(rows).toHaveCount(10);
  expect(await rows.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-offset')}:${e.getAttribute('data-decision')}:${e.getAttribute('data-reason')}`))).toEqual([
    '0:remove:superseded',
    '1:remove:superseded',
    '2:remove:superseded',
    '3:remove:superseded',
    '4:keep:tombstone-until-horizon',
    '5:keep:latest-for-key',
    '6:keep:latest-for-key',
    '7:keep:latest-for-key',
    '8:remove:keyless',
    '9:keep:latest-for-key',
  ]);
  await expect(page.locator('[data-testid=cleanup-decision-row][data-subject=record][data-offset="1"]')).toContainText('superseded by offset 4 (key k2)');
  // First cleaned at the preview's clock: the horizon is now + delete.retention.ms (1 day), a time.
  await expect(page.locator('[data-testid=cleanup-decision-row][data-subject=record][data-offset="4"]')).toContainText('tombstone kept until its delete horizon');

  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-decisions.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(150);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-decisions-dark.png` });
  await page.getByTestId('theme-toggle').click();

  // Filter by reason: superseded → 0..3 (with their batches dropped elsewhere); keyless → 8.
  await expect(page.locator('[data-testid=decision-reason][data-reason=superseded]')).toContainText('superseded 4');
  await page.locator('[data-testid=decision-reason][data-reason=superseded]').click();
  expect(await page.locator('[data-testid=cleanup-decision-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-offset')))).toEqual(['0', '1', '2', '3']);
  await page.locator('[data-testid=decision-reason][data-reason=keyless]').click();
  await expect(page.locator('[data-testid=cleanup-decision-row]')).toHaveCount(1);
  await expect(page.locator('[data-testid=cleanup-decision-row]')).toContainText('keyless: dropped (kafka rules; counted as an invalid message)');
  // Verdict filter: keep only, all reasons → 5 records + their 5 batches.
  await page.locator('[data-testid=decision-reason][data-reason=""]').click();
  await page.getByTestId('decision-verdict').selectOption('keep');
  await expect(page.locator('[data-testid=cleanup-decision-row]')).toHaveCount(10);
  // The tombstone's batch is rebuilt: its first cleaning writes the delete horizon into the batch
  // header (Kafka's MemoryRecords.filterTo does not copy a batch whose horizon it must set).
  expect(await page.locator('[data-testid=cleanup-decision-row][data-subject=batch]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-offset')}:${e.getAttribute('data-reason')}`))).toEqual([
    '4:batch-rebuilt',
    '5:batch-copied',
    '6:batch-copied',
    '7:batch-copied',
    '9:batch-copied',
  ]);

  // Run: the measured result lists the same decisions.
  await page.getByTestId('cleanup-write-switch').click();
  await page.getByTestId('cleanup-run').click();
  await page.getByTestId('cleanup-confirm-ok').click();
  await expect(page.getByTestId('cleanup-badge')).toHaveText('measured', { timeout: 60_000 });
  await expect(list).toContainText('what the cleaner did');
  await expect(list).toHaveAttribute('data-total', '20');
  await page.locator('[data-testid=decision-reason][data-reason=superseded]').click();
  expect(await page.locator('[data-testid=cleanup-decision-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-offset')))).toEqual(['0', '1', '2', '3']);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-decisions-result.png` });

  // The run history: one compaction, kafka rules, what went.
  const entry = page.locator('[data-testid=run-history-entry]');
  await expect(entry).toHaveCount(1);
  await expect(entry).toHaveAttribute('data-undone', 'false');
  await expect(entry).toContainText('compaction · kafka rules');
  await expect(entry.locator('[data-reason=superseded]')).toHaveText('superseded 4');
  await expect(entry.locator('[data-reason=keyless]')).toHaveText('keyless 1');
  await expect(entry).toContainText('offsets 0 – 3, 8');
  await entry.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-run-history.png` });

  // The holes it made say which run made them and why.
  await page.getByTestId('tab-holes').click();
  const hole0 = page.locator('[data-testid=holes-row][data-from="0"] [data-testid=holes-run-cause]');
  await expect(hole0).toHaveText(/^removed by the compaction of \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(superseded by offset 6 \(key k1\)\)$/);
  await expect(page.locator('[data-testid=holes-row][data-from="8"] [data-testid=holes-run-cause]')).toHaveText(/\(keyless: dropped \(kafka rules; counted as an invalid message\)\)$/);
  await page.screenshot({ path: `${SCREENSHOTS}/holes-run-cause.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(150);
  await page.screenshot({ path: `${SCREENSHOTS}/holes-run-cause-dark.png` });
  await page.getByTestId('tab-cleanup').click();
  await page.locator('[data-testid=run-history]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-run-history-dark.png` });
  await page.getByTestId('theme-toggle').click();

  // The tombstone's batch now carries its delete horizon: the run's clock + delete.retention.ms
  // = 1700006400000 + 86400000 = 1700092800000 ms, in the batch's baseTimestamp field.
  await page.getByTestId('tab-segments').click();
  await page.locator('[data-testid=segment-row][data-base="0"]').click();
  const horizon = page.locator('[data-testid=batch-horizon]');
  await expect(horizon).toHaveCount(1);
  await expect(horizon).toHaveAttribute('data-horizon', '1700092800000');
  await expect(horizon).toHaveText(/^2023-11-16 00:00:00\.000 · passed \d+\.\d\d days ago$/);
  await page.screenshot({ path: `${SCREENSHOTS}/batches-delete-horizon.png` });

  // The inspector shows the same horizon for the tombstone's record (offset 4), and none for a
  // record whose batch has no horizon (offset 5).
  await page.getByTestId('tab-records').click();
  await page.locator('[data-testid=record-row][data-offset="4"]').click();
  const inspectorHorizon = page.getByTestId('inspector-horizon');
  await expect(inspectorHorizon).toHaveAttribute('data-horizon', '1700092800000');
  await expect(inspectorHorizon).toHaveText(/^2023-11-16 00:00:00\.000 · passed \d+\.\d\d days ago$/);
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-delete-horizon.png` });
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(150);
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-delete-horizon-dark.png` });
  await page.getByTestId('theme-toggle').click();
  await page.locator('[data-testid=record-row][data-offset="5"]').click();
  await expect(page.locator('[data-testid=inspector-meta] dd').first()).toHaveText('5');
  await expect(inspectorHorizon).toHaveCount(0);

  // The `now` preset just after the earliest delete horizon (the horizon + 1 ms).
  await page.getByTestId('tab-cleanup').click();
  await expect(page.getByTestId('cleanup-now-horizon')).toBeEnabled();
  await expect(page.getByTestId('cleanup-now-horizon')).toHaveText(/just after the earliest delete horizon \(2023-11-16 00:00:00\.000\)/);
  await page.getByTestId('cleanup-now-preset').selectOption('horizon');
  await expect(page.getByTestId('cleanup-now')).toHaveValue('2023-11-16T00:00:00.001');
  await page.getByTestId('cleanup-preview').click();
  await expect(page.getByTestId('cleanup-badge')).toHaveText('preview · nothing changed yet', { timeout: 60_000 });
  // The clock is the preset's; all the data left is below the cleaner checkpoint (10) or in the
  // active segment, so Kafka's cleaner has nothing dirty to clean (LogCleanerManager picks no log
  // whose dirty section is empty): the tombstone waits for the next clean that has dirty data.
  await expect(page.getByTestId('cleanup-notes')).toContainText('nothing cleanable');
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-now-horizon.png` });

  // Undo the run (the folder's latest): the timeline marks it undone.
  await page.getByTestId('cleanup-undo-last').click();
  await expect(page.getByTestId('cleanup-undone')).toContainText('compaction reversed', { timeout: 60_000 });
  await expect(page.locator('[data-testid=run-history-entry]')).toHaveAttribute('data-undone', 'true');
  await expect(page.getByTestId('run-history-undone')).toHaveText('undone');
  await page.locator('[data-testid=run-history]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-run-history-undone.png` });
});
