/**
 * An endpoint's TLS, kept current (docs/ARCHITECTURE.md §3.4): the files are checked at startup
 * and re-read when any of them changes on disk; a good new set goes into force for new handshakes
 * (`server.setSecureContext`) while open connections finish on the one they began with, and a bad
 * or half-written set (a new certificate beside the old key, while a rotation writes two files) is
 * logged and the previous set stays in force until the next change.
 */
import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { type ServerOptions, createServer as createHttpsServer } from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import { type ServedCertificate, type ServerTlsMaterial, readServerTls } from './server-tls-material.js';
import type { ServerTlsConfig } from './server-tls-settings.js';

/** A server whose certificate can change for new handshakes: Node's `https.Server`. */
export interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

/** What a reload reports, for metrics (`serverTlsMetrics`). */
export interface ServerTlsObserver {
  /** A change on disk was read: taken into force (`ok`) or refused (`error`). */
  reloaded(result: 'ok' | 'error'): void;
  /** The certificate in force, at open and after each reload that took effect. */
  serving(certificate: ServedCertificate): void;
}

/** What {@link ServerTls.open} needs besides the config. */
export interface ServerTlsOptions {
  /** Only `now()` is read: the certificate must be valid at open and at each reload. */
  readonly clock: { now(): number };
  readonly logger: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
  /** How often the files' status is polled; default 1000 ms. */
  readonly pollMs?: number;
}

/** The outcome of {@link ServerTls.open}: bad files are a result, which startup turns into exit 2. */
export type OpenedServerTls =
  { readonly ok: true; readonly tls: ServerTls } | { readonly ok: false; readonly error: string };

/**
 * An endpoint's certificate, key and client CA in force, re-read when they change. Polled with
 * `watchFile` (as the tokens file is): it follows a file replaced by a rename and a symlink
 * swapped to a new target (how cert-manager and Kubernetes secrets rotate), where `fs.watch`
 * would keep watching the old inode.
 */
export class ServerTls {
  #material: ServerTlsMaterial;
  #targets: SecureContextTarget[] = [];
  #reading: Promise<void> = Promise.resolve();
  #closed = false;
  #observers: ServerTlsObserver[] = [];
  readonly #listener: (cur: Stats, prev: Stats) => void;

  private constructor(
    private readonly config: ServerTlsConfig,
    material: ServerTlsMaterial,
    private readonly o: ServerTlsOptions,
  ) {
    this.#material = material;
    this.#listener = (cur, prev) => {
      if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size && cur.ino === prev.ino) return;
      this.#reading = this.#reading.then(() => this.reload());
    };
    for (const path of this.paths()) {
      watchFile(path, { interval: o.pollMs ?? 1000, persistent: false }, this.#listener);
    }
  }

  /** Reads and checks the files once ({@link readServerTls}), then watches them. */
  static async open(config: ServerTlsConfig, o: ServerTlsOptions): Promise<OpenedServerTls> {
    const checked = await readServerTls(config, o.clock.now());
    if (!checked.ok) return checked;
    return { ok: true, tls: new ServerTls(config, checked.material, o) };
  }

  /** Options for `https.createServer`: TLS 1.2+, and client certificates required when a client CA is set. */
  serverOptions(): ServerOptions {
    const mutual = this.config.clientCa !== undefined;
    return { ...this.#material.context, requestCert: mutual, rejectUnauthorized: mutual };
  }

  /** Whether clients must present a certificate signed by the client CA. */
  get mutual(): boolean {
    return this.config.clientCa !== undefined;
  }

  /** What `@hono/node-server`'s `serve` adds to its options to listen over HTTPS with this context. */
  serveOptions(): { createServer: typeof createHttpsServer; serverOptions: ServerOptions } {
    return { createServer: createHttpsServer, serverOptions: this.serverOptions() };
  }

  /** The TLS of a listening log line: `mutual` or `on`. */
  get mode(): 'mutual' | 'on' {
    return this.mutual ? 'mutual' : 'on';
  }

  /** The certificate in force. */
  certificate(): ServedCertificate {
    return this.#material.certificate;
  }

  /** Puts each later reload into force on `server` (whose initial options came from {@link serverOptions}). */
  attach(server: SecureContextTarget): void {
    this.#targets.push(server);
  }

  /** Reports reloads and the certificate in force (from now: the current one at once) to `observer`. */
  observe(observer: ServerTlsObserver): void {
    this.#observers.push(observer);
    observer.serving(this.#material.certificate);
  }

  /** Stops watching the files; a reload already reading finishes without effect. */
  close(): void {
    this.#closed = true;
    for (const path of this.paths()) unwatchFile(path, this.#listener);
  }

  private paths(): string[] {
    return [this.config.cert, this.config.key, ...(this.config.clientCa === undefined ? [] : [this.config.clientCa])];
  }

  private async reload(): Promise<void> {
    const what = `${this.config.prefix}_TLS_*`;
    const refused = (error: string): void => {
      for (const o of this.#observers) o.reloaded('error');
      this.o.logger.error(
        { err: { message: error } },
        `${what} not reloaded, the previous certificate stays in force: ${error}`,
      );
    };
    // Nothing may escape: the next change's reload is chained on this one.
    let checked: Awaited<ReturnType<typeof readServerTls>>;
    try {
      checked = await readServerTls(this.config, this.o.clock.now());
    } catch (err) {
      checked = { ok: false, error: (err as Error).message };
    }
    if (this.#closed) return;
    if (!checked.ok) return refused(checked.error);
    const previous = this.#material.certificate;
    const next = checked.material;
    try {
      for (const server of this.#targets) server.setSecureContext(next.context);
    } catch (err) {
      return refused(`the server refused the new files: ${(err as Error).message}`);
    }
    this.#material = next;
    for (const o of this.#observers) {
      o.reloaded('ok');
      o.serving(next.certificate);
    }
    this.o.logger.info(
      {
        serial: next.certificate.serialNumber,
        previous_serial: previous.serialNumber,
        not_after: new Date(next.certificate.notAfterMs).toISOString(),
      },
      `${what} reloaded: new connections get the new certificate`,
    );
  }
}
