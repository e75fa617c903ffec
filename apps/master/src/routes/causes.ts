import type { OpenAPIHono } from '@hono/zod-openapi';
import { causesRoute } from '@maintd/api';
import type { CooldownIndex } from '../cooldown-index.js';
import type { EventHub } from '../events.js';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';
import type { StoreProbe } from '../store-probe.js';

/**
 * `GET /api/v1/scheduler/causes`: failures grouped by cause (docs/ARCHITECTURE.md §2.7), from the
 * event hub's cooldown index once the probe vouches that etcd answers, else from a read of the
 * failure records, like the cooldown list.
 */
export function causeRoutes(deps: {
  readonly events: EventHub | undefined;
  readonly probe: StoreProbe;
  readonly read: () => Promise<CooldownIndex>;
}): OpenAPIHono<AppEnv> {
  const { events: hub, probe, read } = deps;
  return createRouter().openapi(causesRoute, async (c) => {
    const { kind } = c.req.valid('query');
    let index: CooldownIndex;
    if (hub?.live) {
      await probe.vouch();
      index = hub.cooldowns;
    } else index = await read();
    return c.json(index.causes(kind), 200);
  });
}
