import { type TaskOutcome, sanitizeError } from '@maintd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type StubReply, type StubWorker, refusedUrl, startStubWorker } from '../testing/stub-worker.js';
import type { ExecutorDeps, WorkerAttempt } from '../executor.js';
import { mergeWal } from './merge-wal.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const workers: StubWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function stub(reply: StubReply): Promise<StubWorker> {
  const w = await startStubWorker(() => reply);
  workers.push(w);
  return w;
}

/**
 * One merge through the kind's plug-in: what it reclaimed, from its facts, and its attempts,
 * which are the merge's own (each with the generations its worker folded).
 */
async function runMergeWal(target: string, deps: ExecutorDeps) {
  const r = await mergeWal.run(target, { ...deps, owners: () => Promise.resolve(undefined) });
  const attempts = r.attempts as readonly (WorkerAttempt & { readonly reclaimed: number })[];
  return { outcome: r.outcome, reclaimed: r.facts?.reclaimed, attempts };
}

const deps = (endpoints: readonly string[], extra: { timeoutMs?: number; token?: string } = {}) => ({
  endpoints,
  timeoutMs: extra.timeoutMs ?? 2000,
  token: extra.token,
});

function failed(o: TaskOutcome): Extract<TaskOutcome, { ok: false }> {
  expect(o.ok).toBe(false);
  if (o.ok) throw new Error('expected a failure');
  return o;
}

function done(o: TaskOutcome): Extract<TaskOutcome, { ok: true }> {
  expect(o.ok).toBe(true);
  if (!o.ok) throw new Error('expected a success');
  return o;
}

