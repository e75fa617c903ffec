import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    // Colour on, so the NO_COLOR and colour-by-state tests see real escape codes (chalk reads
    // this when first imported; the test stdout is not a TTY).
    env: { FORCE_COLOR: '1' },
    teardownTimeout: 10_000,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', 'json'],
    outputFile: { json: './test-results/vitest.json' },
  },
});
