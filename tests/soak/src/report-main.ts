import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { GROWTH_LIMIT } from './options.js';
import { formatReport, reportRows, soakJudgeOptions } from './report.js';
import type { Series } from './sampler.js';
import type { Sample } from './windows.js';
import { windowBounds } from './windows.js';

/** The soak's two masters (tests/soak/src/fleet.ts). */
const MASTERS = 2;

/**
 * `pnpm --filter @maintd/soak report <soak-samples.json> [--warmup-minutes N] [--window-minutes N]
 * [--compare-minutes N] [--limit X]`: the report of a run from the samples it kept, for a run cut
 * short, or judged again another way: the table by window, then the first `--compare-minutes`
 * after warm-up against the last as many minutes of the run (e.g. the first hour against the last).
 */
async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'warmup-minutes': { type: 'string' },
      'window-minutes': { type: 'string', default: '10' },
      'compare-minutes': { type: 'string' },
      limit: { type: 'string', default: String(GROWTH_LIMIT) },
    },
  });
  const [file] = positionals;
  if (!file) throw new Error('usage: report <soak-samples.json> [--warmup-minutes N] [--window-minutes N]');
  const kept = JSON.parse(await readFile(file, 'utf8')) as
    { samples: Record<string, Sample[]>; errors?: string[] } | Record<string, Sample[]>;
  // Runs before the errors were kept wrote the samples alone.
  const samples = 'samples' in kept && !Array.isArray(kept.samples) ? kept.samples : (kept as Record<string, Sample[]>);
  const errors = 'errors' in kept && Array.isArray(kept.errors) ? (kept.errors as string[]) : undefined;
  const series: Series = new Map(Object.entries(samples));
  const end = Math.max(...[...series.values()].flatMap((s) => s.map((x) => x.atMin)));
  const warmup = Number(values['warmup-minutes'] ?? end / 10);
  const limit = Number(values.limit);
  const options = soakJudgeOptions(MASTERS, false, limit);
  console.log(`samples to minute ${end.toFixed(1)}, warm-up ${warmup} min, limit ×${limit}\n`);
  console.log(formatReport(reportRows(series, windowBounds(end, warmup, Number(values['window-minutes'])), options)));
  let pass = true;
  if (values['compare-minutes'] !== undefined) {
    const span = Number(values['compare-minutes']);
    const rows = reportRows(
      series,
      [
        { fromMin: 0, toMin: warmup },
        { fromMin: warmup, toMin: warmup + span },
        { fromMin: end - span, toMin: end },
      ],
      options,
    );
    console.log(`\nthe first ${span} min after warm-up against the last ${span} min:\n`);
    console.log(formatReport(rows));
    pass = rows.filter((r) => r.judged).every((r) => r.verdict.pass);
  }
  if (errors) console.log(`\nerrors: ${errors.length}${errors.length ? `\n  ${errors.join('\n  ')}` : ''}`);
  return pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
