import type { OpenAPIHono } from '@hono/zod-openapi';
import { type MasterInfo, type TaskStore, clusterView } from '@maintd/core';
import type { WorkerStatus } from '@maintd/scheduler';
import { clusterBody, mastersRoute, workersRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/**
 * The masters whose maintenance windows differ from `self`'s (a registration without windows
 * keeps none, as a master that predates them): each would claim what the others hold back.
 */
function windowDisagreements(
  masters: readonly MasterInfo[],
  self: string,
): { readonly id: string; readonly windows: string[] }[] {
  const key = (m: MasterInfo | undefined): string => (m?.windows ?? []).join(',');
  const own = key(masters.find((m) => m.id === self));
  return masters.filter((m) => key(m) !== own).map((m) => ({ id: m.id, windows: [...(m.windows ?? [])] }));
}

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
      const disagreements = windowDisagreements(masters, store.masterId);
      return c.json(
        {
          masters,
          cluster: clusterBody(clusterView(features, masters, record)),
          ...(disagreements.length > 0 ? { window_disagreements: disagreements } : {}),
        },
        200,
      );
    })
    .openapi(workersRoute, async (c) => c.json({ workers: [...((await workers?.()) ?? [])] }, 200));
}
