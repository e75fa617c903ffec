import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A self-signed certificate made by `openssl` with `subject` (openssl's `/A=x/B=y` form). */
export async function selfSigned(
  subject: string,
  extra: readonly string[] = [],
): Promise<{ pem: string; key: string; rfc2253: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'maintd-master-cert-'));
  try {
    await run(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
        '-keyout',
        'k.pem',
        '-out',
        'c.pem',
        '-days',
        '1',
        '-subj',
        subject,
        ...extra,
      ]),
      { cwd: dir },
    );
    const { stdout } = await run('openssl', ['x509', '-noout', '-subject', '-nameopt', 'RFC2253', '-in', 'c.pem'], {
      cwd: dir,
    });
    return {
      pem: await readFile(join(dir, 'c.pem'), 'utf8'),
      key: await readFile(join(dir, 'k.pem'), 'utf8'),
      rfc2253: stdout.replace(/\n$/, '').replace(/^subject=/, ''),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
