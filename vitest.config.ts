import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file drives its own Chromium; two cores take two files at a time (three pushed the load average past 20
    // and broke time-bound tests).
    maxWorkers: 2,
    fileParallelism: true,
    // Files share a worker's loaded modules (playwright-core, the MCP SDK, the model clients): importing them again
    // for each of 50 files cost about 5 minutes of worker time. Every file starts its own services and servers.
    isolate: false,
  },
});
