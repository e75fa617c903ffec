import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock, Kv, TaskStore } from '@maintd/core';
import { healthRoute, readyRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';
import { withTimeout } from '../with-timeout.js';

/** Longest `/readyz` waits for etcd to answer before it says the store is unavailable. */
const READY_TIMEOUT_MS = 2000;

/**
 * `/healthz` (the process serves) and `/readyz` (it holds its session and etcd answers now: a
 * probe of its own, never the lists' shared one, so a readiness check always sees etcd as it is).
 */
export function healthRoutes(deps: {
  readonly store: TaskStore;
  readonly kv: Kv;
  readonly clock: Clock;
}): OpenAPIHono<AppEnv> {
  const { store, kv, clock } = deps;
  return createRouter()
    .openapi(healthRoute, (c) => c.json({ status: 'ok' as const }, 200))
    .openapi(readyRoute, async (c) => {
      const session = store.session.alive;
      const reachable = await withTimeout(clock, kv.revision(`${store.keys.prefix}/`), READY_TIMEOUT_MS).then(
        () => true,
        () => false,
      );
      const ready = session && reachable;
      const body = {
        ready,
        store: reachable ? ('ok' as const) : ('unavailable' as const),
        session: session ? ('held' as const) : ('lost' as const),
      };
      return ready ? c.json(body, 200) : c.json(body, 503);
    });
}
