#!/usr/bin/env node
import process from 'node:process';

// React (and Ink's reconciler) pick their build when first loaded: the production one is several
// times cheaper per frame, so it must be chosen before main.js imports them.
process.env.NODE_ENV ??= 'production';
// Ink draws only the last frame when it believes it runs in CI (CI or CONTINUOUS_INTEGRATION
// set); an interactive dashboard on a real terminal is never that, whatever the shell exports.
if (process.stdout.isTTY) {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
}
const { main } = await import('../dist/main.js');

await main(process.argv.slice(2));
