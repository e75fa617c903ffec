import { freePort } from '@maintd/core/testing';
import { type Child, eventually, spawnNode, startSimWorkers } from '@maintd/faults/harness/processes';
import type { Release } from './checks.js';

/** The binaries of one release. */
export interface Binaries {
  readonly release: Release;
  readonly maintd: string;
}

/** One master process: a host's incarnation of a release. */
export interface Incarnation {
  readonly id: string;
  readonly release: Release;
  readonly child: Child;
}

/**
 * One host of the fleet: a fixed port (the URL the dashboard and the probes keep using) and the
 * master running there now. Replacing it is SIGTERM (running tasks finish: docs/ARCHITECTURE.md
 * §2.7), then the other release's binary on the same port. While that happens the host is
 * `restarting`, the only time its API may answer 503 or not at all.
 */
export class Host {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly #env: Readonly<Record<string, string>>;
  #current: Incarnation | undefined;
  #restarting = false;
  /** When the last restart ended (ms, `performance.now()`). */
  #restartedAt = -Infinity;
  /** Every incarnation so far, oldest first. */
  readonly incarnations: Incarnation[] = [];

  private constructor(name: string, port: number, env: Readonly<Record<string, string>>) {
    this.name = name;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.#env = env;
  }

  static async create(name: string, env: Readonly<Record<string, string>>): Promise<Host> {
    return new Host(name, await freePort(), env);
  }

  get current(): Incarnation | undefined {
    return this.#current;
  }

  /**
   * Whether the host was restarting at `at` (ms, `performance.now()`), or within `graceMs` of its
   * end: a reply sent before the new master was ready may arrive just after.
   */
  restartingAt(at: number, graceMs = 1000): boolean {
    return this.#restarting || at - this.#restartedAt < graceMs;
  }

  /** Starts `bins` here (stopping the current master first) and resolves once it is ready. */
  async run(bins: Binaries, extraEnv: Readonly<Record<string, string>> = {}): Promise<Incarnation> {
    this.#restarting = true;
    try {
      await this.stop();
      const id = `${this.name}-${bins.release === 'N' ? 'n' : 'n1'}-${this.incarnations.length}`;
      const child = spawnNode(bins.maintd, [], {
        ...this.#env,
        ...extraEnv,
        MASTER_ID: id,
        MASTER_HOST: '127.0.0.1',
        MASTER_PORT: String(this.port),
      });
      await eventually(async () => {
        if (!child.running()) throw new Error(`maintd ${id} exited early:\n${child.output().slice(-4000)}`);
        const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) });
        if (res.status !== 200) throw new Error(`maintd ${id} not ready: ${res.status}`);
      }, 30_000);
      const incarnation = { id, release: bins.release, child };
      this.incarnations.push(incarnation);
      this.#current = incarnation;
      return incarnation;
    } finally {
      this.#restarting = false;
      this.#restartedAt = performance.now();
    }
  }

  /** SIGTERM to the current master (running tasks finish), waiting for it to exit. */
  async stop(): Promise<void> {
    const c = this.#current;
    this.#current = undefined;
    if (c) await c.child.stop(30_000);
  }
}

/** A running exporter or dashboard-less helper process with its URL. */
export interface Service {
  readonly url: string;
  readonly child: Child;
}

/** Starts `maintd-exporter` (any release) on a free port and waits for its `/healthz`. */
export async function startExporter(bin: string, env: Readonly<Record<string, string>>): Promise<Service> {
  const port = await freePort();
  const child = spawnNode(bin, [], { ...env, EXPORTER_HOST: '127.0.0.1', EXPORTER_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (!child.running()) throw new Error(`maintd-exporter exited early:\n${child.output().slice(-4000)}`);
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    if (res.status !== 200) throw new Error(`exporter not ready: ${res.status}`);
  }, 30_000);
  return { url, child };
}

/** Simulated workers: `maintd-sim workers` (N's build, which serves N's extra kind's route). */
export interface Workers {
  readonly child: Child;
  readonly endpoints: readonly string[];
  readonly broken: readonly string[];
  readonly stores: readonly string[];
}

export async function startWorkers(bin: string, args: readonly string[]): Promise<Workers> {
  const sim = await startSimWorkers(args, bin);
  const stores = new Set<string>();
  for (const endpoint of sim.endpoints) {
    const r = (await (await fetch(`${endpoint}/api/v1/internal/stores`)).json()) as { stores: { name: string }[] };
    for (const s of r.stores) stores.add(s.name);
  }
  return { child: sim, endpoints: sim.endpoints, broken: sim.broken, stores: [...stores].sort() };
}

/** Sums the samples of one metric in a Prometheus text exposition whose labels contain `labels`. */
export function metric(text: string, name: string, labels = ''): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `)) || !line.includes(labels)) continue;
    sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
