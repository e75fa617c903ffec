import type { Server as HttpsServer } from 'node:https';
import { hostname } from 'node:os';
import { type Http2Bindings, type HttpBindings, type ServerType, serve } from '@hono/node-server';
import {
  type Kv,
  MemoryKv,
  EtcdKv,
  TaskStore,
  cryptoRandom,
  diagnoseEtcdTls,
  etcdKvOptions,
  systemClock,
} from '@maintd/core';
import {
  type Config,
  PRETTY_LOG_FORMAT,
  checkCluster,
  createMetrics,
  featureNames,
  poolSizes,
  storeOptions,
  tooOldMessage,
} from '@maintd/scheduler';
import { EXIT } from '@maintd/settings';
import { type DaemonContext, type ServingDaemon, type StartRefusal, runDaemon } from '@maintd/settings/daemon';
import { ServerTls, serverTlsMetrics } from '@maintd/settings/tls';
import type { Logger } from 'pino';
import type { MasterConfig } from './config.js';
import { loadProcessConfig } from './env.js';
import { TokensFile } from './auth/tokens-file.js';
import { createStartingApp } from './starting.js';
import { RETRY_FIELDS, STARTUP_BACKOFF, openWithRetry } from './startup.js';
import { VERSION } from './version.js';
import { type Master, wireMaster } from './wire.js';

