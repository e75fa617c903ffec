import { parseArgs } from 'node:util';
import { runDemo } from './demo.js';

const USAGE = `Usage: pnpm demo [--port 8090] [--workers 3] [--stores 40] [--broken 3] [--seed 1]
  Simulated workers (maintd-sim workers) plus a maintd on its embedded store with fast intervals.
`;

function int(v: string | undefined, name: string, fallback: number, min = 0): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, got "${v}"`);
  return n;
}

/** The demo launcher's command line. */
export async function main(argv: readonly string[]): Promise<void> {
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  try {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        port: { type: 'string' },
        workers: { type: 'string' },
        stores: { type: 'string' },
        broken: { type: 'string' },
        seed: { type: 'string' },
      },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return;
    }
    process.exitCode = await runDemo({
      port: int(values.port, 'port', 8090, 1),
      workers: int(values.workers, 'workers', 3, 1),
      stores: int(values.stores, 'stores', 40, 1),
      broken: int(values.broken, 'broken', 3),
      seed: int(values.seed, 'seed', 1),
    });
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n${USAGE}`);
    process.exitCode = 2;
  }
}
