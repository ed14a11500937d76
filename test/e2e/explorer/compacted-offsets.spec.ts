/**
 * The compacted `__consumer_offsets` partitions of the real `kafka-2.7.1-compacted-offsets` data
 * set (a temp copy): the log tree, the records table with the compaction holes as rows with their
 * cause, the hole map with its totals and markers, the segments and their batches, and the
 * inspector decoding a real offset commit and group metadata record.
 */
import { SCREENSHOTS, copyRealData, expect, HAVE_REAL_DATA, openFolder, selectPartition, test, visibleOffsets, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

test.skip(!HAVE_REAL_DATA, '../shared/kafka-real-data not found: real-data browser tests skipped');

let real: { dir: string; remove: () => void };
test.beforeAll(() => {
  real = copyRealData('kafka-2.7.1-compacted-offsets');
});
test.afterAll(() => real.remove());

test('the log tree lists the log directory with health badges; empty partitions are folded away', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, real.dir);
  const tree = page.getByTestId('log-tree');
  await expect(tree).toContainText('__consumer_offsets');
  // 5 of the 50 __consumer_offsets partitions hold data.
  await expect(page.locator('[data-testid=tree-partition]')).toHaveCount(5);
  await expect(tree).toContainText('empty partitions hidden');
  const p39 = page.locator('[data-testid=tree-partition][data-name="__consumer_offsets-39"]');
  await expect(p39).toContainText('0 – 19'); // logStartOffset 0, logEndOffset 20: the last offset is 19
  await expect(p39).toContainText('dirty 0.0 %');
  await page.screenshot({ path: `${SCREENSHOTS}/log-tree.png` });
});

test('records of __consumer_offsets-39: holes [0,3] and [5,15] are rows removed by compaction', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, real.dir);
  await selectPartition(page, '__consumer_offsets-39');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]')).toHaveCount(5);
  expect(await visibleOffsets(page)).toEqual(['4', '16', '17', '18', '19']);
  const holes = page.locator('[data-testid=hole-row]');
  await expect(holes).toHaveCount(2);
  await expect(holes.nth(0)).toHaveAttribute('data-from', '0');
  await expect(holes.nth(0)).toHaveAttribute('data-to', '3');
  await expect(holes.nth(0)).toHaveAttribute('data-cause', 'compacted-between-batches');
  await expect(holes.nth(0)).toContainText('offsets 0 – 3 absent (4): removed by compaction');
  await expect(holes.nth(1)).toHaveAttribute('data-from', '5');
  await expect(holes.nth(1)).toHaveAttribute('data-to', '15');
  // The decoded key of the tombstone at offset 4 and of the commit at 16.
  await expect(page.locator('[data-testid=record-row][data-offset="4"]')).toContainText('GroupMetadata · console-consumer-52588');
  await expect(page.locator('[data-testid=record-row][data-offset="16"]')).toContainText('OffsetCommit · console-consumer-65070 · test_topic_0603-0');
  // Records 40, 16...: the header tells the record count apart from the offset span (B11).
  await expect(page.getByTestId('record-count')).toContainText('5');
  await page.locator('[data-testid=record-row][data-offset="16"]').click();
  await expect(page.getByTestId('inspector')).toContainText('Record 16');
  await page.screenshot({ path: `${SCREENSHOTS}/records.png` });
});

test('the hole map of __consumer_offsets-39 draws the holes by cause; clicking it jumps the records table', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, real.dir);
  await selectPartition(page, '__consumer_offsets-39');
  await page.getByTestId('tab-holes').click();
  await expect(page.getByTestId('hole-map')).toBeVisible();
  await expect(page.getByTestId('holes-summary')).toContainText('15 of 20 offsets');
  await expect(page.getByTestId('holes-totals').locator('[data-cause="compacted-between-batches"]')).toContainText('15 offsets · 2 ranges');
  const rows = page.locator('[data-testid=holes-row]');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toHaveAttribute('data-from', '5');
  // Canvas pixels: the first fifth (offsets 0..3) is the hole colour, offset 4 blue.
  // (Browser code: this file is type-checked without the DOM library, hence the loose types.)
  const colours = await page.getByTestId('hole-map').evaluate((c) => {
    const canvas = c as unknown as { width: number; height: number; getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
    const g = canvas.getContext('2d');
    const w = canvas.width;
    const y = Math.round(canvas.height * 0.6);
    const at = (offset: number) => Array.from(g.getImageData(Math.floor(((offset + 0.5) / 20) * w), y, 1, 1).data.slice(0, 3));
    return { hole: at(1), record: at(4), later: at(10) };
  });
  expect(colours.hole).not.toEqual(colours.record);
  expect(colours.later).toEqual(colours.hole);
  await page.screenshot({ path: `${SCREENSHOTS}/hole-map.png` });
  // Clicking at offset ~17 shows it in the records table.
  const box = (await page.getByTestId('hole-map').boundingBox())!;
  await page.mouse.click(box.x + box.width * (17.5 / 20), box.y + 50);
  await expect(page.getByTestId('tab-records')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('[data-testid=record-row][data-offset="17"]')).toHaveClass(/selected/);
});

test('segments of __consumer_offsets-28: the cleaned segment 0 starts at offset 1; batches with CRC state', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, real.dir);
  await selectPartition(page, '__consumer_offsets-28');
  await page.getByTestId('tab-segments').click();
  const segs = page.locator('[data-testid=segment-row]');
  await expect(segs).toHaveCount(2);
  await expect(segs.nth(0)).toContainText('closed');
  await expect(segs.nth(1)).toContainText('active');
  await expect(segs.nth(1)).toContainText('missing'); // the 10 MiB active .index was not carried over
  await expect(page.locator('[data-testid=batch-row]')).toHaveCount(1);
  await expect(page.locator('[data-testid=batch-row]').first()).toContainText('ok');
  await page.screenshot({ path: `${SCREENSHOTS}/segments.png` });
});

test('the inspector decodes a real offset commit and a group metadata record of __consumer_offsets', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, real.dir);
  await selectPartition(page, '__consumer_offsets-39');
  await page.getByTestId('tab-records').click();
  await page.locator('[data-testid=record-row][data-offset="16"]').click();
  const editor = page.getByTestId('inspector-content');
  // Main's decode (the renderer decodes nothing): the value is OffsetCommitValue v3, the key names group and partition.
  await expect(page.getByTestId('decoder-decoded')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('decoded-format')).toContainText('(consumer-offsets)');
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"offset": 9');
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"commitTimestamp": 1685814551579');
  await page.getByTestId('part-key').click();
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"group": "console-consumer-65070"');
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"topic": "test_topic_0603"');
  await page.getByTestId('part-value').click();
  await page.screenshot({ path: `${SCREENSHOTS}/inspector.png` });

  // Group metadata with a member (partition 17, offset 0).
  await selectPartition(page, '__consumer_offsets-17');
  await page.locator('[data-testid=record-row][data-offset="0"]').click();
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"protocolType": "consumer"');
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('"clientHost": "/127.0.0.1"');
  // The same value as hex.
  await page.getByTestId('decoder-hex').click();
  await expect(editor.locator('.monaco-editor .view-lines')).toContainText('00000000');
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-group-metadata.png` });
});
