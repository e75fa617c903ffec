import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCa, createTestCa } from '@maintd/core/testing';
import { checkServerTls, readServerTls } from './server-tls-material.js';
import type { ServerTlsConfig } from './server-tls-settings.js';

const text = (path: string): Promise<string> => readFile(path, 'utf8');

let ca: TestCa;
let good: { cert: string; key: string };
let other: { cert: string; key: string };
let expired: { cert: string; key: string };

beforeAll(async () => {
  ca = await createTestCa();
  [good, other, expired] = await Promise.all([ca.issue('good'), ca.issue('other'), ca.issue('expired', { days: -1 })]);
});
afterAll(() => ca.remove());

const config = (o: Partial<ServerTlsConfig> = {}): ServerTlsConfig => ({
  prefix: 'MASTER',
  cert: good.cert,
  key: good.key,
  clientCa: undefined,
  ...o,
});

describe('checkServerTls', () => {
  it('accepts a certificate with its key, for TLS 1.2 and later, describing the served certificate', async () => {
    const pem = await text(good.cert);
    const x = new X509Certificate(pem);
    const r = checkServerTls(config(), { cert: pem, key: await text(good.key), clientCa: undefined }, Date.now());
    expect(r.ok && r.material.context).toEqual({ cert: pem, key: await text(good.key), minVersion: 'TLSv1.2' });
    expect(r.ok && r.material.certificate).toEqual({
      serialNumber: x.serialNumber,
      fingerprint256: x.fingerprint256,
      notBeforeMs: Date.parse(x.validFrom),
      notAfterMs: Date.parse(x.validTo),
    });
  });

  it('adds the client CA to the context when mutual TLS is on', async () => {
    const pems = { cert: await text(good.cert), key: await text(good.key), clientCa: await text(ca.caCert) };
    const r = checkServerTls(config({ clientCa: ca.caCert }), pems, Date.now());
    expect(r.ok && r.material.context.ca).toBe(pems.clientCa);
  });

  it('refuses a key that is not the certificate’s, naming the setting and the path', async () => {
    const r = checkServerTls(
      config({ key: other.key }),
      { cert: await text(good.cert), key: await text(other.key), clientCa: undefined },
      Date.now(),
    );
    expect(r).toEqual({
      ok: false,
      error: `MASTER_TLS_KEY: '${other.key}' is not the key of the certificate in MASTER_TLS_CERT`,
    });
  });

  it('refuses a certificate outside its validity at the clock’s time', async () => {
    const pems = { cert: await text(good.cert), key: await text(good.key), clientCa: undefined };
    const x = new X509Certificate(pems.cert);
    const before = checkServerTls(config(), pems, Date.parse(x.validFrom) - 1);
    expect(!before.ok && before.error).toMatch(/^MASTER_TLS_CERT: '.*good\.crt' is not valid yet \(from .*Z\)$/);
    const after = checkServerTls(config(), pems, Date.parse(x.validTo));
    expect(!after.ok && after.error).toMatch(/^MASTER_TLS_CERT: '.*' has expired \(at .*Z\)$/);
    const old = checkServerTls(
      config({ cert: expired.cert }),
      { ...pems, cert: await text(expired.cert), key: await text(expired.key) },
      Date.now(),
    );
    expect(!old.ok && old.error).toMatch(/has expired/);
  });

  it('refuses files that hold no PEM, or a broken one, without quoting a key', async () => {
    const key = await text(good.key);
    const noCert = checkServerTls(config(), { cert: 'hello', key, clientCa: undefined }, Date.now());
    expect(!noCert.ok && noCert.error).toBe(
      `MASTER_TLS_CERT: '${good.cert}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
    const broken = checkServerTls(
      config(),
      { cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', key, clientCa: undefined },
      Date.now(),
    );
    expect(!broken.ok && broken.error).toMatch(/^MASTER_TLS_CERT: '.*': certificate #1 does not parse/);
    const noKey = checkServerTls(
      config(),
      { cert: await text(good.cert), key: key.slice(0, 80), clientCa: undefined },
      Date.now(),
    );
    expect(!noKey.ok && noKey.error).toMatch(/^MASTER_TLS_KEY: '.*' holds no usable PEM private key/);
    expect(!noKey.ok && noKey.error).not.toContain(key.slice(40, 80));
    const noCa = checkServerTls(
      config({ clientCa: '/x/ca.pem' }),
      { cert: await text(good.cert), key, clientCa: '' },
      Date.now(),
    );
    expect(!noCa.ok && noCa.error).toBe(
      "MASTER_TLS_CLIENT_CA: '/x/ca.pem' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
    );
  });
});

describe('readServerTls', () => {
  it('reads the files and checks them, refusing one it cannot read', async () => {
    expect((await readServerTls(config(), Date.now())).ok).toBe(true);
    const missing = join(ca.dir, 'missing.pem');
    expect(await readServerTls(config({ clientCa: missing }), Date.now())).toEqual({
      ok: false,
      error: `MASTER_TLS_CLIENT_CA: '${missing}' cannot be read: ENOENT`,
    });
    const encrypted = join(ca.dir, 'encrypted.key');
    await writeFile(encrypted, '-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n');
    const r = await readServerTls(config({ key: encrypted }), Date.now());
    expect(!r.ok && r.error).toMatch(/^MASTER_TLS_KEY: '.*' is encrypted: maintd reads an unencrypted key/);
  });
});
