import { type CertificateFiles, type TestCa, createTestCa } from '@maintd/core/testing';

/**
 * PEM files of a throwaway PKI for one test file: a CA with a server certificate for 127.0.0.1
 * and a client certificate, plus an unrelated "rogue" CA with a client certificate of its own
 * (same subject as the good one) for the negative cases. Made by the shared test CA (`openssl`).
 */
export interface TestPki {
  /** The directory every file lives in. */
  readonly dir: string;
  /** The CA that signs the server and the good client certificate. */
  readonly caCert: string;
  /** Server certificate for `127.0.0.1` (subjectAltName IP:127.0.0.1), signed by `caCert`. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** Client certificate (CN `maintd-client`), signed by `caCert`. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** A CA that signed nothing the server knows: as a trust root it does not verify the server. */
  readonly rogueCaCert: string;
  /** Client certificate with the good one's subject, signed by `rogueCaCert`. */
  readonly rogueClientCert: string;
  readonly rogueClientKey: string;
  /** The two CAs, to issue more certificates from. */
  readonly issuers: Readonly<Record<'ca' | 'rogue-ca', TestCa>>;
  /** Removes the directory. */
  remove(): Promise<void>;
}

/** Generates a {@link TestPki} with `openssl` in a new temporary directory. */
export async function generateTestPki(): Promise<TestPki> {
  const ca = await createTestCa();
  try {
    const rogue = await createTestCa({ name: 'rogue-ca', dir: ca.dir });
    const [server, client, rogueClient] = await Promise.all([
      // etcd also dials itself (grpc-gateway) with its server certificate, so it needs clientAuth too.
      ca.issue('server', {
        subject: '/CN=127.0.0.1',
        extensions: ['extendedKeyUsage=serverAuth,clientAuth', 'subjectAltName=IP:127.0.0.1'],
      }),
      ca.issue('client', { subject: '/CN=maintd-client', extensions: ['extendedKeyUsage=clientAuth'] }),
      rogue.issue('rogue-client', { subject: '/CN=maintd-client', extensions: ['extendedKeyUsage=clientAuth'] }),
    ]);
    return {
      dir: ca.dir,
      caCert: ca.caCert,
      serverCert: server.cert,
      serverKey: server.key,
      clientCert: client.cert,
      clientKey: client.key,
      rogueCaCert: rogue.caCert,
      rogueClientCert: rogueClient.cert,
      rogueClientKey: rogueClient.key,
      issuers: { ca, 'rogue-ca': rogue },
      remove: () => ca.remove(),
    };
  } catch (err) {
    await ca.remove();
    throw err;
  }
}

/** What {@link issueCertificate} makes. */
export interface IssueOptions {
  /** openssl's `/A=x/B=y` form, e.g. `/O=ops/CN=alice`. */
  readonly subject: string;
  /** `ca` (the good one) or `rogue-ca`. */
  readonly issuer: 'ca' | 'rogue-ca';
  /** Extension lines, e.g. `extendedKeyUsage=serverAuth` and `subjectAltName=IP:127.0.0.1`. */
  readonly extensions: string;
  /** Validity in days from now; below 0 for a certificate that has already expired. */
  readonly days?: number;
}

/** Issues another certificate from `pki`'s CAs into its directory: `<dir>/<name>.crt` and `.key`. */
export function issueCertificate(pki: TestPki, name: string, o: IssueOptions): Promise<CertificateFiles> {
  return pki.issuers[o.issuer].issue(name, {
    subject: o.subject,
    extensions: o.extensions.split('\n').filter((l) => l !== ''),
    ...(o.days === undefined ? {} : { days: o.days }),
  });
}
