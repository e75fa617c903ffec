/**
 * A daemon's graceful shutdown, in the one order both daemons need (docs/ARCHITECTURE.md §3.1):
 *
 * 1. the HTTP server stops accepting connections, and idle keep-alive ones close;
 * 2. the daemon's own work drains (the master's running tasks, the exporter's watch) while the
 *    requests in flight finish;
 * 3. the connections still open (an event stream, a slow scrape) are cut, and the server closes;
 * 4. what the work and the requests used until then is released: the task store's session, the
 *    etcd client.
 */

/** The daemon's HTTP server: Node's, as `@hono/node-server`'s `serve` returns it. */
export interface ShutdownServer {
  close(callback: () => void): unknown;
  /** Absent on an HTTP/2 server. */
  closeIdleConnections?(): void;
  /** Absent on an HTTP/2 server. */
  closeAllConnections?(): void;
}

/** What {@link shutDown} stops, and how. */
export interface ShutdownSteps {
  readonly server: ShutdownServer;
  /** Where the last line, `stopped`, goes. */
  readonly logger: { info(message: string): void };
  /** Step 2: stops the daemon's work. The server refuses new connections meanwhile. */
  readonly drain: () => Promise<void>;
  /** Step 4: closes what the work used, once the server has closed. */
  readonly release: () => Promise<void>;
}

/** Runs the shutdown sequence of the module comment once; the caller guards against a second call. */
export async function shutDown(steps: ShutdownSteps): Promise<void> {
  const { server } = steps;
  // A server that never listened (a listen error) calls back at once.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections?.();
  await steps.drain();
  server.closeAllConnections?.();
  await closed;
  await steps.release();
  steps.logger.info('stopped');
}
