import { defineConfig } from 'vitest/config';

/**
 * `npm run test:e2e`: the browser test (chromium through playwright-core), kept out of `npm test`
 * so the unit and integration suite does not need a browser.
 */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
  },
});
