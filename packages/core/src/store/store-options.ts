import type { Clock } from '../clock.js';
import type { Keys } from '../keys.js';
import type { CooldownPolicy } from '../cooldown-policy.js';
import type { Kv } from '../kv/port.js';
import type { MasterInfo } from '../model.js';
import type { Random } from '../random.js';
import { DEFAULT_SESSION_TTL_SECS, type SessionEvent, type SessionOptions } from '../session.js';

/**
 * The defaults of the store's options (docs/ARCHITECTURE.md §2.5, §2.6): written once here, and used as the
 * defaults of the master's settings (`ETCD_LEASE_TTL_SECS`, `TASK_MAX_ATTEMPTS`,
 * `TASK_HISTORY_LIMIT`, `TASK_HISTORY_TTL_SECS`, `TASK_TIMELINE_LIMIT`, `TASK_TIMELINE_TTL_SECS`,
 * `AUDIT_LIMIT`, `AUDIT_TTL_SECS`).
 */
export const DEFAULT_STORE_OPTIONS = Object.freeze({
  /** Session lease TTL in seconds. */
  leaseTtlSecs: DEFAULT_SESSION_TTL_SECS,
  /** A task orphaned more often than this is failed instead of requeued. */
  maxAttempts: 5,
  /** Terminal tasks kept. */
  historyLimit: 1000,
  /** Terminal tasks older than this (seconds) are pruned; 0 = count cap only. */
  historyTtlSecs: 86400,
  /** Timeline events kept per (kind, target). */
  timelineLimit: 50,
  /** Timeline events older than this (seconds) are pruned; 0 = count cap only. 30 days. */
  timelineTtlSecs: 2_592_000,
  /** Audit entries kept. */
  auditLimit: 10_000,
  /** Audit entries older than this (seconds) are pruned; 0 = count cap only. 90 days. */
  auditTtlSecs: 7_776_000,
});

/** Options of {@link TaskStore.open}. */
export interface TaskStoreOptions {
  /** The store to keep state in (etcd, or MemoryKv embedded). */
  readonly kv: Kv;
  /** This master's id: written as claim owner and registration key. */
  readonly masterId: string;
  /** Key prefix (default `/maintd`). */
  readonly prefix?: string;
  /** Time source (default: the system clock). */
  readonly clock?: Clock;
  /** Randomness for ids and retry jitter (default: crypto). */
  readonly random?: Random;
  /** Session lease TTL in seconds (default 30, minimum 5). */
  readonly leaseTtlSecs?: number;
  /** A task orphaned more often than this is failed instead of requeued (default 5). */
  readonly maxAttempts?: number;
  /** Terminal tasks kept (default 1000). */
  readonly historyLimit?: number;
  /** Terminal tasks older than this are pruned; 0 = count cap only (default 86400). */
  readonly historyTtlSecs?: number;
  /** Timeline events kept per (kind, target) (default 50, at least 1). */
  readonly timelineLimit?: number;
  /** Timeline events older than this are pruned; 0 = count cap only (default 2592000, 30 days). */
  readonly timelineTtlSecs?: number;
  /** Audit entries kept (default 10000, at least 1; docs/ARCHITECTURE.md §2.9). */
  readonly auditLimit?: number;
  /** Audit entries older than this are pruned; 0 = count cap only (default 7776000, 90 days). */
  readonly auditTtlSecs?: number;
  /** Finishes between two history prunes of this instance (default 50). */
  readonly pruneEvery?: number;
  /** Cooldown policy overrides. */
  readonly cooldown?: Partial<CooldownPolicy>;
  /** Registration published at `P/masters/<id>` while the session lives. */
  readonly info?: Omit<MasterInfo, 'id'>;
  /** Session lifecycle notifications (lost, renewed). */
  readonly onSessionEvent?: (event: SessionEvent) => void;
}

/** The options of the session a store opens, from its own. */
export function sessionOptions(o: TaskStoreOptions, keys: Keys, clock: Clock): SessionOptions {
  return {
    kv: o.kv,
    keys,
    clock,
    masterId: o.masterId,
    ...(o.leaseTtlSecs !== undefined ? { ttlSecs: o.leaseTtlSecs } : {}),
    ...(o.info ? { info: o.info } : {}),
    ...(o.onSessionEvent ? { onEvent: o.onSessionEvent } : {}),
  };
}
