/**
 * Transactions and large values in the records table and the inspector (built with the test log
 * builder): COMMIT/ABORT markers are flagged control rows, aborted data is marked (read_uncommitted)
 * or becomes an aborted-transaction hole (read_committed), and a 3 MiB value shows its first MiB
 * with a "Save full value" button whose download holds every byte.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeControlKey, encodeEndTxnMarkerValue } from '../../../src-main/engine/format/control.ts';
import { buildPartition, rec, type BatchInput } from '../../support/log-builder.ts';
import { SCREENSHOTS, expect, openFolder, selectPartition, test, visibleOffsets, VIEWPORT } from './explorer-fixtures.ts';

test.use({ viewport: VIEWPORT });

let tmp: string;
let logDir: string;
const BIG = 3 * 1024 * 1024 + 17;

function txn(pid: number, baseOffset: number, keys: string[]): BatchInput {
  return { baseOffset: BigInt(baseOffset), isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0, records: keys.map((k, i) => rec(k, `{"payment":"${k}","step":${i}}`, 1_717_000_000_000 + baseOffset * 1000)) };
}
function marker(pid: number, type: 'COMMIT' | 'ABORT', offset: number): BatchInput {
  return { baseOffset: BigInt(offset), isControl: true, isTransactional: true, producerId: BigInt(pid), producerEpoch: 0, records: [{ key: encodeControlKey(type === 'ABORT' ? 0 : 1), value: encodeEndTxnMarkerValue(3), timestamp: 1_717_000_000_000n + BigInt(offset) * 1000n }] };
}

test.beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-txn-')));
  logDir = join(tmp, 'kafka-logs');
  buildPartition(logDir, {
    topic: 'payments-txn',
    segments: [
      {
        batches: [txn(5, 0, ['p-1', 'p-2']), marker(5, 'ABORT', 2), txn(5, 3, ['p-3']), marker(5, 'COMMIT', 4), txn(6, 5, ['p-4', 'p-5']), marker(6, 'COMMIT', 7)],
        txnIndex: [{ producerId: 5n, firstOffset: 0n, lastOffset: 2n, lastStableOffset: 3n }],
      },
    ],
  });
  const big = Buffer.alloc(BIG, 0x41);
  big.write('{"blob":"', 0);
  buildPartition(logDir, { topic: 'blobs', segments: [{ batches: [{ records: [{ key: 'huge', value: big, timestamp: 1_717_000_000_000n }] }, { records: [rec('small', 'tiny', 1_717_000_001_000)] }] }] });
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('markers are flagged control rows; aborted data is marked, or a hole under read_committed', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'payments-txn-0');
  await page.getByTestId('tab-records').click();
  await expect(page.locator('[data-testid=record-row]')).toHaveCount(8);
  await expect(page.locator('[data-testid=record-row][data-offset="0"]')).toContainText('ABORTED');
  await expect(page.locator('[data-testid=record-row][data-offset="2"]')).toContainText('ABORT');
  await expect(page.locator('[data-testid=record-row][data-offset="2"]')).toContainText('control key ABORT');
  await expect(page.locator('[data-testid=record-row][data-offset="4"]')).toContainText('COMMIT');
  await expect(page.locator('[data-testid=record-row][data-offset="5"]')).toContainText('TXN');
  await page.locator('[data-testid=record-row][data-offset="1"]').click();
  await expect(page.getByTestId('inspector-meta')).toContainText('data of an aborted transaction');
  await page.screenshot({ path: `${SCREENSHOTS}/records-transactions.png` });
  await page.getByTestId('isolation').selectOption('read_committed');
  await expect(page.locator('[data-testid=hole-row][data-cause="aborted-transaction"]')).toHaveAttribute('data-to', '1');
  expect(await visibleOffsets(page)).toEqual(['2', '3', '4', '5', '6', '7']);
});

test('a 3 MiB value: the first MiB is shown, and "Save full value" downloads every byte', async ({ page, bridge }) => {
  await openFolder(page, bridge.url, logDir);
  await selectPartition(page, 'blobs-0');
  await page.getByTestId('tab-records').click();
  await page.locator('[data-testid=record-row][data-offset="0"]').click();
  await expect(page.getByTestId('inspector')).toContainText('Showing the first 1.00 MiB of 3.00 MiB');
  const save = page.getByTestId('save-value');
  await expect(save).toContainText('Save full value (3.00 MiB)');
  const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
  const path = join(tmp, 'download.bin');
  await download.saveAs(path);
  expect(statSync(path).size).toBe(BIG);
  const bytes = readFileSync(path);
  expect(bytes.subarray(0, 9).toString()).toBe('{"blob":"');
  expect(bytes[BIG - 1]).toBe(0x41);
  expect(download.suggestedFilename()).toBe('blobs-0-0.value.bin');
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-large-value.png` });
});
