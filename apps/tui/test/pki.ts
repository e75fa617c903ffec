/**
 * The dashboard's TLS tests' certificates, made with `openssl` by the shared test CA: a CA, a
 * server certificate for 127.0.0.1 and localhost signed by it, a client certificate (CN `alice`)
 * signed by it, and a self-signed server certificate that no CA vouches for.
 */
import { createTestCa, selfSignedCertificate } from '@maintd/core/testing';

/** Paths of the PEM files of a {@link TestPki}. */
export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  /** For 127.0.0.1 and localhost, signed by the CA. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** CN `alice`, signed by the CA, for client authentication. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** A server certificate for 127.0.0.1 signed by its own key. */
  readonly selfSignedCert: string;
  readonly selfSignedKey: string;
  remove(): Promise<void>;
}

/** Makes a {@link TestPki} in a new temporary directory. */
export async function generateTestPki(): Promise<TestPki> {
  const ca = await createTestCa();
  try {
    const [server, client, self] = await Promise.all([
      ca.issue('server', { extensions: ['extendedKeyUsage=serverAuth', 'subjectAltName=IP:127.0.0.1,DNS:localhost'] }),
      ca.issue('client', { subject: '/CN=alice', extensions: ['extendedKeyUsage=clientAuth'] }),
      selfSignedCertificate(ca.dir, 'self', { subject: '/CN=127.0.0.1', extensions: ['subjectAltName=IP:127.0.0.1'] }),
    ]);
    return {
      dir: ca.dir,
      caCert: ca.caCert,
      serverCert: server.cert,
      serverKey: server.key,
      clientCert: client.cert,
      clientKey: client.key,
      selfSignedCert: self.cert,
      selfSignedKey: self.key,
      remove: () => ca.remove(),
    };
  } catch (err) {
    await ca.remove();
    throw err;
  }
}
