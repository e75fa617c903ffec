import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One scenario, end to end: no `unit` project (`pnpm test:unit` skips this package).
    include: ['src/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
