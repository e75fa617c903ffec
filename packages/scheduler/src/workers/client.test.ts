import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type StubReply, type StubWorker, refusedUrl, startStubWorker } from '../testing/stub-worker.js';
import { type WorkerResult, callWorker } from './client.js';

const Reply = z.object({ reclaimed: z.number().int().nonnegative() });
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function stub(reply: StubReply | ((n: number) => StubReply)): Promise<StubWorker> {
  let n = 0;
  const w = await startStubWorker(() => (typeof reply === 'function' ? reply(n++) : reply));
  closers.push(() => w.close());
  return w;
}

/** A bare HTTP server for replies the stub worker cannot script (drips, half bodies, endless streams). */
async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const route = (base: string): string => `${base}/api/v1/internal/merge-wal/s1`;

function expectTransport(r: WorkerResult<unknown>): string {
  expect(r.kind).toBe('transport_error');
  if (r.kind !== 'transport_error') throw new Error('unreachable');
  expect(r.message.length).toBeLessThanOrEqual(512);
  expect(r.message).not.toMatch(CONTROL);
  return r.message;
}

describe('callWorker', () => {
  it('returns the validated reply and sends the token as a bearer header', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 7, extra: 'ignored' } });
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000, token: 's3cret' });
    expect(r).toEqual({ kind: 'ok', value: { reclaimed: 7 } });
    expect(w.requests).toEqual([
      { method: 'POST', path: '/api/v1/internal/merge-wal/s1', name: 's1', authorization: 'Bearer s3cret' },
    ]);
  });

  it('sends no authorization header without a token', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 0 } });
    await callWorker('GET', route(w.url), Reply, { timeoutMs: 2000, token: undefined });
    expect(w.requests[0]?.authorization).toBeUndefined();
    expect(w.requests[0]?.method).toBe('GET');
  });

  it('reports a 404 as not_found', async () => {
    const w = await stub({ status: 404, body: { error: 'unknown store' } });
    expect(await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 })).toEqual({ kind: 'not_found' });
  });

  it("quotes a worker's string error, prefixed by the endpoint and status", async () => {
    const w = await stub({ status: 500, body: { error: 'Not found: /srv/data/x.lance' } });
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 });
    expect(r).toEqual({ kind: 'http_error', status: 500, message: `${w.url}: HTTP 500: Not found: /srv/data/x.lance` });
  });

  it("quotes a worker's structured error message", async () => {
    const w = await stub({ status: 409, body: { error: { code: 'conflict', message: 'commit conflict' } } });
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 });
    expect(r).toEqual({ kind: 'http_error', status: 409, message: `${w.url}: HTTP 409: commit conflict` });
  });

  it('reports only the status for an error body that is not JSON or has no error text', async () => {
    const html = await stub({ status: 502, raw: '<html>bad gateway</html>' });
    expect(await callWorker('POST', route(html.url), Reply, { timeoutMs: 2000 })).toEqual({
      kind: 'http_error',
      status: 502,
      message: `${html.url}: HTTP 502`,
    });
    const other = await stub({ status: 500, body: { error: 42 } });
    expect(await callWorker('POST', route(other.url), Reply, { timeoutMs: 2000 })).toMatchObject({
      message: `${other.url}: HTTP 500`,
    });
  });

  it('strips terminal escapes from error text and bounds it', async () => {
    const w = await stub({ status: 500, body: { error: `\u001b[31mred\u001b[0m\u0007 ${'x'.repeat(5000)}` } });
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 });
    expect(r.kind).toBe('http_error');
    if (r.kind !== 'http_error') return;
    expect(r.message).toMatch(new RegExp(`^${w.url}: HTTP 500: red x+$`));
    expect(r.message.length).toBe(512);
    expect(r.message).not.toMatch(CONTROL);
  });

  it('reports a refused connection as a transport error naming the endpoint', async () => {
    const url = await refusedUrl();
    expect(expectTransport(await callWorker('POST', route(url), Reply, { timeoutMs: 2000 }))).toBe(
      `${url}: connection refused`,
    );
  });

  it('cuts off a worker that never answers at the timeout', async () => {
    const w = await stub({ hang: true });
    const started = performance.now();
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(expectTransport(r)).toBe(`${w.url}: timed out after 300 ms`);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2000);
  });

  it('counts the body against the timeout: a slow-drip reply is cut off', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"reclaimed": ');
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const started = performance.now();
    const r = await callWorker('POST', route(url), Reply, { timeoutMs: 300 });
    expect(expectTransport(r)).toBe(`${url}: timed out after 300 ms`);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('reports a connection reset mid-body as a transport error', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '40' });
      res.write('{"reclaimed": 1', () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const msg = expectTransport(await callWorker('POST', route(url), Reply, { timeoutMs: 2000 }));
    expect(msg).toMatch(new RegExp(`^${url}: .*while reading the reply$`));
  });

  it('reports a connection closed before any reply as a transport error', async () => {
    const w = await stub({ destroy: true });
    const msg = expectTransport(await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 }));
    expect(msg.startsWith(`${w.url}: `)).toBe(true);
  });

  it('stops reading an endless body at the size limit instead of waiting for it', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(4096, 0x20);
      const pump = (): void => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
    });
    const started = performance.now();
    const r = await callWorker('POST', route(url), Reply, { timeoutMs: 10_000, maxBodyBytes: 64 * 1024 });
    expect(expectTransport(r)).toBe(`${url}: reply exceeds the 65536-byte limit`);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('refuses a 10 MB reply by its declared length', async () => {
    const w = await stub({ status: 200, raw: Buffer.alloc(10 * 1024 * 1024, 0x20) });
    const r = await callWorker('POST', route(w.url), Reply, { timeoutMs: 5000 });
    expect(expectTransport(r)).toBe(`${w.url}: reply exceeds the 65536-byte limit`);
  });

  it('reports a reply that is not JSON', async () => {
    const w = await stub({ status: 200, raw: 'merged!\u001b[2J' });
    expect(expectTransport(await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 }))).toBe(
      `${w.url}: reply is not valid JSON`,
    );
  });

  it('reports a reply that fails the schema, naming the field', async () => {
    const w = await stub({ status: 200, body: { reclaimed: -1 } });
    const msg = expectTransport(await callWorker('POST', route(w.url), Reply, { timeoutMs: 2000 }));
    expect(msg.startsWith(`${w.url}: invalid reply: reclaimed: `)).toBe(true);
  });

  it('returns a transport error when the caller aborts, before or during the call', async () => {
    const w = await stub({ hang: true });
    const before = new AbortController();
    before.abort();
    expect(
      expectTransport(await callWorker('POST', route(w.url), Reply, { timeoutMs: 5000, signal: before.signal })),
    ).toBe(`${w.url}: aborted`);
    expect(w.requests).toHaveLength(0);

    const during = new AbortController();
    setTimeout(() => during.abort(), 50);
    expect(
      expectTransport(await callWorker('POST', route(w.url), Reply, { timeoutMs: 5000, signal: during.signal })),
    ).toBe(`${w.url}: aborted`);
  });

  it('never throws for an unusable URL, and keeps credentials out of messages', async () => {
    expect(expectTransport(await callWorker('GET', 'not a url', Reply, { timeoutMs: 1000 }))).toBe(
      'not a url: invalid worker URL',
    );
    expect(expectTransport(await callWorker('GET', 'data:,{"reclaimed":1}', Reply, { timeoutMs: 1000 }))).toMatch(
      /unsupported URL scheme$/,
    );
    const url = await refusedUrl();
    const withCreds = url.replace('http://', 'http://user:hunter2@');
    const msg = expectTransport(await callWorker('GET', route(withCreds), Reply, { timeoutMs: 1000 }));
    expect(msg).not.toContain('hunter2');
    expect(msg.startsWith(`${url}: `)).toBe(true);
  });
});
