import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type ServerType, serve } from '@hono/node-server';
import { seededRandom, systemClock } from '@maintd/core';
import { EXIT, versionText } from '@maintd/settings';
import { queueChartSvg, workerChartSvg } from './chart.js';
import { UsageError, parseCli } from './cli.js';
import { Fleet } from './fleet.js';
import { type IncidentOptions, type IncidentResult, formatIncident, runIncident } from './incident.js';
import { VERSION } from './version.js';
import { createWorkerApp } from './worker-app.js';

function int(v: string | undefined, name: string, fallback: number, min = 0): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number ≥ ${min}, got "${v}"`);
  return n;
}

/** The `maintd-sim` command line. Exit codes: 0 ok, 1 runtime failure, 2 usage. */
export async function main(argv: readonly string[]): Promise<void> {
  let command: string | undefined;
  try {
    const cli = parseCli(argv);
    if (cli.action === 'help') return void process.stdout.write(cli.text);
    if (cli.action === 'version') return void process.stdout.write(versionText('maintd-sim', VERSION));
    command = cli.command;
    if (cli.command === 'workers') return await workers(cli.values);
    return await incident(cli.values);
  } catch (err) {
    const usage = err instanceof UsageError;
    const about = usage ? (err.command ?? command) : command;
    const help = usage ? `Run 'maintd-sim${about ? ` ${about}` : ''} --help' for the options.\n` : '';
    process.stderr.write(`maintd-sim: ${(err as Error).message}\n${help}`);
    process.exitCode = usage ? EXIT.usage : EXIT.failure;
  }
}

/** Option values by name, as {@link parseCli} gives them. */
type Values = Readonly<Record<string, string | undefined>>;

async function workers(values: Values): Promise<void> {
  const count = int(values.workers, 'workers', 3, 1);
  const seed = int(values.seed, 'seed', 1);
  const fleet = new Fleet(
    {
      workers: count,
      stores: int(values.stores, 'stores', 40, 1),
      broken: int(values.broken, 'broken', 3),
      seed,
      brokenLatencyMs: int(values['broken-latency-ms'], 'broken-latency-ms', 1500),
      mergeLatency: {
        baseMs: int(values['merge-latency-ms'], 'merge-latency-ms', 200),
        perGenerationMs: int(values['merge-ms-per-generation'], 'merge-ms-per-generation', 2),
      },
    },
    systemClock,
  );
  const flaky = values['flaky-worker'] === undefined ? -1 : int(values['flaky-worker'], 'flaky-worker', -1);
  const hang = values['hang-worker'] === undefined ? -1 : int(values['hang-worker'], 'hang-worker', -1);
  const rate = values['flaky-rate'] === undefined ? 0.3 : Number(values['flaky-rate']);
  if (!(rate >= 0 && rate <= 1))
    throw new UsageError(`--flaky-rate must be between 0 and 1, got "${values['flaky-rate']}"`);
  const host = values.host ?? '127.0.0.1';
  const basePort = int(values.port, 'port', 0);
  const random = seededRandom(seed + 1);
  const mergeConcurrency = int(values['merge-concurrency'], 'merge-concurrency', 0);
  const urls: string[] = [];
  const servers: ServerType[] = [];
  for (let i = 0; i < count; i++) {
    const app = createWorkerApp(fleet, i, systemClock, {
      latencyMs: int(values['latency-ms'], 'latency-ms', 0),
      flakyRate: i === flaky ? rate : 0,
      hang: i === hang,
      random,
      // Unbounded unless asked: the demo and the e2e tests expect each call answered at its own latency.
      mergeConcurrency: mergeConcurrency === 0 ? Infinity : mergeConcurrency,
    });
    const url = await new Promise<string>((resolve, reject) => {
      const server = serve({ fetch: app.fetch, hostname: host, port: basePort ? basePort + i : 0 }, (info) =>
        resolve(`http://${host}:${info.port}`),
      );
      server.once('error', reject);
      servers.push(server);
    });
    urls.push(url);
  }
  process.stdout.write(
    `${JSON.stringify({ msg: 'simulated workers listening', workers: urls, stores: fleet.stores.length, broken: fleet.brokenNames })}\n`,
  );
  process.stdout.write(`WORKER_ENDPOINTS=${urls.join(',')}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      for (const s of servers) s.close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function incident(values: Values): Promise<void> {
  const o = {
    masters: int(values.masters, 'masters', 6, 1),
    stores: int(values.stores, 'stores', 200, 1),
    broken: int(values.broken, 'broken', 5),
    hours: int(values.hours, 'hours', 6, 1),
    seed: int(values.seed, 'seed', 1),
  };
  // The halves share nothing: side by side on two cores, one after the other on one.
  const [off, on] =
    availableParallelism() > 1
      ? await Promise.all([inThread({ ...o, cooldown: false }), inThread({ ...o, cooldown: true })])
      : [await runIncident({ ...o, cooldown: false }), await runIncident({ ...o, cooldown: true })];
  process.stdout.write(formatIncident(o, off, on));
  if (values.chart) {
    await writeFile(values.chart, await queueChartSvg(off.series, on.series));
    process.stderr.write(`chart written to ${values.chart}\n`);
  }
  if (values['worker-chart']) {
    await writeFile(
      values['worker-chart'],
      await workerChartSvg(off.brokenWorkerShareSeries, on.brokenWorkerShareSeries),
    );
    process.stderr.write(`worker chart written to ${values['worker-chart']}\n`);
  }
}

/** Runs one half of the incident in a worker thread ({@link runIncident} there; its result is plain data). */
function inThread(o: IncidentOptions): Promise<IncidentResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./incident-thread.js', import.meta.url), { workerData: o });
    let result: IncidentResult | undefined;
    worker.once('message', (r: IncidentResult) => (result = r));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (result) resolve(result);
      else
        reject(new Error(`the incident's ${o.cooldown ? 'cooldown-on' : 'cooldown-off'} run exited with code ${code}`));
    });
  });
}
