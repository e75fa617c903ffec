import { OpenAPIHono } from '@hono/zod-openapi';
import { KIND_NAMES, featureNames } from '@maintd/scheduler';
import type { AppDeps } from './app-deps.js';
import { apiAuth } from './http/api-auth.js';
import { limitMutationBodies } from './http/body-limit.js';
import type { AppEnv } from './http/context.js';
import { errorHandler, invalidRequest, notFound } from './http/errors.js';
import { httpMetrics } from './http/http-metrics.js';
import { auditRoutes } from './routes/audit.js';
import { capacityRoutes } from './routes/capacity.js';
import { causeRoutes } from './routes/causes.js';
import { clusterRoutes } from './routes/cluster.js';
import { cooldownDetailRoutes } from './routes/cooldown-detail.js';
import { cooldownRoutes } from './routes/cooldowns.js';
import { eventRoutes } from './routes/events.js';
import { fleetRoutes } from './routes/fleet.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { openApiRoutes } from './routes/openapi.js';
import { policyRoutes } from './routes/policy.js';
import { storeRoutes } from './routes/stores.js';
import { taskRoutes } from './routes/tasks.js';
import { StoreProbe } from './store-probe.js';
import { CooldownIndex } from './cooldown-index.js';
import { TaskLists } from './task-lists.js';

export type { AppDeps };

/**
 * The master's HTTP API (docs/ARCHITECTURE.md §3.4) as a Hono app, independent of how it is
 * served: tests call `app.request()`, `main.ts` serves it with @hono/node-server. One sub-app
 * per resource, mounted under the middleware every request passes (metrics, then for the API
 * the body limit and the authentication), with one error mapping.
 *
 * Every list follows one rule: it is served from memory kept current by a watch (the task
 * list pages, the cooldown index) once the shared {@link StoreProbe} vouches that etcd answers,
 * or else from a store read, which is its own proof.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { store, kv, clock, logger, metrics, events } = deps;
  const runs = deps.kinds ?? KIND_NAMES;
  const features = deps.features ?? featureNames();
  // The cheapest read there is (a count-only get inside the prefix): proof that etcd answers now.
  const probe = new StoreProbe(() => kv.revision(`${store.keys.prefix}/`), clock);
  const taskLists = new TaskLists(store, events, probe);

  const app = new OpenAPIHono<AppEnv>({ defaultHook: invalidRequest });
  app.use('*', httpMetrics(metrics));
  app.use('/api/v1/*', limitMutationBodies);
  app.use(
    '/api/v1/*',
    apiAuth({
      tokens: deps.tokens,
      ...(deps.subjects ? { subjects: deps.subjects } : {}),
      reads: deps.apiReads ?? 'open',
      metrics,
      logger,
      clock,
    }),
  );

  app.route('/', taskRoutes({ store, metrics, lists: taskLists, runs, logger }));
  const policy = deps.policy ?? store.policy;
  app.route('/', cooldownRoutes({ store, clock, logger, metrics, events, probe }));
  const windows = deps.windows ?? (() => []);
  app.route('/', cooldownDetailRoutes({ store, clock, policy, runs, windows }));
  app.route('/', policyRoutes(policy, store.masterId, runs, windows));
  app.route(
    '/',
    causeRoutes({
      events,
      probe,
      read: async () => CooldownIndex.from(await store.listCooldowns({ all: true }), [], policy),
    }),
  );
  if (deps.capacity) app.route('/', capacityRoutes({ capacity: deps.capacity, clock }));
  app.route('/', storeRoutes({ store, clock }));
  app.route('/', fleetRoutes({ store, workers: deps.workers, features }));
  app.route('/', clusterRoutes({ store, logger, features }));
  app.route('/', auditRoutes({ store }));
  app.route('/', eventRoutes({ hub: events, clock, masterId: store.masterId }));
  app.route('/', healthRoutes({ store, kv, clock }));
  app.route('/', metricsRoutes({ store, metrics, hub: events, clock, runs }));
  app.route('/', openApiRoutes());

  app.notFound(notFound);
  app.onError(errorHandler(logger, deps.outage));
  return app;
}
