import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { eventually as retryUntil, freePort } from '@maintd/core/testing';

const root = (path: string): string => fileURLToPath(new URL(`../../../../${path}`, import.meta.url));

/** The real binaries under test (built by the test task's dependency on `^build`). */
export const BIN = {
  maintd: root('apps/master/bin/maintd.js'),
  sim: root('apps/sim/bin/maintd-sim.js'),
  exporter: root('apps/exporter/bin/maintd-exporter.js'),
} as const;

const children = new Set<ChildProcess>();
// A test that throws must not leave daemons behind: every child dies with the test process.
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** A child process whose combined output is kept for assertions and failure messages. */
export interface Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Whether the process is still running. */
  running(): boolean;
  /** Sends a signal (default SIGTERM). */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<number | string>;
}

/** Spawns `node <bin> ...args` with a minimal environment plus `env`. */
export function spawnNode(bin: string, args: readonly string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  const keep = (d: Buffer): void => {
    // Bounded: a long run's logs must not grow without limit in the test process.
    out = (out + d.toString()).slice(-4_000_000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => {
      children.delete(proc);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null;
  return {
    proc,
    pid: proc.pid ?? -1,
    output: () => out,
    exited,
    running,
    kill: (signal = 'SIGTERM') => {
      if (running()) proc.kill(signal);
    },
    stop: async (graceMs = 10_000) => {
      if (running()) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return exited;
    },
  };
}

/** Runs `node <bin> ...args` to completion. */
export async function runNode(
  bin: string,
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<{ code: number | string; out: string }> {
  const child = spawnNode(bin, args, env);
  const closed = new Promise<void>((resolve) => child.proc.once('close', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  // At 'exit' the last lines (a fatal startup message) can still be in the pipes, unread: wait
  // for them to close, bounded, as a grandchild that inherited one could hold it open.
  await Promise.race([closed, delay(2000, undefined, { ref: false })]);
  return { code, out: child.output() };
}

/** Retries `check` until it passes or `timeoutMs` of real time pass (default 20 s, every 100 ms). */
export const eventually = <T>(check: () => T | Promise<T>, timeoutMs = 20_000, everyMs = 100): Promise<T> =>
  retryUntil(check, timeoutMs, everyMs);

/** A running `maintd`. */
export interface Master extends Child {
  readonly url: string;
  readonly port: number;
  readonly id: string;
}

/** Settings every fault-suite master shares: short leases, no background sweeps, debug logs. */
export const FAST_MASTER_ENV: Readonly<Record<string, string>> = {
  MASTER_HOST: '127.0.0.1',
  ETCD_LEASE_TTL_SECS: '5',
  STATS_SCAN_INTERVAL_SECS: '0',
  MERGE_WAL_INTERVAL_SECS: '0',
  COMPACTION_INTERVAL_SECS: '0',
  WORKER_TIMEOUT_SECS: '10',
  LOG_LEVEL: 'debug',
};

/**
 * Starts the real `maintd` with `FAST_MASTER_ENV` plus `env` on a free port (or `env.MASTER_PORT`)
 * and resolves once it serves its API (`/healthz` says `ok`, not `starting`: the store is open).
 * With `ready`, waits for `/readyz` instead (store reachable and session held).
 */
export async function startMaster(
  env: Record<string, string>,
  options: { id?: string; ready?: boolean; timeoutMs?: number } = {},
): Promise<Master> {
  const port = env.MASTER_PORT ? Number(env.MASTER_PORT) : await freePort();
  const id = options.id ?? env.MASTER_ID ?? `fault-${port}`;
  const child = spawnNode(BIN.maintd, [], { ...FAST_MASTER_ENV, MASTER_ID: id, ...env, MASTER_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (!child.running()) throw new Error(`maintd ${id} exited early:\n${child.output().slice(-4000)}`);
    const res = await fetch(`${url}${options.ready === false ? '/healthz' : '/readyz'}`, {
      signal: AbortSignal.timeout(2000),
    });
    if (res.status !== 200) throw new Error(`maintd ${id} not ready: ${res.status}`);
    // A master still waiting for etcd is alive (200) but serves no API yet: `starting`.
    const body = (await res.json()) as { status?: string };
    if (body.status === 'starting') throw new Error(`maintd ${id} is still waiting for etcd`);
  }, options.timeoutMs ?? 30_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return { ...child, url, port, id };
}

/** `maintd-sim workers` as a process: real HTTP workers on loopback. */
export interface SimWorkers extends Child {
  readonly endpoints: readonly string[];
  readonly broken: readonly string[];
}

/**
 * Starts `maintd-sim workers` with `args` (e.g. `['--workers', '3', '--latency-ms', '500']`), from
 * the workspace's build unless `bin` names another (another release's simulator).
 */
export async function startSimWorkers(args: readonly string[], bin: string = BIN.sim): Promise<SimWorkers> {
  const child = spawnNode(bin, ['workers', ...args]);
  const info = await eventually(() => {
    if (!child.running()) throw new Error(`maintd-sim exited early:\n${child.output()}`);
    const line = child
      .output()
      .split('\n')
      .find((l) => l.includes('simulated workers listening'));
    if (!line) throw new Error('maintd-sim workers not listening yet');
    return JSON.parse(line) as { workers: string[]; broken: string[] };
  }, 20_000);
  return { ...child, endpoints: info.workers, broken: info.broken };
}

/** JSON log lines of a daemon's output (non-JSON lines skipped). */
export function logLines(output: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      /* a partial line at the end */
    }
  }
  return out;
}
