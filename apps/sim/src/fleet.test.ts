import { FakeClock } from '@maintd/core';
import { KIND_NAMES, kindSpec } from '@maintd/scheduler';
import { describe, expect, it } from 'vitest';
import { Fleet } from './fleet.js';
import { createSimWorker, createWorkerApp, inProcessEndpoints, inProcessFetch } from './worker-app.js';

const fleetOf = (clock: FakeClock, broken = 2): Fleet =>
  new Fleet({ workers: 3, stores: 20, broken, seed: 7, ratePerMinute: [1, 2] }, clock);

describe('simulated fleet', () => {
  it('grows each store’s WAL generations with time at its own rate', async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock);
    const healthy = fleet.stores.find((s) => !s.broken)!;
    const before = fleet.pendingOf(healthy.name);
    await clock.advance(10 * 60_000);
    const after = fleet.pendingOf(healthy.name);
    expect(after - before).toBeGreaterThanOrEqual(Math.floor(healthy.ratePerMinute * 10) - healthy.owners.length);
    expect(after - before).toBeLessThanOrEqual(Math.ceil(healthy.ratePerMinute * 10) + healthy.owners.length);
  });

  it('reclaims a worker’s shard on merge, answers 404 for stores it does not hold, and compacts', async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock);
    await clock.advance(30 * 60_000);
    const s = fleet.stores.find((x) => !x.broken)!;
    const owner = s.owners[0]!;
    const stranger = [0, 1, 2].find((w) => !s.owners.includes(w))!;
    fleet.pendingOf(s.name); // brings the growth up to now
    const shard = Math.floor(s.pending[0]!);
    const reply = fleet.merge(owner, s.name);
    expect(reply).toMatchObject({ status: 200, body: { reclaimed: shard } });
    expect(fleet.merge(owner, s.name).body).toEqual({ reclaimed: 0 });
    expect(fleet.merge(stranger, s.name).status).toBe(404);
    const compact = fleet.compact(owner, s.name);
    expect(compact).toMatchObject({ status: 200, body: { fragments_added: 1 } });
    expect(s.fragments).toBe(1);
  });

  it('builds the id index on a store’s owners, answers 404 elsewhere, and fails it on a broken store', () => {
    const fleet = fleetOf(new FakeClock());
    const s = fleet.stores.find((x) => !x.broken)!;
    const stranger = [0, 1, 2].find((w) => !s.owners.includes(w))!;
    expect(fleet.indexId(s.owners[0]!, s.name)).toMatchObject({ status: 200, body: { index_type: 'btree' } });
    expect(fleet.indexId(stranger, s.name).status).toBe(404);
    const b = fleet.stores.find((x) => x.broken)!;
    const failed = fleet.indexId(b.owners[0]!, b.name);
    expect(failed.status).toBe(500);
    expect((failed.body as { error: string }).error).toMatch(/^Not found: .*\/data\/.*\.lance$/);
  });

  it('fails every merge and compaction of a broken store with a missing-fragment error, and never shrinks it', async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock);
    const b = fleet.stores.find((x) => x.broken)!;
    expect(fleet.pendingOf(b.name)).toBe(7985);
    for (const w of b.owners) {
      const m = fleet.merge(w, b.name);
      expect(m.status).toBe(500);
      expect((m.body as { error: string }).error).toMatch(/^Not found: .*\/data\/.*\.lance$/);
      expect(fleet.compact(w, b.name).status).toBe(500);
    }
    await clock.advance(60_000);
    expect(fleet.pendingOf(b.name)).toBeGreaterThan(7985);
  });

  it('serves the worker protocol in process, with latency on the clock, and can hang', async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock, 0);
    const workers = [0, 1, 2].map((i) => createSimWorker(fleet, i, clock, i === 2 ? { hang: true } : {}));
    const fetch = inProcessFetch(workers);
    const [w0, , w2] = inProcessEndpoints(3);
    const stores = fetch(`${w0}/api/v1/internal/stores`);
    await clock.advance(10);
    const body = (await (await stores).json()) as { stores: { name: string }[] };
    expect(body.stores.length).toBeGreaterThan(0);
    let settled = false;
    void fetch(`${w2}/api/v1/internal/merge-wal/${fleet.stores[0]!.name}`, { method: 'POST' }).then(
      () => (settled = true),
    );
    await clock.advance(3_600_000);
    expect(settled).toBe(false);
    await expect(fetch('http://elsewhere/x')).rejects.toThrow(/no simulated worker/);
  });

  it('queues merges behind a worker’s bound; a call the master times out while queued is dropped', async () => {
    const clock = new FakeClock();
    const fleet = new Fleet({ workers: 1, stores: 4, broken: 1, seed: 7, brokenLatencyMs: 45_000 }, clock);
    const abandoned: string[] = [];
    const busy: [string, number][] = [];
    const worker = createSimWorker(fleet, 0, clock, {
      mergeConcurrency: 1,
      mergeObserver: {
        onRun: (r) => busy.push([r.store, r.waitedMs]),
        onAbandoned: (_w, store) => abandoned.push(store),
      },
    });
    const fetch = inProcessFetch([worker]);
    const [w0] = inProcessEndpoints(1);
    const [healthy, other] = fleet.stores.filter((s) => !s.broken);
    const merge = (name: string, signal?: AbortSignal): Promise<Response> =>
      fetch(`${w0}/api/v1/internal/merge-wal/${name}`, { method: 'POST', ...(signal ? { signal } : {}) });
    const failing = merge(fleet.brokenNames[0]!);
    const timeout = new AbortController();
    const dropped = merge(healthy!.name, timeout.signal);
    const waiting = merge(other!.name);
    const rejected = expect(dropped).rejects.toThrow(/abort/i);
    await clock.advance(30_000);
    timeout.abort();
    await rejected;
    await clock.advance(15_000);
    expect((await failing).status).toBe(500);
    await clock.advance(60_000);
    expect((await waiting).status).toBe(200);
    expect(abandoned).toEqual([healthy!.name]);
    expect(busy).toEqual([
      [fleet.brokenNames[0]!, 0],
      [other!.name, 45_000],
    ]);
  });

  it('serves the same protocol over HTTP as a Hono app', async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock, 0);
    const app = createWorkerApp(fleet, 0, clock);
    expect(await (await app.request('/healthz')).json()).toEqual({ status: 'ok', worker: 0 });
    const stranger = fleet.stores.find((s) => !s.owners.includes(0))!;
    const res = await app.request(`/api/v1/internal/merge-wal/${stranger.name}`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect((await app.request('/nowhere')).status).toBe(404);
  });

  it("serves a per-store route for every kind of the scheduler's registry, and no other", async () => {
    const clock = new FakeClock();
    const fleet = fleetOf(clock, 0);
    const worker = createSimWorker(fleet, 0, clock);
    const owned = fleet.stores.find((s) => s.owners.includes(0))!;
    const routes = KIND_NAMES.map((k) => kindSpec(k).route);
    expect(new Set(routes).size).toBe(KIND_NAMES.length);
    for (const route of routes) {
      const answering = worker.handle('POST', `/api/v1/internal/${route}/${owned.name}`);
      await clock.advance(10 * 60_000); // the call's latency, on the worker's clock
      const answer = await answering;
      expect([route, answer.status]).toEqual([route, 200]);
    }
    expect((await worker.handle('POST', `/api/v1/internal/repair/${owned.name}`)).status).toBe(404);
  });
});
