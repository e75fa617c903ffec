import { afterEach, describe, expect, it } from 'vitest';
import { type StubReply, type StubWorker, refusedUrl, startStubWorker } from '../testing/stub-worker.js';
import { scanWorkers } from './scan.js';

const workers: StubWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function stub(reply: StubReply): Promise<StubWorker> {
  const w = await startStubWorker(() => reply);
  workers.push(w);
  return w;
}

const store = (name: string, pending: number, fragments: number, rows: number) => ({
  name,
  pending_wal_generations: pending,
  fragment_count: fragments,
  row_count: rows,
});

describe('scanWorkers', () => {
  it('sums pending generations and rows, takes the max of fragments and lists owners in endpoint order', async () => {
    const a = await stub({ status: 200, body: { stores: [store('shared', 5, 20, 100), store('only-a', 1, 2, 3)] } });
    const b = await stub({ status: 200, body: { stores: [store('shared', 7, 30, 50)] } });
    const r = await scanWorkers([a.url, b.url], { timeoutMs: 2000, token: 'tok' });
    expect(r.complete).toBe(true);
    expect(r.answered).toEqual([a.url, b.url]);
    expect(r.failed).toEqual([]);
    expect(r.rows.get('shared')).toEqual({
      name: 'shared',
      pending_wal_generations: 12,
      fragment_count: 30,
      row_count: 150,
      owners: [a.url, b.url],
    });
    expect(r.rows.get('only-a')).toEqual({
      name: 'only-a',
      pending_wal_generations: 1,
      fragment_count: 2,
      row_count: 3,
      owners: [a.url],
    });
    expect(r.rows.size).toBe(2);
    expect(a.requests).toEqual([
      { method: 'GET', path: '/api/v1/internal/stores', name: undefined, authorization: 'Bearer tok' },
    ]);
  });

  it('keeps the rows of the workers that answered when another fails, and is incomplete', async () => {
    const a = await stub({ status: 200, body: { stores: [store('s1', 9, 1, 1)] } });
    const down = await refusedUrl();
    const broken = await stub({ status: 500, body: { error: 'disk' } });
    const r = await scanWorkers([down, a.url, broken.url], { timeoutMs: 2000 });
    expect(r.complete).toBe(false);
    expect(r.answered).toEqual([a.url]);
    expect(r.failed).toEqual([
      { endpoint: down, error: `${down}: connection refused` },
      { endpoint: broken.url, error: `${broken.url}: HTTP 500: disk` },
    ]);
    expect(r.rows.get('s1')?.pending_wal_generations).toBe(9);
  });

  it('skips invalid rows but keeps the rest of the reply', async () => {
    const a = await stub({
      status: 200,
      body: {
        stores: [
          store('good', 2, 3, 4),
          store('../etc', 1, 1, 1),
          store('', 1, 1, 1),
          store('neg', -1, 1, 1),
          store('frac', 1, 1.5, 1),
          { name: 'str', pending_wal_generations: '3', fragment_count: 1, row_count: 1 },
          { name: 'missing' },
          null,
          'garbage',
          store('good', 100, 100, 100),
        ],
      },
    });
    const r = await scanWorkers([a.url], { timeoutMs: 2000 });
    expect(r.complete).toBe(true);
    expect([...r.rows.keys()]).toEqual(['good']);
    // A store listed twice by one worker counts once.
    expect(r.rows.get('good')).toMatchObject({ pending_wal_generations: 2, owners: [a.url] });
  });

  it.each<[string, StubReply]>([
    ['not JSON', { status: 200, raw: 'nope' }],
    ['without a stores array', { status: 200, body: { stores: {} } }],
    ['a bare array', { status: 200, body: [] }],
    ['a 404', { status: 404 }],
  ])('fails a worker whose reply is %s', async (_what, reply) => {
    const bad = await stub(reply);
    const good = await stub({ status: 200, body: { stores: [] } });
    const r = await scanWorkers([bad.url, good.url], { timeoutMs: 2000 });
    expect(r.complete).toBe(false);
    expect(r.answered).toEqual([good.url]);
    expect(r.failed[0]?.endpoint).toBe(bad.url);
    expect(r.failed[0]?.error.startsWith(`${bad.url}: `)).toBe(true);
  });

  it('asks the workers concurrently', async () => {
    const slow = await Promise.all([1, 2, 3].map(() => stub({ status: 200, body: { stores: [] }, delayMs: 300 })));
    const started = performance.now();
    const r = await scanWorkers(
      slow.map((w) => w.url),
      { timeoutMs: 5000 },
    );
    expect(r.complete).toBe(true);
    expect(performance.now() - started).toBeLessThan(850);
  });

  it('accepts a large inventory beyond the default call limit', async () => {
    const stores = Array.from({ length: 5000 }, (_, i) => store(`store-${i}`, i, i, i));
    const a = await stub({ status: 200, body: { stores } });
    const r = await scanWorkers([a.url], { timeoutMs: 5000 });
    expect(r.complete).toBe(true);
    expect(r.rows.size).toBe(5000);
  });

  it('is never complete without endpoints, so an empty configuration erases nothing', async () => {
    const r = await scanWorkers([], { timeoutMs: 1000 });
    expect(r).toMatchObject({ complete: false, answered: [], failed: [] });
    expect(r.rows.size).toBe(0);
  });
});
