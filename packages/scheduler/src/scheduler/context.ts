import type { Clock, Kv, TaskStore } from '@maintd/core';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { FEATURES, type FeatureRegistry } from '../features/index.js';
import { KINDS, type KindRegistry } from '../kinds/index.js';
import type { Metrics } from '../metrics.js';
import type { StoreOutageLog } from '../store-outage.js';

/** What the scheduler needs; `main.ts` wires the real ones, tests wire their own. */
export interface SchedulerDeps {
  readonly store: TaskStore;
  readonly kv: Kv;
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Worker transport; default the platform's `fetch` (simulations pass an in-process one). */
  readonly fetch?: typeof fetch;
  /** The kinds this master runs; default the shipped registry (tests add kinds of their own). */
  readonly kinds?: KindRegistry;
  /** The cluster features this master understands; default the shipped registry. */
  readonly features?: FeatureRegistry;
  /** The maintd version, for the cluster check's log lines; default `unknown`. */
  readonly version?: string;
  /**
   * Called once when a cluster feature this master does not understand has been switched on
   * (docs/ARCHITECTURE.md §2.8): the master must stop. The scheduler has stopped claiming by then.
   */
  readonly onTooOld?: (message: string) => void;
}

/** The feature registry a scheduler with these deps understands. */
export function featuresOf(deps: SchedulerDeps): FeatureRegistry {
  return deps.features ?? FEATURES;
}

/** The registry a scheduler with these deps runs. */
export function registryOf(deps: SchedulerDeps): KindRegistry {
  return deps.kinds ?? KINDS;
}

/** Work in progress in this process, which `Scheduler.idle` reports on. */
export interface Activity {
  /** Periodic jobs (scan, sweeps) between waking up and finishing. */
  jobs: number;
  /** Claims in flight in the pools: one may have committed already, so it is not idle. */
  claiming: number;
}

/** What every loop of one scheduler shares (docs/ARCHITECTURE.md §3.2). */
export interface LoopContext {
  readonly deps: SchedulerDeps;
  /** Aborted when the scheduler stops: every loop ends at its next turn. */
  readonly stop: AbortSignal;
  /** One outage log for all loops, so that an etcd outage is one warning, not one per loop. */
  readonly outage: StoreOutageLog;
  readonly activity: Activity;
  /** Sleeps on the clock; false once the scheduler is stopping. */
  sleep(ms: number): Promise<boolean>;
}

/** The context of a scheduler's loops, stopping with `stop`. */
export function loopContext(deps: SchedulerDeps, stop: AbortSignal, outage: StoreOutageLog): LoopContext {
  return {
    deps,
    stop,
    outage,
    activity: { jobs: 0, claiming: 0 },
    sleep: async (ms) => {
      try {
        await deps.clock.sleep(ms, stop);
        return true;
      } catch {
        return false;
      }
    },
  };
}
