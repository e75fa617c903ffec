import { type Server, type Socket, createConnection, createServer } from 'node:net';

/** A TCP proxy a test can cut and heal, to partition one client from its server. */
export interface TcpProxy {
  /** `http://127.0.0.1:<port>` of the proxy's listening side. */
  readonly url: string;
  readonly port: number;
  /** Drops every open connection and refuses new ones until `heal()`. */
  cut(): void;
  /** Accepts and forwards connections again. */
  heal(): void;
  /** Whether the proxy is cut. */
  readonly isCut: boolean;
  close(): Promise<void>;
}

/**
 * Listens on a free loopback port and forwards each connection to `target` (`host:port` or a
 * URL). Cutting resets every open connection, as a dead network path does to a long-lived gRPC
 * channel, and resets each new one, so the client sees the server vanish.
 */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port: targetPort } = new URL(target.includes('://') ? target : `tcp://${target}`);
  let cut = false;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: hostname, port: Number(targetPort) });
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    get isCut() {
      return cut;
    },
    cut: () => {
      cut = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    heal: () => {
      cut = false;
    },
    close: async () => {
      cut = true;
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
