import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock, TaskKind, TaskStore } from '@maintd/core';
import type { Metrics } from '@maintd/scheduler';
import { metricsRoute } from '@maintd/api';
import type { EventHub } from '../events.js';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** `/metrics`: the Prometheus registry, with the gauges that are read only when scraped brought up to date. */
export function metricsRoutes(deps: {
  readonly store: TaskStore;
  readonly metrics: Metrics;
  readonly hub: EventHub | undefined;
  readonly clock: Clock;
  /** The kinds this master runs: their series exist from the start. */
  readonly runs: readonly TaskKind[];
}): OpenAPIHono<AppEnv> {
  const { store, metrics, hub, clock } = deps;
  // Every kind the gauge has a series of: one whose records are all gone must read 0, not its last count.
  const labelled = new Set<string>(deps.runs);
  return createRouter().openapi(metricsRoute, async (c) => {
    // Parks lapse with time, without an event: counted when scraped. Without a live index the
    // gauge keeps its last values (a scrape never waits for etcd).
    if (hub?.live) {
      const counts = hub.cooldowns.parkedCounts(clock.now());
      for (const kind of Object.keys(counts)) labelled.add(kind);
      for (const kind of labelled) metrics.parked.set({ kind }, counts[kind] ?? 0);
    }
    metrics.sessionHeld.set(store.session.alive ? 1 : 0);
    const text = await metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': metrics.registry.contentType });
  });
}
