/**
 * Playwright fixtures: a fresh fixture folder (a log directory with two partition folders) and the
 * bridge started in-process on a random port, serving the built renderer. `bridge` is read-write
 * and unconfined; `readOnlyBridge` is read-only and confined to the fixture folder. Both are
 * stopped after the test.
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
  /** A temporary log directory: `<logDir>/orders-0/`, `<logDir>/orders-1/` with an empty segment each. */
  logDir: string;
  bridge: Bridge;
  readOnlyBridge: Bridge;
}

export const test = base.extend<Fixtures>({
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
    const bridge = await startBridge({ readOnly: false, roots: [], rendererDir: RENDERER_DIR });
    await use(bridge);
    await bridge.close();
  },
  readOnlyBridge: async ({ logDir }, use) => {
    const bridge = await startBridge({ readOnly: true, roots: [logDir], rendererDir: RENDERER_DIR });
    await use(bridge);
    await bridge.close();
  },
});

export { expect };
