import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
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
  /** The member's name (`--name`). */
  readonly name: string;
  /** Resolves when the etcd process has exited (killed, stopped or crashed). */
  readonly exited: Promise<void>;
  /**
   * Sends `signal` to etcd and its watchdog (one process group): `SIGKILL` to crash the member,
   * `SIGSTOP`/`SIGCONT` to freeze and thaw it. A no-op once it has exited.
   */
  signal(signal: NodeJS.Signals): void;
  /** Stops etcd (SIGKILL after 5 s) and removes the data dir unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** TLS on the client URL (`https://`), as the etcd flags of the same names. */
export interface EtcdTlsOptions {
  /** PEM file of the server's certificate. */
  readonly certFile: string;
  /** PEM file of the server's private key. */
  readonly keyFile: string;
  /** PEM file of the CA that signs client certificates. */
  readonly trustedCaFile: string;
  /** Require a client certificate signed by `trustedCaFile` (default true). */
  readonly clientCertAuth?: boolean;
  /** Client certificate the readiness probe presents (required with client cert auth). */
  readonly probeCertFile?: string;
  /** Private key of `probeCertFile`. */
  readonly probeKeyFile?: string;
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
  /** Member name (default `maintd-test`). */
  readonly name?: string;
  /**
   * `--initial-cluster` for a multi-member cluster, e.g. `a=http://127.0.0.1:1,b=…`; it must
   * name this member with its `peerPort` (default: this member alone).
   */
  readonly initialCluster?: string;
  /** Serve clients over TLS. */
  readonly tls?: EtcdTlsOptions;
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

/** How often a start whose free ports another process took meanwhile is tried on fresh ones. */
const PORT_RACE_ATTEMPTS = 3;

/** Whether etcd failed because a port {@link freePort} found free was taken before etcd bound it. */
const portTaken = (err: unknown): boolean => err instanceof Error && err.message.includes('address already in use');

/**
 * Starts a single-member etcd and resolves once `/health` reports healthy. Ports it picks itself
 * were free a moment before etcd binds them: when a process beside the test takes one first, it
 * starts again on fresh ports.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdServer> {
  const fixed = options.clientPort !== undefined || options.peerPort !== undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce(options);
    } catch (err) {
      if (fixed || attempt >= PORT_RACE_ATTEMPTS || !portTaken(err)) throw err;
    }
  }
}

async function startEtcdOnce(options: StartEtcdOptions): Promise<EtcdServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), ETCD_DATA_PREFIX)));
  const clientPort = options.clientPort ?? (await freePort());
  const peerPort = options.peerPort ?? (await freePort());
  const tls = options.tls;
  const clientUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = options.name ?? 'maintd-test';
  const multi = options.initialCluster !== undefined;
  const args = [
    '--name',
    name,
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
    options.initialCluster ?? `${name}=${peerUrl}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    'maintd-test',
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    '--log-level',
    'error',
    // A cluster's members share this machine's cores with the tests: a longer election timeout
    // keeps a busy moment from looking like a dead leader.
    '--heartbeat-interval',
    multi ? '50' : '10',
    '--election-timeout',
    multi ? '1000' : '100',
    ...(tls
      ? [
          '--cert-file',
          tls.certFile,
          '--key-file',
          tls.keyFile,
          '--trusted-ca-file',
          tls.trustedCaFile,
          ...(tls.clientCertAuth === false ? [] : ['--client-cert-auth']),
        ]
      : []),
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

  const signal = (sig: NodeJS.Signals): void => {
    if (exited || !proc.pid) return;
    try {
      process.kill(-proc.pid, sig);
    } catch {
      /* already gone */
    }
  };
  const stop = async (o: { keepData?: boolean } = {}): Promise<void> => {
    if (!exited) {
      // A frozen member cannot act on the watchdog's kill until it is thawed.
      signal('SIGCONT');
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
    if (exited) {
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      throw new Error(`etcd exited before becoming healthy:\n${stderr}`);
    }
    try {
      if ((await probeHealth(clientUrl, tls)) === 'true') break;
    } catch {
      /* not up yet */
    }
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`etcd did not become healthy within the timeout:\n${stderr}`);
    }
    await delay(25);
  }
  return { clientUrl, clientPort, peerPort, dataDir, name, exited: exit, signal, stop };
}

/** `GET /health`'s `health` field (a member reports "true" once the cluster has a leader). */
async function probeHealth(clientUrl: string, tls: EtcdTlsOptions | undefined): Promise<string | undefined> {
  if (!tls) {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
    return ((await res.json()) as { health?: string }).health;
  }
  const body = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest(
      `${clientUrl}/health`,
      {
        ca: readFileSync(tls.trustedCaFile),
        ...(tls.probeCertFile ? { cert: readFileSync(tls.probeCertFile) } : {}),
        ...(tls.probeKeyFile ? { key: readFileSync(tls.probeKeyFile) } : {}),
        timeout: 1000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('health probe timed out')));
    req.on('error', reject);
    req.end();
  });
  return (JSON.parse(body) as { health?: string }).health;
}

/** A multi-member etcd cluster on loopback (see {@link startEtcdCluster}). */
export interface EtcdCluster {
  /** Every member's client URL, in member order. */
  readonly endpoints: readonly string[];
  /** The running members (a restarted member replaces its entry). */
  readonly members: readonly EtcdServer[];
  /** Restarts member `i` on its ports and data dir after a kill or stop; resolves once it is healthy. */
  restart(i: number): Promise<EtcdServer>;
  /** Stops every member and removes their data dirs. */
  stop(): Promise<void>;
}

/**
 * Starts a `size`-member etcd cluster on free loopback ports (each member under its own
 * watchdog and data dir), resolving once every member reports a leader. When a process beside
 * the test takes one of the ports first, the whole cluster starts again on fresh ones.
 */
export async function startEtcdCluster(
  size = 3,
  options: Pick<StartEtcdOptions, 'binary' | 'extraArgs'> = {},
): Promise<EtcdCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdClusterOnce(size, options);
    } catch (err) {
      if (attempt >= PORT_RACE_ATTEMPTS || !portTaken(err)) throw err;
    }
  }
}

async function startEtcdClusterOnce(
  size: number,
  options: Pick<StartEtcdOptions, 'binary' | 'extraArgs'>,
): Promise<EtcdCluster> {
  const specs = await Promise.all(
    Array.from({ length: size }, async (_, i) => ({
      name: `member-${i}`,
      clientPort: await freePort(),
      peerPort: await freePort(),
      dataDir: await mkdtemp(join(tmpdir(), ETCD_DATA_PREFIX)),
    })),
  );
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peerPort}`).join(',');
  const start = (i: number): Promise<EtcdServer> =>
    startEtcd({ ...options, ...specs[i]!, initialCluster, readyTimeoutMs: 30_000 });
  const started = await Promise.allSettled(specs.map((_, i) => start(i)));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    // The members that came up, and every data dir, go with the failed start.
    await Promise.all(started.flatMap((r) => (r.status === 'fulfilled' ? [r.value.stop()] : [])));
    await Promise.all(specs.map((s) => rm(s.dataDir, { recursive: true, force: true })));
    throw failed.reason;
  }
  const members = started.map((r) => (r as PromiseFulfilledResult<EtcdServer>).value);
  return {
    endpoints: specs.map((s) => `http://127.0.0.1:${s.clientPort}`),
    members,
    restart: async (i) => {
      await members[i]!.stop({ keepData: true });
      const member = await start(i);
      members[i] = member;
      return member;
    },
    stop: async () => {
      await Promise.all(members.map((m) => m.stop()));
    },
  };
}
