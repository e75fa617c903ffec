import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One file per Node line, beside that line's vitest results: `pnpm test` runs the suite on two. */
const FILE = fileURLToPath(
  new URL(`../../test-results/node${process.versions.node.split('.')[0]}/faults-report.json`, import.meta.url),
);

/**
 * Records the figures of one fault scenario (what was injected, how many tasks, how many lost)
 * in `test-results/node<major>/faults-report.json`, which docs/RELIABILITY.md quotes after a run.
 */
export function recordFigures(scenario: string, figures: Record<string, unknown>): void {
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>;
  } catch {
    /* first scenario of the run */
  }
  all[scenario] = { ...figures, recorded_at: new Date().toISOString() };
  mkdirSync(fileURLToPath(new URL('.', `file://${FILE}`)), { recursive: true });
  writeFileSync(FILE, `${JSON.stringify(all, null, 2)}\n`);
}
