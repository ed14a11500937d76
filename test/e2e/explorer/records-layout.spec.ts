/**
 * The records table's columns at the default window sizes (1280 × 800 and 1600 × 900, inspector
 * open), light and dark: every flag badge (TOMBSTONE, ABORTED, TXN, COMMIT, ABORT, and two on one
 * record: ABORTED TOMBSTONE, TXN TOMBSTONE) is whole inside its cell, and the cells that are sized
 * for their content (offset, timestamp, flags, size) and every column header show their text
 * without cutting it. Long keys, values, headers and batch texts may end in an ellipsis; that is
 * checked too (they clip with `text-overflow: ellipsis`, never mid-glyph). Nothing is cut at the
 * window's edge either: the table does not need to scroll sideways (at 1280 × 800 with the inspector
 * open, the Batch @ byte and Headers columns are left out for that: the inspector shows both).
 *
 * Screenshots: `records-flags-1280-light.png`, `records-flags-1280-dark.png`,
 * `records-flags-1600-light.png`, `records-flags-1600-dark.png`.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { buildPartition, rec, type BatchInput } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test } from './explorer-fixtures.ts';

let tmp: string;
let logDir: string;
const T0 = 1_717_000_000_000;

function marker(pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput {
  return { baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(3), timestamp: BigInt(T0 + offset * 1000) }] };
}

/** The flags each offset must show, in order. */
const FLAGS: Record<string, string[]> = {
  '0': [],
  '1': ['TOMBSTONE'],
  '2': ['ABORTED'],
  '3': ['ABORTED', 'TOMBSTONE'],
  '4': ['ABORT'],
  '5': ['TXN', 'TOMBSTONE'],
  '6': ['COMMIT'],
  '7': [],
};

test.beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-flags-')));
  logDir = join(tmp, 'kafka-logs');
  buildPartition(logDir, {
    topic: 'orders-flags',
    segments: [
      {
        batches: [
          { baseOffset: 0n, records: [rec('order-1000', '{"order":1000,"state":"created","amount":"12.50","currency":"EUR"}', T0)] },
          { baseOffset: 1n, records: [rec('order-1001', null, T0 + 1000)] },
          { baseOffset: 2n, isTransactional: true, producerId: 7n, producerEpoch: 0, baseSequence: 0, records: [rec('order-1002', '{"order":1002,"state":"paid"}', T0 + 2000), rec('order-1003', null, T0 + 2000)] },
          marker(7, 'ABORT', 4),
          { baseOffset: 5n, isTransactional: true, producerId: 8n, producerEpoch: 0, baseSequence: 0, records: [rec('order-1005', null, T0 + 5000)] },
          marker(8, 'COMMIT', 6),
          { baseOffset: 7n, records: [rec('order-1007', '{"order":1007,"state":"shipped","carrier":"DHL","tracking":"JJD0099999999"}', T0 + 7000, [{ key: 'trace-id', value: Buffer.from('4bf92f3577b34da6a3ce929d0e0e4736') }])] },
        ],
        txnIndex: [{ producerId: 7n, firstOffset: 2n, lastOffset: 4n, lastStableOffset: 5n }],
      },
    ],
  });
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Overflow {
  what: string;
  scrollWidth: number;
  clientWidth: number;
}

/**
 * Cells and header labels whose text does not fit (scrollWidth > clientWidth), badges outside their
 * cell, and cut cells without an ellipsis. Page code is passed as source text: this file is
 * type-checked without the DOM library.
 */
