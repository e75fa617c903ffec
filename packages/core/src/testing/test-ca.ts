import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** ECDSA P-256: generated in milliseconds, and accepted by etcd (Go), grpc-js and Node alike. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DEFAULT_DAYS = 2;
/**
 * A certificate for this machine's loopback that serves and authenticates as a client: etcd dials
 * itself (grpc-gateway) with its server certificate, so one certificate does both.
 */
const LOOPBACK = ['extendedKeyUsage=serverAuth,clientAuth', 'subjectAltName=IP:127.0.0.1,DNS:localhost'];

/** What {@link TestCa.issue} and {@link selfSignedCertificate} make. */
export interface CertificateOptions {
  /** openssl's `/A=x/B=y` form, e.g. `/O=ops/CN=alice`; default `/CN=<name>`. */
  readonly subject?: string;
  /**
   * Extension lines, e.g. `extendedKeyUsage=clientAuth` or `subjectAltName=IP:127.0.0.1`;
   * default: server and client use for 127.0.0.1 and localhost.
   */
  readonly extensions?: readonly string[];
  /** Validity in days from now (default 2); below 0 for a certificate that has already expired. */
  readonly days?: number;
  /** More arguments of `openssl req`, e.g. `-multivalue-rdn` for a subject with `+`. */
  readonly request?: readonly string[];
}

/** PEM files of a certificate and its key. */
export interface CertificateFiles {
  /** Path of the certificate's PEM file. */
  readonly cert: string;
  /** Path of its private key's PEM file (unencrypted). */
  readonly key: string;
}

/**
 * A throwaway certificate authority made with the `openssl` command, for tests of TLS (etcd's
 * and the daemons' own endpoints) with real certificates.
 */
export interface TestCa {
  /** The directory its files live in. */
  readonly dir: string;
  /** PEM file of the CA's certificate: the trust root to give a client or a server. */
  readonly caCert: string;
  /** Issues `<dir>/<name>.crt` and `<dir>/<name>.key`, signed by this CA. */
  issue(name: string, o?: CertificateOptions): Promise<CertificateFiles>;
  /** Removes the directory, with every file issued into it. */
  remove(): Promise<void>;
}

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  try {
    await run('openssl', [...args], { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`openssl ${args[0] ?? ''} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

const daysOf = (o: CertificateOptions): string[] => ['-days', String(o.days ?? DEFAULT_DAYS)];
const files = (dir: string, name: string): CertificateFiles => ({
  cert: join(dir, `${name}.crt`),
  key: join(dir, `${name}.key`),
});

/**
 * A self-signed certificate in `dir` (`<name>.crt`, `<name>.key`): one no CA vouches for, or, with
 * `basicConstraints=critical,CA:TRUE` among its extensions, a CA's own.
 */
export async function selfSignedCertificate(
  dir: string,
  name: string,
  o: CertificateOptions = {},
): Promise<CertificateFiles> {
  const ext = (o.extensions ?? LOOPBACK).flatMap((e) => ['-addext', e]);
  await openssl(
    ['req', '-x509', '-new', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, ...daysOf(o)].concat([
      '-subj',
      o.subject ?? `/CN=${name}`,
      ...ext,
      ...(o.request ?? []),
    ]),
    dir,
  );
  return files(dir, name);
}

/**
 * Makes a CA named `name` (files `<name>.crt`, `<name>.key`) in `dir`, or in a new temporary
 * directory that {@link TestCa.remove} deletes. Several CAs may share a directory: a test of a
 * wrong CA makes a second one beside the first.
 */
export async function createTestCa(o: { readonly name?: string; readonly dir?: string } = {}): Promise<TestCa> {
  const name = o.name ?? 'ca';
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'maintd-test-pki-')));
  await selfSignedCertificate(dir, name, {
    subject: `/CN=maintd-test-${name}-${randomBytes(4).toString('hex')}`,
    extensions: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'],
  });
  return {
    dir,
    caCert: join(dir, `${name}.crt`),
    issue: async (leaf, io = {}) => {
      const ext = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment'];
      await writeFile(join(dir, `${leaf}.ext`), `${[...ext, ...(io.extensions ?? LOOPBACK)].join('\n')}\n`);
      await openssl(
        ['req', '-new', ...NEW_KEY, '-keyout', `${leaf}.key`, '-out', `${leaf}.csr`].concat([
          '-subj',
          io.subject ?? `/CN=${leaf}`,
          ...(io.request ?? []),
        ]),
        dir,
      );
      await openssl(
        ['x509', '-req', '-in', `${leaf}.csr`, '-CA', `${name}.crt`, '-CAkey', `${name}.key`].concat([
          '-set_serial',
          `0x${randomBytes(8).toString('hex')}`,
          ...daysOf(io),
          '-out',
          `${leaf}.crt`,
          '-extfile',
          `${leaf}.ext`,
        ]),
        dir,
      );
      return files(dir, leaf);
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
