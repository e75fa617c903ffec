import type { X509Certificate } from 'node:crypto';
import type { Context } from 'hono';
import { certificateSubject } from '../auth/cert-subject.js';
import type { AppEnv } from './context.js';

/** What a request's socket offers when the API is served over TLS: Node's `TLSSocket`. */
interface TlsSocket {
  /** True when the client presented a certificate the client CA verified. */
  readonly authorized?: boolean;
  getPeerX509Certificate?(): X509Certificate | undefined;
}

/** Subjects of the connections seen, so a keep-alive connection's requests parse it once. */
const subjects = new WeakMap<object, string | null>();

/**
 * The canonical subject (`canonicalSubject`) of the client certificate this request's connection
 * presented and the TLS handshake verified against MASTER_TLS_CLIENT_CA (docs/ARCHITECTURE.md
 * §3.4), or undefined: plain HTTP, no certificate, or one not verified.
 */
export function verifiedPeerSubject(c: Context<AppEnv>): string | undefined {
  const socket = (c.env as AppEnv['Bindings'] | undefined)?.incoming?.socket as (TlsSocket & object) | undefined;
  if (socket?.authorized !== true || typeof socket.getPeerX509Certificate !== 'function') return undefined;
  let subject = subjects.get(socket);
  if (subject === undefined) {
    const cert = socket.getPeerX509Certificate();
    subject = (cert && certificateSubject(cert.subject)) ?? null;
    subjects.set(socket, subject);
  }
  return subject ?? undefined;
}
