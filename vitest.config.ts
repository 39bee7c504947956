import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file drives its own Chromium; two cores take two files at a time.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
