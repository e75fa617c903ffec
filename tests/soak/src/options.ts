import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** What one `pnpm soak` run does. */
export interface SoakOptions {
  /** Length of the run (`--minutes`, `SOAK_MINUTES`; default 30). */
  readonly minutes: number;
  /** How often each daemon's heap (after a collection), RSS and etcd's keys are sampled. */
  readonly sampleSecs: number;
  /** Samples before this are warm-up: shown, not judged (default a tenth of the run). */
  readonly warmupMinutes: number;
  /** Length of a window of the table (10 min, less for runs under 40 min: three windows after warm-up). */
  readonly windowMinutes: number;
  /** Write a heap snapshot of each master once warm-up ends and at the end. */
  readonly heapSnapshots: boolean;
  /** Where snapshots and the report's JSON go (default this package's `test-results/`). */
  readonly outDir: string;
}

/** The soak's goal: each figure's last window at most this many times its first. */
export const GROWTH_LIMIT = 1.15;

const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
};

/** Reads the options from the command line, then the environment (`SOAK_*`), then the defaults. */
export function parseOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      'sample-secs': { type: 'string' },
      'warmup-minutes': { type: 'string' },
      'window-minutes': { type: 'string' },
      'heap-snapshots': { type: 'boolean' },
      'out-dir': { type: 'string' },
    },
    strict: true,
  });
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? (env[name] || undefined);
  const minutes = positive('minutes', pick(values.minutes, 'SOAK_MINUTES') ?? '30');
  const sampleSecs = positive('sample-secs', pick(values['sample-secs'], 'SOAK_SAMPLE_SECS') ?? '15');
  const warmupRaw = pick(values['warmup-minutes'], 'SOAK_WARMUP_MINUTES');
  const warmupMinutes = warmupRaw === undefined ? minutes / 10 : positive('warmup-minutes', warmupRaw);
  if (warmupMinutes >= minutes) throw new Error('warm-up must end before the run does');
  const windowRaw = pick(values['window-minutes'], 'SOAK_WINDOW_MINUTES');
  const windowMinutes =
    windowRaw === undefined ? Math.min(10, (minutes - warmupMinutes) / 3) : positive('window-minutes', windowRaw);
  return {
    minutes,
    sampleSecs,
    warmupMinutes,
    windowMinutes,
    heapSnapshots: values['heap-snapshots'] ?? env.SOAK_HEAP_SNAPSHOTS === '1',
    outDir: pick(values['out-dir'], 'SOAK_OUT_DIR') ?? fileURLToPath(new URL('../test-results', import.meta.url)),
  };
}
