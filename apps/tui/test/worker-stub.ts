/**
 * A small worker for the README's view captures (`scripts/capture-views.ts`) and demos: a real
 * HTTP server speaking the worker protocol of docs/ARCHITECTURE.md §3.3 over a few in-memory stores. Healthy
 * stores merge (their WAL backlog grows back on every scan); broken stores fail every merge and
 * compaction the way the production incident did:
 * `500 {"error": "Not found: .../data/<fragment>.lance"}`.
 *
 * Run standalone: `tsx test/worker-stub.ts [port]` (the demo stores: orders-eu, orders-us, events-2024 and broken-store).
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** One store the stub owns. */
export interface StubStore {
  readonly name: string;
  pending: number;
  fragments: number;
  readonly rows: number;
  /** Every merge and compaction fails with a missing-fragment error. */
  readonly broken?: boolean;
}

/** A running stub worker. */
export interface WorkerStub {
  readonly url: string;
  readonly stores: StubStore[];
  /** Merge requests received, by store name. */
  readonly merges: Map<string, number>;
  close(): Promise<void>;
}

/** The error a broken store answers with (as the real workers did in the incident). */
export function brokenError(name: string): string {
  return `Not found: /srv/stores/${name}/data/4b1d2c9e-0f3a-4e51-9d7c-2a6b8e1f0c35.lance`;
}

/** Starts a stub worker on a loopback port (0 = any free one). */
export async function startWorkerStub(stores: StubStore[], port = 0): Promise<WorkerStub> {
  const merges = new Map<string, number>();
  const sockets = new Set<Socket>();
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && path === '/api/v1/internal/stores') {
      // WAL keeps arriving: healthy stores grow back, so merges keep happening.
      for (const s of stores) if (!s.broken) s.pending += 3;
      json(res, 200, {
        stores: stores.map((s) => ({
          name: s.name,
          pending_wal_generations: s.pending,
          fragment_count: s.fragments,
          row_count: s.rows,
        })),
      });
      return;
    }
    const m = /^\/api\/v1\/internal\/(merge-wal|compact)\/([^/]+)$/.exec(path);
    if (req.method === 'POST' && m) {
      const name = decodeURIComponent(m[2]!);
      const store = stores.find((s) => s.name === name);
      if (!store) return json(res, 404, { error: `store ${name} is not on this worker` });
      if (m[1] === 'merge-wal') merges.set(name, (merges.get(name) ?? 0) + 1);
      if (store.broken) return json(res, 500, { error: brokenError(name) });
      if (m[1] === 'merge-wal') {
        const reclaimed = store.pending;
        store.pending = 0;
        return json(res, 200, { reclaimed });
      }
      const removed = Math.max(0, store.fragments - 1);
      store.fragments = 1;
      return json(res, 200, { fragments_removed: removed, fragments_added: 1 });
    }
    json(res, 404, { error: `no route for ${req.method} ${path}` });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    stores,
    merges,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The demo fleet: three healthy stores with a backlog and one broken store with a big one. */
export function demoStores(): StubStore[] {
  return [
    { name: 'orders-eu', pending: 40, fragments: 24, rows: 1_250_000 },
    { name: 'orders-us', pending: 12, fragments: 9, rows: 980_000 },
    { name: 'events-2024', pending: 9, fragments: 30, rows: 12_400_000 },
    { name: 'broken-store', pending: 7985, fragments: 41, rows: 3_100_000, broken: true },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const stub = await startWorkerStub(demoStores(), Number(process.argv[2] ?? 0));
  process.stdout.write(`${stub.url}\n`);
}
