import { isIP } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { withWallClockBound } from '../clock.js';
import type { EtcdKvOptions } from './etcd-options.js';

/**
 * Why a TLS connection to etcd fails, in words an operator can act on, naming the setting to
 * check — or `undefined` when the handshake succeeds or the endpoint does not answer at all.
 * gRPC reports every TLS failure as a bare `UNAVAILABLE: No connection established`; this
 * repeats the handshake with `node:tls` (and one request, since with TLS 1.3 the server rejects
 * a client certificate only after the client's side of the handshake) to learn the reason.
 */
export async function diagnoseEtcdTls(options: EtcdKvOptions, timeoutMs = 3000): Promise<string | undefined> {
  const tls = options.tls;
  // Without ETCD_CA_CERT only https:// endpoints speak TLS, checked against the system's CAs.
  const endpoints = tls ? options.endpoints : options.endpoints.filter((e) => /^https:\/\//i.test(e));
  for (const endpoint of endpoints) {
    let url: URL;
    try {
      url = new URL(endpoint.includes('://') ? endpoint : `https://${endpoint}`);
    } catch {
      continue;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 2379);
    let socket: TLSSocket | undefined;
    const probe = new Promise<string | undefined>((resolve) => {
      try {
        socket = tlsConnect({
          host,
          port,
          ...(tls ? { ca: tls.ca } : {}),
          ...(tls?.cert ? { cert: tls.cert } : {}),
          ...(tls?.key ? { key: tls.key } : {}),
          // An IP address is not a valid SNI name (Node warns); the certificate check still applies.
          ...(isIP(host) ? {} : { servername: host }),
          ALPNProtocols: ['http/1.1'],
        });
      } catch (err) {
        // Unusable PEM content fails before any connection.
        resolve(describeTlsError(endpoint, err as NodeJS.ErrnoException, tls !== undefined));
        return;
      }
      const s = socket;
      s.once('secureConnect', () => {
        s.write(`GET /version HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
      s.once('data', () => resolve(undefined));
      s.once('error', (err: NodeJS.ErrnoException) => resolve(describeTlsError(endpoint, err, tls !== undefined)));
    });
    // An endpoint that never answers says nothing about TLS.
    const reason = await withWallClockBound(probe, timeoutMs, () => new Error('no answer')).catch(() => undefined);
    socket?.destroy();
    if (reason) return reason;
  }
  return undefined;
}

function describeTlsError(endpoint: string, err: NodeJS.ErrnoException, caSet: boolean): string | undefined {
  const code = err.code ?? '';
  const text = `${code ? `${code}: ` : ''}${err.message}`;
  if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOTFOUND'].includes(code)) return undefined;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `etcd at ${endpoint}: its certificate does not name this host (${text})`;
  if (/wrong version number|packet length too long|http request/i.test(err.message))
    return `etcd at ${endpoint} does not speak TLS (${text}): use an http:// endpoint or unset ETCD_CA_CERT`;
  if (
    /alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i.test(err.message)
  )
    return `etcd at ${endpoint} rejected the client certificate; check ETCD_CLIENT_CERT and ETCD_CLIENT_KEY (${text})`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code))
    return caSet
      ? `the certificate of etcd at ${endpoint} is not trusted by ETCD_CA_CERT (${text})`
      : `the certificate of etcd at ${endpoint} is not trusted by the system's CAs (${text}): set ETCD_CA_CERT to the CA that signed it`;
  if (/PEM|key values mismatch|NO_START_LINE|bad decrypt/i.test(err.message))
    return `cannot use the TLS files for etcd (${text}); check ETCD_CA_CERT, ETCD_CLIENT_CERT and ETCD_CLIENT_KEY`;
  return `TLS with etcd at ${endpoint} failed: ${text}`;
}
