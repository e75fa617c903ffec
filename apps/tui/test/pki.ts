/**
 * A throwaway PKI made with the `openssl` command for the TLS tests: a CA, a server certificate
 * for 127.0.0.1 and localhost signed by it, a client certificate (CN `alice`) signed by it, and a
 * self-signed server certificate that no CA vouches for.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

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

// ECDSA P-256: generated in milliseconds.
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = ['-days', '2'];
const SERVER_EXT = 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost';

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  try {
    await run('openssl', [...args], { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`openssl ${args[0] ?? ''} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

async function selfSigned(dir: string, name: string, cn: string, extensions: readonly string[]): Promise<void> {
  const ext = extensions.flatMap((e) => ['-addext', e]);
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
      ...ext,
    ],
    dir,
  );
}

async function leaf(dir: string, name: string, cn: string, extensions: string): Promise<void> {
  await writeFile(join(dir, `${name}.ext`), `basicConstraints=CA:FALSE\n${extensions}\n`);
  await openssl(
    ['req', '-new', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      ...DAYS,
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

/** Makes a {@link TestPki} in a new temporary directory. */
export async function generateTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'maintd-top-pki-'));
  try {
    await selfSigned(dir, 'ca', 'maintd-top-test-ca', [
      'basicConstraints=critical,CA:TRUE',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    await Promise.all([
      leaf(dir, 'server', '127.0.0.1', SERVER_EXT),
      leaf(dir, 'client', 'alice', 'extendedKeyUsage=clientAuth'),
      selfSigned(dir, 'self', '127.0.0.1', ['subjectAltName=IP:127.0.0.1']),
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
    selfSignedCert: f('self.crt'),
    selfSignedKey: f('self.key'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
