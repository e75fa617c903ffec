import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { IDLE_KEEP_ALIVE_MS } from './keep-alive.js';
import type { LoadResult } from './load-result.js';
import {
  type DaemonConfig,
  type DaemonContext,
  type DaemonOptions,
  type DaemonProcess,
  type ServingDaemon,
  type StartRefusal,
  runDaemon,
} from './run-daemon.js';

const CONFIG: DaemonConfig = { logLevel: 'info', logFormat: 'json' };

/** A loader in the daemons' style: help and version win, a bad flag is an error. */
function load(argv: readonly string[]): LoadResult<DaemonConfig> {
  if (argv.includes('--help')) return { action: 'help', text: 'Usage: maintd-test [options]' };
  if (argv.includes('--version')) return { action: 'version' };
  if (argv.includes('--print-config')) return { action: 'print-config', text: 'LOG_LEVEL=info\n' };
  const bad = argv.find((a) => a !== '--verbose');
  if (bad !== undefined) return { action: 'error', message: `unknown option '${bad}'` };
  return { action: 'run', config: CONFIG };
}

/** A server that records its shutdown and can fail to listen. */
class FakeServer extends EventEmitter {
  keepAliveTimeout = 5_000;
  headersTimeout = 60_000;
  constructor(private readonly steps: string[]) {
    super();
  }
  close(callback: () => void): void {
    this.steps.push('server closing');
    setImmediate(() => {
      this.steps.push('server closed');
      callback();
    });
  }
  closeIdleConnections(): void {}
  closeAllConnections(): void {}
}

function harness(o: { start?: DaemonOptions<DaemonConfig>['start']; tty?: boolean } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const steps: string[] = [];
  const proc = Object.assign(new EventEmitter(), {
    exitCode: undefined as number | string | undefined,
    exit: vi.fn(),
    stdout: { write: (t: string) => out.push(t), isTTY: o.tty ?? false },
    stderr: { write: (t: string) => err.push(t) },
  });
  const server = new FakeServer(steps);
  let context: DaemonContext | undefined;
  const serving: ServingDaemon = {
    server,
    address: '127.0.0.1:8090',
    drain: async (reason) => {
      steps.push(`drain ${reason}`);
      await new Promise((resolve) => setImmediate(resolve));
    },
    release: () => {
      steps.push('release');
      return Promise.resolve();
    },
  };
  const start = vi.fn(
    o.start ??
      ((_config: DaemonConfig, _logger: unknown, ctx: DaemonContext) => {
        context = ctx;
        return Promise.resolve(serving);
      }),
  );
  const run = (argv: readonly string[]): Promise<void> =>
    runDaemon({
      program: 'maintd-test',
      version: '1.2.3',
      argv,
      load,
      logging: () => ({ base: { app: 'maintd-test' } }),
      start,
      process: proc as unknown as DaemonProcess,
      logDestination: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
    });
  return { run, proc, out, err, logs, steps, server, start, context: () => context };
}

const messages = (logs: readonly Record<string, unknown>[]): unknown[] => logs.map((l) => l.msg);

