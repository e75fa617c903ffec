import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { setTimeout as setTimeoutCb } from 'node:timers';

/**
 * A throwaway etcd for tests: free loopback ports, a temporary data dir, and a shell watchdog
 * that kills etcd when the parent's stdin pipe closes, so no etcd outlives a killed test run.
 */
export interface EtcdServer {
  /** Client URL, e.g. `http://127.0.0.1:41234`. */
  readonly clientUrl: string;
  /** Port of the client URL (pass it back to restart on the same URL). */
  readonly clientPort: number;
  /** Raft peer port (pass it back with the data dir to restart the same member). */
  readonly peerPort: number;
  /** The member's data directory. */
  readonly dataDir: string;
  /** Stops etcd (SIGKILL after 5 s) and removes the data dir unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** Options of {@link startEtcd}. */
export interface StartEtcdOptions {
  /** The etcd binary (default `etcd` on PATH). */
  readonly binary?: string;
  /** Reuse this data dir (e.g. to restart a stopped member). */
  readonly dataDir?: string;
  /** Reuse this client port (e.g. to restart on the same URL). */
  readonly clientPort?: number;
  /** Reuse this peer port (with `dataDir`, to restart the same member). */
  readonly peerPort?: number;
  /** Extra etcd flags. */
  readonly extraArgs?: readonly string[];
  /** How long to wait for `/health` (default 20 s). */
  readonly readyTimeoutMs?: number;
}

const WATCHDOG = 'exec 3<&0; "$0" "$@" </dev/null & e=$!; { read _ <&3; kill $e 2>/dev/null; } & wait $e';

/** Data dirs are created under this prefix so that CI can sweep leftovers after a crash. */
export const ETCD_DATA_PREFIX = 'maintd-etcd-test-';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts a single-member etcd and resolves once `/health` reports healthy. */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), ETCD_DATA_PREFIX)));
  const clientPort = options.clientPort ?? (await freePort());
  const peerPort = options.peerPort ?? (await freePort());
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name',
    'maintd-test',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    clientUrl,
    '--advertise-client-urls',
    clientUrl,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `maintd-test=${peerUrl}`,
    '--initial-cluster-state',
    'new',
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    '--log-level',
    'error',
    '--heartbeat-interval',
    '10',
    '--election-timeout',
    '100',
    ...(options.extraArgs ?? []),
  ];
  const proc: ChildProcess = spawn('sh', ['-c', WATCHDOG, options.binary ?? 'etcd', ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => ((exited = true), resolve())));
  proc.once('error', () => (exited = true));

  const stop = async (o: { keepData?: boolean } = {}): Promise<void> => {
    if (!exited) {
      proc.stdin?.end();
      const killer = setTimeoutCb(() => {
        try {
          if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, 5000);
      await exit;
      clearTimeout(killer);
    }
    if (!o.keepData) await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = performance.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (exited) throw new Error(`etcd exited before becoming healthy:\n${stderr}`);
    try {
      const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: string };
      if (body.health === 'true') break;
    } catch {
      /* not up yet */
    }
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`etcd did not become healthy within the timeout:\n${stderr}`);
    }
    await delay(25);
  }
  return { clientUrl, clientPort, peerPort, dataDir, stop };
}
