import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests: the built renderer served by the loopback bridge (started in the test worker,
 * see `test/e2e/fixtures.ts`), driven in Debian's Chromium. Never `npx playwright install`.
 * Tests also save named screenshots under `.reports/screenshots/`.
 */
export default defineConfig({
  testDir: 'test/e2e',
  globalSetup: './test/e2e/global-setup.ts',
  outputDir: process.env.KLX_OUT_DIR ? `${process.env.KLX_OUT_DIR}/test-results` : 'test-results',
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: 'list',
  use: {
    browserName: 'chromium',
    headless: true,
    screenshot: 'only-on-failure',
    trace: 'off',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    },
  },
});
