import { randomUUID } from 'node:crypto';
import { DEFAULT_COOLDOWN_POLICY, EtcdKv, FakeClock, type Kv, TaskStore, seededRandom } from '@maintd/core';
import { eventually as retryUntil } from '@maintd/core/testing';
import { pino, type Logger } from 'pino';
import { createApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import { EventHub } from '../src/events.js';
import { type Metrics, createMetrics } from '../src/metrics.js';
import { Scheduler } from '../src/scheduler.js';
import { storeOptions } from '../src/wiring.js';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** A complete Config with test-friendly values (loops off unless a test turns them on). */
export function testConfig(overrides: DeepPartial<Config> = {}): Config {
  const base: Config = {
    host: '127.0.0.1',
    port: 0,
    masterId: `test-${randomUUID().slice(0, 8)}`,
    apiToken: undefined,
    etcd: {
      endpoints: [],
      prefix: `/test/${randomUUID()}`,
      username: undefined,
      password: undefined,
      caCert: undefined,
      clientCert: undefined,
      clientKey: undefined,
      leaseTtlSecs: 5,
    },
    workers: { endpoints: [], token: undefined, timeoutSecs: 5 },
    intervals: { statsScanSecs: 0, mergeWalSecs: 0, compactionSecs: 0 },
    sweeps: { mergeWalMinGenerations: 8, minFragments: 16, maxNewTasks: 256 },
    pools: { taskConcurrency: 4, mergeWalConcurrency: 4 },
    tasks: { maxAttempts: 5, historyLimit: 1000, historyTtlSecs: 86400 },
    cooldown: DEFAULT_COOLDOWN_POLICY,
    shutdownGraceSecs: 5,
    logLevel: 'debug',
  };
  const merge = (a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) {
      out[k] =
        v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' && !Array.isArray(a[k])
          ? merge(a[k] as Record<string, unknown>, v as Record<string, unknown>)
          : v;
    }
    return out;
  };
  return merge(base as unknown as Record<string, unknown>, overrides) as unknown as Config;
}

/** One master wired like main.ts does, on a real etcd, with a FakeClock and captured logs. */
export interface TestMaster {
  readonly config: Config;
  readonly kv: Kv;
  readonly store: TaskStore;
  readonly scheduler: Scheduler;
  readonly metrics: Metrics;
  readonly events: EventHub;
  readonly app: ReturnType<typeof createApp>;
  readonly logs: Record<string, unknown>[];
  readonly logger: Logger;
  /** `app.request` as a loopback client (mutations allowed without a token). */
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** Opens a master against `etcdEndpoints` (a real etcd), sharing `clock` with its peers. */
export async function openMaster(
  etcdEndpoints: readonly string[],
  clock: FakeClock,
  overrides: DeepPartial<Config> = {},
  seed = 1,
): Promise<TestMaster> {
  const config = testConfig({ ...overrides, etcd: { ...overrides.etcd, endpoints: [...etcdEndpoints] } });
  const kv = new EtcdKv({ endpoints: config.etcd.endpoints });
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug', base: { master_id: config.masterId } },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const metrics = createMetrics();
  const store = await TaskStore.open(
    storeOptions(config, {
      kv,
      clock,
      random: seededRandom(seed),
      info: { host: 'test', pid: process.pid, version: '0.0.0', started_at: clock.now(), pools: { general: 4 } },
    }),
  );
  const events = new EventHub(kv, store.keys, clock, logger);
  const scheduler = new Scheduler({ store, kv, config, clock, logger, metrics });
  const app = createApp({
    store,
    kv,
    clock,
    logger,
    metrics,
    apiToken: config.apiToken,
    workers: () => scheduler.workerStatus(),
    events,
  });
  const loopback = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };
  return {
    config,
    kv,
    store,
    scheduler,
    metrics,
    events,
    app,
    logs,
    logger,
    request: async (path, init) => app.request(path, init, loopback),
    close: async () => {
      await scheduler.stop(0);
      await events.close();
      await store.close();
      await kv.deletePrefix(`${config.etcd.prefix}/`).catch(() => undefined);
      await kv.close();
    },
  };
}

/** Retries `check` until it passes or `timeoutMs` of real time pass (default 10 s, every 20 ms). */
export const eventually = <T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> =>
  retryUntil(check, timeoutMs, 20);

/** JSON body helper. */
export function jsonBody(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}

export { FakeClock };
