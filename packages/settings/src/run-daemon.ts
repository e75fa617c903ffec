/**
 * The one entry point of the maintd daemons (`maintd`, `maintd-exporter`): the command line, the
 * logger, the stop signals, the shutdown sequence and the exit codes are the same for both
 * (docs/ARCHITECTURE.md §3.1), so each daemon's `main.ts` only builds its dependencies and serves.
 */
import type { DestinationStream, Logger } from 'pino';
import { stripLeadingDashDash } from './argv.js';
import { EXIT, versionText } from './help.js';
import { keepIdleConnections } from './keep-alive.js';
import type { LoadResult } from './load-result.js';
import { type LogFormat, resolveLogFormat } from './log-format.js';
import { type CreateLoggerOptions, createLogger } from './logging.js';
import { type ShutdownServer, shutDown } from './shutdown.js';
import { handleStopSignals } from './signals.js';
import { stdoutIsTty } from './terminal.js';

/** One of the {@link EXIT} codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The settings of a daemon that {@link runDaemon} reads itself. */
export interface DaemonConfig {
  /** `LOG_LEVEL`. */
  readonly logLevel: string;
  /** `LOG_FORMAT`. */
  readonly logFormat: LogFormat;
}

/** The daemon's HTTP server (Node's, as `@hono/node-server`'s `serve` returns it). */
export interface DaemonServer extends ShutdownServer {
  once(event: 'error', listener: (err: Error) => void): unknown;
}

/** A daemon that serves: what its graceful shutdown stops, in the order of `shutDown`. */
export interface ServingDaemon {
  readonly server: DaemonServer;
  /** `host:port`, as the line of a failed listen names it. */
  readonly address: string;
  /** Stops the daemon's work while the requests in flight finish; `reason` is the signal or failure. */
  drain(reason: string): Promise<void>;
  /** Releases what the work used, once the server has closed. */
  release(): Promise<void>;
  /**
   * The rest of the startup, run once the stop signals are handled (the master opens its task
   * store, retrying while etcd is away); {@link runDaemon} resolves when it does.
   */
  readonly finishStartup?: () => Promise<void>;
}

/**
 * A configuration found, before serving, never to work (an unreadable TLS file): logged as a
 * fatal line, then the process ends with exit code 2.
 */
export interface StartRefusal {
  /** The fatal line's message, naming the setting. */
  readonly refused: string;
  /** The cause, logged as the line's `err`. */
  readonly err?: unknown;
  /** Closes what the startup opened before it met the refusal. */
  readonly release?: () => Promise<void>;
}

/** What a daemon's `start` may do to the run. */
export interface DaemonContext {
  /** Aborted as the daemon begins to stop (a signal, a failure). */
  readonly stopping: AbortSignal;
  /** Shuts down gracefully for `reason` (a failure found after serving), then exits with `code`. */
  fail(reason: string, code: ExitCode): void;
  /**
   * Exits with `code` once `cleanup` is done, without the graceful shutdown (the daemon's work
   * never started). Does nothing when a shutdown already runs: that one exits.
   */
  abandon(code: ExitCode, cleanup: () => Promise<void>): Promise<void>;
}

/** The process a daemon runs in: `process`, or a fake in tests. */
export interface DaemonProcess extends Pick<NodeJS.Process, 'on' | 'once' | 'exit'> {
  exitCode: number | string | undefined;
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown };
}

/** What {@link runDaemon} runs. */
export interface DaemonOptions<C extends DaemonConfig> {
  /** The binary's name, as `--version`, errors and log lines give it. */
  readonly program: string;
  readonly version: string;
  /** The arguments after the script (`process.argv.slice(2)`). */
  readonly argv: readonly string[];
  /** The daemon's settings from these arguments and its environment (its `env.ts` reads that). */
  readonly load: (argv: readonly string[]) => LoadResult<C>;
  /** The daemon's own fields on every log line, and how its lines read in the pretty format. */
  readonly logging?: (config: C) => Pick<CreateLoggerOptions, 'base' | 'pretty'>;
  /** Opens the daemon's dependencies and serves; a bad file found on the way is a refusal. */
  readonly start: (config: C, logger: Logger, context: DaemonContext) => Promise<ServingDaemon | StartRefusal>;
  /** Default: `process`. */
  readonly process?: DaemonProcess;
  /** Where log lines go (default: stdout). */
  readonly logDestination?: DestinationStream;
}

/**
 * Runs a daemon: `--help`/`-h` and `--print-config` print their text, `--version`/`-V` the
 * version, a bad setting says so on stderr with exit code 2; otherwise it creates the logger
 * (`LOG_LEVEL`, `LOG_FORMAT`), starts the daemon and stops it on SIGINT/SIGTERM (and SIGHUP from
 * a closed terminal) with exit code 0. A failed listen exits 1 and a refused start 2; a start
 * that throws rejects, as a crash does.
 */
export async function runDaemon<C extends DaemonConfig>(o: DaemonOptions<C>): Promise<void> {
  const proc = o.process ?? process;
  const loaded = o.load(stripLeadingDashDash(o.argv));
  if (loaded.action === 'help' || loaded.action === 'print-config') {
    // So that the shell's prompt starts on a line of its own.
    proc.stdout.write(loaded.text.endsWith('\n') ? loaded.text : `${loaded.text}\n`);
    return;
  }
  if (loaded.action === 'version') {
    proc.stdout.write(versionText(o.program, o.version));
    return;
  }
  if (loaded.action === 'error') {
    proc.stderr.write(`${o.program}: ${loaded.message}\nRun '${o.program} --help' for every setting.\n`);
    proc.exitCode = EXIT.usage;
    return;
  }
  const config = loaded.config;
  const terminal = stdoutIsTty(proc.stdout);
  const logger = createLogger({
    level: config.logLevel,
    format: resolveLogFormat(config.logFormat, terminal),
    ...o.logging?.(config),
    ...(o.logDestination ? { destination: o.logDestination } : {}),
  });

  // Set once the daemon serves: a failure reported before then has nothing to shut down.
  let daemon: ServingDaemon | undefined = undefined;
  let stopping = false;
  const stop = new AbortController();
  const beginStop = (): boolean => {
    if (stopping) return false;
    stopping = true;
    stop.abort();
    return true;
  };
  const shutdown = async (reason: string): Promise<void> => {
    if (!beginStop() || !daemon) return;
    const d = daemon;
    await shutDown({ server: d.server, logger, drain: () => d.drain(reason), release: () => d.release() });
  };
  const context: DaemonContext = {
    stopping: stop.signal,
    fail: (reason, code) => void shutdown(reason).finally(() => proc.exit(code)),
    abandon: async (code, cleanup) => {
      if (!beginStop()) return;
      await cleanup().finally(() => proc.exit(code));
    },
  };

  const started = await o.start(config, logger, context);
  if ('refused' in started) {
    if (started.err === undefined) logger.fatal(started.refused);
    else logger.fatal({ err: started.err }, started.refused);
    await started.release?.();
    proc.exitCode = EXIT.usage;
    return;
  }
  daemon = started;
  keepIdleConnections(started.server);
  started.server.once('error', (err: Error) => {
    logger.fatal({ err }, `cannot listen on ${started.address}: ${err.message}`);
    context.fail('listen-error', EXIT.failure);
  });
  handleStopSignals({ program: o.program, logger, terminal, shutdown, process: proc });
  await started.finishStartup?.();
}
