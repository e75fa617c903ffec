import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Colour on, so the NO_COLOR and colour-by-state tests see real escape codes (chalk reads
    // this when first imported; the test stdout is not a TTY).
    env: { FORCE_COLOR: '1' },
    teardownTimeout: 10_000,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A file per core: vitest's default (cores - 1) runs one at a time on a two-core machine,
    // where most of these files wait on etcd, timers or child processes.
    maxWorkers: '100%',
    // `pnpm test:unit` runs the fast tier alone; `pnpm test` runs every project.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['src/**/*.test.{ts,tsx}'], exclude: ['src/**/*.e2e.test.{ts,tsx}'] },
      },
      {
        extends: true,
        // The e2e tests run the dashboard as npm installs it: packed and installed once per run.
        test: { name: 'e2e', include: ['src/**/*.e2e.test.{ts,tsx}'], globalSetup: ['./test/installed-setup.ts'] },
      },
    ],
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
