import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Most test files wait on other processes (the OpenID providers, the CLI, PostgreSQL, Chromium)
    // more than they compute: at least three at once, even on a two-core machine (measured there:
    // the suite in 692 s instead of 869 s with the default one worker).
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
