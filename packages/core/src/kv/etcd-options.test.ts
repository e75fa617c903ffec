import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdKvOptions } from './etcd-options.js';
import { diagnoseEtcdTls } from './etcd-tls.js';
import { selfSignedCertificate } from '../testing/test-ca.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-etcd-options-'));
  await writeFile(join(dir, 'not-pem.crt'), 'hello, I am not a certificate\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('etcdKvOptions', () => {
  it('passes credentials only as a pair and enables TLS only with a CA', async () => {
    expect(await etcdKvOptions({ endpoints: ['http://a:1'], username: 'u' })).toEqual({ endpoints: ['http://a:1'] });
    expect(await etcdKvOptions({ endpoints: ['http://a:1'], username: 'u', password: 'p' })).toMatchObject({
      auth: { username: 'u', password: 'p' },
    });
  });

  it('names the setting and the path of a file it cannot read', async () => {
    await expect(etcdKvOptions({ endpoints: ['https://a:1'], caCert: join(dir, 'missing.crt') })).rejects.toThrow(
      /^ETCD_CA_CERT: cannot read '.*missing\.crt': ENOENT/,
    );
  });

  it('refuses an http:// endpoint beside ETCD_CA_CERT, which the client would reach over TLS anyway', async () => {
    await expect(
      etcdKvOptions({ endpoints: ['https://a:1', 'http://b:2'], caCert: join(dir, 'missing.crt') }),
    ).rejects.toThrow("ETCD_ENDPOINTS: 'http://b:2' is plain http://, but ETCD_CA_CERT is set: use https://");
  });

  it('refuses a CA file that is not a PEM certificate instead of silently trusting the system CAs', async () => {
    await expect(etcdKvOptions({ endpoints: ['https://a:1'], caCert: join(dir, 'not-pem.crt') })).rejects.toThrow(
      /^ETCD_CA_CERT: '.*not-pem\.crt' is not a PEM certificate$/,
    );
  });
});

describe('diagnoseEtcdTls', () => {
  it('has nothing to say without TLS or when nothing listens', async () => {
    expect(await diagnoseEtcdTls({ endpoints: ['http://127.0.0.1:1'] })).toBeUndefined();
    expect(
      await diagnoseEtcdTls({ endpoints: ['https://127.0.0.1:1'], tls: { ca: Buffer.from('') } }, 500),
    ).toBeUndefined();
  });

  it('says to set ETCD_CA_CERT when an https:// endpoint is signed by a CA the system does not trust', async () => {
    const { key, cert } = await selfSignedCertificate(dir, 'self', { subject: '/CN=127.0.0.1', days: 1 });
    const server = createServer({ key: await readFile(key), cert: await readFile(cert) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(await diagnoseEtcdTls({ endpoints: [`https://127.0.0.1:${port}`] })).toMatch(
        new RegExp(
          `^the certificate of etcd at https://127.0.0.1:${port} is not trusted by the system's CAs \\(.*\\): set ETCD_CA_CERT to the CA that signed it$`,
        ),
      );
    } finally {
      server.close();
    }
  });
});
