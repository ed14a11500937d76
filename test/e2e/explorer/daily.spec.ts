/**
 * The bugs a first day with the app found (issue 14), each reproduced as a user meets it, on the
 * demo log directory (`generateDemoLogDir`: clickstream-0 holds 2,000 records in 5 segments) and a
 * small second folder (orders-0: 70 records, offsets 0 – 69). Every test also fails on any page
 * error (fixture rule of ../fixtures.ts). Screenshots `daily-*-light.png` / `daily-*-dark.png`.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { generateDemoLogDir } from '../../../src-main/app/demo-log.ts';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { expect, lightAndDarkShots, openFolder, selectPartition, test as base, VIEWPORT } from './explorer-fixtures.ts';

const T0 = 1_717_000_000_000;

/**
 * Two partitions of `<tmp>/odd-logs` (no clean shutdown):
 * - `refunds-0`: 300 records, one per batch, an offset-index entry every 1,024 bytes, the batch at
 *   offset 7 failing its CRC-32C (one value byte changed): far from the segment's tail, so the quick
 *   tail check of the health badge does not read it, while the records table flags it;
 * - `ledger-0`: offsets 0 – 9 and 25 – 29 (10 – 24 removed, as compaction does), then the first
 *   60 bytes of a 3-record batch at offset 30 (a cut tail claiming 30 – 32, past logEndOffset 30),
 *   and a high watermark of 33 (the checkpoint is past the log end, as on a copy taken mid-write).
 */
function buildOddLogs(logDir: string): { crcPosition: number } {
  const refunds = Array.from({ length: 300 }, (_, i) => rec(`refund-${i}`, `amount-${100 + i}`, T0 + i * 1000));
  const dir = buildPartition(logDir, { topic: 'refunds', segments: [{ batches: singles(...refunds) }], indexIntervalBytes: 1024 }, { highWatermark: 300n, recoveryPoint: 0n });
  const file = join(dir, '00000000000000000000.log');
  const b = readFileSync(file);
  let position = 0;
  for (let i = 0; i < 7; i++) position += 12 + b.readInt32BE(position + 8);
  const size = 12 + b.readInt32BE(position + 8);
  b[position + size - 2] ^= 0x01; // the value's last digit: "amount-107" -> "amount-106"
  writeFileSync(file, b);
  const cut = encodeBatch({ baseOffset: 30n, records: [rec('l-30', 'x', T0 + 30_000), rec('l-31', 'y', T0 + 31_000), rec('l-32', 'z', T0 + 32_000)] }).subarray(0, 60);
  const ledger = [...Array.from({ length: 10 }, (_, i) => ({ baseOffset: BigInt(i), records: [rec(`l-${i}`, 'v', T0 + i * 1000)] })), ...Array.from({ length: 5 }, (_, i) => ({ baseOffset: BigInt(25 + i), records: [rec(`l-${25 + i}`, 'v', T0 + (25 + i) * 1000)] }))];
  buildPartition(logDir, { topic: 'ledger', segments: [{ batches: ledger, tail: cut }] }, { highWatermark: 33n, recoveryPoint: 0n });
  return { crcPosition: position };
}

const test = base.extend<{ demo: { demoDir: string; smallDir: string; oddDir: string; crcPosition: number } }>({
  demo: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-daily-')));
    const demoDir = join(tmp, 'demo-logs');
    generateDemoLogDir(demoDir);
    const smallDir = join(tmp, 'small-logs');
    const records = Array.from({ length: 70 }, (_, i) => rec(`order-${i}`, JSON.stringify({ order: i }), 1_717_000_000_000 + i * 1000));
    buildPartition(smallDir, { topic: 'orders', segments: [{ batches: singles(...records) }] }, { highWatermark: 70n });
    const oddDir = join(tmp, 'odd-logs');
    const { crcPosition } = buildOddLogs(oddDir);
    await use({ demoDir, smallDir, oddDir, crcPosition });
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
const shots = (page: Page, name: string): Promise<void> => lightAndDarkShots(page, `daily-${name}`);

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

test('health: a CRC failure the records table flags is never "CRC not checked"; Verify gives no "run Verify" advice and lists the recovery note of the badge', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.oddDir);
  await selectPartition(page, 'refunds-0');
  await page.getByTestId('tab-records').click();
  // (The first page waits for the log worker to start: slow on a loaded machine.)
  await expect(page.locator('[data-testid=record-row][data-offset="7"] [data-testid=flag]')).toHaveText('CRC', { timeout: 30_000 });
  const badge = page.getByTestId('health-badge');
  await expect(badge).toContainText('CRC error');
  await expect(badge).not.toContainText('CRC not checked');
  await expect(badge).toHaveClass(/error/);
  await badge.click();
  await expect(page.getByTestId('health-details')).toContainText(`crc-mismatch`);
  await expect(page.getByTestId('health-details')).toContainText(`@ ${demo.crcPosition}`);
  await expect(page.locator('[data-testid=health-finding]', { hasText: 'recovery-needed' })).toHaveCount(1);
  await shots(page, 'health-crc');
  await badge.click();
  await page.getByTestId('tab-verify').click();
  await page.getByTestId('verify-run').click();
  const crc = page.locator('[data-testid=finding-row][data-code="crc-mismatch"]');
  await expect(crc).toHaveCount(1, { timeout: 30_000 });
  await expect(crc).toContainText(`@ byte ${demo.crcPosition.toLocaleString('en-US')}`);
  await expect(page.getByTestId('verify-findings')).not.toContainText(/run Verify/i);
  await expect(page.locator('[data-testid=finding-row][data-code="recovery-needed"]')).toHaveCount(1);
  await expect(page.getByTestId('verify-summary')).toContainText('1 note');
  await shots(page, 'verify-notes');
});

