import { defineConfig } from 'vitest/config';

// Only the soak's own logic (windows, verdicts, heap snapshot comparison): the soak itself runs
// on demand (`pnpm soak`), never under `pnpm test`.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