/** What the HTTP server hands to whichever app serves now. */
type Fetch = (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

/**
 * The `maintd` entry point: parses the config, opens the real dependencies (etcd or the
 * embedded store, the system clock, pino, prom-client), serves the API and runs the master that
 * `wireMaster` composes until SIGINT/SIGTERM. Everything else is tested without it; the command
 * line, signals, shutdown and exit codes are `runDaemon`'s (docs/ARCHITECTURE.md §3.1).
 *
 * The HTTP server listens before the store opens: while etcd is unreachable at startup the
 * master is alive (`/healthz`) and not ready (`/readyz` 503), retrying with backoff, and it
 * switches to the real API once the store opens (docs/ARCHITECTURE.md §3.1).
 */
export function main(argv: readonly string[]): Promise<void> {
  return runDaemon({
    program: 'maintd',
    version: VERSION,
    argv,
    load: loadProcessConfig,
    logging: (config) => ({
      base: { master_id: config.masterId },
      pretty: {
        // The startup retry line says its endpoints, attempt and wait in words.
        ignore: [...(PRETTY_LOG_FORMAT.ignore ?? []), ...RETRY_FIELDS],
        message: (log, colors) =>
          typeof log.retry_in_ms === 'number' ? String(log.msg) : PRETTY_LOG_FORMAT.message?.(log, colors),
      },
    }),
    start,
  });
}

async function start(config: MasterConfig, logger: Logger, ctx: DaemonContext): Promise<ServingDaemon | StartRefusal> {
  let kv: Kv;
  try {
    kv = await openKv(config);
  } catch (err) {
    // An unreadable or malformed TLS file: no retry can fix it.
    return { refused: `cannot configure the etcd client: ${(err as Error).message}`, err };
  }
  const closeKv = (): Promise<void> => kv.close().catch(() => undefined);
  // Checked before serving: a missing, loose or malformed tokens file exits 2, as a TLS file does.
  let tokensFile: TokensFile | undefined;
  if (config.apiTokensFile !== undefined) {
    try {
      tokensFile = await TokensFile.open(config.apiTokensFile, config.apiToken, logger);
    } catch (err) {
      return { refused: `cannot read the API tokens: ${(err as Error).message}`, release: closeKv };
    }
  }
  // The API's certificate is checked before serving too: a bad file exits 2 naming the setting.
  let tls: ServerTls | undefined;
  if (config.tls !== undefined) {
    const opened = await ServerTls.open(config.tls, { clock: systemClock, logger });
    if (!opened.ok) {
      return {
        refused: `cannot serve the API over TLS: ${opened.error}`,
        release: () => {
          tokensFile?.close();
          return closeKv();
        },
      };
    }
    tls = opened.tls;
  }
  if (tokensFile && tokensFile.subjects().length > 0 && tls?.mutual !== true) {
    logger.warn(
      'MASTER_API_TOKENS_FILE maps client certificate subjects, but MASTER_TLS_CLIENT_CA is unset: no client presents a certificate, so those lines grant nothing',
    );
  }
  const embedded = config.etcd.endpoints.length === 0;
  if (embedded) {
    logger.warn(
      'ETCD_ENDPOINTS is empty: using the embedded in-memory store (single master, not durable; state is lost on exit)',
    );
  }

  const clock = systemClock;
  const metrics = createMetrics({ version: VERSION });
  let serving: { fetch: Fetch } = createStartingApp({
    metrics: async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType }),
  });
  if (tls) tls.observe(serverTlsMetrics(metrics.registry, 'master'));
  const dispatch: Fetch = (request, env) => serving.fetch(request, env);
  const listen = {
    fetch: dispatch,
    hostname: config.host,
    port: config.port,
  };
  const scheme = tls ? 'https' : 'http';
  // The starting app and the real one are served by this one server, so both speak TLS.
  const server: ServerType = serve(tls ? { ...listen, ...tls.serveOptions() } : listen, (info) => {
    logger.info(
      {
        host: config.host,
        port: info.port,
        tls: tls?.mode ?? 'off',
        etcd: embedded ? 'embedded' : config.etcd.endpoints,
        workers: config.workers.endpoints,
        version: VERSION,
      },
      `maintd listening on ${scheme}://${config.host}:${info.port}`,
    );
  });
  // Rotated files go into force for new connections (docs/ARCHITECTURE.md §3.4).
  if (tls) tls.attach(server as HttpsServer);

  /** Set once the store is open and the master runs. */
  let running: Running | undefined = undefined;
  /** What ran when the shutdown began: a store that opens later is closed by whoever opened it. */
  let stopped: Running | undefined = undefined;
  const closeServer = (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // 'listening' may never have happened (listen error): close() then calls back at once.
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    return closed;
  };

  const finishStartup = async (): Promise<void> => {
    let renewFailures = 0;
    const opened = await openWithRetry({
      open: () =>
        TaskStore.open(
          storeOptions(config, {
            kv,
            clock,
            info: {
              host: hostname(),
              pid: process.pid,
              version: VERSION,
              started_at: clock.now(),
              pools: poolSizes(config.pools),
            },
            onSessionEvent: (e) => {
              if (e.type === 'lost') {
                renewFailures = 0;
                logger.warn({ lease: e.leaseId }, 'session lost: not claiming; in-flight claims will be discarded');
              } else if (e.type === 'renewed') {
                logger.info({ lease: e.leaseId, failed_attempts: renewFailures }, 'session renewed');
                renewFailures = 0;
              } else {
                // The first failure says why; the next ones (one per backoff, up to every 5 s for as
                // long as etcd is away) would only repeat it.
                renewFailures++;
                logger[renewFailures === 1 ? 'warn' : 'debug'](
                  { err: e.error, attempt: renewFailures },
                  'session renewal failed; retrying',
                );
              }
            },
          }),
        ),
      endpoints: config.etcd.endpoints,
      clock,
      random: cryptoRandom,
      backoff: STARTUP_BACKOFF,
      logger,
      signal: ctx.stopping,
      // gRPC reports a TLS failure as a bare UNAVAILABLE: the handshake says what is wrong (it
      // tries nothing without ETCD_CA_CERT or an https:// endpoint).
      explain: () => etcdKvOptions(config.etcd).then((o) => diagnoseEtcdTls(o)),
    });
    if (opened.kind === 'stopped') return; // the signal handler exits
    if (opened.kind !== 'open') {
      const failed = opened;
      await ctx.abandon(failed.kind === 'misconfigured' ? EXIT.usage : EXIT.failure, async () => {
        logger.fatal(
          { err: failed.error, endpoints: config.etcd.endpoints },
          `cannot open the task store: ${failed.message}`,
        );
        if ('closeAllConnections' in server) server.closeAllConnections();
        await closeServer();
        await closeKv();
      });
      return;
    }
    const store = opened.value;
    if (ctx.stopping.aborted) {
      // A signal arrived while the store was opening: give the session back, the handler exits.
      await store.close().catch(() => undefined);
      return;
    }

    // A release older than a feature the cluster has switched on would misread what it writes:
    // it stops before its first claim (docs/ARCHITECTURE.md §2.8). Exit 2: no restart can fix it.
    const stopTooOld = (): void => ctx.fail('cluster-too-new', EXIT.usage);
    const cluster = await checkCluster(store, featureNames()).catch(() => undefined);
    if (cluster && cluster.view.unknownEnabled.length > 0) {
      logger.fatal(tooOldMessage(VERSION, cluster));
      await store.close().catch(() => undefined);
      stopTooOld();
      return;
    }

    const tokens = tokensFile;
    const master = wireMaster(
      {
        store,
        kv,
        config,
        clock,
        logger,
        metrics,
        version: VERSION,
        // The scheduler has logged why and stopped claiming; the rest is the usual shutdown.
        onTooOld: stopTooOld,
      },
      tokens ? { tokens: () => tokens.tokens(), subjects: () => tokens.subjects() } : {},
    );
    master.start();
    running = { store, master };
    serving = master.app;
    if (opened.attempts > 1)
      logger.info({ attempts: opened.attempts }, 'etcd reachable; task store open, serving the API');
  };

  return {
    server,
    address: `${config.host}:${config.port}`,
    drain: async (signal) => {
      const r = (stopped = running);
      if (!r) {
        logger.info({ signal }, 'shutting down before the task store opened');
        return;
      }
      logger.info(
        { signal, running: r.master.scheduler.runningCount() },
        'shutting down: no new claims; letting running tasks finish',
      );
      const { finished, abandoned } = await r.master.stop(config.shutdownGraceSecs * 1000);
      if (!finished) logger.warn({ abandoned }, 'grace period over; releasing the rest to peers');
    },
    release: async () => {
      tokensFile?.close();
      tls?.close();
      if (stopped) await stopped.store.close(); // revokes the session: peers recover anything left at once
      await kv.close();
    },
    finishStartup,
  };
}

/** The master once its store is open. */
interface Running {
  readonly store: TaskStore;
  readonly master: Master;
}

async function openKv(config: Config): Promise<Kv> {
  const { etcd } = config;
  if (etcd.endpoints.length === 0) return new MemoryKv({ clock: systemClock });
  return new EtcdKv(await etcdKvOptions(etcd));
}
