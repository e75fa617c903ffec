import { EtcdKv, FakeClock, type Kv, StoreUnavailableError, type TaskStore, seededRandom } from '@maintd/core';
import { eventually as retryUntil } from '@maintd/core/testing';
import type { Metrics, Scheduler } from '@maintd/scheduler';
import { type DeepPartial, openTestStore, testConfig } from '@maintd/scheduler/testing';
import type { Logger } from 'pino';
import type { createApp } from '../src/app.js';
import type { HttpConfig, MasterConfig } from '../src/config.js';
import type { EventHub } from '../src/events.js';
import { loadConfig } from '../src/settings.js';
import { type WireAuth, wireMaster } from '../src/wire.js';

/** One master wired like main.ts does, on a real etcd, with a FakeClock and captured logs. */
export interface TestMaster {
  readonly config: MasterConfig;
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
  overrides: DeepPartial<MasterConfig> = {},
  seed = 1,
  /** Wraps the etcd client before anything uses it (e.g. to make its calls fail on demand). */
  wrapKv: (kv: Kv) => Kv = (kv) => kv,
  /** The named tokens, as main.ts passes a tokens file's; default MASTER_API_TOKEN alone. */
  auth: WireAuth = {},
): Promise<TestMaster> {
  const kv = wrapKv(new EtcdKv({ endpoints: [...etcdEndpoints] }));
  const { host, port, apiToken, apiTokensFile, apiReads, tls, ...schedulerOverrides } = overrides;
  const opened = await openTestStore(
    kv,
    clock,
    { ...schedulerOverrides, etcd: { ...schedulerOverrides.etcd, endpoints: [...etcdEndpoints] } },
    { random: seededRandom(seed), processMetrics: true },
  );
  const { store, metrics, logs, logger } = opened;
  const http = Object.entries({ host, port, apiToken, apiTokensFile, apiReads, tls }).filter(
    ([, v]) => v !== undefined,
  );
  const config: MasterConfig = {
    ...opened.config,
    ...testHttpConfig(),
    ...(Object.fromEntries(http) as Partial<HttpConfig>),
  };
  // Wired as main.ts wires it; the tests start its event hub and its scheduler when they need them.
  const master = wireMaster({ store, kv, config, clock, logger, metrics }, auth);
  const { scheduler, events, app } = master;
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
      await master.stop(0);
      await store.close();
      await kv.deletePrefix(`${config.etcd.prefix}/`).catch(() => undefined);
      await kv.close();
    },
  };
}

/** The HTTP API's settings at their defaults (the settings schema's), on a loopback port of the system's choosing. */
function testHttpConfig(): HttpConfig {
  const loaded = loadConfig({ argv: [], env: {}, hostname: 'test', pid: 0, random: () => '0' });
  if (loaded.action !== 'run') throw new Error(`default settings do not load: ${JSON.stringify(loaded)}`);
  const { apiToken, apiTokensFile, apiReads, tls } = loaded.config;
  return { host: '127.0.0.1', port: 0, apiToken, apiTokensFile, apiReads, tls };
}

/** Retries `check` until it passes or `timeoutMs` of real time pass (default 10 s, every 20 ms). */
export const eventually = <T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> =>
  retryUntil(check, timeoutMs, 20);

/** A Kv whose unary calls can be made to fail, as when etcd is unreachable. */
export interface SwitchableKv extends Kv {
  /** While true, every call but `watch`, `grant` and `close` rejects with StoreUnavailableError. */
  down: boolean;
  /** Calls made per method (failed ones included). */
  readonly calls: Map<string, number>;
}

/**
 * Wraps `kv` so that a test can cut etcd off without stopping it. Established watches and lease
 * keepalives carry on, as they do in the first seconds of a real outage while etcd3 re-dials:
 * the event hub stays "live", which is exactly when a watch-invalidated cache could go stale.
 */
export function switchableKv(kv: Kv): SwitchableKv {
  const calls = new Map<string, number>();
  const state = { down: false };
  const passThrough = new Set(['watch', 'grant', 'close']);
  return new Proxy(kv as SwitchableKv, {
    get(target, prop, receiver) {
      if (prop === 'down') return state.down;
      if (prop === 'calls') return calls;
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        if (state.down && !passThrough.has(prop)) {
          return Promise.reject(new StoreUnavailableError(`${prop}: etcd is unreachable (test)`));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
    set(target, prop, value, receiver) {
      if (prop !== 'down') return Reflect.set(target, prop, value, receiver);
      state.down = value === true;
      return true;
    },
  });
}

/** JSON body helper. */
export function jsonBody(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}

export { FakeClock, testConfig };
