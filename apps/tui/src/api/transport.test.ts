import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMaster, startFakeMaster } from '../../test/fake-master.js';
import { type TestPki, generateTestPki } from '../../test/pki.js';
import { FleetFeed } from '../data/feed.js';
import { ConnectionError, MaintdClient } from './client.js';
import { type TlsPaths, loadTlsFiles } from './tls-files.js';
import { MasterTransport } from './transport.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await generateTestPki();
});
afterAll(async () => {
  await pki?.remove();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fake master over HTTPS with the CA's server certificate (or the self-signed one). */
async function httpsMaster(
  options: { selfSigned?: boolean; clientCa?: boolean; tls12?: boolean } = {},
): Promise<FakeMaster> {
  const [cert, key, ca] = await Promise.all([
    readFile(options.selfSigned ? pki.selfSignedCert : pki.serverCert, 'utf8'),
    readFile(options.selfSigned ? pki.selfSignedKey : pki.serverKey, 'utf8'),
    readFile(pki.caCert, 'utf8'),
  ]);
  const fake = await startFakeMaster({}, 0, {
    cert,
    key,
    ...(options.clientCa ? { ca, requestCert: true, rejectUnauthorized: true } : {}),
    ...(options.tls12 ? { maxVersion: 'TLSv1.2' as const } : {}),
  });
  cleanups.push(() => fake.close());
  return fake;
}

/** The dashboard's client of `url` as `maintd-top` builds it from these options. */
async function clientOf(url: string, paths: TlsPaths): Promise<{ client: MaintdClient; transport: MasterTransport }> {
  const transport = new MasterTransport(await loadTlsFiles(paths, Date.now()));
  cleanups.push(() => transport.close());
  return { client: new MaintdClient({ url, timeoutMs: 3000, fetch: transport.fetch }), transport };
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the request to fail');
}

describe('MasterTransport', () => {
  it('reaches an https master whose certificate the --ca bundle signed: reads, actions and the event stream', async () => {
    const fake = await httpsMaster();
    const { client, transport } = await clientOf(fake.url, { ca: pki.caCert });
    expect((await client.masters()).map((m) => m.id)).toEqual(['master-a']);
    // A mutation with a body, through the typed client (a Request) and the plain one.
    await client.park('merge_wal', 'store-1', 'disk swap');
    expect(fake.state.cooldowns.get('merge_wal/store-1')?.parked?.reason).toBe('disk swap');
    expect((await client.bulkReset({ q: 'store-1' }, true)).count).toBe(1);

    const feed = new FleetFeed({ client, refreshMs: 200, flushMs: 10, fetch: transport.fetch });
    cleanups.push(() => feed.stop());
    feed.start();
    const deadline = performance.now() + 5000;
    while (feed.getSnapshot().connection.state !== 'live' && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(feed.getSnapshot().connection.state).toBe('live');
    expect(fake.state.requests).toContain('GET /api/v1/events');
  });

  it('refuses an https master signed by a CA it was not given, saying to pass --ca', async () => {
    const fake = await httpsMaster();
    const { client } = await clientOf(fake.url, {});
    const err = await failure(client.masters());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toMatch(
      /^the master's TLS certificate is not trusted \(.+\): pass the CA that signed it with --ca=<file>/,
    );
    // Nothing reached the master's routes.
    expect(fake.state.requests).toEqual([]);
  });

  it('refuses a self-signed master certificate, with --ca naming another CA too', async () => {
    const fake = await httpsMaster({ selfSigned: true });
    for (const paths of [{}, { ca: pki.caCert }]) {
      const { client } = await clientOf(fake.url, paths);
      const err = await failure(client.masters());
      expect(err.message).toContain('not trusted');
      expect(err.message).toContain('--ca');
    }
    expect(fake.state.requests).toEqual([]);
  });

  it('presents the client certificate to a master that requires one', async () => {
    const fake = await httpsMaster({ clientCa: true });
    const { client } = await clientOf(fake.url, { ca: pki.caCert, cert: pki.clientCert, key: pki.clientKey });
    await client.masters();
    await client.enqueue('merge_wal', 'store-2');
    expect(fake.state.clientNames).toEqual(['alice', 'alice']);
  });

  it('without a client certificate, a master that requires one refuses, and the error names --cert and --key', async () => {
    // TLS 1.3 says so in an alert after the handshake; TLS 1.2 fails the handshake itself.
    for (const tls12 of [false, true]) {
      const fake = await httpsMaster({ clientCa: true, tls12 });
      const { client } = await clientOf(fake.url, { ca: pki.caCert });
      const err = await failure(client.masters());
      expect(err).toBeInstanceOf(ConnectionError);
      expect(err.message).toContain('client certificate');
      expect(err.message).toContain('--cert');
      expect(err.message).not.toContain('routines');
      expect(fake.state.requests).toEqual([]);
    }
  });

  it('says to use https:// when an http:// URL reaches a master serving TLS', async () => {
    const fake = await httpsMaster();
    const { client } = await clientOf(fake.url.replace('https:', 'http:'), {});
    const err = await failure(client.masters());
    expect(err.message).toBe('connection closed before any answer: if the master serves https, use an https:// --url');
  });

  it('speaks plain HTTP to an http:// master, without TLS', async () => {
    const fake = await startFakeMaster();
    cleanups.push(() => fake.close());
    const { client } = await clientOf(fake.url, {});
    expect((await client.masters()).map((m) => m.id)).toEqual(['master-a']);
  });
});
