import type { CooldownPolicy, MaintenanceWindow, TaskKind } from '@maintd/core';
import type { EtcdConfig, LogFormat, LogLevel } from '@maintd/settings';

/** One kind's sweep settings. */
export interface SweepConfig {
  /** Seconds between sweeps; 0 disables the sweep. */
  readonly intervalSecs: number;
  /** Backlog (from the store's stats) at which a store is due. */
  readonly threshold: number;
}

/**
 * The scheduler's effective configuration, parsed once at the edge by the master's `env.ts`
 * (docs/ARCHITECTURE.md §3.1): every setting of the master but its HTTP API's. Everything below `main.ts`
 * receives this, never `process.env`.
 */
export interface Config {
  /** MASTER_ID: this master's identity in etcd (default host-pid-random). */
  readonly masterId: string;
  /** ETCD_*: empty endpoints = embedded MemoryKv (single master, not durable); prefix default /maintd. */
  readonly etcd: EtcdConfig & {
    /** ETCD_LEASE_TTL_SECS, default 30, minimum 5. */
    readonly leaseTtlSecs: number;
  };
  readonly workers: {
    /** WORKER_ENDPOINTS: base URLs, trailing slashes trimmed. */
    readonly endpoints: readonly string[];
    /** WORKER_TOKEN: sent as `Authorization: Bearer` to workers. */
    readonly token: string | undefined;
    /** WORKER_TIMEOUT_SECS, default 60: per worker request. */
    readonly timeoutSecs: number;
  };
  readonly intervals: {
    /** STATS_SCAN_INTERVAL_SECS, default 60; 0 disables the scan. */
    readonly statsScanSecs: number;
  };
  readonly sweeps: {
    /** SWEEP_MAX_NEW_TASKS, default 256. */
    readonly maxNewTasks: number;
    /** Each sweeping kind's settings (named by its spec, e.g. MERGE_WAL_INTERVAL_SECS). */
    readonly kinds: Readonly<Partial<Record<TaskKind, SweepConfig>>>;
  };
  readonly pools: {
    /** TASK_CONCURRENCY, default 4: the general pool's slots. */
    readonly taskConcurrency: number;
    /**
     * The slots of each pool a kind declares (its `pool.sizeSetting`, e.g. MERGE_WAL_CONCURRENCY
     * for `merge`), by pool name; 0 = none, the general pool runs its kinds.
     */
    readonly own: Readonly<Record<string, number>>;
  };
  readonly tasks: {
    /** TASK_MAX_ATTEMPTS, default 5. */
    readonly maxAttempts: number;
    /** TASK_HISTORY_LIMIT, default 1000. */
    readonly historyLimit: number;
    /** TASK_HISTORY_TTL_SECS, default 86400; 0 = count cap only. */
    readonly historyTtlSecs: number;
    /** TASK_TIMELINE_LIMIT, default 50: events kept per (kind, store). */
    readonly timelineLimit: number;
    /** TASK_TIMELINE_TTL_SECS, default 2592000 (30 days); 0 = count cap only. */
    readonly timelineTtlSecs: number;
  };
  /** The audit trail's bounds (docs/ARCHITECTURE.md §2.9). */
  readonly audit: {
    /** AUDIT_LIMIT, default 10000: entries kept. */
    readonly limit: number;
    /** AUDIT_TTL_SECS, default 7776000 (90 days); 0 = count cap only. */
    readonly ttlSecs: number;
  };
  /** TASK_COOLDOWN_*: the failure-cooldown policy. */
  readonly cooldown: CooldownPolicy;
  /** TASK_WINDOWS in TASK_WINDOWS_TZ (default UTC): when each kind's automatic work may start (docs/ARCHITECTURE.md §3.2). */
  readonly windows: {
    readonly tz: string;
    /** One per kind that has a window; a kind without one may run at any time. */
    readonly list: readonly MaintenanceWindow[];
  };
  /** SHUTDOWN_GRACE_SECS, default 30: how long running tasks may finish on SIGTERM. */
  readonly shutdownGraceSecs: number;
  /** LOG_LEVEL, default info. */
  readonly logLevel: LogLevel;
  /** LOG_FORMAT, default auto: pretty when stdout is a terminal (resolved by the binary), else json. */
  readonly logFormat: LogFormat;
}
