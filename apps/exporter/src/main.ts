import type { Server as HttpsServer } from 'node:https';
import { type ServerType, serve } from '@hono/node-server';
import { EtcdKv, type EtcdKvOptions, cryptoRandom, diagnoseEtcdTls, etcdKvOptions, systemClock } from '@maintd/core';
import { EXIT, handleStopSignals, resolveLogFormat, shutDown, versionText } from '@maintd/settings';
import { createLogger } from '@maintd/settings/logging';
import { ServerTls, serverTlsMetrics } from '@maintd/settings/tls';
import { createApp } from './app.js';
import { loadConfig, readProcessEnv, stdoutIsTty } from './env.js';
import { createExporterMetrics } from './metrics.js';
import { VERSION } from './version.js';
import { ClusterWatcher } from './watcher.js';

/**
 * The `maintd-exporter` entry point: parses the config, connects to etcd, keeps the cluster
 * aggregates in sync and serves them until SIGINT/SIGTERM. An unreachable etcd is not fatal:
 * the exporter serves `maintd_exporter_up 0` and keeps retrying. A configuration that can never
 * work (an unreadable TLS file; before the first sync, refused credentials or a TLS mismatch)
 * exits with code 2, as the master does; a runtime failure (the port is taken) with 1.
 */
export async function main(argv: readonly string[]): Promise<void> {
  const loaded = loadConfig({
    // Package-manager scripts (`pnpm start -- --flag`) may pass a bare `--` through.
    argv: argv[0] === '--' ? argv.slice(1) : argv,
    env: readProcessEnv(),
  });
  if (loaded.action === 'help' || loaded.action === 'print-config') {
    process.stdout.write(loaded.text);
    return;
  }
  if (loaded.action === 'version') {
    process.stdout.write(versionText('maintd-exporter', VERSION));
    return;
  }
  if (loaded.action === 'error') {
    process.stderr.write(`maintd-exporter: ${loaded.message}\nRun 'maintd-exporter --help' for every setting.\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const config = loaded.config;
  const logger = createLogger({
    level: config.logLevel,
    format: resolveLogFormat(config.logFormat, stdoutIsTty()),
    base: { app: 'maintd-exporter' },
    // The retry line says its endpoints, attempt and wait in words.
    pretty: { ignore: ['endpoints', 'attempt', 'retry_in_ms'] },
  });

  let kvOptions: EtcdKvOptions;
  try {
    kvOptions = await etcdKvOptions(config.etcd);
  } catch (err) {
    // An unreadable or malformed TLS file: no retry can fix it.
    logger.fatal({ err }, `cannot configure the etcd client: ${(err as Error).message}`);
    process.exitCode = EXIT.usage;
    return;
  }
  // Checked before anything connects: a bad TLS file exits 2 naming the setting, as an etcd one does.
  let tls: ServerTls | undefined;
  if (config.tls !== undefined) {
    const opened = await ServerTls.open(config.tls, { clock: systemClock, logger });
    if (!opened.ok) {
      logger.fatal(`cannot serve /metrics over TLS: ${opened.error}`);
      process.exitCode = EXIT.usage;
      return;
    }
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
      void shutdown('misconfigured').finally(() => process.exit(EXIT.usage));
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

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await shutDown({
      server,
      logger,
      drain: async () => {
        logger.info({ signal }, 'shutting down');
        await watcher.close();
      },
      release: () => {
        tls?.close();
        return kv.close();
      },
    });
  };
  server.once('error', (err: Error) => {
    logger.fatal({ err }, `cannot listen on ${config.host}:${config.port}: ${err.message}`);
    void shutdown('listen-error').finally(() => process.exit(EXIT.failure));
  });
  handleStopSignals({
    program: 'maintd-exporter',
    logger,
    terminal: stdoutIsTty(),
    shutdown,
  });
}
