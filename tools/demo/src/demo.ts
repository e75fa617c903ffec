import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** Options of the one-command demo. */
export interface DemoOptions {
  readonly port: number;
  readonly workers: number;
  readonly stores: number;
  readonly broken: number;
  readonly seed: number;
  /** Colour the master's log lines (its stdout is a pipe here, so it cannot tell by itself). */
  readonly color: boolean;
  /** The environment the children inherit. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where the demo writes (default: this process's stdout). */
  readonly out?: (text: string) => void;
}

/** The address the demo's master listens on. */
export const DEMO_HOST = '127.0.0.1';

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

/** The port the demo was asked to use is taken: the launcher says how to pick another. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  readonly port: number;

  constructor(port: number) {
    super(portHint(port));
    this.port = port;
  }
}

/** `port 8090 is in use: pnpm demo --port 8091 (or MASTER_PORT=8091 pnpm demo)`. */
export function portHint(port: number): string {
  const next = port === 65535 ? 8090 : port + 1;
  return `port ${port} is in use: pnpm demo --port ${next} (or MASTER_PORT=${next} pnpm demo)`;
}

/** Resolves when `port` can be listened on at `host`; rejects with {@link PortInUseError} if taken. */
export function checkPortFree(port: number, host: string = DEMO_HOST): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new PortInUseError(port) : err),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The readable form of the workers' `simulated workers listening` JSON line, if it is one. */
export function describeWorkersLine(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const o = JSON.parse(line) as { msg?: unknown; workers?: unknown; stores?: unknown; broken?: unknown };
    if (o.msg !== 'simulated workers listening' || !Array.isArray(o.workers)) return undefined;
    const broken = Array.isArray(o.broken) ? o.broken.join(', ') : '';
    return `${o.workers.length} simulated workers listening, ${String(o.stores)} stores (broken: ${broken || 'none'})`;
  } catch {
    return undefined;
  }
}

// The binaries of the workspace packages this launcher depends on (tools may depend on apps).
const require = createRequire(import.meta.url);
const binOf = (pkg: string, bin: string): string => join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', bin);
const simBin = binOf('@maintd/sim', 'maintd-sim.js');
const masterBin = binOf('@maintd/master', 'maintd.js');

/**
 * `pnpm demo`: simulated workers and a `maintd` on its embedded store, as two real processes
 * on loopback. Forwards their logs (the master's as readable lines), prints where to look, and
 * stops both on Ctrl-C (or when either exits), leaving no process behind. Resolves with the exit
 * code; rejects with {@link PortInUseError} when the port is taken, before or at the master's start.
 */
export async function runDemo(o: DemoOptions): Promise<number> {
  const write = o.out ?? ((text: string) => void process.stdout.write(text));
  // Fail before starting anything: the master would only find out after the workers are up.
  await checkPortFree(o.port);
  const children: ChildProcess[] = [];
  const stopAll = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
  };
  const workers = spawn(
    process.execPath,
    [simBin, 'workers', `--workers=${o.workers}`, `--stores=${o.stores}`, `--broken=${o.broken}`, `--seed=${o.seed}`],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...o.env } },
  );
  children.push(workers);
  const endpoints = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: workers.stdout });
    lines.on('line', (line) => {
      const m = /^WORKER_ENDPOINTS=(.*)$/.exec(line);
      if (m) resolve(m[1]!);
      else write(`[workers] ${describeWorkersLine(line) ?? line}\n`);
    });
    workers.once('exit', (code) => reject(new Error(`simulated workers exited (${code}) before listening`)));
  });
  const master = spawn(process.execPath, [masterBin], {
    // stdout is piped (to tell a taken port from the log), so the master would pick JSON: ask.
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...o.env,
      ...DEMO_MASTER_ENV,
      LOG_FORMAT: 'pretty',
      ...(o.color ? { FORCE_COLOR: '1' } : {}),
      MASTER_HOST: DEMO_HOST,
      MASTER_PORT: String(o.port),
      WORKER_ENDPOINTS: endpoints,
      ETCD_ENDPOINTS: '',
    },
  });
  children.push(master);
  let portTaken = false;
  const masterOutput = new Promise<void>((resolve) => master.stdout.once('close', () => resolve()));
  createInterface({ input: master.stdout }).on('line', (line) => {
    // Another process took the port between the check and the master's listen.
    if (/cannot listen on .*EADDRINUSE/.test(line)) portTaken = true;
    write(`${line}\n`);
  });
  // The master takes MASTER_TLS_* from the environment like any setting: then it serves HTTPS.
  const tls = (o.env.MASTER_TLS_CERT ?? '') !== '';
  const url = `${tls ? 'https' : 'http'}://${DEMO_HOST}:${o.port}`;
  write(
    [
      '',
      `maintd demo: ${o.stores} simulated stores (${o.broken} broken) on ${o.workers} workers: ${endpoints}`,
      `  API        ${url}/api/v1/tasks   ${url}/api/v1/scheduler/cooldowns   ${url}/api/v1/openapi.json`,
      `  metrics    ${url}/metrics`,
      `  dashboard  node apps/tui/bin/maintd-top.js --url ${url}`,
      tls
        ? '  TLS        HTTPS with MASTER_TLS_CERT: clients need the CA that signed it (curl --cacert, maintd-top --help)'
        : '  TLS        none on loopback; MASTER_TLS_CERT and MASTER_TLS_KEY set serve HTTPS (docs/DEPLOY.md §4)',
      '  Watch the log: broken stores fail three times, then a COOLDOWN line: sweeps skip them;',
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
  await masterOutput; // its last lines may arrive after its exit
  if (portTaken) throw new PortInUseError(o.port);
  return firstExit;
}
