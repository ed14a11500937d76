/**
 * The Cleanup view (issue 6): a generated compacted topic is previewed (summary figures, the
 * planned holes on the hole map), run after switching on "Open for writing" (the segments and the
 * hole map change as planned), and undone (sizes and offsets back); retention of a partition with
 * old timestamps through the `now` override; an invalid config value refused naming its key.
 * The trash goes to a temp folder (`KLX_TRASH_DIR`, set before the bridge starts).
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles, type BatchInput } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });
// Each preview, run and undo starts a worker thread (about a second from TypeScript source, more on a busy machine).
test.setTimeout(120_000);

const root = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-cleanup-')));
process.env.KLX_TRASH_DIR = join(root, 'trash');
test.afterAll(() => rmSync(root, { recursive: true, force: true }));

const TS = 1_717_000_000_000;
let n = 0;

/**
 * `customers-0` (cleanup.policy=compact from the topic sidecar): 96 single-record batches in three
 * segments (0, 40, 80 active). Segment 0 cycles 16 keys, segment 1 updates the even ones only, a
 * keyless record at 57 and a tombstone of customer-5 at 60. Compaction keeps 16 records of 0..79.
 */
function customers(): { logDir: string; dir: string } {
  const logDir = join(root, `c${++n}`, 'kafka-logs');
  const val = (i: number) => JSON.stringify({ customer: i % 16, name: `Customer ${i % 16}`, tier: ['gold', 'silver', 'bronze'][i % 3], version: i });
  const segs: BatchInput[][] = [[], [], []];
  for (let i = 0; i < 96; i++) {
    const seg = i < 40 ? 0 : i < 80 ? 1 : 2;
    const k = seg === 0 ? i % 16 : seg === 1 ? 2 * (i % 8) : i % 16;
    segs[seg]!.push({ records: [rec(i === 57 ? null : `customer-${i === 60 ? 5 : k}`, i === 60 ? null : val(i), TS + i * 60_000)] });
  }
  const dir = buildPartition(logDir, { topic: 'customers', segments: segs.map((batches) => ({ batches })) }, { highWatermark: 96n });
  writeFileSync(join(dir, 'klx-topic.properties'), 'cleanup.policy=compact\n');
  return { logDir, dir };
}

/** `events-0`: three segments of records from 2024-05-29 (0..19), a day later (20..39), ten days later (40..49, active). */
function events(): { logDir: string; dir: string } {
  const logDir = join(root, `e${++n}`, 'kafka-logs');
  const day = 86_400_000;
  const r = (i: number, t: number) => rec(`sensor-${i % 5}`, JSON.stringify({ reading: i, celsius: 20 + (i % 7) }), t);
  const dir = buildPartition(logDir, {
    topic: 'events',
    segments: [
      { batches: singles(...Array.from({ length: 20 }, (_, i) => r(i, TS + i * 3_600_000))) },
      { batches: singles(...Array.from({ length: 20 }, (_, i) => r(20 + i, TS + day + i * 3_600_000))) },
      { batches: singles(...Array.from({ length: 10 }, (_, i) => r(40 + i, TS + 10 * day + i * 60_000))) },
    ],
  });
  return { logDir, dir };
}

const sizes = (dir: string, names: string[]) => names.map((f) => statSync(join(dir, f)).size);

