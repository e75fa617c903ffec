import { hostname } from 'node:os';
import { type ServerType, serve } from '@hono/node-server';
import { diagnoseEtcdTls, EtcdKv, etcdKvOptions, type Kv, MemoryKv, systemClock, TaskStore } from '@maintd/core';
import { pino } from 'pino';
import { type Config, Scheduler, createMetrics, storeOptions } from '@maintd/scheduler';
import { createApp } from './app.js';
import { loadProcessConfig } from './env.js';
import { EventHub } from './events.js';
import { VERSION } from './version.js';

/**
 * The `maintd` entry point: parses the config, wires the real dependencies (etcd or the
 * embedded store, the system clock, pino, prom-client), serves the API and runs the scheduler
 * until SIGINT/SIGTERM. Everything else is `createApp` and `Scheduler`, tested without it.
 */
export async function main(argv: readonly string[]): Promise<void> {
  const loaded = loadProcessConfig(argv);
  if (loaded.action === 'help' || loaded.action === 'print-config') {
    process.stdout.write(loaded.text.endsWith('\n') ? loaded.text : `${loaded.text}\n`);
    return;
  }
  if (loaded.action === 'error') {
    process.stderr.write(`maintd: ${loaded.message}\nRun 'maintd --help' for every setting.\n`);
    process.exitCode = 2;
    return;
  }
  const config = loaded.config;
  const logger = pino({
    level: config.logLevel,
    base: { master_id: config.masterId },
    timestamp: pino.stdTimeFunctions.isoTime,
  });

  let kv: Kv;
  try {
    kv = await openKv(config);
  } catch (err) {
    logger.fatal({ err }, `cannot configure the etcd client: ${(err as Error).message}`);
    process.exitCode = 1;
    return;
  }
  if (config.etcd.endpoints.length === 0) {
    logger.warn(
      'ETCD_ENDPOINTS is empty: using the embedded in-memory store (single master, not durable; state is lost on exit)',
    );
  }

  const clock = systemClock;
  const metrics = createMetrics();
  let store: TaskStore;
  try {
    store = await TaskStore.open(
      storeOptions(config, {
        kv,
        clock,
        info: {
          host: hostname(),
          pid: process.pid,
          version: VERSION,
          started_at: clock.now(),
          pools: { general: config.pools.taskConcurrency, merge: config.pools.mergeWalConcurrency },
        },
        onSessionEvent: (e) => {
          if (e.type === 'lost')
            logger.warn({ lease: e.leaseId }, 'session lost: not claiming; in-flight claims will be discarded');
          else if (e.type === 'renewed') logger.info({ lease: e.leaseId }, 'session renewed');
          else logger.warn({ err: e.error }, 'session renewal failed; retrying');
        },
      }),
    );
  } catch (err) {
    // gRPC reports a TLS failure as a bare UNAVAILABLE: say what the handshake found instead.
    const tlsReason = config.etcd.caCert
      ? await etcdKvOptions(config.etcd)
          .then((o) => diagnoseEtcdTls(o))
          .catch(() => undefined)
      : undefined;
    logger.fatal(
      { err, endpoints: config.etcd.endpoints },
      `cannot open the task store: ${tlsReason ?? (err as Error).message}`,
    );
    await kv.close().catch(() => undefined);
    process.exitCode = 1;
    return;
  }

  const events = new EventHub(kv, store.keys, clock, logger);
  const scheduler = new Scheduler({ store, kv, config, clock, logger, metrics });
  const app = createApp({
    store,
    kv,
    clock,
    logger,
    metrics,
    apiToken: config.apiToken,
    workers: () => scheduler.workerStatus(),
    events,
  });
  events.start();
  scheduler.start();

  const server: ServerType = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, (info) => {
    logger.info(
      {
        host: config.host,
        port: info.port,
        etcd: config.etcd.endpoints.length > 0 ? config.etcd.endpoints : 'embedded',
        workers: config.workers.endpoints,
        version: VERSION,
      },
      `maintd listening on http://${config.host}:${info.port}`,
    );
  });
  server.once('error', (err: Error) => {
    logger.fatal({ err }, `cannot listen on ${config.host}:${config.port}: ${err.message}`);
    void shutdown('listen-error').finally(() => process.exit(1));
  });

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info(
      { signal, running: scheduler.runningCount() },
      'shutting down: no new claims; letting running tasks finish',
    );
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // 'listening' may never have happened (listen error): close() then calls back at once.
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    const { finished, abandoned } = await scheduler.stop(config.shutdownGraceSecs * 1000);
    if (!finished) logger.warn({ abandoned }, 'grace period over; releasing the rest to peers');
    await events.close();
    if ('closeAllConnections' in server) server.closeAllConnections();
    await closed;
    await store.close(); // revokes the session: peers recover anything left at once
    await kv.close();
    logger.info('stopped');
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void shutdown(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

async function openKv(config: Config): Promise<Kv> {
  const { etcd } = config;
  if (etcd.endpoints.length === 0) return new MemoryKv({ clock: systemClock });
  return new EtcdKv(await etcdKvOptions(etcd));
}
