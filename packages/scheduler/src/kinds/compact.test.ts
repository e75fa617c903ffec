import type { TaskOutcome } from '@maintd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type StubReply, type StubWorker, refusedUrl, startStubWorker } from '../testing/stub-worker.js';
import type { ExecutorDeps } from '../executor.js';
import { compact } from './compact.js';

/** One compaction through the kind's plug-in, with `owners` as the store's stats row would give them. */
const runCompact = (target: string, deps: ExecutorDeps & { readonly owners?: readonly string[] }) =>
  compact.run(target, { ...deps, owners: () => Promise.resolve(deps.owners) });

const workers: StubWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function stub(reply: StubReply): Promise<StubWorker> {
  const w = await startStubWorker(() => reply);
  workers.push(w);
  return w;
}

const compacted = (removed: number, added: number): StubReply => ({
  status: 200,
  body: { fragments_removed: removed, fragments_added: added },
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

describe('runCompact', () => {
  it('asks the first worker that does not answer 404 and no later one', async () => {
    const a = await stub({ status: 404 });
    const b = await stub(compacted(12, 2));
    const c = await stub(compacted(1, 1));
    const r = await runCompact('store-1', { endpoints: [a.url, b.url, c.url], timeoutMs: 2000, token: 't' });
    expect(done(r.outcome).detail).toBe('removed 12 / added 2 fragments');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toEqual([
      { method: 'POST', path: '/api/v1/internal/compact/store-1', name: 'store-1', authorization: 'Bearer t' },
    ]);
    expect(c.requests).toHaveLength(0);
    expect(r.attempts.map((x) => x.result)).toEqual(['not_found', 'ok']);
  });

  it('compacts on the recorded owners, summing their fragment counts, instead of the configured list', async () => {
    const other = await stub(compacted(99, 99));
    const o1 = await stub(compacted(10, 1));
    const o2 = await stub(compacted(6, 2));
    const r = await runCompact('s', { endpoints: [other.url], owners: [o1.url, o2.url], timeoutMs: 2000 });
    expect(done(r.outcome).detail).toBe('removed 16 / added 3 fragments');
    expect(other.requests).toHaveLength(0);
    expect(o1.requests).toHaveLength(1);
    expect(o2.requests).toHaveLength(1);
  });

  it('falls back to the configured workers when the owners list is empty', async () => {
    const a = await stub(compacted(3, 1));
    const r = await runCompact('s', { endpoints: [a.url], owners: [], timeoutMs: 2000 });
    expect(done(r.outcome).detail).toBe('removed 3 / added 1 fragments');
  });

  it('fails as a target error when a worker answers with an error', async () => {
    const a = await stub({ status: 500, body: { error: 'Not found: /srv/data/f1.lance' } });
    const b = await stub(compacted(1, 1));
    const r = await runCompact('broken', { endpoints: [a.url, b.url], timeoutMs: 2000 });
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('target');
    expect(f.error).toContain(`${a.url}: HTTP 500: Not found: /srv/data/f1.lance`);
    // The worker that errored owns the store; others would only answer 404.
    expect(b.requests).toHaveLength(0);
  });

  it('fails as a target error when one owner errors even though another compacted', async () => {
    const o1 = await stub(compacted(4, 1));
    const o2 = await stub({ status: 500, body: { error: 'manifest names a missing fragment' } });
    const f = failed((await runCompact('s', { endpoints: [], owners: [o1.url, o2.url], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('target');
    expect(f.error).toContain('manifest names a missing fragment');
    expect(f.error).toContain('removed 4 / added 1 fragments on 1/2 workers');
  });

  it('fails as infrastructure when every worker refuses connections', async () => {
    const urls = [await refusedUrl(), await refusedUrl()];
    const r = await runCompact('s', { endpoints: urls, timeoutMs: 2000 });
    const f = failed(r.outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toContain(`${urls[0]}: connection refused`);
    expect(r.attempts.map((x) => x.result)).toEqual(['transport_error', 'transport_error']);
  });

  it('passes over an overloaded worker (503) when looking for the owner, and fails as infrastructure if that was all', async () => {
    const busy = await stub({ status: 503, body: { error: 'overloaded; try again' } });
    const owner = await stub(compacted(2, 0));
    const r = await runCompact('s', { endpoints: [busy.url, owner.url], timeoutMs: 2000 });
    expect(done(r.outcome).detail).toBe(
      `removed 2 / added 0 fragments; errors: ${busy.url}: HTTP 503: overloaded; try again`,
    );
    const alone = await runCompact('s', { endpoints: [busy.url], timeoutMs: 2000 });
    expect(failed(alone.outcome).errorClass).toBe('infrastructure');
    // A recorded owner that cannot serve now fails the task, but not the store.
    const owned = await runCompact('s', { endpoints: [], owners: [busy.url, owner.url], timeoutMs: 2000 });
    expect(failed(owned.outcome).errorClass).toBe('infrastructure');
  });

  it('passes over an unreachable worker when looking for the owner, noting it', async () => {
    const down = await refusedUrl();
    const owner = await stub(compacted(5, 1));
    const r = await runCompact('s', { endpoints: [down, owner.url], timeoutMs: 2000 });
    expect(done(r.outcome).detail).toBe(`removed 5 / added 1 fragments; errors: ${down}: connection refused`);
  });

  it('fails as a target error when no worker owns the store', async () => {
    const a = await stub({ status: 404 });
    const b = await stub({ status: 404 });
    const f = failed((await runCompact('ghost', { endpoints: [a.url, b.url], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('target');
    expect(f.error).toMatch(/no worker owns store 'ghost'/);
  });

  it('fails as infrastructure without worker endpoints or owners', async () => {
    const f = failed((await runCompact('s', { endpoints: [], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toContain('worker endpoints');
  });

  it('rejects a reply with invalid fragment counts', async () => {
    const a = await stub({ status: 200, body: { fragments_removed: 2.5, fragments_added: -1 } });
    const f = failed((await runCompact('s', { endpoints: [a.url], timeoutMs: 2000 })).outcome);
    expect(f.errorClass).toBe('infrastructure');
    expect(f.error).toContain('invalid reply: fragments_removed: ');
  });

  it('cuts off a hung owner at the timeout', async () => {
    const hung = await stub({ hang: true });
    const started = performance.now();
    const r = await runCompact('s', { endpoints: [], owners: [hung.url], timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(failed(r.outcome).error).toContain(`${hung.url}: timed out after 300 ms`);
  });
});
