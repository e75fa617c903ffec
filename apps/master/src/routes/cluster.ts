import type { OpenAPIHono } from '@hono/zod-openapi';
import { type TaskStore, clusterView } from '@maintd/core';
import { clusterBody, patchClusterRoute } from '@maintd/api';
import type { Logger } from 'pino';
import { auditIntent } from '../http/audit-intent.js';
import { type AppEnv, operatorOf } from '../http/context.js';
import { createRouter } from '../http/router.js';

/**
 * `PATCH /api/v1/cluster`: an operator holds new cluster features off, or lets the masters switch
 * them on (docs/ARCHITECTURE.md §2.8). Answers the gates as `GET /api/v1/masters` shows them.
 */
export function clusterRoutes(deps: {
  readonly store: TaskStore;
  readonly logger: Logger;
  /** The cluster features this master understands. */
  readonly features: readonly string[];
}): OpenAPIHono<AppEnv> {
  const { store, logger, features } = deps;
  return createRouter().openapi(patchClusterRoute, async (c) => {
    const { preserve_downgrade } = c.req.valid('json');
    const by = operatorOf(c);
    const audit = auditIntent(c, patchClusterRoute, 'cluster.update', logger);
    const record = await store.cluster.setPreserveDowngrade(preserve_downgrade, by, audit);
    logger.info(
      { preserve_downgrade, by },
      preserve_downgrade
        ? 'cluster: preserve_downgrade set by operator; no new feature is switched on'
        : 'cluster: preserve_downgrade cleared by operator; features every live master understands are switched on',
    );
    return c.json(clusterBody(clusterView(features, await store.listMasters(), record)), 200);
  });
}
