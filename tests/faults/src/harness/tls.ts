import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * PEM files of a throwaway PKI for one test file: a CA with a server certificate for 127.0.0.1
 * and a client certificate, plus an unrelated "rogue" CA with a client certificate of its own
 * (same subject as the good one) for the negative cases.
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
  /** Removes the directory. */
  remove(): Promise<void>;
}

/** ECDSA P-256: quick to generate, and accepted by etcd (Go) and grpc-js alike. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = ['-days', '2'];

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  try {
    await run('openssl', [...args], { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`openssl ${args[0] ?? ''} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

async function ca(dir: string, name: string, cn: string): Promise<void> {
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      ...NEW_KEY,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      ...DAYS,
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
}

async function leaf(
  dir: string,
  name: string,
  cn: string,
  issuer: string,
  extensions: string,
  o: { readonly subject?: string; readonly days?: number } = {},
): Promise<void> {
  await writeFile(
    join(dir, `${name}.ext`),
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n${extensions}\n`,
  );
  await openssl(
    ['req', '-new', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', o.subject ?? `/CN=${cn}`],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.crt`,
      '-CAkey',
      `${issuer}.key`,
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      ...(o.days === undefined ? DAYS : ['-days', String(o.days)]),
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

/** Generates a {@link TestPki} with `openssl` in a new temporary directory. */
export async function generateTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'maintd-faults-pki-'));
  try {
    await Promise.all([ca(dir, 'ca', 'maintd-test-ca'), ca(dir, 'rogue-ca', 'maintd-rogue-ca')]);
    await Promise.all([
      // etcd also dials itself (grpc-gateway) with its server certificate, so it needs clientAuth too.
      leaf(dir, 'server', '127.0.0.1', 'ca', 'extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1'),
      leaf(dir, 'client', 'maintd-client', 'ca', 'extendedKeyUsage=clientAuth'),
      leaf(dir, 'rogue-client', 'maintd-client', 'rogue-ca', 'extendedKeyUsage=clientAuth'),
    ]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const f = (name: string): string => join(dir, name);
  return {
    dir,
    caCert: f('ca.crt'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    clientCert: f('client.crt'),
    clientKey: f('client.key'),
    rogueCaCert: f('rogue-ca.crt'),
    rogueClientCert: f('rogue-client.crt'),
    rogueClientKey: f('rogue-client.key'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
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
export async function issueCertificate(
  pki: TestPki,
  name: string,
  o: IssueOptions,
): Promise<{ readonly cert: string; readonly key: string }> {
  await leaf(pki.dir, name, '', o.issuer, o.extensions, {
    subject: o.subject,
    ...(o.days === undefined ? {} : { days: o.days }),
  });
  return { cert: join(pki.dir, `${name}.crt`), key: join(pki.dir, `${name}.key`) };
}
