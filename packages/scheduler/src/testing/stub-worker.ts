import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request a stub worker received. */
export interface StubRequest {
  readonly method: string;
  readonly path: string;
  /** The store name for per-store routes (`/api/v1/internal/<route>/<name>`). */
  readonly name: string | undefined;
  readonly authorization: string | undefined;
}

/** What a stub answers: a status and a JSON (or raw string) body, optionally late, or never. */
export type StubReply =
  | { readonly status: number; readonly body?: unknown; readonly raw?: string | Buffer; readonly delayMs?: number }
  | { readonly hang: true }
  | { readonly destroy: true };

/** A real HTTP server on a loopback port speaking (a scripted version of) the worker protocol. */
export interface StubWorker {
  readonly url: string;
  readonly requests: StubRequest[];
  /** Most requests that were in flight at once. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/**
 * Starts a stub worker whose replies come from `handler`. Hung requests are released when the
 * stub closes, so tests never leak sockets.
 */
export async function startStubWorker(
  handler: (req: StubRequest) => StubReply | Promise<StubReply>,
): Promise<StubWorker> {
  const requests: StubRequest[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    const path = (req.url ?? '/').split('?')[0]!;
    const m = /^\/api\/v1\/internal\/[a-z-]+\/([^/]+)$/.exec(path);
    const request: StubRequest = {
      method: req.method ?? 'GET',
      path,
      name: m ? decodeURIComponent(m[1]!) : undefined,
      authorization: req.headers.authorization,
    };
    requests.push(request);
    req.resume();
    void Promise.resolve(handler(request)).then(async (reply) => {
      if ('hang' in reply) return;
      if ('destroy' in reply) {
        res.socket?.destroy();
        return;
      }
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      const body = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A URL on which nothing listens (connections are refused). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
