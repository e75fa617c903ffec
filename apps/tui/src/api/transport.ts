import type { Socket } from 'node:net';
import { Agent, type RequestInit as UndiciRequestInit, buildConnector, errors, fetch as undiciFetch } from 'undici';
import type { TlsMaterial } from './tls-files.js';

/** Sockets whose TLS alert is remembered for the request that failed on them. */
const MAX_ALERTS = 32;

/**
 * How every request of the dashboard reaches its master (the lists, the actions and the event
 * stream): one connection pool whose TLS connections trust the `--ca` bundle (when given, in
 * place of the system CAs) and present the `--cert` client certificate (when given). Plain
 * http:// URLs use the same pool, without TLS. `close()` ends its connections.
 *
 * The pool is an undici `Agent` and the requests go through undici's own `fetch`, of the same
 * package: Node's built-in fetch runs on a copy of undici bundled with Node, and handing it an
 * Agent of another copy works only while the two copies' internal handler interfaces agree,
 * which they do not across major versions (docs/ARCHITECTURE.md §4).
 */
export class MasterTransport {
  readonly #agent: Agent;
  /**
   * The TLS alert each recent socket ended with, by local port. Under TLS 1.3 a master that
   * requires a client certificate says so in an alert after the handshake; undici reports only
   * "other side closed" for the request, so the alert is put back as its cause.
   */
  readonly #alerts = new Map<number, Error>();

  constructor(tls: TlsMaterial = {}) {
    const connector = buildConnector({
      ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
      ...(tls.cert !== undefined && tls.key !== undefined ? { cert: tls.cert, key: tls.key } : {}),
      minVersion: 'TLSv1.2',
    });
    this.#agent = new Agent({
      connect: (options, callback) =>
        connector(options, (...args) => {
          const socket = args[1];
          if (socket) this.#watch(socket);
          callback(...args);
        }),
    });
  }

  /** A `fetch` over this pool, taking what the global one takes (a `Request` included). */
  readonly fetch: typeof fetch = async (input, init) => {
    const dispatcher = this.#agent;
    let url: string | URL;
    let options: UndiciRequestInit;
    if (input instanceof Request) {
      // openapi-fetch hands over a Request of the global fetch, which undici's fetch would not
      // recognise as one: its parts are passed instead (bodies here are small JSON documents).
      url = input.url;
      options = {
        method: input.method,
        headers: [...input.headers],
        ...(input.body !== null ? { body: await input.arrayBuffer() } : {}),
        signal: input.signal,
        ...(init as UndiciRequestInit | undefined),
        dispatcher,
      };
    } else {
      url = input;
      options = { ...(init as UndiciRequestInit | undefined), dispatcher };
    }
    try {
      return await undiciFetch(url, options);
    } catch (err) {
      throw this.#withAlert(err);
    }
  };

  /** Closes the pool: idle connections at once, busy ones once their request ends. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  #watch(socket: Socket): void {
    const port = socket.localPort;
    if (port === undefined) return;
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (!err.code?.startsWith('ERR_SSL_')) return;
      this.#alerts.set(port, err);
      for (const old of this.#alerts.keys()) {
        if (this.#alerts.size <= MAX_ALERTS) break;
        this.#alerts.delete(old);
      }
    });
  }

  /** A fetch failure whose socket ended on a TLS alert, with that alert as its cause. */
  #withAlert(err: unknown): unknown {
    const cause = (err as { cause?: unknown }).cause;
    if (!(cause instanceof errors.SocketError)) return err;
    const port = cause.socket?.localPort;
    const alert = port === undefined ? undefined : this.#alerts.get(port);
    if (!alert) return err;
    this.#alerts.delete(port!);
    return new TypeError((err as Error).message, { cause: alert });
  }
}
