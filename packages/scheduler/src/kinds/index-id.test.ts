import type { TaskOutcome } from '@maintd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type StubReply, type StubWorker, refusedUrl, startStubWorker } from '../testing/stub-worker.js';
import type { ExecutorDeps } from '../executor.js';
import { indexId } from './index-id.js';

/** One index build through the kind's plug-in, with `owners` as the store's stats row would give them. */
const runIndexId = (target: string, deps: ExecutorDeps & { readonly owners?: readonly string[] }) =>
  indexId.run(target, { ...deps, owners: () => Promise.resolve(deps.owners) });

const workers: StubWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function stub(reply: StubReply): Promise<StubWorker> {
  const w = await startStubWorker(() => reply);
  workers.push(w);
  return w;
}

function failed(o: TaskOutcome): Extract<TaskOutcome, { ok: false }> {
  if (o.ok) throw new Error(`expected a failure, got ${o.detail}`);
  return o;
}

describe('runIndexId', () => {
  it('builds the index on the first worker that owns the store and says which type', async () => {
    const a = await stub({ status: 404 });
    const b = await stub({ status: 200, body: { index_type: 'zonemap' } });
    const r = await runIndexId('store-1', { endpoints: [a.url, b.url], timeoutMs: 2000, token: 't' });
    expect(r.outcome).toEqual({ ok: true, detail: 'built zonemap index on id' });
    expect(b.requests).toEqual([
      { method: 'POST', path: '/api/v1/internal/index-id/store-1', name: 'store-1', authorization: 'Bearer t' },
    ]);
  });

  it('builds on every recorded owner and names each index type once', async () => {
    const o1 = await stub({ status: 200, body: { index_type: 'btree' } });
    const o2 = await stub({ status: 200, body: { index_type: 'btree' } });
    const r = await runIndexId('s', { endpoints: [], owners: [o1.url, o2.url], timeoutMs: 2000 });
    expect(r.outcome).toEqual({ ok: true, detail: 'built btree index on id' });
    expect(r.attempts.map((a) => a.result)).toEqual(['ok', 'ok']);
  });

  it('fails as a target error with the worker’s own message when the store is broken', async () => {
    const a = await stub({ status: 500, body: { error: 'Not found: /data/b.lance/data/0f3a.lance' } });
    const f = failed((await runIndexId('b', { endpoints: [a.url], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('target');
    expect(f.error).toContain(`${a.url}: HTTP 500: Not found: /data/b.lance/data/0f3a.lance`);
  });

  it('fails as infrastructure on an index type it does not know, or when no worker answers', async () => {
    const odd = await stub({ status: 200, body: { index_type: 'bitmap' } });
    const f = failed((await runIndexId('s', { endpoints: [odd.url], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toContain('invalid reply: index_type');
    const down = failed((await runIndexId('s', { endpoints: [await refusedUrl()], timeoutMs: 2000 })).outcome);
    expect(down.errorClass).toBe('infrastructure');
  });

  it('fails as a target error when no worker owns the store, and as infrastructure with no workers', async () => {
    const a = await stub({ status: 404 });
    expect(failed((await runIndexId('ghost', { endpoints: [a.url], timeoutMs: 2000 })).outcome).error).toMatch(
      /no worker owns store 'ghost'/,
    );
    expect(failed((await runIndexId('s', { endpoints: [], timeoutMs: 2000 })).outcome).errorClass).toBe(
      'infrastructure',
    );
  });
});
