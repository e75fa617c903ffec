import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    teardownTimeout: 10_000,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A file per core: vitest's default (cores - 1) runs one at a time on a two-core machine,
    // where the lint e2e test waits on two child processes.
    maxWorkers: '100%',
    // `pnpm test:unit` runs the fast tier alone; `pnpm test` runs every project.
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], exclude: ['src/**/*.e2e.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['src/**/*.e2e.test.ts'] } },
    ],
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
