import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock, TaskStore } from '@maintd/core';
import type { Metrics } from '@maintd/scheduler';
import { metricsRoute } from '@maintd/scheduler/api';
import type { EventHub } from '../events.js';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** `/metrics`: the Prometheus registry, with the gauges that are read only when scraped brought up to date. */
export function metricsRoutes(deps: {
  readonly store: TaskStore;
  readonly metrics: Metrics;
  readonly hub: EventHub | undefined;
  readonly clock: Clock;
}): OpenAPIHono<AppEnv> {
  const { store, metrics, hub, clock } = deps;
  return createRouter().openapi(metricsRoute, async (c) => {
    // Parks lapse with time, without an event: counted when scraped. Without a live index the
    // gauge keeps its last values (a scrape never waits for etcd).
    if (hub?.live) {
      for (const [kind, n] of Object.entries(hub.cooldowns.parkedCounts(clock.now()))) metrics.parked.set({ kind }, n);
    }
    metrics.sessionHeld.set(store.session.alive ? 1 : 0);
    const text = await metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': metrics.registry.contentType });
  });
}
