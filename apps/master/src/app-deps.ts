import type { Clock, CooldownPolicy, KindCapacity, Kv, TaskKind, TaskStore } from '@maintd/core';
import type { WindowInput } from '@maintd/api';
import type { Metrics, StoreOutageLog, WorkerStatus } from '@maintd/scheduler';
import type { Logger } from 'pino';
import type { ApiToken } from './auth/api-token.js';
import type { SubjectGrant } from './auth/subject-grant.js';
import type { EventHub } from './events.js';

/** Everything the HTTP API needs; {@link wireMaster} wires the real ones. */
export interface AppDeps {
  readonly store: TaskStore;
  readonly kv: Kv;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /**
   * The API tokens in force now (`MASTER_API_TOKEN` as `default`, and MASTER_API_TOKENS_FILE's);
   * none = only loopback clients may mutate.
   */
  readonly tokens: () => readonly ApiToken[];
  /** Client certificate subjects mapped to names (MASTER_API_TOKENS_FILE's `subject:` lines); default none. */
  readonly subjects?: () => readonly SubjectGrant[];
  /** MASTER_API_READS; default `open`. */
  readonly apiReads?: 'open' | 'token';
  /** The configured workers with the fleet's latest scan of each (a store read). */
  readonly workers?: () => Promise<readonly WorkerStatus[]>;
  readonly events?: EventHub;
  /** The cooldown policy this master runs (its `TASK_COOLDOWN_*` settings); default the store's. */
  readonly policy?: CooldownPolicy;
  /** The kinds this master runs, which it accepts at enqueue; default the shipped registry's. */
  readonly kinds?: readonly TaskKind[];
  /** The cluster features this master understands; default the shipped registry's. */
  readonly features?: readonly string[];
  /** This master's maintenance windows as they stand now (TASK_WINDOWS); default none. */
  readonly windows?: () => readonly WindowInput[];
  /** The fleet's slot time over the last hour (`GET /api/v1/capacity`); default: the route answers 404. */
  readonly capacity?: () => Promise<readonly KindCapacity[]>;
  /**
   * Where a request that etcd failed (503) is logged: the scheduler's outage log, so that an
   * outage the loops already reported adds no line per request; default unlogged.
   */
  readonly outage?: StoreOutageLog;
}
