import { parseArgs } from 'node:util';
import {
  EXIT,
  HELP_ENTRY,
  type HelpEntry,
  VERSION_ENTRY,
  formatHelp,
  stripLeadingDashDash,
  versionText,
} from '@maintd/settings';
import { runDemo } from './demo.js';
import { readDemoEnv } from './env.js';
import { VERSION } from './version.js';

const DEFAULTS = { port: 8090, workers: 3, stores: 40, broken: 3, seed: 1 } as const;

const option = (name: keyof typeof DEFAULTS, description: string, tags: readonly string[] = []): HelpEntry => ({
  term: `--${name}=<n>`,
  tags: [...tags, `default: ${DEFAULTS[name]}`],
  description,
});

/** `pnpm demo --help`, in the layout of the maintd binaries. */
export const HELP = formatHelp({
  program: 'pnpm demo',
  usage: ['[--port=8090] [--workers=3] [--stores=40] [--broken=3] [--seed=1]'],
  about: [
    'Simulated workers (maintd-sim workers) plus a maintd on its embedded store with fast',
    'intervals, as two processes on loopback. Ctrl-C stops both.',
  ],
  sections: [
    {
      title: 'Options',
      entries: [
        HELP_ENTRY,
        VERSION_ENTRY,
        option('port', "The master's API port.", ['env MASTER_PORT']),
        option('workers', 'Simulated workers.'),
        option('stores', 'Simulated stores.'),
        option('broken', 'Broken stores among them.'),
        option('seed', 'Which stores are broken, and their backlogs.'),
      ],
    },
  ],
});

/** A bad command line: exit code 2. */
class UsageError extends Error {}

function int(
  v: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (v === undefined) return fallback;
  const n = /^\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got "${v}"`);
  return n;
}

/** The demo launcher's command line. Exit codes: 0 ok, 1 runtime failure (the port is taken), 2 usage. */
export async function main(argv: readonly string[]): Promise<void> {
  const args = stripLeadingDashDash(argv);
  const env = readDemoEnv();
  try {
    let values;
    try {
      ({ values } = parseArgs({
        args,
        strict: true,
        options: {
          help: { type: 'boolean', short: 'h' },
          version: { type: 'boolean', short: 'V' },
          port: { type: 'string' },
          workers: { type: 'string' },
          stores: { type: 'string' },
          broken: { type: 'string' },
          seed: { type: 'string' },
        },
      }));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.help) return void process.stdout.write(HELP);
    if (values.version) return void process.stdout.write(versionText('demo', VERSION));
    // The flag wins over MASTER_PORT, as the master's own --port does.
    const port =
      values.port !== undefined
        ? int(values.port, '--port', DEFAULTS.port, 1, 65535)
        : int(env.masterPort, 'MASTER_PORT', DEFAULTS.port, 1, 65535);
    process.exitCode = await runDemo({
      port,
      workers: int(values.workers, '--workers', DEFAULTS.workers, 1),
      stores: int(values.stores, '--stores', DEFAULTS.stores, 1),
      broken: int(values.broken, '--broken', DEFAULTS.broken, 0),
      seed: int(values.seed, '--seed', DEFAULTS.seed, 0),
      color: env.color,
      env: env.inherited,
    });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`demo: ${err.message}\nRun 'pnpm demo --help' for the options.\n`);
      process.exitCode = EXIT.usage;
    } else {
      // A taken port is the one failure a user fixes by hand: the hint says how, in one line.
      process.stderr.write(`demo: ${(err as Error).message}\n`);
      process.exitCode = EXIT.failure;
    }
  }
}
