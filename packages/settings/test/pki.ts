import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A throwaway CA in a temporary directory that signs certificates with `openssl`. */
export interface TestCa {
  readonly dir: string;
  readonly caPath: string;
  /** A new leaf for 127.0.0.1 / localhost; `days` < 0 makes one that has already expired. */
  leaf(name: string, o?: { subject?: string; days?: number }): Promise<{ cert: string; key: string }>;
  remove(): Promise<void>;
}

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  await run('openssl', [...args], { cwd });
}

/** Makes a CA with `openssl` (ECDSA P-256, quick to generate). */
export async function testCa(cn = 'maintd-settings-test-ca'): Promise<TestCa> {
  const dir = await mkdtemp(join(tmpdir(), 'maintd-settings-pki-'));
  await openssl(
    ['req', '-x509', '-new', ...NEW_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=${cn}`],
    dir,
  );
  return {
    dir,
    caPath: join(dir, 'ca.crt'),
    leaf: async (name, o = {}) => {
      await writeFile(
        join(dir, `${name}.ext`),
        'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
      );
      await openssl(
        [
          'req',
          '-new',
          ...NEW_KEY,
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.csr`,
          '-subj',
          o.subject ?? `/CN=${name}`,
        ],
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
        ].concat(['-days', String(o.days ?? 2), '-out', `${name}.crt`, '-extfile', `${name}.ext`]),
        dir,
      );
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A file's text. */
export const text = (path: string): Promise<string> => readFile(path, 'utf8');
