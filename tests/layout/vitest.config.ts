import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The shape checks parse every source file with TypeScript, synchronously: past vitest's
    // default 5 s when other packages' tests share the cores.
    testTimeout: 30_000,
    // `pnpm test:unit` runs the fast tier alone; `pnpm test` runs every project.
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], exclude: ['src/**/*.e2e.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['src/**/*.e2e.test.ts'] } },
    ],
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