describe('runMergeWal', () => {
  it('sums the generations every worker reclaimed', async () => {
    const a = await stub({ status: 200, body: { reclaimed: 3 } });
    const b = await stub({ status: 200, body: { reclaimed: 2 } });
    const r = await runMergeWal('store-1', deps([a.url, b.url]));
    expect(done(r.outcome).detail).toBe('merged 5 generations across 2/2 workers');
    expect(r.reclaimed).toBe(5);
    expect(r.attempts.map((x) => [x.endpoint, x.result, x.reclaimed])).toEqual([
      [a.url, 'ok', 3],
      [b.url, 'ok', 2],
    ]);
    expect(a.requests).toEqual([
      { method: 'POST', path: '/api/v1/internal/merge-wal/store-1', name: 'store-1', authorization: undefined },
    ]);
  });

  it('counts a 404 as zero generations from a worker that answered', async () => {
    const a = await stub({ status: 200, body: { reclaimed: 4 } });
    const b = await stub({ status: 404 });
    const r = await runMergeWal('s', deps([a.url, b.url]));
    expect(done(r.outcome).detail).toBe('merged 4 generations across 2/2 workers');
    expect(r.attempts.map((x) => x.result)).toEqual(['ok', 'not_found']);
    expect(r.attempts[1]?.reclaimed).toBe(0);
  });

  it('is done with nothing merged when every worker answered without error', async () => {
    const a = await stub({ status: 404 });
    const b = await stub({ status: 200, body: { reclaimed: 0 } });
    const r = await runMergeWal('s', deps([a.url, b.url]));
    expect(done(r.outcome).detail).toBe('merged 0 generations across 2/2 workers');
  });

  it('fails as a target error when a worker errors and nothing was merged', async () => {
    const a = await stub({ status: 200, body: { reclaimed: 0 } });
    const b = await stub({ status: 500, body: { error: 'Not found: /srv/data/abc.lance' } });
    const r = await runMergeWal('broken', deps([a.url, b.url]));
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('target');
    expect(f.error).toBe(
      `${b.url}: HTTP 500: Not found: /srv/data/abc.lance (merged 0 generations across 1/2 workers)`,
    );
  });

  it('is done when one worker errors but another made progress, noting the error', async () => {
    const a = await stub({ status: 503, body: { error: 'busy' } });
    const b = await stub({ status: 200, body: { reclaimed: 6 } });
    const r = await runMergeWal('s', deps([a.url, b.url]));
    expect(done(r.outcome).detail).toBe(`merged 6 generations across 1/2 workers; errors: ${a.url}: HTTP 503: busy`);
    expect(r.attempts.map((x) => x.result)).toEqual(['http_error', 'ok']);
  });

  it('fails as infrastructure when every worker refuses connections', async () => {
    const urls = [await refusedUrl(), await refusedUrl()];
    const r = await runMergeWal('s', deps(urls));
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toBe(
      `${urls[0]}: connection refused (merged 0 generations across 0/2 workers; 1 more error); ${urls[1]}: connection refused`,
    );
    expect(r.attempts.map((x) => x.result)).toEqual(['transport_error', 'transport_error']);
  });

  it('fails as a target error when one worker errors and the other is unreachable', async () => {
    const a = await stub({ status: 500, body: { error: 'boom' } });
    const r = await runMergeWal('s', deps([a.url, await refusedUrl()]));
    expect(failed(r.outcome).errorClass).toBe('target');
  });

  it.each([401, 403, 408, 429, 502, 503, 504])(
    'fails as infrastructure when workers answer only %i, which says nothing about the store',
    async (status) => {
      const a = await stub({ status, body: { error: 'overloaded; try again' } });
      const r = await runMergeWal('healthy', deps([a.url, await refusedUrl()]));
      const f = failed(r.outcome);
      expect(f.errorClass).toBe('infrastructure');
      expect(f.error).toMatch(new RegExp(`^${a.url}: HTTP ${status}: overloaded; try again \\(merged 0`));
      expect(r.attempts.map((x) => x.result)).toEqual(['http_error', 'transport_error']);
    },
  );

  it('fails as a target error when one worker is overloaded and another answers with an error about the store', async () => {
    const a = await stub({ status: 503, body: { error: 'overloaded; try again' } });
    const b = await stub({ status: 500, body: { error: 'Not found: /srv/data/abc.lance' } });
    expect(failed((await runMergeWal('broken', deps([a.url, b.url]))).outcome).errorClass).toBe('target');
  });

  it('fails as infrastructure without worker endpoints', async () => {
    const r = await runMergeWal('s', deps([]));
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toContain('worker endpoints');
    expect(r.attempts).toEqual([]);
  });

  it('never has two worker requests in flight at once', async () => {
    const arrivals: number[] = [];
    const slow = await Promise.all(
      [1, 2, 3].map(async () => {
        const w = await startStubWorker(() => {
          arrivals.push(performance.now());
          return { status: 200, body: { reclaimed: 1 }, delayMs: 100 };
        });
        workers.push(w);
        return w;
      }),
    );
    const r = await runMergeWal('s', deps(slow.map((w) => w.url)));
    expect(done(r.outcome).detail).toBe('merged 3 generations across 3/3 workers');
    for (const w of slow) expect(w.maxInFlight).toBe(1);
    // Each stub counts only its own requests; across stubs, serial means each request arrives
    // only after the previous (100 ms late) reply.
    expect(arrivals).toHaveLength(3);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(90);
  });

  it('cuts off a worker that never answers at the timeout and moves on', async () => {
    const hung = await stub({ hang: true });
    const next = await stub({ status: 200, body: { reclaimed: 2 } });
    const started = performance.now();
    const r = await runMergeWal('s', deps([hung.url, next.url], { timeoutMs: 300 }));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(r.attempts.map((x) => x.result)).toEqual(['transport_error', 'ok']);
    expect(done(r.outcome).detail).toBe(
      `merged 2 generations across 1/2 workers; errors: ${hung.url}: timed out after 300 ms`,
    );
    const alone = await runMergeWal('s', deps([hung.url], { timeoutMs: 300 }));
    expect(failed(alone.outcome)).toMatchObject({ errorClass: 'infrastructure' });
  });

  it.each<[string, StubReply, RegExp]>([
    ['a body that is not JSON', { status: 200, raw: 'OK\u001b[2J\u0000' }, /reply is not valid JSON/],
    ['a negative count', { status: 200, body: { reclaimed: -3 } }, /invalid reply: reclaimed: /],
    ['a fractional count', { status: 200, body: { reclaimed: 1.5 } }, /invalid reply: reclaimed: /],
    ['a count given as a string', { status: 200, body: { reclaimed: '7' } }, /invalid reply: reclaimed: /],
    ['a missing count', { status: 200, body: {} }, /invalid reply: reclaimed: /],
    ['a 10 MB body', { status: 200, raw: Buffer.alloc(10 * 1024 * 1024, 0x31) }, /exceeds the 65536-byte limit/],
  ])('fails on %s, with a bounded and clean error', async (_what, reply, pattern) => {
    const w = await stub(reply);
    const r = await runMergeWal('s', deps([w.url]));
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toMatch(pattern);
    expect(f.error.startsWith(`${w.url}: `)).toBe(true);
    expect(f.error).toContain(' (merged 0 generations across 0/1 workers)');
    expect(f.error.length).toBeLessThanOrEqual(2000);
    expect(f.error).not.toMatch(CONTROL);
  });

  it('leads with the cause and keeps the summary within a cooldown’s 512 characters, however long the worker’s error', async () => {
    const w = await stub({ status: 500, body: { error: `Not found: /data/${'f'.repeat(1000)}.lance` } });
    const f = failed((await runMergeWal('s', deps([w.url]))).outcome);
    expect(f.error.startsWith(`${w.url}: HTTP 500: Not found: /data/fff`)).toBe(true);
    expect(sanitizeError(f.error)).toContain('(merged 0 generations across 0/1 workers)');
  });

  it('sends the worker token as a bearer header', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 1 } });
    await runMergeWal('s', deps([w.url], { token: 'tok-123' }));
    expect(w.requests[0]?.authorization).toBe('Bearer tok-123');
  });

  it('strips terminal escape sequences from worker error text', async () => {
    const w = await stub({ status: 500, body: { error: '\u001b[31mdisk on fire\u001b[0m\r\n\u009b2J' } });
    const f = failed((await runMergeWal('s', deps([w.url]))).outcome);
    expect(f.error).toBe(`${w.url}: HTTP 500: disk on fire (merged 0 generations across 0/1 workers)`);
  });

  it('bounds the error of a large fleet that fails everywhere', async () => {
    const urls = await Promise.all(
      Array.from({ length: 12 }, () => stub({ status: 500, body: { error: 'e'.repeat(600) } })),
    );
    const f = failed((await runMergeWal('s', deps(urls.map((w) => w.url)))).outcome);
    expect(f.error.length).toBe(2000);
    expect(f.error.startsWith(`${urls[0]!.url}: HTTP 500: eee`)).toBe(true);
    expect(f.error).toContain('e (merged 0 generations across 0/12 workers; 11 more errors); ');
  });

  it('percent-encodes the store name and trims trailing slashes of endpoints', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 1 } });
    await runMergeWal('a.b-c_d', deps([`${w.url}/`]));
    expect(w.requests[0]?.path).toBe('/api/v1/internal/merge-wal/a.b-c_d');
  });

  it('refuses a name that is not a store name without calling any worker', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 1 } });
    const r = await runMergeWal('..', deps([w.url]));
    expect(failed(r.outcome).errorClass).toBe('target');
    expect(w.requests).toHaveLength(0);
  });

  it('stops calling workers once aborted', async () => {
    const ctl = new AbortController();
    const a = await startStubWorker(() => {
      ctl.abort();
      return { status: 200, body: { reclaimed: 2 } };
    });
    workers.push(a);
    const b = await stub({ status: 200, body: { reclaimed: 1 } });
    const r = await runMergeWal('s', { ...deps([a.url, b.url]), signal: ctl.signal });
    expect(b.requests).toHaveLength(0);
    expect(r.attempts.map((x) => x.result)).toEqual(['transport_error']);
    expect(failed(r.outcome).error).toContain('aborted');
  });

  it('measures each call with the injected clock', async () => {
    const w = await stub({ status: 200, body: { reclaimed: 1 } });
    let t = 0;
    const r = await runMergeWal('s', { ...deps([w.url]), now: () => (t += 1500) });
    expect(r.attempts[0]?.seconds).toBe(1.5);
  });
});
