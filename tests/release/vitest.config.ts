import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Everything here is end to end (no `unit` project: `pnpm test:unit` skips this package).
    include: ['src/**/*.test.ts'],
    // Packing and installing compete for the same 2 cores and npm cache: one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
