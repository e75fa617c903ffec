import type { Clock, Kv, MasterInfo, Random, SessionEvent, TaskStoreOptions } from '@maintd/core';
import type { Config } from './config.js';

/** TaskStore options from the master's config: one mapping for `main.ts` and the tests alike. */
export function storeOptions(
  config: Config,
  deps: {
    readonly kv: Kv;
    readonly clock: Clock;
    readonly info: Omit<MasterInfo, 'id'>;
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
    cooldown: config.cooldown,
    info: deps.info,
    ...(deps.onSessionEvent ? { onSessionEvent: deps.onSessionEvent } : {}),
  };
}