test('compaction: preview with planned holes, run after opening for writing, segments and hole map change as planned, Undo restores', async ({ page, bridge }) => {
  const { logDir, dir } = customers();
  const seg = (b: number) => `${String(b).padStart(20, '0')}.log`;
  const original = { sizes: sizes(dir, [seg(0), seg(40), seg(80)]), bytes: readFileSync(join(dir, seg(0))) };
  expect(original.sizes).toEqual([5686, 5643, 2284]);
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'customers-0');
  await page.getByTestId('tab-cleanup').click();
  await expect(page.getByTestId('cleanup-view')).toBeVisible();
  await page.getByTestId('cleanup-op-compaction').click();
  // The effective config and its source are the placeholders; the help text is Kafka's.
  await expect(page.getByTestId('cfg-cleanup.policy')).toHaveAttribute('placeholder', 'compact (topic sidecar)');
  await expect(page.getByTestId('cfg-delete.retention.ms')).toHaveAttribute('placeholder', '86400000 (default)');
  await expect(page.getByTestId('unit-delete.retention.ms')).toHaveText('1 d');
  await expect(page.getByTestId('cleanup-form')).toContainText('how long tombstones and transaction markers survive after their first cleaning');
  await expect(page.getByTestId('cleanup-run')).toBeDisabled();

  await page.getByTestId('cleanup-preview').click();
  const summary = page.getByTestId('cleanup-summary');
  await expect(summary).toHaveText('2 segments rewritten into 1; 64 records removed (superseded 63, keyless 1); 13.3 KiB → 4.41 KiB; logStartOffset 0 (unchanged)');
  await expect(page.getByTestId('cleanup-badge')).toHaveText('preview · nothing changed yet');
  const rows = page.locator('[data-testid=cleanup-seg-row]');
  await expect(rows).toHaveCount(3);
  expect(await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-action'), e.getAttribute('data-base'), e.getAttribute('data-bytes'), e.getAttribute('data-records')]))).toEqual([
    ['rewrite', '0', '5686', '40'],
    ['rewrite', '40', '5643', '40'],
    ['create', '0', '2231', '16'],
  ]);
  await expect(page.locator('[data-testid=cleanup-removed-row][data-reason=superseded]')).toHaveAttribute('data-records', '63');
  await expect(page.locator('[data-testid=cleanup-removed-row][data-reason=keyless]')).toContainText('57');
  // The planned holes drawn on the map (merged per cause where they touch).
  const map = page.getByTestId('hole-map');
  await expect(map).toHaveAttribute(
    'data-planned',
    '0-24:superseded,26-26:superseded,28-28:superseded,30-30:superseded,32-32:superseded,34-34:superseded,36-38:superseded,40-56:superseded,57-57:keyless,58-59:superseded,61-71:superseded',
  );
  // Pixels: the hatched outline of 0..24 is the superseded colour; offset 25 (kept) is plain records blue.
  const px = await map.evaluate((c) => {
    const canvas = c as unknown as { width: number; height: number; getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
    const g = canvas.getContext('2d');
    const dpr = canvas.width / (c as unknown as { clientWidth: number }).clientWidth;
    const at = (offset: number, y: number) => Array.from(g.getImageData(Math.floor(((offset + 0.5) / 96) * canvas.width), Math.round(y * dpr), 1, 1).data.slice(0, 3));
    return { outlineTop: at(12, 23), kept: at(25, 50), keptTop: at(25, 23) };
  });
  expect(px.outlineTop).not.toEqual(px.kept);
  expect(px.keptTop).toEqual(px.kept);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-preview.png` });

  // Dark theme (system → light → dark), then back.
  await page.getByTestId('theme-toggle').click();
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.waitForTimeout(150);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-preview-dark.png` });
  await page.getByTestId('theme-toggle').click();

  // Run needs "Open for writing": the one-click switch next to it.
  await expect(page.getByTestId('cleanup-run')).toBeDisabled();
  await expect(page.locator('.run-wrap')).toHaveAttribute('title', /Open for writing/);
  await page.getByTestId('cleanup-write-switch').click();
  await expect(page.getByTestId('write-mode')).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByTestId('cleanup-run')).toBeEnabled();
  await page.getByTestId('cleanup-run').click();
  const confirm = page.getByTestId('cleanup-confirm');
  await expect(confirm).toContainText('rewrite customers-0/00000000000000000000.log');
  await expect(confirm).toContainText('rewrite customers-0/00000000000000000040.log');
  await expect(confirm).toContainText('remove 64 records, freeing 8.88 KiB');
  await expect(confirm).toContainText('cleaner-offset-checkpoint');
  await page.getByTestId('cleanup-confirm-ok').click();

  await expect(page.getByTestId('cleanup-badge')).toHaveText('measured');
  await expect(page.getByTestId('cleanup-diff')).toHaveText('matches the preview exactly');
  await expect(page.getByTestId('cleanup-summary')).toHaveText('2 segments rewritten into 1; 64 records removed (superseded 63, keyless 1); 13.3 KiB → 4.41 KiB; logStartOffset 0 (unchanged)');
  await expect(page.getByTestId('cleanup-trash-line')).toContainText('Undo is possible until the trash is emptied');
  expect(sizes(dir, [seg(0), seg(80)])).toEqual([2231, 2284]);
  // The hole map reloaded: it now draws the holes the run made, no overlay.
  await expect(page.getByTestId('hole-map')).not.toHaveAttribute('data-planned', /.+/);
  await expect(page.getByTestId('partition-header')).toContainText('4.41 KiB');
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-result.png` });

  await page.getByTestId('tab-segments').click();
  await expect(page.locator('[data-testid=segment-row]')).toHaveCount(2);
  expect(await page.locator('[data-testid=segment-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-base')))).toEqual(['0', '80']);
  await page.getByTestId('tab-holes').click();
  await expect(page.getByTestId('holes-summary')).toContainText('64 of 96 offsets');
  await expect(page.locator('[data-testid=holes-row]').first()).toHaveAttribute('data-from', '0');

  // Undo: the three segments and their bytes come back; no hole left.
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-undo').click();
  await expect(page.getByTestId('cleanup-undone')).toContainText('compaction reversed — 6 files restored');
  expect(sizes(dir, [seg(0), seg(40), seg(80)])).toEqual(original.sizes);
  expect(readFileSync(join(dir, seg(0))).equals(original.bytes)).toBe(true);
  await page.getByTestId('tab-segments').click();
  await expect(page.locator('[data-testid=segment-row]')).toHaveCount(3);
  expect(await page.locator('[data-testid=segment-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-base')))).toEqual(['0', '40', '80']);
  await page.getByTestId('tab-holes').click();
  await expect(page.getByTestId('holes-totals')).toContainText('no hole: every offset holds a record');
});

test('retention with the now override: old segments go, logStartOffset moves; an invalid value is refused naming its key', async ({ page, bridge }) => {
  const { logDir, dir } = events();
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'events-0');
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-op-retention').click();
  await expect(page.getByTestId('cfg-retention.ms')).toHaveAttribute('placeholder', '604800000 (default)');
  await expect(page.getByTestId('unit-retention.ms')).toHaveText('7 d');

  // An invalid value: refused by the engine's parser, the field outlined.
  await page.getByTestId('cfg-retention.ms').fill('soon');
  await page.getByTestId('cleanup-preview').click();
  const error = page.getByTestId('cleanup-error');
  await expect(error).toHaveAttribute('data-code', 'invalid-config');
  await expect(error).toContainText('retention.ms must be an integer number of milliseconds, got "soon"');
  await expect(error).toContainText('Fix the value of retention.ms');
  await expect(page.locator('.field.bad')).toHaveCount(1);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-error.png` });
  await page.getByTestId('cfg-retention.ms').fill('');

  // The wall clock would delete everything (2024 is long past): `now` = 2024-06-08 00:00 UTC instead.
  // Segment 0 ends 2024-05-30 11:26, segment 20 on 2024-05-31 11:26: both more than 7 days before;
  // segment 40 ends 2024-06-08 16:35: it stays.
  await page.getByTestId('cleanup-now-fixed').click();
  await page.getByTestId('cleanup-now').fill('2024-06-08T00:00:00.000');
  await page.getByTestId('cleanup-preview').click();
  await expect(page.getByTestId('cleanup-summary')).toContainText('2 segments deleted; 40 records removed (retention 40)');
  await expect(page.getByTestId('cleanup-summary')).toContainText('logStartOffset 0 → 40');
  await expect(page.getByTestId('hole-map')).toHaveAttribute('data-planned', '0-39:retention');
  await expect(page.getByTestId('cleanup-notes')).toContainText('time retention stops at segment 40');
  expect(await page.locator('[data-testid=cleanup-seg-row]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-action')}:${e.getAttribute('data-base')}`))).toEqual(['delete:0', 'delete:20']);
  // Each deleted segment names the rule of UnifiedLog.deleteOldSegments that deletes it.
  expect(await page.getByTestId('cleanup-seg-rule').allTextContents()).toEqual([' by retention.ms', ' by retention.ms']);
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-retention.png` });

  await page.getByTestId('write-mode').click();
  await page.getByTestId('cleanup-run').click();
  await expect(page.getByTestId('cleanup-confirm')).toContainText('delete events-0/00000000000000000000.log');
  await page.getByTestId('cleanup-confirm-ok').click();
  await expect(page.getByTestId('cleanup-badge')).toHaveText('measured');
  await expect(page.getByTestId('cleanup-diff')).toHaveText('matches the preview exactly');
  await expect(page.getByTestId('partition-header')).toContainText('logStartOffset40');
  await page.getByTestId('tab-segments').click();
  expect(await page.locator('[data-testid=segment-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-base')))).toEqual(['40']);

  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-undo').click();
  await expect(page.getByTestId('cleanup-undone')).toContainText('retention reversed');
  await page.getByTestId('tab-segments').click();
  await expect(page.locator('[data-testid=segment-row]')).toHaveCount(3);
  await expect(page.getByTestId('partition-header')).toContainText('logStartOffset0');
  expect(statSync(join(dir, '00000000000000000000.log')).size).toBeGreaterThan(0);
});

