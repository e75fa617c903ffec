import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** Options of the one-command demo. */
export interface DemoOptions {
  readonly port: number;
  readonly workers: number;
  readonly stores: number;
  readonly broken: number;
  readonly seed: number;
}

/**
 * Settings that make the demo show in about a minute what production shows in hours: sweeps
 * every few seconds and a short cooldown base. Everything else is the master's default.
 */
export const DEMO_MASTER_ENV = {
  STATS_SCAN_INTERVAL_SECS: '2',
  MERGE_WAL_INTERVAL_SECS: '3',
  COMPACTION_INTERVAL_SECS: '5',
  MERGE_WAL_MIN_GENERATIONS: '2',
  MIN_FRAGMENTS: '12',
  TASK_COOLDOWN_BASE_SECS: '60',
  WORKER_TIMEOUT_SECS: '10',
} as const;

// The binaries of the workspace packages this launcher depends on (tools may depend on apps).
const require = createRequire(import.meta.url);
const binOf = (pkg: string, bin: string): string => join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', bin);
const simBin = binOf('@maintd/sim', 'maintd-sim.js');
const masterBin = binOf('@maintd/master', 'maintd.js');

/**
 * `pnpm demo`: simulated workers and a `maintd` on its embedded store, as two real processes
 * on loopback. Forwards their logs, prints where to look, and stops both on Ctrl-C (or when
 * either exits), leaving no process behind.
 */
export async function runDemo(o: DemoOptions): Promise<number> {
  const children: ChildProcess[] = [];
  const stopAll = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
  };
  const workers = spawn(
    process.execPath,
    [simBin, 'workers', `--workers=${o.workers}`, `--stores=${o.stores}`, `--broken=${o.broken}`, `--seed=${o.seed}`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(workers);
  const endpoints = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: workers.stdout });
    lines.on('line', (line) => {
      const m = /^WORKER_ENDPOINTS=(.*)$/.exec(line);
      if (m) resolve(m[1]!);
      else process.stdout.write(`[workers] ${line}\n`);
    });
    workers.once('exit', (code) => reject(new Error(`simulated workers exited (${code}) before listening`)));
  });
  const master = spawn(process.execPath, [masterBin], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      ...DEMO_MASTER_ENV,
      MASTER_HOST: '127.0.0.1',
      MASTER_PORT: String(o.port),
      WORKER_ENDPOINTS: endpoints,
      ETCD_ENDPOINTS: '',
    },
  });
  children.push(master);
  const url = `http://127.0.0.1:${o.port}`;
  process.stdout.write(
    [
      '',
      `maintd demo: ${o.stores} simulated stores (${o.broken} broken) on ${o.workers} workers: ${endpoints}`,
      `  API        ${url}/api/v1/tasks   ${url}/api/v1/scheduler/cooldowns   ${url}/api/v1/openapi.json`,
      `  metrics    ${url}/metrics`,
      `  dashboard  node apps/tui/bin/maintd-top.js --url ${url}   (after pnpm --filter @maintd/tui build)`,
      '  Watch the log: broken stores fail three times, then "target failed repeatedly; sweeps will skip it";',
      '  healthy stores keep getting merged. Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  const onSignal = (signal: NodeJS.Signals): void => stopAll(signal === 'SIGINT' ? 'SIGTERM' : signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const firstExit = await Promise.race(
    children.map((c) => new Promise<number>((resolve) => c.once('exit', (code) => resolve(code ?? 0)))),
  );
  stopAll();
  await Promise.all(
    children.map((c) =>
      c.exitCode !== null || c.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((r) => c.once('exit', () => r())),
    ),
  );
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return firstExit;
}
