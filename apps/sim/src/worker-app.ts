import type { Clock, Random } from '@maintd/core';
import { Hono } from 'hono';
import type { Fleet, SimReply } from './fleet.js';

/** Misbehaviour knobs of one simulated worker. */
export interface WorkerKnobs {
  /** Extra latency added to every call, ms. */
  readonly latencyMs?: number;
  /** Probability that a per-store call (merge, compaction, index build) answers 503 instead of working. */
  readonly flakyRate?: number;
  /** Per-store calls never answer. */
  readonly hang?: boolean;
  /** Randomness for flakiness. */
  readonly random?: Random;
}

/**
 * One simulated worker as a Hono app speaking the worker protocol (DESIGN §3.3) over the shared
 * fleet. Served over real HTTP by `maintd-sim workers`, or called in-process (no sockets) by
 * the incident simulation; its latency runs on the given clock either way.
 */
export function createWorkerApp(fleet: Fleet, index: number, clock: Clock, knobs: WorkerKnobs = {}): Hono {
  const app = new Hono();
  const reply = async (r: SimReply): Promise<Response> => {
    await clock.sleep(r.latencyMs + (knobs.latencyMs ?? 0));
    return Response.json(r.body, { status: r.status });
  };
  const misbehave = (): Promise<Response> | undefined => {
    if (knobs.hang) return new Promise<Response>(() => undefined);
    if (knobs.flakyRate && (knobs.random?.next() ?? 1) < knobs.flakyRate) {
      return reply({ status: 503, body: { error: 'worker overloaded; try again' }, latencyMs: 5 });
    }
    return undefined;
  };
  app.get('/api/v1/internal/stores', () => reply(fleet.report(index)));
  app.post('/api/v1/internal/merge-wal/:name', (c) => misbehave() ?? reply(fleet.merge(index, c.req.param('name'))));
  app.post('/api/v1/internal/compact/:name', (c) => misbehave() ?? reply(fleet.compact(index, c.req.param('name'))));
  app.post('/api/v1/internal/index-id/:name', (c) => misbehave() ?? reply(fleet.indexId(index, c.req.param('name'))));
  app.get('/healthz', (c) => c.json({ status: 'ok', worker: index }));
  return app;
}

/**
 * A `fetch` that routes `http://sim-worker-<i>/…` to in-process worker apps: the master's real
 * HTTP client and executors run unchanged, with no sockets and no real time.
 */
export function inProcessFetch(apps: readonly Hono[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const m = /^sim-worker-(\d+)$/.exec(url.hostname);
    const app = m ? apps[Number(m[1])] : undefined;
    if (!app) return Promise.reject(new TypeError(`fetch failed: no simulated worker at ${url.host}`));
    return Promise.resolve(app.request(url.pathname + url.search, init));
  };
}

/** Endpoint URLs of in-process workers, as `inProcessFetch` understands them. */
export function inProcessEndpoints(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `http://sim-worker-${i}`);
}
