import type { Server as HttpsServer } from 'node:https';
import { type ServerType, serve } from '@hono/node-server';
import { EtcdKv, type EtcdKvOptions, cryptoRandom, diagnoseEtcdTls, etcdKvOptions, systemClock } from '@maintd/core';
import { EXIT } from '@maintd/settings';
import { type DaemonContext, type ServingDaemon, type StartRefusal, runDaemon } from '@maintd/settings/daemon';
import { ServerTls, serverTlsMetrics } from '@maintd/settings/tls';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import type { ExporterConfig } from './config.js';
import { loadProcessConfig } from './env.js';
import { createExporterMetrics } from './metrics.js';
import { VERSION } from './version.js';
import { ClusterWatcher } from './watcher.js';

/**
 * The `maintd-exporter` entry point: parses the config, connects to etcd, keeps the cluster
 * aggregates in sync and serves them until SIGINT/SIGTERM. An unreachable etcd is not fatal:
 * the exporter serves `maintd_exporter_up 0` and keeps retrying. A configuration that can never
 * work (an unreadable TLS file; before the first sync, refused credentials or a TLS mismatch)
 * exits with code 2, as the master does; a runtime failure (the port is taken) with 1. The command
 * line, signals, shutdown and exit codes are `runDaemon`'s (docs/ARCHITECTURE.md §3.1).
 */
export function main(argv: readonly string[]): Promise<void> {
  return runDaemon({
    program: 'maintd-exporter',
    version: VERSION,
    argv,
    load: loadProcessConfig,
    logging: () => ({
      base: { app: 'maintd-exporter' },
      // The retry line says its endpoints, attempt and wait in words.
      pretty: { ignore: ['endpoints', 'attempt', 'retry_in_ms'] },
    }),
    start,
  });
}

async function start(
  config: ExporterConfig,
  logger: Logger,
  ctx: DaemonContext,
): Promise<ServingDaemon | StartRefusal> {
  let kvOptions: EtcdKvOptions;
  try {
    kvOptions = await etcdKvOptions(config.etcd);
  } catch (err) {
    // An unreadable or malformed TLS file: no retry can fix it.
    return { refused: `cannot configure the etcd client: ${(err as Error).message}`, err };
  }
  // Checked before anything connects: a bad TLS file exits 2 naming the setting, as an etcd one does.
  let tls: ServerTls | undefined;
  if (config.tls !== undefined) {
    const opened = await ServerTls.open(config.tls, { clock: systemClock, logger });
    if (!opened.ok) return { refused: `cannot serve /metrics over TLS: ${opened.error}` };
    tls = opened.tls;
  }
  const kv = new EtcdKv(kvOptions);

  const watcher = new ClusterWatcher({
    kv,
    prefix: config.etcd.prefix,
    clock: systemClock,
    random: cryptoRandom,
    logger,
    checkIntervalMs: config.checkIntervalSecs * 1000,
    pageSize: config.syncPageSize,
    // gRPC reports a TLS failure as a bare UNAVAILABLE: the handshake says what is wrong.
    explain: () => diagnoseEtcdTls(kvOptions),
    endpoints: config.etcd.endpoints,
    onMisconfigured: (reason, err) => {
      logger.fatal({ err, endpoints: config.etcd.endpoints }, `cannot read the fleet state from etcd: ${reason}`);
      ctx.fail('misconfigured', EXIT.usage);
    },
    // Called only once a sync completes, after `metrics` exists.
    onSync: (info) => metrics.recordSync(info),
  });
  const metrics = createExporterMetrics(watcher, { version: VERSION });
  const app = createApp({ metrics, status: () => watcher.status(), prefix: config.etcd.prefix, logger });
  watcher.start();

  if (tls) tls.observe(serverTlsMetrics(metrics.registry, 'maintd_exporter'));
  const listen = { fetch: app.fetch, hostname: config.host, port: config.port };
  const scheme = tls ? 'https' : 'http';
  const server: ServerType = serve(tls ? { ...listen, ...tls.serveOptions() } : listen, (info) => {
    logger.info(
      {
        host: config.host,
        port: info.port,
        tls: tls?.mode ?? 'off',
        etcd: config.etcd.endpoints,
        prefix: config.etcd.prefix,
        version: VERSION,
      },
      `maintd-exporter listening on ${scheme}://${config.host}:${info.port}/metrics`,
    );
  });
  // Rotated files go into force for new connections (docs/ARCHITECTURE.md §3.4).
  if (tls) tls.attach(server as HttpsServer);

  return {
    server,
    address: `${config.host}:${config.port}`,
    drain: async (signal) => {
      logger.info({ signal }, 'shutting down');
      await watcher.close();
    },
    release: () => {
      tls?.close();
      return kv.close();
    },
  };
}