test('a whole log directory: one row per partition, a corrupt partition named with file and byte position', async ({ page, bridge }) => {
  const { logDir } = customers();
  const bad = encodeBatch({ baseOffset: 1n, records: [rec('k2', 'b', TS)] });
  bad.writeInt16BE(5, 21); // compression codec id 5: no such codec
  buildPartition(logDir, { topic: 'payments', segments: [{ baseOffset: 0n, batches: [{ records: [rec('k1', 'a', TS)] }, bad, { records: [rec('k1', 'c', TS)] }] }, { baseOffset: 3n, batches: singles(rec('k3', 'x', TS)) }] });
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'customers-0');
  await page.getByTestId('tab-cleanup').click();
  await page.getByTestId('cleanup-op-compaction').click();
  await page.getByTestId('cleanup-scope').selectOption('logdir');
  await page.getByTestId('cleanup-preview').click();
  const rows = page.locator('[data-testid=cleanup-outcome]');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute('data-rel', 'customers-0');
  await expect(rows.nth(0)).toContainText('64 removed');
  await expect(rows.nth(1)).toHaveAttribute('data-rel', 'payments-0');
  await expect(rows.nth(1)).toContainText('unknown-codec');
  await expect(page.getByTestId('cleanup-right')).toContainText('2 partitions: 1 to change, 1 not cleanable');
  await page.screenshot({ path: `${SCREENSHOTS}/cleanup-folder.png` });

  // The damaged partition alone: the preview fails with the file, the byte position and the way forward.
  await selectPartition(page, 'payments-0');
  await page.getByTestId('cleanup-preview').click();
  const error = page.getByTestId('cleanup-error');
  await expect(error).toHaveAttribute('data-code', 'unknown-codec');
  await expect(page.getByTestId('cleanup-error-where')).toHaveText(`${join(logDir, 'payments-0', '00000000000000000000.log')} · byte position 71`);
  await expect(error).toContainText('Compaction here refuses a damaged segment and changes nothing');
  await expect(error.getByRole('button', { name: 'Verify the partition…' })).toBeVisible();
});
