import type { Server } from 'node:http';

/**
 * How long a daemon's HTTP server keeps an idle keep-alive connection open: longer than the
 * clients that reuse them wait (undici's 4 s, a load balancer's usual 60 s), so that the client,
 * not the server, ends an idle connection. With Node's 5 s default, a client could send a request
 * on a connection the server was closing at that very moment, and a POST, which no client
 * retries, failed with "other side closed" (the fault suite's load test saw it on a busy machine).
 */
export const IDLE_KEEP_ALIVE_MS = 65_000;

/**
 * Applies {@link IDLE_KEEP_ALIVE_MS} to a daemon's server; the time allowed for a request's headers
 * must outlast it, or Node ends a kept-alive connection before the keep-alive time.
 */
export function keepIdleConnections(server: object): void {
  if (!('keepAliveTimeout' in server) || !('headersTimeout' in server)) return;
  const http = server as Pick<Server, 'keepAliveTimeout' | 'headersTimeout'>;
  http.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
  http.headersTimeout = IDLE_KEEP_ALIVE_MS + 1_000;
}
