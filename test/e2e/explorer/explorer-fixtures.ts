/**
 * Fixtures of the explorer's browser tests, on top of `../fixtures.ts` (the bridge serving the
 * built renderer):
 * - `realCopy`: a writable temp copy of one real broker-written data set (`../shared/kafka-real-data`
 *   is read-only and never copied into the repository); tests that need it skip when it is absent;
 * - `big`: the 5,000,000-record partition of `big-partition.ts`, generated once per worker into a
 *   temp dir and removed at the end;
 * - `damaged`: a partition with a truncated last batch and a missing offset index, built with the
 *   test log builder;
 * - `crcDamaged`: a partition whose batch at offset 7 fails its CRC-32C (one value byte changed),
 *   with the stored CRC and the one kafkajs computes (no code in common with the engine's).
 * - `pendingSwap`: a compacted partition left by an interrupted cleaner: `0.log.swap` (offsets 15..19,
 *   the last value of each key) beside the segments 0 and 10 it replaces, and seg@20 active.
 * - `compressible`: a partition whose gzip batch of 2 records of 1.5 MiB of zeros inflates past
 *   this tool's default decompression bound (2 × max.message.bytes), then a small batch.
 * Pages are 1600 × 900 ({@link VIEWPORT}), a common support-desk screen.
 */
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { encodeBatch } from '../../../src-main/engine/format/record-batch.ts';
import { buildPartition, rec, singles } from '../../support/log-builder.ts';
import { REAL_DATA } from '../../support/real-data.ts';
import { expect, test as base } from '../fixtures.ts';
import { generateBigPartition, type BigPartition } from './big-partition.ts';
import { SCREENSHOTS } from '../fixtures.ts';

export { expect };
export { SCREENSHOTS } from '../fixtures.ts';

/** Copies a real data set into a fresh temp dir (made writable so it can be removed). */
export function copyRealData(caseName: string): { dir: string; remove: () => void } {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-real-')));
  const dir = join(tmp, caseName);
  cpSync(join(REAL_DATA, caseName), dir, { recursive: true });
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) chmodSync(join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
  chmodSync(dir, 0o755);
  return { dir, remove: () => rmSync(tmp, { recursive: true, force: true }) };
}

export const HAVE_REAL_DATA = existsSync(REAL_DATA);

interface ExplorerFixtures {
  /** A damaged partition: `<logDir>/payments-0` (truncated last batch, no .index). */
  damaged: { logDir: string; dir: string; cutAt: number };
  /** `<logDir>/refunds-0`, offsets 0..19, the batch at offset 7 (at `position`) failing its CRC. */
  crcDamaged: { logDir: string; dir: string; position: number; stored: number; computed: number };
  /** `<logDir>/prices-0`: segments 0 (0..9), 10 (10..19), 20 (20..29, active) and `0.log.swap` holding 15..19. */
  pendingSwap: { logDir: string; dir: string };
  /** `<logDir>/blobs-0`: a gzip batch at offsets 0..1 past the default decompression bound, then offset 2. */
  compressible: { logDir: string; dir: string };
}

interface WorkerFixtures {
  big: BigPartition;
}