async function clipped(page: Page): Promise<{ overflow: Overflow[]; badgesOutside: string[]; ellipsisMissing: string[] }> {
  return page.evaluate(`(() => {
    const overflow = [];
    const badgesOutside = [];
    const ellipsisMissing = [];
    const table = document.querySelector('[data-testid=records-table]');
    const head = table.parentElement.querySelector('.thead');
    for (const h of head.children) {
      if (h.scrollWidth > h.clientWidth) overflow.push({ what: 'header ' + h.textContent, scrollWidth: h.scrollWidth, clientWidth: h.clientWidth });
    }
    for (const row of table.querySelectorAll('[data-testid=record-row]')) {
      const off = row.dataset.offset;
      for (const cell of row.children) {
        const cls = cell.className;
        const sized = /\\bc-(off|ts|flags|size)\\b/.test(cls);
        if (sized && cell.scrollWidth > cell.clientWidth) overflow.push({ what: 'offset ' + off + ' ' + cls, scrollWidth: cell.scrollWidth, clientWidth: cell.clientWidth });
        if (!sized && cell.scrollWidth > cell.clientWidth && getComputedStyle(cell).textOverflow !== 'ellipsis') ellipsisMissing.push('offset ' + off + ' ' + cls);
      }
      const cell = row.querySelector('[data-testid=record-flags]');
      const c = cell.getBoundingClientRect();
      for (const b of cell.querySelectorAll('[data-testid=flag]')) {
        const r = b.getBoundingClientRect();
        if (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.top < c.top - 0.5 || r.bottom > c.bottom + 0.5 || b.scrollWidth > b.clientWidth) badgesOutside.push('offset ' + off + ' ' + b.textContent);
      }
    }
    return { overflow, badgesOutside, ellipsisMissing };
  })()`);
}

for (const size of [
  { width: 1280, height: 800 },
  { width: 1600, height: 900 },
]) {
  test(`${size.width} × ${size.height}: every flag badge is whole, sized columns and headers are not cut (light and dark)`, async ({ page, bridge }) => {
    await page.setViewportSize(size);
    await openFolder(page, bridge.url, logDir);
    await selectPartition(page, 'orders-flags-0');
    await page.getByTestId('tab-records').click();
    const rows = page.locator('[data-testid=record-row]');
    await expect(rows).toHaveCount(8);
    await expect(page.getByTestId('inspector')).toBeVisible();
    for (const [offset, flags] of Object.entries(FLAGS)) {
      await expect(page.locator(`[data-testid=record-row][data-offset="${offset}"] [data-testid=flag]`)).toHaveText(flags);
    }
    if (size.width === 1600) {
      // The record with headers brings the Headers column; the batch column names batch and position.
      await expect(page.locator('[data-testid=record-row][data-offset="7"]')).toContainText('trace-id=4bf92f35');
      await expect(page.locator('[data-testid=record-row][data-offset="3"] .c-batch')).toHaveText('2..3 @224');
    } else {
      await expect(page.locator('[data-testid=record-row][data-offset="7"] .c-hdr')).toHaveCount(0);
      await expect(page.locator('[data-testid=record-row][data-offset="7"] .c-batch')).toHaveCount(0);
    }
    for (const theme of ['light', 'dark'] as const) {
      if (theme === 'dark') {
        // system → light → dark
        await page.getByTestId('theme-toggle').click();
        await page.getByTestId('theme-toggle').click();
        await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
      }
      await page.locator('[data-testid=record-row][data-offset="3"]').click();
      await page.waitForTimeout(150);
      const found = await clipped(page);
      expect(found.badgesOutside, `${theme}: badges outside their cell`).toEqual([]);
      expect(found.overflow, `${theme}: cut cells or headers`).toEqual([]);
      expect(found.ellipsisMissing, `${theme}: cells cut without an ellipsis`).toEqual([]);
      // No column runs past the window's edge.
      const side = await page.getByTestId('records-table').evaluate((el) => ({ scroll: el.parentElement!.parentElement!.scrollWidth, client: el.parentElement!.parentElement!.clientWidth }));
      expect(side.scroll, `${theme}: the table scrolls sideways`).toBeLessThanOrEqual(side.client);
      // TOMBSTONE next to ABORTED: both badges wholly visible in the viewport, side by side.
      const badges = page.locator('[data-testid=record-row][data-offset="3"] [data-testid=flag]');
      const a = (await badges.nth(0).boundingBox())!;
      const b = (await badges.nth(1).boundingBox())!;
      expect(b.x).toBeGreaterThanOrEqual(a.x + a.width);
      expect(b.x + b.width).toBeLessThanOrEqual(size.width);
      await page.screenshot({ path: `${SCREENSHOTS}/records-flags-${size.width}-${theme}.png` });
    }
  });
}
