import type { Clock, Kv, MasterInfo, Random, SessionEvent, TaskStoreOptions } from '@maintd/core';
import type { Config } from './config.js';
import { type FeatureRegistry, featureNames } from './features/index.js';
import { type KindRegistry, kindNames } from './kinds/index.js';
import { windowSignature } from './scheduler/windows.js';

/**
 * TaskStore options from the master's config: one mapping for `main.ts` and the tests alike. The
 * registration the store's session writes lists the kinds this master runs and the cluster features
 * it understands, so that exporters,
 * dashboards and peers of other releases learn them from `P/masters/` (docs/ARCHITECTURE.md §2.1).
 */
export function storeOptions(
  config: Config,
  deps: {
    readonly kv: Kv;
    readonly clock: Clock;
    /** The registration's fields; its `kinds` are the registry's. */
    readonly info: Omit<MasterInfo, 'id' | 'kinds' | 'features' | 'windows'>;
    /** The kinds this master runs; default the shipped registry. */
    readonly kinds?: KindRegistry;
    /** The cluster features this master understands; default the shipped registry. */
    readonly features?: FeatureRegistry;
    readonly random?: Random;
    readonly onSessionEvent?: (e: SessionEvent) => void;
  },
): TaskStoreOptions {
  return {
    kv: deps.kv,
    clock: deps.clock,
    ...(deps.random ? { random: deps.random } : {}),
    masterId: config.masterId,
    prefix: config.etcd.prefix,
    leaseTtlSecs: config.etcd.leaseTtlSecs,
    maxAttempts: config.tasks.maxAttempts,
    historyLimit: config.tasks.historyLimit,
    historyTtlSecs: config.tasks.historyTtlSecs,
    timelineLimit: config.tasks.timelineLimit,
    timelineTtlSecs: config.tasks.timelineTtlSecs,
    auditLimit: config.audit.limit,
    auditTtlSecs: config.audit.ttlSecs,
    cooldown: config.cooldown,
    info: {
      ...deps.info,
      kinds: [...kindNames(deps.kinds)],
      features: [...featureNames(deps.features)],
      // Peers compare them (GET /api/v1/masters); a master without windows writes none, as before.
      ...(config.windows.list.length > 0 ? { windows: windowSignature(config) } : {}),
    },
    ...(deps.onSessionEvent ? { onSessionEvent: deps.onSessionEvent } : {}),
  };
}
