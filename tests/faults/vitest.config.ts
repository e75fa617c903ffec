import { defineConfig } from 'vitest/config';

/**
 * Files whose daemons keep the machine's two cores busy (measured alone: 70–92 % of both; the TLS
 * file's rotation drill makes new handshakes flat out for 5 s) run one at a time first. The rest mostly wait on lease TTLs, outages and timeouts (23–36 % of both
 * cores alone) and run two at a time after them: each file starts its own etcd cluster, daemons
 * and prefix on free ports, so they share nothing but the cores.
 */
const busy = [
  'src/audit.e2e.test.ts',
  'src/contention.e2e.test.ts',
  'src/load.e2e.test.ts',
  'src/security.e2e.test.ts',
  'src/tls.e2e.test.ts',
];

export default defineConfig({
  test: {
    teardownTimeout: 20_000,
    testTimeout: 240_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'busy', include: busy, fileParallelism: false, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'waiting',
          include: ['src/**/*.test.ts'],
          exclude: busy,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
