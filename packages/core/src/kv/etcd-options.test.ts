import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnoseEtcdTls, etcdKvOptions } from './etcd.js';

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
});
