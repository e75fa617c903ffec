import type { OpenAPIHono } from '@hono/zod-openapi';
import { type TaskStore, clusterView } from '@maintd/core';
import type { WorkerStatus } from '@maintd/scheduler';
import { clusterBody, mastersRoute, workersRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** `/api/v1/masters` (with the cluster's feature gates) and `/api/v1/workers`: the fleet's members, each a store read. */
export function fleetRoutes(deps: {
  readonly store: TaskStore;
  readonly workers: (() => Promise<readonly WorkerStatus[]>) | undefined;
  /** The cluster features this master understands. */
  readonly features: readonly string[];
}): OpenAPIHono<AppEnv> {
  const { store, workers, features } = deps;
  return createRouter()
    .openapi(mastersRoute, async (c) => {
      const [masters, record] = await Promise.all([store.listMasters(), store.cluster.read()]);
      return c.json({ masters, cluster: clusterBody(clusterView(features, masters, record)) }, 200);
    })
    .openapi(workersRoute, async (c) => c.json({ workers: [...((await workers?.()) ?? [])] }, 200));
}