describe('runDaemon', () => {
  it('prints the help with a trailing newline and exits 0 without starting, past a `--` a package manager passed', async () => {
    const h = harness();
    await h.run(['--', '--help']);
    expect(h.out).toEqual(['Usage: maintd-test [options]\n']);
    expect(h.err).toEqual([]);
    expect(h.proc.exitCode).toBeUndefined();
    expect(h.start).not.toHaveBeenCalled();
  });

  it('prints "<program> <version>" on --version and exits 0', async () => {
    const h = harness();
    await h.run(['--version']);
    expect(h.out).toEqual(['maintd-test 1.2.3\n']);
    expect(h.proc.exitCode).toBeUndefined();
    expect(h.start).not.toHaveBeenCalled();
  });

  it('prints the effective settings on --print-config and exits 0 without starting', async () => {
    const h = harness();
    await h.run(['--print-config']);
    expect(h.out).toEqual(['LOG_LEVEL=info\n']);
    expect(h.proc.exitCode).toBeUndefined();
    expect(h.start).not.toHaveBeenCalled();
  });

  it('says what is wrong with the settings on stderr, points at --help and exits 2 without starting', async () => {
    const h = harness();
    await h.run(['--no-such-flag']);
    expect(h.out).toEqual([]);
    expect(h.err).toEqual([
      "maintd-test: unknown option '--no-such-flag'\nRun 'maintd-test --help' for every setting.\n",
    ]);
    expect(h.proc.exitCode).toBe(2);
    expect(h.start).not.toHaveBeenCalled();
  });

  it('logs a refused start as a fatal line with its cause, releases what it opened and exits 2', async () => {
    const released = vi.fn(() => Promise.resolve());
    const refusal: StartRefusal = {
      refused: 'cannot configure the etcd client: ETCD_CA_CERT: no such file',
      err: new Error('ENOENT'),
      release: released,
    };
    const h = harness({ start: () => Promise.resolve(refusal) });
    await h.run([]);
    expect(h.logs).toMatchObject([{ level: 60, app: 'maintd-test', msg: refusal.refused, err: { message: 'ENOENT' } }]);
    expect(released).toHaveBeenCalledOnce();
    expect(h.proc.exitCode).toBe(2);
    expect(h.proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('rejects when the start throws, as a crash does (the binary then exits 1)', async () => {
    const h = harness({ start: () => Promise.reject(new Error('boom')) });
    await expect(h.run([])).rejects.toThrow('boom');
    expect(h.proc.exit).not.toHaveBeenCalled();
  });

  it('keeps idle connections open longer than clients do, so that no request is sent on one it closes', async () => {
    const h = harness();
    await h.run([]);
    expect(h.server.keepAliveTimeout).toBe(IDLE_KEEP_ALIVE_MS);
    expect(h.server.headersTimeout).toBeGreaterThan(IDLE_KEEP_ALIVE_MS);
  });

  it('exits 1 after a graceful shutdown when the port is taken', async () => {
    const h = harness();
    await h.run([]);
    h.server.emit('error', Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' }));
    await vi.waitFor(() => expect(h.proc.exit).toHaveBeenCalledWith(1));
    expect(h.logs[0]).toMatchObject({ level: 60, msg: 'cannot listen on 127.0.0.1:8090: listen EADDRINUSE' });
    expect(h.steps).toEqual(['server closing', 'drain listen-error', 'server closed', 'release']);
    expect(messages(h.logs).at(-1)).toBe('stopped');
  });

  it('shuts down on SIGTERM (server closing, work drained, server closed, then released) and exits 0', async () => {
    const h = harness();
    await h.run([]);
    expect(h.context()?.stopping.aborted).toBe(false);
    h.proc.emit('SIGTERM');
    expect(h.context()?.stopping.aborted).toBe(true);
    await vi.waitFor(() => expect(h.proc.exit).toHaveBeenCalledWith(0));
    expect(h.proc.exit).toHaveBeenCalledOnce();
    expect(h.steps).toEqual(['server closing', 'drain SIGTERM', 'server closed', 'release']);
    expect(messages(h.logs)).toEqual(['stopped']);
  });

  it('keeps running on SIGHUP, saying so, unless its output is a terminal, whose closing stops it', async () => {
    const daemon = harness();
    await daemon.run([]);
    daemon.proc.emit('SIGHUP');
    expect(daemon.steps).toEqual([]);
    expect(daemon.logs).toMatchObject([{ level: 40, signal: 'SIGHUP' }]);

    const terminal = harness({ tty: true });
    await terminal.run([]);
    terminal.proc.emit('SIGHUP');
    await vi.waitFor(() => expect(terminal.proc.exit).toHaveBeenCalledWith(0));
    expect(terminal.steps).toContain('drain SIGHUP');
  });

  it('shuts down gracefully, then exits with the code of a failure found after serving', async () => {
    const h = harness();
    await h.run([]);
    h.context()?.fail('misconfigured', 2);
    expect(h.context()?.stopping.aborted).toBe(true);
    await vi.waitFor(() => expect(h.proc.exit).toHaveBeenCalledWith(2));
    expect(h.proc.exit).toHaveBeenCalledOnce();
    expect(h.steps).toEqual(['server closing', 'drain misconfigured', 'server closed', 'release']);
  });

  it('abandons a start with the given code after its cleanup, but not while a shutdown already runs', async () => {
    const h = harness();
    await h.run([]);
    const cleanup = vi.fn(() => Promise.resolve());
    await h.context()?.abandon(1, cleanup);
    expect(cleanup).toHaveBeenCalledOnce();
    expect(h.proc.exit).toHaveBeenCalledWith(1);
    expect(h.context()?.stopping.aborted).toBe(true);

    const late = harness();
    await late.run([]);
    late.proc.emit('SIGINT');
    const lateCleanup = vi.fn(() => Promise.resolve());
    await late.context()?.abandon(2, lateCleanup);
    expect(lateCleanup).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(late.proc.exit).toHaveBeenCalledWith(0));
    expect(late.proc.exit).toHaveBeenCalledOnce();
  });

  it('runs the rest of the startup once the stop signals are handled', async () => {
    let listening = -1;
    const h = harness({
      start: (_config, _logger, ctx) =>
        Promise.resolve({
          server: new FakeServer([]),
          address: 'h:1',
          drain: () => Promise.resolve(),
          release: () => Promise.resolve(),
          finishStartup: () => {
            listening = h.proc.listenerCount('SIGTERM');
            expect(ctx.stopping.aborted).toBe(false);
            return Promise.resolve();
          },
        }),
    });
    await h.run([]);
    expect(listening).toBe(1);
  });
});
