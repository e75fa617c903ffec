import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The e2e tests start the real binaries (two `--print-config` runs in one test, a dashboard
    // that refuses to start): past vitest's default 5 s when other packages' tests share the cores.
    testTimeout: 30_000,
    // A file per core: vitest's default (cores - 1) runs one at a time on a two-core machine,
    // where most of these files wait on etcd, timers or child processes.
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
