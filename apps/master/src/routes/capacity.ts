import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock, KindCapacity } from '@maintd/core';
import { capacityBody, capacityRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/**
 * `GET /api/v1/capacity`: the fleet's slot time over the last hour (docs/ARCHITECTURE.md §3.5),
 * every master's record read at each request (one prefix read of a few kilobytes per master).
 */
export function capacityRoutes(deps: {
  readonly capacity: () => Promise<readonly KindCapacity[]>;
  readonly clock: Clock;
}): OpenAPIHono<AppEnv> {
  return createRouter().openapi(capacityRoute, async (c) =>
    c.json(capacityBody(await deps.capacity(), deps.clock.now()), 200),
  );
}
