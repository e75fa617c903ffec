import type { Metrics } from '@maintd/scheduler';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from './context.js';

/** Counts and times every request by its route template (never the raw path: bounded labels). */
export function httpMetrics(metrics: Metrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    let route = 'unmatched';
    try {
      route = routePath(c);
    } catch {
      // No route matched.
    }
    if (route === '/*' || route === '*') route = 'unmatched';
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    metrics.httpDuration.observe({ method: c.req.method, route }, (performance.now() - start) / 1000);
  };
}
