import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { selfSignedCertificate } from '@maintd/core/testing';

const run = promisify(execFile);

/**
 * A self-signed certificate with `subject` (openssl's `/A=x/B=y` form; `request` adds `openssl
 * req` arguments), with its subject as `openssl x509 -nameopt RFC2253` prints it.
 */
export async function selfSigned(
  subject: string,
  request: readonly string[] = [],
): Promise<{ pem: string; key: string; rfc2253: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'maintd-master-cert-'));
  try {
    const files = await selfSignedCertificate(dir, 'c', { subject, days: 1, request });
    const { stdout } = await run('openssl', ['x509', '-noout', '-subject', '-nameopt', 'RFC2253', '-in', files.cert]);
    return {
      pem: await readFile(files.cert, 'utf8'),
      key: await readFile(files.key, 'utf8'),
      rfc2253: stdout.replace(/\n$/, '').replace(/^subject=/, ''),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
