/**
 * Playwright fixtures: a fresh fixture folder (a log directory with two partition folders) and the
 * bridge started in-process on a random port, serving the built renderer. `bridge` is read-write
 * and unconfined; `readOnlyBridge` is read-only and confined to the fixture folder. Both are
 * stopped after the test.
 *
 * Every test fails on a page error: `page` is wrapped so that an uncaught exception in the page
 * (`pageerror`) or a `console.error` message (Monaco's "depends on UNKNOWN service", a Vue warning
 * turned error, a failed asset) fails the test after it ran, listing the messages. A test that
 * provokes a failed resource load on purpose lists the expected text in `allowedConsoleErrors`.
 */
import { test as base, expect } from '@playwright/test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RENDERER_DIR } from '../../src-main/bridge/build.ts';
import { startBridge, type Bridge } from '../../src-main/bridge/server.ts';

/** Where tests save named screenshots (kept by CI; `test-results/` is emptied by Playwright). */
export const SCREENSHOTS = '.reports/screenshots';

interface Fixtures {
  /** Substrings of `console.error` messages this test expects (default none). Page exceptions are never allowed. */
  allowedConsoleErrors: string[];
  /** A temporary log directory: `<logDir>/orders-0/`, `<logDir>/orders-1/` with an empty segment each. */
  logDir: string;
  bridge: Bridge;
  readOnlyBridge: Bridge;
}

export const test = base.extend<Fixtures>({
  allowedConsoleErrors: [[], { option: true }],
  page: async ({ page, allowedConsoleErrors }, use) => {
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const text = m.text();
      if (!allowedConsoleErrors.some((a) => text.includes(a))) problems.push(`console.error: ${text}`);
    });
    await use(page);
    expect(problems, 'the page logged errors').toEqual([]);
  },
  logDir: async ({}, use) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'klx-e2e-')));
    for (const p of ['orders-0', 'orders-1']) {
      mkdirSync(join(dir, 'kafka-logs', p), { recursive: true });
      writeFileSync(join(dir, 'kafka-logs', p, '00000000000000000000.log'), '');
    }
    await use(join(dir, 'kafka-logs'));
    rmSync(dir, { recursive: true, force: true });
  },
  bridge: async ({}, use) => {
    const bridge = await startBridge({ readOnly: false, roots: [], rendererDir: RENDERER_DIR, testMethods: true });
    await use(bridge);
    await bridge.close();
  },
  readOnlyBridge: async ({ logDir }, use) => {
    const bridge = await startBridge({ readOnly: true, roots: [logDir], rendererDir: RENDERER_DIR, testMethods: true });
    await use(bridge);
    await bridge.close();
  },
});

export { expect };
