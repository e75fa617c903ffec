import type { OpenAPIHono } from '@hono/zod-openapi';
import { Scheduler, type SchedulerDeps, featureNames } from '@maintd/scheduler';
import { createApp } from './app.js';
import { type ApiToken, defaultToken } from './auth/api-token.js';
import type { SubjectGrant } from './auth/subject-grant.js';
import type { MasterConfig } from './config.js';
import { EventHub } from './events.js';
import type { AppEnv } from './http/context.js';

/** A master's parts, wired: what `main.ts` serves and runs, and what the tests drive. */
export interface Master {
  readonly scheduler: Scheduler;
  readonly events: EventHub;
  /** The HTTP API, not yet served. */
  readonly app: OpenAPIHono<AppEnv>;
  /** Starts the event hub's watches and the scheduler's loops. */
  start(): void;
  /**
   * Stops claiming, lets running tasks finish within `graceMs` (then releases the rest to peers),
   * and closes the watches. The store and the Kv stay open: their owner closes them.
   */
  stop(graceMs: number): Promise<{ finished: boolean; abandoned: number }>;
}

/** What a master is wired from: a scheduler's dependencies, with the HTTP API's settings in its config. */
export type MasterDeps = SchedulerDeps & { readonly config: MasterConfig };

/** How a master authenticates API requests, beyond its {@link MasterDeps}' config. */
export interface WireAuth {
  /**
   * The tokens in force now, as `TokensFile` keeps them when MASTER_API_TOKENS_FILE is
   * set; default `MASTER_API_TOKEN` alone, as the token `default`.
   */
  readonly tokens?: () => readonly ApiToken[];
  /** The client certificate subjects the tokens file maps to names; default none. */
  readonly subjects?: () => readonly SubjectGrant[];
}

/**
 * The composition root of a master: from its settings and an open task store, the scheduler,
 * the event hub and the HTTP API over both. `main.ts` and the test harness both wire a master
 * here, so that what the tests drive is what the daemon runs.
 */
export function wireMaster(deps: MasterDeps, auth: WireAuth = {}): Master {
  const { store, kv, config, clock, logger, metrics } = deps;
  const fixed = defaultToken(config.apiToken);
  const events = new EventHub(kv, store.keys, clock, logger, store.policy);
  const scheduler = new Scheduler(deps);
  const app = createApp({
    store,
    kv,
    clock,
    logger,
    metrics,
    tokens: auth.tokens ?? (() => fixed),
    ...(auth.subjects ? { subjects: auth.subjects } : {}),
    apiReads: config.apiReads,
    workers: () => scheduler.workerStatus(),
    events,
    policy: config.cooldown,
    kinds: scheduler.kinds,
    features: featureNames(deps.features),
    windows: () => scheduler.windows(),
    capacity: () => scheduler.capacity(),
    outage: scheduler.outage,
  });
  return {
    scheduler,
    events,
    app,
    start: () => {
      events.start();
      scheduler.start();
    },
    stop: async (graceMs) => {
      const stopped = await scheduler.stop(graceMs);
      await events.close();
      return stopped;
    },
  };
}
