import { X509Certificate } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestCa, createTestCa } from '@maintd/core/testing';
import { type ServedCertificate } from './server-tls-material.js';
import { ServerTls } from './server-tls.js';

const text = (path: string): Promise<string> => readFile(path, 'utf8');

let ca: TestCa;
let first: { cert: string; key: string };
let second: { cert: string; key: string };
let client: { cert: string; key: string };
const open: { close(): void }[] = [];

beforeAll(async () => {
  ca = await createTestCa();
  [first, second, client] = await Promise.all([ca.issue('first'), ca.issue('second'), ca.issue('client')]);
});
afterAll(() => ca.remove());
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

function recorder() {
  const lines: { level: string; message: string }[] = [];
  const results: string[] = [];
  const served: ServedCertificate[] = [];
  return {
    lines,
    results,
    served,
    logger: {
      info: (_: object, message: string) => void lines.push({ level: 'info', message }),
      error: (_: object, message: string) => void lines.push({ level: 'error', message }),
    },
    observer: { reloaded: (r: string) => void results.push(r), serving: (c: ServedCertificate) => void served.push(c) },
  };
}

/** Copies `from`'s files to the paths a ServerTls watches. */
async function install(dir: string, from: { cert: string; key: string }, only?: 'cert'): Promise<void> {
  await copyFile(from.cert, join(dir, 'tls.crt'));
  if (only !== 'cert') await copyFile(from.key, join(dir, 'tls.key'));
}

async function serve(tls: ServerTls): Promise<{ server: Server; port: number }> {
  const server = createServer(tls.serverOptions(), (_req, res) => res.end('ok'));
  tls.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => server.close() });
  return { server, port: (server.address() as AddressInfo).port };
}

/** The serial of the certificate a new connection is served, or the handshake's error. */
function servedSerial(port: number, o: { cert?: string; key?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...o }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? '';
      // A refused client certificate arrives as an alert after the handshake (TLS 1.3).
      socket.once('data', () => undefined);
      socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
      socket.once('error', reject);
      socket.once('end', () => resolve(serial));
    });
    socket.once('error', reject);
  });
}

const serialOf = async (path: string): Promise<string> => new X509Certificate(await text(path)).serialNumber;

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ServerTls', () => {
  it('refuses bad files at open as a result naming the setting', async () => {
    const r = await ServerTls.open(
      { prefix: 'EXPORTER', cert: first.cert, key: second.key, clientCa: undefined },
      { clock: { now: () => Date.now() }, logger: recorder().logger },
    );
    expect(r).toEqual({
      ok: false,
      error: `EXPORTER_TLS_KEY: '${second.key}' is not the key of the certificate in EXPORTER_TLS_CERT`,
    });
  });

  it('serves a rotated certificate to new connections, and keeps the previous one through a half-written set', async () => {
    const dir = ca.dir;
    await install(dir, first);
    const rec = recorder();
    const opened = await ServerTls.open(
      { prefix: 'MASTER', cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), clientCa: undefined },
      { clock: { now: () => Date.now() }, logger: rec.logger, pollMs: 20 },
    );
    if (!opened.ok) throw new Error(opened.error);
    const tls = opened.tls;
    open.push(tls);
    tls.observe(rec.observer);
    const { port } = await serve(tls);
    expect(await servedSerial(port)).toBe(await serialOf(first.cert));
    expect(rec.served.map((c) => c.serialNumber)).toEqual([await serialOf(first.cert)]);

    // The new certificate lands before its key: refused, the first one stays in force.
    await install(dir, second, 'cert');
    const refused =
      /^MASTER_TLS_\* not reloaded, the previous certificate stays in force: MASTER_TLS_KEY: .* is not the key/;
    await until(() => rec.lines.some((l) => l.level === 'error' && refused.test(l.message)));
    expect(rec.results).not.toContain('ok');
    expect(await servedSerial(port)).toBe(await serialOf(first.cert));
    expect(tls.certificate().serialNumber).toBe(await serialOf(first.cert));

    // The key follows: the next check takes the pair into force for new connections.
    await install(dir, second);
    await until(() => rec.results.includes('ok'));
    expect(await servedSerial(port)).toBe(await serialOf(second.cert));
    expect(tls.certificate().serialNumber).toBe(await serialOf(second.cert));
    expect(rec.served.map((c) => c.serialNumber).at(-1)).toBe(await serialOf(second.cert));
  });

  it('requires a client certificate signed by the client CA when one is set', async () => {
    const opened = await ServerTls.open(
      { prefix: 'MASTER', cert: first.cert, key: first.key, clientCa: ca.caCert },
      { clock: { now: () => Date.now() }, logger: recorder().logger },
    );
    if (!opened.ok) throw new Error(opened.error);
    open.push(opened.tls);
    expect(opened.tls.mutual).toBe(true);
    expect(opened.tls.serverOptions()).toMatchObject({
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    });
    const { port } = await serve(opened.tls);
    await expect(servedSerial(port)).rejects.toThrow(/certificate required|alert|ECONNRESET|socket hang up/i);
    expect(await servedSerial(port, { cert: await text(client.cert), key: await text(client.key) })).toBe(
      await serialOf(first.cert),
    );
  });
});
