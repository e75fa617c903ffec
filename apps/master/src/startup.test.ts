import {
  FakeClock,
  MaintdError,
  StoreAccessDeniedError,
  StoreFullError,
  StoreUnavailableError,
  seededRandom,
} from '@maintd/core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createStartingApp } from './starting.js';
import { STARTUP_BACKOFF, type OpenWithRetryOptions, openWithRetry } from './startup.js';

const ENDPOINTS = ['http://e1:2379', 'http://e2:2379'];

/** A logger that keeps its lines as objects. */
function recordingLogger(): { readonly logger: pino.Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

function options<T>(
  open: () => Promise<T>,
  extra: Partial<OpenWithRetryOptions<T>> = {},
): OpenWithRetryOptions<T> & { readonly clock: FakeClock; readonly lines: Record<string, unknown>[] } {
  const { logger, lines } = recordingLogger();
  return {
    open,
    endpoints: ENDPOINTS,
    clock: new FakeClock(),
    random: seededRandom(1),
    backoff: STARTUP_BACKOFF,
    logger,
    signal: new AbortController().signal,
    lines,
    ...extra,
  } as OpenWithRetryOptions<T> & { readonly clock: FakeClock; readonly lines: Record<string, unknown>[] };
}

/** Fails `n` times with `err`, then opens. */
function failing(n: number, err: () => Error): { readonly open: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    open: () => (++calls <= n ? Promise.reject(err()) : Promise.resolve('store')),
    calls: () => calls,
  };
}

const unavailable = (): Error =>
  new StoreUnavailableError('etcd unavailable: No connection established: connect ECONNREFUSED 10.0.0.1:2379');

describe('openWithRetry', () => {
  it('retries an unreachable etcd with capped, jittered waits and one warning per attempt', async () => {
    const f = failing(6, unavailable);
    const o = options(f.open);
    const outcome = openWithRetry(o);
    while (f.calls() <= 6) await o.clock.advance(1000);
    expect(await outcome).toEqual({ kind: 'open', value: 'store', attempts: 7 });
    expect(o.lines).toHaveLength(6);
    const waits = o.lines.map((l) => l.retry_in_ms as number);
    waits.forEach((w, i) => {
      const step = Math.min(STARTUP_BACKOFF.initialMs * 2 ** i, STARTUP_BACKOFF.maxMs);
      expect(w).toBeGreaterThanOrEqual(step / 2);
      expect(w).toBeLessThan(step);
    });
    o.lines.forEach((l, i) => {
      expect(l).toMatchObject({ level: 40, attempt: i + 1, endpoints: ENDPOINTS });
      expect(l.msg).toBe(
        `etcd not reachable at ${ENDPOINTS.join(', ')}: No connection established: connect ECONNREFUSED 10.0.0.1:2379; ` +
          `retrying in ${((l.retry_in_ms as number) / 1000).toFixed(1)} s`,
      );
    });
    expect(o.lines[0]!.msg).toMatch(
      /^etcd not reachable at http:\/\/e1:2379, http:\/\/e2:2379: No connection established: connect ECONNREFUSED 10\.0\.0\.1:2379; retrying in \d\.\d s$/,
    );
  });

  it('retries an etcd out of space, saying that it refuses writes rather than that it is unreachable', async () => {
    const f = failing(
      1,
      () => new StoreFullError('etcd is out of space (NOSPACE alarm: …) and refuses writes until …'),
    );
    const o = options(f.open);
    const outcome = openWithRetry(o);
    await o.clock.advance(STARTUP_BACKOFF.initialMs);
    expect(await outcome).toMatchObject({ kind: 'open', attempts: 2 });
    expect(o.lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^etcd refusing writes at http:\/\/e1:2379, http:\/\/e2:2379: etcd is out of space \(NOSPACE alarm: …\) and refuses writes until …; retrying in \d\.\d s$/,
      ),
    ]);
  });

  it('gives up at once on refused credentials, a TLS mismatch, or any other failure', async () => {
    const denied = new StoreAccessDeniedError('etcd refused the credentials: authentication failed');
    expect(await openWithRetry(options(() => Promise.reject(denied)))).toMatchObject({
      kind: 'misconfigured',
      message: denied.message,
    });
    const tls = options(() => Promise.reject(unavailable()), {
      explain: () => Promise.resolve('the certificate of etcd at https://e1:2379 is not trusted by ETCD_CA_CERT'),
    });
    expect(await openWithRetry(tls)).toMatchObject({ kind: 'misconfigured', message: /not trusted by ETCD_CA_CERT/ });
    expect(tls.lines).toEqual([]);
    const corrupt = new MaintdError("stored value at '/maintd/tasks/x' is not a valid record");
    expect(await openWithRetry(options(() => Promise.reject(corrupt)))).toMatchObject({ kind: 'failed' });
  });

  it('keeps retrying when the TLS diagnosis finds nothing wrong', async () => {
    const f = failing(1, unavailable);
    const o = options(f.open, { explain: () => Promise.resolve(undefined) });
    const outcome = openWithRetry(o);
    await o.clock.advance(STARTUP_BACKOFF.initialMs);
    expect(await outcome).toMatchObject({ kind: 'open', attempts: 2 });
  });

  it('stops waiting as soon as it is told to', async () => {
    const stop = new AbortController();
    const o = options(() => Promise.reject(unavailable()), { signal: stop.signal });
    const outcome = openWithRetry(o);
    await o.clock.advance(0);
    expect(o.clock.pendingSleepers).toBe(1);
    stop.abort();
    expect(await outcome).toEqual({ kind: 'stopped' });
  });
});

describe('the starting app', () => {
  it('is alive and not ready, and answers every other call with 503 and why', async () => {
    const app = createStartingApp({ metrics: () => Promise.resolve({ text: 'up 1\n', contentType: 'text/plain' }) });
    const health = await app.request('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'starting' });
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, store: 'unavailable' });
    expect(await (await app.request('/metrics')).text()).toBe('up 1\n');
    for (const [method, path] of [
      ['GET', '/api/v1/tasks'],
      ['POST', '/api/v1/tasks'],
      ['DELETE', '/api/v1/scheduler/cooldowns'],
      ['GET', '/'],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'starting: etcd not reachable yet' });
    }
  });
});