export const test = base.extend<ExplorerFixtures, WorkerFixtures>({
  big: [
    async ({}, use) => {
      const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-big-')));
      const big = generateBigPartition(join(tmp, 'broker-1'));
      await use(big);
      rmSync(tmp, { recursive: true, force: true });
    },
    { scope: 'worker', timeout: 180_000 },
  ],
  damaged: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-dmg-')));
    const logDir = join(tmp, 'kafka-logs');
    const records = Array.from({ length: 40 }, (_, i) => rec(`order-${1000 + i}`, JSON.stringify({ order: 1000 + i, amount: (i * 7.25).toFixed(2), currency: 'EUR' }), 1_717_000_000_000 + i * 1000));
    const cut = encodeBatch({ baseOffset: 40n, records: [rec('order-1040', '{"order":1040,"amount":"290.00"}', 1_717_000_040_000)] });
    const tail = cut.subarray(0, cut.length - 23);
    const dir = buildPartition(logDir, { topic: 'payments', segments: [{ batches: singles(...records), tail, noIndex: true }] }, { highWatermark: 40n, recoveryPoint: 0n });
    const size = (await import('node:fs')).statSync(join(dir, '00000000000000000000.log')).size;
    await use({ logDir, dir, cutAt: size - tail.length });
    rmSync(tmp, { recursive: true, force: true });
  },
  crcDamaged: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-crc-')));
    const logDir = join(tmp, 'kafka-logs');
    const records = Array.from({ length: 20 }, (_, i) => rec(`refund-${i}`, `amount-${100 + i}`, 1_717_000_000_000 + i * 1000));
    const dir = buildPartition(logDir, { topic: 'refunds', segments: [{ batches: singles(...records) }] }, { highWatermark: 20n, recoveryPoint: 20n, cleanShutdown: true });
    const file = join(dir, '00000000000000000000.log');
    const b = readFileSync(file);
    let position = 0;
    for (let i = 0; i < 7; i++) position += 12 + b.readInt32BE(position + 8);
    const size = 12 + b.readInt32BE(position + 8);
    b[position + size - 2] ^= 0x01; // the value's last digit: "amount-107" -> "amount-106"
    writeFileSync(file, b);
    const stored = b.readUInt32BE(position + 17);
    const computed = kjsCrc32C(b.subarray(position + 21, position + size)) >>> 0;
    await use({ logDir, dir, position, stored, computed });
    rmSync(tmp, { recursive: true, force: true });
  },
  compressible: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-zip-')));
    const logDir = join(tmp, 'kafka-logs');
    const zeros = Buffer.alloc(1572864);
    const big = encodeBatch({ baseOffset: 0n, compression: 'gzip', records: [{ key: 'blob-0', value: zeros, timestamp: 1_717_000_000_000n }, { key: 'blob-1', value: zeros, timestamp: 1_717_000_001_000n }] });
    const small = encodeBatch({ baseOffset: 2n, records: [rec('after', 'small', 1_717_000_002_000)] });
    const dir = buildPartition(logDir, { topic: 'blobs', segments: [{ batches: [big, small] }] }, { highWatermark: 3n, recoveryPoint: 3n, cleanShutdown: true });
    await use({ logDir, dir });
    rmSync(tmp, { recursive: true, force: true });
  },
  pendingSwap: async ({}, use) => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-swap-')));
    const logDir = join(tmp, 'kafka-logs');
    const ts = 1_717_000_000_000;
    const dup = (from: number) => singles(...Array.from({ length: 10 }, (_, i) => rec(`sku-${i % 5}`, `price-${from + i}`, ts + (from + i) * 1000)));
    const active = singles(...Array.from({ length: 10 }, (_, i) => rec(`sku-${20 + i}`, `price-${20 + i}`, ts + (20 + i) * 1000)));
    const dir = buildPartition(logDir, { topic: 'prices', segments: [{ batches: dup(0) }, { batches: dup(10) }, { batches: active }] }, { highWatermark: 30n, recoveryPoint: 30n, cleanShutdown: true });
    writeFileSync(join(dir, 'klx-topic.properties'), 'cleanup.policy=compact\n');
    const swap = Buffer.concat([15, 16, 17, 18, 19].map((o) => encodeBatch({ baseOffset: BigInt(o), records: [rec(`sku-${o % 5}`, `price-${o}`, ts + o * 1000)] })));
    writeFileSync(join(dir, '00000000000000000000.log.swap'), swap);
    await use({ logDir, dir });
    rmSync(tmp, { recursive: true, force: true });
  },
});

/** kafkajs' CRC-32C, an implementation independent of the engine's. */
const kjsCrc32C = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

/** The page size of every explorer test (each spec file calls `test.use({ viewport: VIEWPORT })`). */
export const VIEWPORT = { width: 1600, height: 900 };

/** Opens the app on `bridge.url`, waits for it, and opens `path` through the folder field. */
export async function openFolder(page: Page, url: string, path: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('[data-testid=app-loaded]')).toBeVisible();
  await page.getByTestId('folder-input').fill(path);
  await page.getByTestId('folder-input').press('Enter');
  await expect(page.getByTestId('opened-folders')).toContainText(path);
}

/** Selects a partition in the log tree by folder name (showing empty partitions if needed). */
export async function selectPartition(page: Page, name: string): Promise<void> {
  const node = page.locator(`[data-testid=tree-partition][data-name="${name}"]`);
  if ((await node.count()) === 0) await page.getByTestId('hide-empty').uncheck();
  await node.click();
  await expect(page.getByTestId('partition-header')).toContainText(name.replace(/-(\d+)$/, ''));
}

/** The offsets of the record rows on screen. */
export async function visibleOffsets(page: Page): Promise<string[]> {
  return page.locator('[data-testid=record-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-offset') ?? ''));
}

/** Switches the app's theme with the toolbar toggle until `<html data-theme>` is `theme`. */
async function setTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const toggle = page.getByTestId('theme-toggle');
  for (let i = 0; i < 3 && (await page.locator('html').getAttribute('data-theme')) !== theme; i++) await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

/**
 * Screenshots the page in the light and then the dark theme, as `<SCREENSHOTS>/<name>-light.png`
 * and `<name>-dark.png`, and leaves it light (for the next steps and the next screenshots).
 */
export async function lightAndDarkShots(page: Page, name: string): Promise<void> {
  await setTheme(page, 'light');
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-light.png` });
  await setTheme(page, 'dark');
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-dark.png` });
  await setTheme(page, 'light');
}

/**
 * Every entry under `dir` as "path, size, mtime" lines, sorted: two equal snapshots mean that
 * nothing under `dir` was created, removed, resized or touched (the read-only checks).
 */
export function folderSnapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const p = join(e.parentPath, e.name);
      const st = statSync(p);
      return `${p}\t${st.size}\t${st.mtimeMs}`;
    })
    .sort();
}
