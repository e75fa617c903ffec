import { Hono } from 'hono';

/** What {@link createStartingApp} serves besides the fixed answers. */
export interface StartingAppDeps {
  /** Prometheus text of the process's metrics, so a scrape of a starting master still answers. */
  readonly metrics?: () => Promise<{ readonly text: string; readonly contentType: string }>;
}

/** The error every API call gets while the store is not open yet. */
const STARTING_ERROR = 'starting: etcd not reachable yet';

/**
 * What the master serves before its task store opens (docs/ARCHITECTURE.md §3.1: etcd unreachable at startup
 * is not fatal): alive (`/healthz` 200), not ready (`/readyz` 503), and a 503 for everything
 * else, so a load balancer or an orchestrator sees a live process that is waiting, and a client
 * sees why its call cannot be served. `main.ts` swaps in the real app once the store is open.
 */
export function createStartingApp(deps: StartingAppDeps = {}): Hono {
  const app = new Hono();
  // `status` differs from the real app's `ok`, so a probe can tell a waiting master from a serving one.
  app.get('/healthz', (c) => c.json({ status: 'starting' }));
  app.get('/readyz', (c) => c.json({ ready: false, store: 'unavailable', session: 'none', starting: true }, 503));
  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', async (c) => {
      const { text, contentType } = await metrics();
      return c.text(text, 200, { 'content-type': contentType });
    });
  }
  app.all('*', (c) => c.json({ error: STARTING_ERROR }, 503, { 'retry-after': '1' }));
  return app;
}
