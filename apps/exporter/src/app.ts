import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ExporterMetrics } from './metrics.js';
import type { WatcherStatus } from './watcher.js';
import { VERSION } from './version.js';

/** Everything the exporter's HTTP endpoints need; `main.ts` wires the real ones. */
export interface AppDeps {
  readonly metrics: ExporterMetrics;
  readonly status: () => WatcherStatus;
  /** The watched key prefix, shown on the landing page. */
  readonly prefix: string;
  readonly logger?: Logger;
}

/**
 * The exporter's HTTP surface: `/metrics` (from memory only), `/healthz` (liveness: the process
 * serves), `/readyz` (in sync with etcd) and a landing page at `/`.
 */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.get('/', (c) => {
    const s = deps.status();
    return c.html(landingPage(deps.prefix, s));
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  // Readiness, not liveness: restarting the exporter does not bring etcd back.
  app.get('/readyz', (c) => {
    const s = deps.status();
    return c.json(
      { ready: s.up, etcd: s.up ? 'in sync' : 'unreachable or syncing', revision: s.revision },
      s.up ? 200 : 503,
    );
  });

  app.get('/metrics', async (c) => {
    const text = await deps.metrics.render();
    return c.text(text, 200, { 'content-type': deps.metrics.contentType });
  });

  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
  app.onError((err, c) => {
    deps.logger?.error({ err, path: new URL(c.req.url).pathname }, 'request failed');
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}

function landingPage(prefix: string, s: WatcherStatus): string {
  const state = s.up
    ? `in sync with etcd at revision ${s.revision}`
    : 'not in sync with etcd (unreachable, or the first sync is running)';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>maintd-exporter</title></head>
<body>
<h1>maintd-exporter</h1>
<p>Cluster-wide metrics of the maintd fleet under the etcd prefix <code>${escapeHtml(prefix)}</code>, version ${escapeHtml(VERSION)}.</p>
<p>Status: ${escapeHtml(state)}.</p>
<ul>
<li><a href="metrics">/metrics</a> — Prometheus metrics (master_cluster_*, maintd_exporter_*)</li>
<li><a href="readyz">/readyz</a> — 200 while in sync with etcd</li>
<li><a href="healthz">/healthz</a> — liveness</li>
</ul>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
