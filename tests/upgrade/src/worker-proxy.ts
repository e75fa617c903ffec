import { Agent, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';

/** The per-store worker route (docs/ARCHITECTURE.md §3.3): `POST /api/v1/internal/<route>/<store>`. */
const STORE_ROUTE = /^\/api\/v1\/internal\/([^/]+)\/([^/?]+)$/;

/** A counting proxy in front of one simulated worker. */
export interface CountingProxy {
  readonly url: string;
  /** Per-store calls received so far, by `<route> <store>`. */
  calls(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

/**
 * Forwards every request to the worker at `target` and counts the per-store calls as they
 * arrive, so that the test knows how often each store's work was really asked for, whatever
 * any master recorded about it.
 */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  // A fresh upstream connection per call: a pooled one the worker closes while idle would turn
  // into a reset the master sees, which no worker caused.
  const agent = new Agent({ keepAlive: false });
  const counts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const m = req.method === 'POST' ? STORE_ROUTE.exec(req.url ?? '') : null;
    if (m) {
      const key = `${m[1]} ${decodeURIComponent(m[2]!)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (reply) => {
        // The worker's `Connection`/`Keep-Alive` headers describe its connection to us, not ours.
        const { connection: _c, 'keep-alive': _k, ...headers } = reply.headers;
        res.writeHead(reply.statusCode ?? 502, headers);
        reply.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(out);
  });
  // Longer than any client keeps an idle connection: the master, not the proxy, closes it, so a
  // call is never sent on a connection the proxy is closing (a reset the worker did not cause).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls: () => counts,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
