import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** How a test client speaks TLS: PEM text of its trust root and, for mutual TLS, its certificate. */
export interface TlsClient {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
  /** The name the server's certificate must carry; default the URL's host. */
  readonly servername?: string;
}

/** An answer, with the serial number of the certificate the server presented on that connection. */
export interface HttpsAnswer {
  readonly status: number;
  readonly text: string;
  readonly serial: string;
}

/**
 * One HTTPS request on a new connection (no keep-alive: every request is a new handshake, so a
 * rotated certificate shows on the next one), verifying the server against `tls.ca`. Rejects
 * when the handshake fails or the server cuts the connection (a refused client certificate).
 */
export function httpsRequest(
  url: string,
  tls: TlsClient,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'GET',
        headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        agent: false,
        ca: tls.ca,
        ...(tls.cert === undefined ? {} : { cert: tls.cert, key: tls.key }),
        ...(tls.servername === undefined ? {} : { servername: tls.servername }),
        timeout: init.timeoutMs ?? 10_000,
      },
      (res) => {
        const serial = (res.socket as TLSSocket).getPeerX509Certificate?.()?.serialNumber ?? '';
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, serial }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(init.body);
  });
}