test('hole map: the legend adds up to the summary (offsets past logEndOffset told apart) and the high watermark label stays inside the map', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.oddDir);
  await selectPartition(page, 'ledger-0');
  await page.getByTestId('tab-holes').click();
  await expect(page.getByTestId('holes-summary')).toContainText('15 of 30 offsets in [logStartOffset, logEndOffset) hold no record', { timeout: 30_000 });
  const legend = page.getByTestId('holes-totals');
  await expect(legend.locator('[data-cause="compacted-between-batches"]')).toContainText('15 offsets · 1 range');
  await expect(legend.locator('[data-cause="truncated-tail"]')).toContainText('0 offsets · 1 range (+3 past logEndOffset)');
  const inSpan = await legend.locator('[data-in-span]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-in-span'))));
  expect(inSpan.reduce((a, b) => a + b, 0)).toBe(15);
  const map = page.getByTestId('hole-map');
  await expect(map).toHaveAttribute('data-labels', /high watermark 33/);
  const labels = JSON.parse((await map.getAttribute('data-labels'))!) as { text: string; x0: number; x1: number }[];
  const width = await map.evaluate((c) => (c as unknown as { clientWidth: number }).clientWidth);
  for (const l of labels) {
    expect(l.x0, l.text).toBeGreaterThanOrEqual(0);
    expect(l.x1, l.text).toBeLessThanOrEqual(width);
  }
  await shots(page, 'holes-legend');
});

/** Types into the Monaco value editor of the composer. */
async function typeValue(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid=value-editor] .monaco-editor .view-lines').click();
  await page.keyboard.type(text);
}

test('edit: "New batch" keeps the value format; after a roll the Append button is there without closing the roll panel', async ({ page, bridge, demo }) => {
  await openFolder(page, bridge.url, demo.smallDir);
  await page.getByTestId('tab-edit').click();
  await page.getByTestId('edit-enable-writing').click();
  await page.getByTestId('edit-key').fill('order-70');
  await page.getByTestId('value-mode-text').click();
  await typeValue(page, 'plain text');
  await page.getByTestId('edit-preview').click();
  await expect(page.getByTestId('preview-offsets')).toHaveText('70');
  await page.getByTestId('append-run').click();
  await expect(page.getByTestId('append-result')).toContainText('Appended 1 record at offset 70');
  await page.getByTestId('new-batch').click();
  await expect(page.getByTestId('value-mode-text')).toHaveAttribute('aria-checked', 'true');
  // Roll, then go on appending: the composer's batch previews and appends with the roll's result in view.
  await page.getByTestId('roll-open').click();
  await expect(page.getByTestId('roll-new-segment')).toHaveText('00000000000000000071.log');
  await page.getByTestId('roll-run').click();
  await expect(page.getByTestId('roll-result')).toContainText('New active segment 00000000000000000071.log');
  await page.getByTestId('edit-key').fill('order-71');
  await typeValue(page, 'more text');
  await page.getByTestId('edit-preview').click();
  await expect(page.getByTestId('preview-offsets')).toHaveText('71');
  await expect(page.getByTestId('append-run')).toBeEnabled();
  await shots(page, 'edit-after-roll');
});

test.describe('at 1280 × 800', () => {
  test.use({ viewport: { width: 1280, height: 800 } });
  test('clipped columns: every Segments column and the batches\' CRC column are in view; the hex view fits the inspector', async ({ page, bridge, demo }) => {
    await openFolder(page, bridge.url, demo.demoDir);
    await page.getByTestId('tab-segments').click();
    await expect(page.locator('[data-testid=segment-row]')).toHaveCount(5);
    await expect(page.locator('[data-testid=batch-row]').first()).toBeVisible({ timeout: 30_000 });
    const outside = async (table: string) =>
      page.getByTestId(table).evaluate((el) => {
        const box = el.getBoundingClientRect();
        const right = box.left + el.clientWidth;
        const out: string[] = [];
        for (const h of el.querySelectorAll('.thead > div')) {
          const r = h.getBoundingClientRect();
          if (r.right > right + 0.5 || h.scrollWidth > h.clientWidth) out.push(`${h.textContent} (${Math.round(r.right)} > ${Math.round(right)})`);
        }
        for (const row of [...el.querySelectorAll('.trow')].slice(0, 5)) for (const c of row.children) if (c.scrollWidth > c.clientWidth) out.push(`cell ${c.textContent}`);
        return out;
      });
    expect(await outside('segments-table')).toEqual([]);
    const crcHeader = page.getByTestId('batches-table').locator('.thead > div', { hasText: /^CRC$/ });
    const crcBox = (await crcHeader.boundingBox())!;
    const tableBox = (await page.getByTestId('batches-table').boundingBox())!;
    expect(crcBox.x + crcBox.width).toBeLessThanOrEqual(tableBox.x + tableBox.width);
    await shots(page, 'segments-1280');
    await page.getByTestId('tab-records').click();
    await page.locator('[data-testid=record-row][data-offset="3"]').click();
    await page.getByTestId('decoder-hex').click();
    await expect(page.locator('[data-testid=inspector-content] .view-line').first()).toContainText('00');
    const clip = await page.getByTestId('inspector-content').evaluate((el) => {
      const guard = el.querySelector('.overflow-guard') ?? el;
      const right = guard.getBoundingClientRect().right;
      let widest = 0;
      for (const s of el.querySelectorAll('.view-line > span')) widest = Math.max(widest, s.getBoundingClientRect().right);
      return { widest, right };
    });
    expect(clip.widest).toBeGreaterThan(0);
    expect(clip.widest).toBeLessThanOrEqual(clip.right);
    await shots(page, 'hex-1280');
  });
});
