import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Every file starts its own etcd cluster and daemons: one at a time on a 2-core machine.
    fileParallelism: false,
    teardownTimeout: 20_000,
    testTimeout: 240_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
