import type { OpenAPIHono } from '@hono/zod-openapi';
import type { TaskStore } from '@maintd/core';
import type { WorkerStatus } from '@maintd/scheduler';
import { mastersRoute, workersRoute } from '@maintd/scheduler/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** `/api/v1/masters` and `/api/v1/workers`: the fleet's members, each a store read. */
export function fleetRoutes(deps: {
  readonly store: TaskStore;
  readonly workers: (() => Promise<readonly WorkerStatus[]>) | undefined;
}): OpenAPIHono<AppEnv> {
  const { store, workers } = deps;
  return createRouter()
    .openapi(mastersRoute, async (c) => c.json({ masters: await store.listMasters() }, 200))
    .openapi(workersRoute, async (c) => c.json({ workers: [...((await workers?.()) ?? [])] }, 200));
}
