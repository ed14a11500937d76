import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The test-only bridge methods (demo.sleepJob, demo.touch) answer `test-only` unless this is set
    // (src-main/api/demo/demo.ts); tests that check the refusal pass testMethods: false.
    env: { KLX_TEST_METHODS: '1' },
  },
});
