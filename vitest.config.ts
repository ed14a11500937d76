import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Temporary files of the run under one folder, removed at the end (test/support/temp-root.ts).
    globalSetup: ['test/support/temp-root.ts'],
    // The test-only bridge methods (demo.sleepJob, demo.touch) answer `test-only` unless this is set
    // (src-main/api/demo/demo.ts); tests that check the refusal pass testMethods: false.
    env: { KLX_TEST_METHODS: '1' },
  },
});
