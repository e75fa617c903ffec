import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';

/** The per-store routes of the worker protocol (docs/ARCHITECTURE.md §3.3). */
export type WorkerRoute = 'merge-wal' | 'compact' | 'index-id';

/**
 * Ways a worker can misbehave, chosen per store name: a store named after a behaviour, or with
 * the behaviour as its first dot-separated part (`hang.slot-1`), gets it; any other is healthy.
 */
export const MISBEHAVIOURS = [
  /** 200 with a body that is not JSON. */
  'garbage-json',
  /** 200 with the right fields of the wrong type (`{"reclaimed":"lots"}`). */
  'wrong-type',
  /** 200 with negative counts (`{"reclaimed":-5}`). */
  'negative',
  /** 200 with a 10 MB body announced by Content-Length. */
  'huge-body',
  /** 200 with a 10 MB chunked body (no Content-Length): the reader must stop on its own. */
  'huge-chunked',
  /** 200 whose body arrives one byte every 100 ms, forever. */
  'slow-drip',
  /** 200 announcing 1000 bytes, 40 sent, then a TCP reset. */
  'reset-mid-body',
  /** Never answers. */
  'hang',
  /** 500 whose error text carries terminal escapes and control characters. */
  'escape-500',
  /** 500 whose error text is 50,000 characters long. */
  'long-error-500',
] as const;
export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

/** Any store not named after a misbehaviour is healthy: it merges 3 generations, compacts 2 → 1, builds a btree. */
export const HEALTHY_REPLY: Readonly<Record<WorkerRoute, unknown>> = {
  'merge-wal': { reclaimed: 3 },
  compact: { fragments_removed: 2, fragments_added: 1 },
  'index-id': { index_type: 'btree' },
};

/**
 * The error text `escape-500` sends: a screen clear, a window-title OSC (BEL-terminated), SGR
 * colour, an 8-bit CSI, a NUL, a backspace, CR/LF and a bare BEL around readable markers.
 */
export const ESCAPE_ERROR =
  'Not found: fragment-gone \u001b[2J\u001b]0;pwned\u0007\u001b[31mREDMARK\u001b[0m \u009b1;1Hhome\u0000nul\u0008bs\r\nline2\u0007 end';

/** One request the worker received. */
export interface BadRequest {
  readonly route: WorkerRoute | 'stores' | 'other';
  readonly name: string;
  readonly at: number;
  /** The master closed the connection or the exchange completed. */
  closed: boolean;
  /** Set when the connection closed, ms after `at`. */
  closedAfterMs: number | undefined;
  /** Body bytes this worker managed to write. */
  bytesWritten: number;
}

/** A worker HTTP server that misbehaves per store name. */
export interface BadWorker {
  /** Base URL, for WORKER_ENDPOINTS. */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly BadRequest[];
  /** Requests whose connection is still open. */
  open(): BadRequest[];
  close(): Promise<void>;
}

const TEN_MB = 10 * 1024 * 1024;

/**
 * Starts a worker on a free loopback port that speaks the worker protocol for healthy stores and
 * misbehaves for stores named after a {@link Misbehaviour}. `GET /api/v1/internal/stores`
 * answers an empty list.
 */
export async function startBadWorker(): Promise<BadWorker> {
  const requests: BadRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const m = /^\/api\/v1\/internal\/(merge-wal|compact|index-id)\/([^/?]+)$/.exec(req.url ?? '');
    const route: BadRequest['route'] = m
      ? (m[1] as WorkerRoute)
      : req.url === '/api/v1/internal/stores'
        ? 'stores'
        : 'other';
    const name = m ? decodeURIComponent(m[2] ?? '') : '';
    const record: BadRequest = {
      route,
      name,
      at: performance.now(),
      closed: false,
      closedAfterMs: undefined,
      bytesWritten: 0,
    };
    requests.push(record);
    res.once('close', () => {
      record.closed = true;
      record.closedAfterMs = performance.now() - record.at;
    });
    // Drain the request body so the exchange can proceed.
    req.resume();
    if (route === 'stores') return json(res, 200, { stores: [] }, record);
    if (route === 'other' || req.method !== 'POST') return json(res, 404, { error: 'no such route' }, record);
    behave(behaviourOf(name), route, req, res, record, timers);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('bad worker has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    open: () => requests.filter((r) => !r.closed),
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The misbehaviour a store name asks for, if any. */
export function behaviourOf(name: string): Misbehaviour | undefined {
  return MISBEHAVIOURS.find((b) => name === b || name.startsWith(`${b}.`));
}

function json(res: ServerResponse, status: number, body: unknown, record: BadRequest): void {
  const text = JSON.stringify(body);
  record.bytesWritten += Buffer.byteLength(text);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function behave(
  behaviour: Misbehaviour | undefined,
  route: WorkerRoute,
  req: IncomingMessage,
  res: ServerResponse,
  record: BadRequest,
  timers: Set<NodeJS.Timeout>,
): void {
  const merge = route === 'merge-wal';
  switch (behaviour) {
    case 'garbage-json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"reclaimed": 3,,, <html>oops</html>');
      return;
    case 'wrong-type':
      return json(res, 200, merge ? { reclaimed: 'lots' } : { fragments_removed: 'lots', fragments_added: 1 }, record);
    case 'negative':
      return json(res, 200, merge ? { reclaimed: -5 } : { fragments_removed: -5, fragments_added: -1 }, record);
    case 'huge-body': {
      const body = Buffer.alloc(TEN_MB, 0x20);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      record.bytesWritten += body.length;
      res.end(body);
      return;
    }
    case 'huge-chunked': {
      // No Content-Length: 10 MB of a JSON string in 64 KiB chunks, written as the reader drains.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let left = TEN_MB;
      const pump = (): void => {
        while (left > 0 && !res.destroyed) {
          left -= chunk.length;
          record.bytesWritten += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      res.write('{"reclaimed": "');
      pump();
      return;
    }
    case 'slow-drip': {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"reclaimed":');
      const t = setInterval(() => {
        if (res.destroyed) {
          clearInterval(t);
          timers.delete(t);
          return;
        }
        record.bytesWritten += 1;
        res.write(' ');
      }, 100);
      timers.add(t);
      res.once('close', () => {
        clearInterval(t);
        timers.delete(t);
      });
      return;
    }
    case 'reset-mid-body': {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"reclaimed": 3, "padding": "xxxxxxxxxx');
      record.bytesWritten += 40;
      const t = setTimeout(() => {
        timers.delete(t);
        req.socket.resetAndDestroy();
      }, 50);
      timers.add(t);
      return;
    }
    case 'hang':
      // Headers never come; the connection stays open until the master gives up on it.
      return;
    case 'escape-500':
      return json(res, 500, { error: ESCAPE_ERROR }, record);
    case 'long-error-500':
      return json(res, 500, { error: `Not found: ${'x'.repeat(50_000)}` }, record);
    case undefined:
      return json(res, 200, HEALTHY_REPLY[route], record);
  }
}
