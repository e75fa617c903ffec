import { randomUUID } from 'node:crypto';
import { type Clock, type Kv, type Random, TaskStore, seededRandom } from '@maintd/core';
import { type Logger, pino } from 'pino';
import type { Config } from '../config.js';
import type { FeatureRegistry } from '../features/index.js';
import type { KindRegistry } from '../kinds/index.js';
import { type Metrics, createMetrics } from '../metrics.js';
import { Scheduler } from '../scheduler.js';
import { loadConfig } from '../settings.js';
import { storeOptions } from '../store-options.js';

/** A partial of T at every depth, for config overrides. */
export type DeepPartial<T> = {
  [K in keyof T]?: NonNullable<T[K]> extends readonly unknown[]
    ? T[K]
    : NonNullable<T[K]> extends object
      ? DeepPartial<NonNullable<T[K]>>
      : T[K];
};

/**
 * A complete Config for tests: every setting at its default (from the settings schema, the one
 * place defaults live), then test-friendly values — a random master id and prefix, short lease
 * and worker timeouts, every loop off — then `overrides`.
 */
export function testConfig(overrides: DeepPartial<Config> = {}): Config {
  const loaded = loadConfig({ argv: [], env: {}, hostname: 'test', pid: 0, random: () => '0' });
  if (loaded.action !== 'run') throw new Error(`default settings do not load: ${JSON.stringify(loaded)}`);
  const d = loaded.config;
  const base: Config = {
    ...d,
    masterId: `test-${randomUUID().slice(0, 8)}`,
    etcd: { ...d.etcd, prefix: `/test/${randomUUID()}`, leaseTtlSecs: 5 },
    workers: { ...d.workers, timeoutSecs: 5 },
    intervals: { statsScanSecs: 0 },
    sweeps: {
      ...d.sweeps,
      kinds: Object.fromEntries(
        Object.entries(d.sweeps.kinds).flatMap(([k, v]) => (v ? [[k, { ...v, intervalSecs: 0 }]] : [])),
      ),
    },
    shutdownGraceSecs: 5,
    logLevel: 'debug',
  };
  return merge(base, overrides);
}

function merge<T>(a: T, b: DeepPartial<T>): T {
  const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) {
    const prev = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && prev && typeof prev === 'object' && !Array.isArray(prev)
        ? merge(prev, v as DeepPartial<unknown>)
        : v;
  }
  return out as T;
}

/** A task store opened as the daemon opens it, on a Kv of the test's choosing, with captured logs. */
export interface TestStore {
  readonly config: Config;
  readonly kv: Kv;
  readonly store: TaskStore;
  readonly metrics: Metrics;
  readonly logs: Record<string, unknown>[];
  readonly logger: Logger;
}

/** What {@link openTestStore} and {@link openScheduler} take besides the Kv, clock and config. */
export interface TestStoreOptions {
  readonly random?: Random;
  /** Node's process metrics on the registry too, as the daemon has them (default false). */
  readonly processMetrics?: boolean;
  /** The kinds the master runs (default the shipped registry): a test adds a kind of its own here. */
  readonly kinds?: KindRegistry;
  /** The cluster features the master understands (default the shipped registry). */
  readonly features?: FeatureRegistry;
  /** The version its registration names (default `0.0.0`). */
  readonly version?: string;
}

/**
 * Opens a store on `kv` with the {@link testConfig} of `overrides`, a logger that captures its
 * lines and a metrics registry: what a scheduler, or a whole master, is wired from.
 */
export async function openTestStore(
  kv: Kv,
  clock: Clock,
  overrides: DeepPartial<Config> = {},
  options: TestStoreOptions = {},
): Promise<TestStore> {
  const config = testConfig(overrides);
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug', base: { master_id: config.masterId } },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const metrics = createMetrics({ processMetrics: options.processMetrics ?? false });
  const store = await TaskStore.open(
    storeOptions(config, {
      kv,
      clock,
      random: options.random ?? seededRandom(1),
      info: {
        host: 'test',
        pid: process.pid,
        version: options.version ?? '0.0.0',
        started_at: clock.now(),
        pools: { general: 4 },
      },
      ...(options.kinds ? { kinds: options.kinds } : {}),
      ...(options.features ? { features: options.features } : {}),
    }),
  );
  return { config, kv, store, metrics, logs, logger };
}

/** A scheduler wired as the daemon wires it, on a Kv of the test's choosing, with captured logs. */
export interface TestScheduler extends TestStore {
  readonly scheduler: Scheduler;
  /** Stops the scheduler and closes the store (not the Kv, which the caller owns). */
  close(): Promise<void>;
}

/** Opens a store and a scheduler (not started) on `kv`. */
export async function openScheduler(
  kv: Kv,
  clock: Clock,
  overrides: DeepPartial<Config> = {},
  options: TestStoreOptions & {
    readonly fetch?: typeof fetch;
    /** Called when a feature this scheduler does not understand is switched on. */
    readonly onTooOld?: (message: string) => void;
  } = {},
): Promise<TestScheduler> {
  const opened = await openTestStore(kv, clock, overrides, options);
  const { config, store, metrics, logger } = opened;
  const scheduler = new Scheduler({
    store,
    kv,
    config,
    clock,
    logger,
    metrics,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.kinds ? { kinds: options.kinds } : {}),
    ...(options.features ? { features: options.features } : {}),
    ...(options.version ? { version: options.version } : {}),
    ...(options.onTooOld ? { onTooOld: options.onTooOld } : {}),
  });
  return {
    ...opened,
    scheduler,
    close: async () => {
      await scheduler.stop(0);
      await store.close();
    },
  };
}
