import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type ServerType, serve } from '@hono/node-server';
import { seededRandom, systemClock } from '@maintd/core';
import { queueChartSvg, workerChartSvg } from './chart.js';
import { Fleet } from './fleet.js';
import { formatIncident, runIncident } from './incident.js';
import { createWorkerApp } from './worker-app.js';

const USAGE = `Usage:
  maintd-sim workers [--workers 3] [--stores 40] [--broken 3] [--seed 1] [--host 127.0.0.1] [--port 0]
                     [--latency-ms 0] [--merge-latency-ms 200] [--merge-ms-per-generation 2]
                     [--broken-latency-ms 1500] [--merge-concurrency 0]
                     [--flaky-worker N --flaky-rate 0.3] [--hang-worker N]
      Real HTTP workers on loopback speaking the worker protocol over simulated stores. Prints
      WORKER_ENDPOINTS=... once they listen; --port P gives worker i the port P+i.
      --merge-concurrency N: each worker runs N merges at a time and queues the rest (0: no limit).
  maintd-sim incident [--masters 6] [--stores 200] [--broken 5] [--hours 6] [--seed 1]
                      [--chart FILE.svg] [--worker-chart FILE.svg]
      The deterministic incident reproduction: the real master scheduler, in process, on a fake
      clock, with the cooldown off and then on. Prints the comparison tables; --chart draws the
      healthy merge queue, --worker-chart the broken stores' share of the workers' merge time.
`;

function int(v: string | undefined, name: string, fallback: number, min = 0): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, got "${v}"`);
  return n;
}

/** The `maintd-sim` command line. */
export async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv[0] === '--' ? argv.slice(1) : argv;
  try {
    if (command === 'workers') return await workers(rest);
    if (command === 'incident') return await incident(rest);
    process.stdout.write(USAGE);
    if (command !== undefined && command !== '--help' && command !== '-h') process.exitCode = 2;
  } catch (err) {
    process.stderr.write(`maintd-sim: ${(err as Error).message}\n`);
    process.exitCode = 2;
  }
}

async function workers(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      workers: { type: 'string' },
      stores: { type: 'string' },
      broken: { type: 'string' },
      seed: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'latency-ms': { type: 'string' },
      'broken-latency-ms': { type: 'string' },
      'merge-latency-ms': { type: 'string' },
      'merge-ms-per-generation': { type: 'string' },
      'merge-concurrency': { type: 'string' },
      'flaky-worker': { type: 'string' },
      'flaky-rate': { type: 'string' },
      'hang-worker': { type: 'string' },
    },
  });
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
  if (!(rate >= 0 && rate <= 1)) throw new Error(`--flaky-rate must be between 0 and 1, got "${values['flaky-rate']}"`);
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

async function incident(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      masters: { type: 'string' },
      stores: { type: 'string' },
      broken: { type: 'string' },
      hours: { type: 'string' },
      seed: { type: 'string' },
      chart: { type: 'string' },
      'worker-chart': { type: 'string' },
    },
  });
  const o = {
    masters: int(values.masters, 'masters', 6, 1),
    stores: int(values.stores, 'stores', 200, 1),
    broken: int(values.broken, 'broken', 5),
    hours: int(values.hours, 'hours', 6, 1),
    seed: int(values.seed, 'seed', 1),
  };
  const off = await runIncident({ ...o, cooldown: false });
  const on = await runIncident({ ...o, cooldown: true });
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
