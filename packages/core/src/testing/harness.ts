import { setTimeout as delay } from 'node:timers/promises';
import { FakeClock } from '../clock.js';
import { EtcdKv } from '../kv/etcd.js';
import type { EtcdKvOptions } from '../kv/etcd-options.js';
import { MemoryKv } from '../kv/memory.js';
import type { Kv } from '../kv/port.js';

/**
 * What a contract suite needs from an adapter under test. One harness is made per test;
 * `connect` returns independent clients of the same data, like two processes on one etcd.
 */
export interface KvHarness {
  /** A new client of the shared data. */
  connect(): Promise<Kv>;
  /**
   * The clock that TaskStore logic runs on (windows, history TTL, sweeps, retry backoff). For
   * MemoryKv it also drives lease expiry; etcd's leases run on real time.
   */
  readonly clock: FakeClock;
  /** True when leases expire on real time (etcd), so expiry tests must really wait. */
  readonly realTimeLeases: boolean;
  /** Lets `ms` pass for leases and logic alike: advances the clock, and really waits on etcd. */
  elapse(ms: number): Promise<void>;
  /** Compacts the store's history up to `revision` (watch re-sync tests). */
  compact(revision: number): Promise<void>;
  /** Closes every client handed out. */
  close(): Promise<void>;
}

/**
 * Awaits `promise` while moving `clock` forward in small steps, so code that sleeps on the
 * injected clock (retry backoff, keepalives) makes progress without real waiting.
 */
export async function withClockRunning<T>(clock: FakeClock, promise: Promise<T>, stepMs = 5): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  while (!done) await clock.advance(stepMs);
  return tracked;
}

/** A harness over one fresh {@link MemoryKv} whose leases run on a {@link FakeClock}. */
export function memoryHarness(): Promise<KvHarness> {
  const clock = new FakeClock();
  const root = new MemoryKv({ clock });
  const clients: MemoryKv[] = [];
  return Promise.resolve({
    clock,
    realTimeLeases: false,
    connect: () => {
      const c = root.connect();
      clients.push(c);
      return Promise.resolve(c);
    },
    elapse: (ms) => clock.advance(ms),
    compact: (revision) => {
      root.compact(revision);
      return Promise.resolve();
    },
    close: async () => {
      for (const c of clients) await c.close();
      root.destroy();
    },
  });
}

/**
 * A harness over a real etcd at `endpoints`. Each `connect` opens a separate client (its own
 * connection), as a separate master would. Logic runs on a {@link FakeClock}; leases on real time.
 */
export function etcdHarness(
  endpoints: readonly string[],
  options: Omit<EtcdKvOptions, 'endpoints'> = {},
): Promise<KvHarness> {
  const clock = new FakeClock();
  const clients: EtcdKv[] = [];
  const connect = (): EtcdKv => {
    const c = new EtcdKv({ endpoints, ...options });
    clients.push(c);
    return c;
  };
  return Promise.resolve({
    clock,
    realTimeLeases: true,
    connect: () => Promise.resolve(connect()),
    elapse: async (ms) => {
      await Promise.all([delay(ms), clock.advance(ms)]);
    },
    compact: async (revision) => {
      await connect().compact(revision);
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
    },
  });
}

/**
 * A Kv that forwards to `kv`, with `txn` replaced by `txn(forward, ...args)` (and `range`, when
 * given, by `range(forward, ...args)`): for tests that must act between a store's read and its
 * transaction, lose a transaction's reply, or count what a store reads.
 */
export function interceptKv(
  kv: Kv,
  txn: (forward: Kv['txn'], ...args: Parameters<Kv['txn']>) => ReturnType<Kv['txn']>,
  range?: (forward: Kv['range'], ...args: Parameters<Kv['range']>) => ReturnType<Kv['range']>,
): Kv {
  return {
    get: (key) => kv.get(key),
    range: range ? (prefix, o) => range((p, q) => kv.range(p, q), prefix, o) : (prefix, o) => kv.range(prefix, o),
    put: (key, value, o) => kv.put(key, value, o),
    delete: (key) => kv.delete(key),
    deletePrefix: (prefix) => kv.deletePrefix(prefix),
    grant: (ttl, o) => kv.grant(ttl, o),
    watch: (prefix, listener, o) => kv.watch(prefix, listener, o),
    revision: (probeKey) => kv.revision(probeKey),
    close: () => kv.close(),
    txn: (compares, success, failure) => txn((c, s, f) => kv.txn(c, s, f), compares, success, failure),
  };
}
