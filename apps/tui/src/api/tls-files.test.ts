import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '@maintd/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPki, generateTestPki } from '../../test/pki.js';
import { type TlsPaths, loadTlsFiles } from './tls-files.js';
import { tlsProblem } from './tls-errors.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await generateTestPki();
});
afterAll(async () => {
  await pki?.remove();
});

async function refusal(paths: TlsPaths, nowMs = Date.now()): Promise<ValidationError> {
  try {
    await loadTlsFiles(paths, nowMs);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected the files to be refused');
}

describe('loadTlsFiles', () => {
  it('reads a CA bundle and a client certificate with its key', async () => {
    const bundle = join(pki.dir, 'bundle.pem');
    // A bundle of two CAs: every certificate of it counts.
    await writeFile(bundle, (await readFile(pki.caCert, 'utf8')) + (await readFile(pki.selfSignedCert, 'utf8')));
    const m = await loadTlsFiles({ ca: bundle, cert: pki.clientCert, key: pki.clientKey }, Date.now());
    expect(m.ca).toContain('-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----');
    expect(m.cert).toBe(await readFile(pki.clientCert, 'utf8'));
    expect(m.key).toBe(await readFile(pki.clientKey, 'utf8'));
    expect(await loadTlsFiles({}, Date.now())).toEqual({ ca: undefined });
  });

  it('refuses a missing file, naming the option and the path', async () => {
    const err = await refusal({ ca: '/nonexistent/ca.pem' });
    expect(err.message).toBe('--ca: /nonexistent/ca.pem cannot be read (no such file)');
    expect(err.field).toBe('--ca');
  });

  it('refuses a file that holds no certificate, or one that does not parse', async () => {
    expect((await refusal({ ca: pki.clientKey })).message).toMatch(/^--ca: .+ holds no PEM certificate/);
    const broken = join(pki.dir, 'broken.pem');
    await writeFile(broken, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    const err = await refusal({ cert: broken, key: pki.clientKey });
    expect(err.message).toMatch(/^--cert: .+ certificate 1 does not parse/);
    expect(err.field).toBe('--cert');
  });

  it('refuses a key that is not a key, or not the certificate’s', async () => {
    expect((await refusal({ cert: pki.clientCert, key: pki.clientCert })).message).toMatch(
      /^--key: .+ not a readable PEM private key/,
    );
    const err = await refusal({ cert: pki.clientCert, key: pki.serverKey });
    expect(err.message).toBe(`--key: ${pki.serverKey} is not the key of the certificate in ${pki.clientCert} (--cert)`);
    expect(err.field).toBe('--key');
  });

  it('refuses a client certificate outside its validity, as the master would', async () => {
    const day = 86_400_000;
    expect((await refusal({ cert: pki.clientCert, key: pki.clientKey }, Date.now() + 3 * day)).message).toMatch(
      /^--cert: .+ expired at \d{4}-/,
    );
    expect((await refusal({ cert: pki.clientCert, key: pki.clientKey }, Date.now() - day)).message).toMatch(
      /^--cert: .+ is not valid before \d{4}-/,
    );
  });
});

describe('tlsProblem', () => {
  it('says which option fixes an untrusted, refused or plain-HTTP master', () => {
    expect(tlsProblem({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' })).toBe(
      "the master's TLS certificate is not trusted (self-signed certificate): pass the CA that signed it with --ca=<file> (env MAINTD_CA)",
    );
    expect(tlsProblem({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: 'IP: 10.0.0.1 is not in the cert' })).toContain(
      'not for the host of --url',
    );
    expect(tlsProblem({ code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' })).toContain(
      '--cert=<file> and --key=<file>',
    );
    expect(
      tlsProblem({
        code: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
        message: '80ACE1:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure',
        reason: 'sslv3 alert handshake failure',
      }),
    ).toBe(
      'the master refused the TLS handshake (sslv3 alert handshake failure): it requires a client certificate signed by its MASTER_TLS_CLIENT_CA (--cert, --key)',
    );
    expect(tlsProblem({ code: 'ERR_SSL_WRONG_VERSION_NUMBER' })).toContain('plain http');
    expect(tlsProblem({ code: 'ECONNREFUSED' })).toBeUndefined();
    expect(tlsProblem(undefined)).toBeUndefined();
  });

  it("names --cert and --key for a refused handshake under Node 24's OpenSSL too, which says ssl/tls where Node 20's said sslv3", () => {
    expect(
      tlsProblem({
        code: 'ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE',
        message: '40F7:error:0A000410:SSL routines:ssl3_read_bytes:ssl/tls alert handshake failure',
        reason: 'ssl/tls alert handshake failure',
      }),
    ).toBe(
      'the master refused the TLS handshake (ssl/tls alert handshake failure): it requires a client certificate signed by its MASTER_TLS_CLIENT_CA (--cert, --key)',
    );
    expect(tlsProblem({ code: 'ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE' })).toContain('(--cert, --key)');
  });
});
