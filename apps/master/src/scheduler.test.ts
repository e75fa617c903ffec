import type { TaskCooldown, TaskRecord } from '@maintd/core';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type FleetStub, startFleetStub } from '@maintd/scheduler/testing';
import { FakeClock, type TestMaster, eventually, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');

/** Waits until every given master is idle and nothing is queued. */
async function settled(...masters: TestMaster[]): Promise<void> {
  await eventually(async () => {
    // The queue first: a claim that commits while its depth is read is then still in flight, so
    // its master is not idle yet (idle read first, it could be, with the claim landing after).
    expect(await masters[0]!.store.queueDepth()).toBe(0);
    for (const m of masters) expect(m.scheduler.idle).toBe(true);
  });
}

describe('Scheduler', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });
  const track = <T extends { close(): Promise<void> }>(x: T): T => {
    cleanup.push(() => x.close());
    return x;
  };

  it('scans workers into stats, sweeps only over-threshold stores, and dedupes a second sweep', async () => {
    const fleet = track(await startFleetStub({ hot: { pending: 20 }, warm: { pending: 8 }, cold: { pending: 7 } }));
    const m = track(await openMaster(endpoints, new FakeClock(), { workers: { endpoints: [fleet.url] } }));
    const scan = await m.scheduler.scanOnce();
    expect(scan).toEqual({ stores: 3, written: 3, deleted: 0, complete: true });
    expect((await m.scheduler.scanOnce()).written).toBe(0);
    expect((await m.store.getStats('hot'))?.owners).toEqual([fleet.url]);

    const first = await m.scheduler.sweepOnce('merge_wal');
    expect(first).toMatchObject({ candidates: 2, enqueued: 2 });
    const queued = (await m.store.listTasks({ state: 'queued' })).tasks.map((t) => t.target).sort();
    expect(queued).toEqual(['hot', 'warm']);
    const second = await m.scheduler.sweepOnce('merge_wal');
    expect(second).toMatchObject({ enqueued: 0, skipped: { active: 2, cooldown: 0 } });
    expect(await m.store.queueDepth()).toBe(2);
    expect(await (await m.request('/metrics')).text()).toContain(
      'master_sweep_skipped_total{kind="merge_wal",reason="active"} 2',
    );
  });

  it('runs a fresh fleet’s first sweep right after its first stats scan rather than a sweep interval later', async () => {
    const fleet = track(await startFleetStub({ hot: { pending: 20 }, cold: { pending: 1 } }));
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const m = track(
      await openMaster(endpoints, clock, {
        workers: { endpoints: [fleet.url] },
        intervals: { statsScanSecs: 60 },
        sweeps: { kinds: { merge_wal: { intervalSecs: 600 } } },
      }),
    );
    m.scheduler.start();
    await eventually(() => expect(m.logs.some((l) => l.msg === 'stats scan done')).toBe(true));
    // Sweeps check every 5 s; the slot of the first 600 s is still unspent.
    await clock.advance(5_000);
    await eventually(() => expect(fleet.calls('merge-wal', 'hot')).toBe(1));
    expect(fleet.calls('merge-wal', 'cold')).toBe(0);
    expect(m.logs.filter((l) => String(l.msg).startsWith('merge_wal sweep queued'))).toHaveLength(1);
  });

  it('never erases stats on a partial scan, and drops vanished stores on a complete one', async () => {
    const a = track(await startFleetStub({ s1: { pending: 1 }, s2: { pending: 1 } }));
    const b = track(await startFleetStub({ s3: { pending: 1 } }));
    const m = track(await openMaster(endpoints, new FakeClock(), { workers: { endpoints: [a.url, b.url] } }));
    await m.scheduler.scanOnce();
    a.stores.delete('s2');
    await b.close();
    const partial = await m.scheduler.scanOnce();
    expect(partial).toMatchObject({ complete: false, deleted: 0 });
    expect((await m.store.listStats()).map((r) => r.name)).toEqual(['s1', 's2', 's3']);
    const workers = (await (await m.request('/api/v1/workers')).json()) as {
      workers: { endpoint: string; ok: boolean }[];
    };
    expect(workers.workers.map((w) => [w.endpoint, w.ok])).toEqual([
      [a.url, true],
      [b.url, false],
    ]);
    // The scan ran on one master; another, which never scanned, answers the same.
    const peer = track(
      await openMaster(endpoints, new FakeClock(), {
        etcd: { prefix: m.config.etcd.prefix },
        workers: { endpoints: [a.url, b.url] },
      }),
    );
    expect(await (await peer.request('/api/v1/workers')).json()).toEqual(workers);
  });

  it('forgets the scan of a worker dropped from the configuration once no master has scanned it for three intervals', async () => {
    const fleet = track(await startFleetStub({ s1: { pending: 1 } }));
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const m = track(
      await openMaster(endpoints, clock, { workers: { endpoints: [fleet.url] }, intervals: { statsScanSecs: 60 } }),
    );
    const scanned = (endpoint: string, agoSecs: number) => ({
      endpoint,
      ok: true,
      error: null,
      last_scan_at: clock.now() - agoSecs * 1000,
      stores: 1,
    });
    // Dropped everywhere four minutes ago; still configured on a peer that scanned it a minute ago.
    await m.store.putWorkerScans([scanned('http://dropped:7000', 240), scanned('http://peer-only:7000', 60)]);
    await m.scheduler.scanOnce();
    expect((await m.store.listWorkerScans()).map((w) => w.endpoint).sort()).toEqual(
      ['http://peer-only:7000', fleet.url].sort(),
    );
    expect(m.logs.find((l) => String(l.msg).startsWith('forgot the scans'))).toMatchObject({
      workers: ['http://dropped:7000'],
    });
  });

  it('cools a failing store down, skips it in sweeps, still runs manual requests, and clears on success', async () => {
    const fleet = track(await startFleetStub({ hot: { pending: 20 }, broken: { pending: 7985, broken: true } }));
    const clock = new FakeClock();
    const m = track(
      await openMaster(endpoints, clock, {
        workers: { endpoints: [fleet.url] },
        cooldown: { afterFailures: 2, baseSecs: 3600, maxSecs: 21600 },
      }),
    );
    m.events.start();
    const seen: TaskCooldown[] = [];
    const sse = await m.request('/api/v1/events');
    const reader: ReadableStreamDefaultReader<Uint8Array> = sse.body!.getReader();
    void (async () => {
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += new TextDecoder().decode(value);
        for (const frame of buf.split('\n\n').slice(0, -1)) {
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (/^event: cooldown$/m.test(frame) && data) {
            const e = JSON.parse(data) as { cooldown: TaskCooldown | null };
            if (e.cooldown) seen.push(e.cooldown);
          }
        }
        buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
      }
    })();

    m.scheduler.start();
    await m.scheduler.scanOnce();
    for (let round = 1; round <= 2; round++) {
      expect((await m.scheduler.sweepOnce('merge_wal')).enqueued).toBeGreaterThanOrEqual(1);
      await settled(m);
      fleet.stores.get('hot')!.pending = 20;
    }
    const brokenTasks = (await m.store.listTasks({ target: 'broken' })).tasks;
    expect(brokenTasks.map((t) => [t.state, t.error_class])).toEqual([
      ['failed', 'target'],
      ['failed', 'target'],
    ]);
    // The cause first: the worker's own error, then the summary.
    expect(brokenTasks[0]!.error).toMatch(
      /^http:\/\/.*: HTTP 500: Not found.* \(merged 0 generations across 0\/1 workers\)$/,
    );

    // The list is served from the event hub's index, which the cooldown watch keeps current: it
    // may trail the finish that opened the window by an event.
    await eventually(async () => {
      const cooling = (await (await m.request('/api/v1/scheduler/cooldowns')).json()) as TaskCooldown[];
      expect(cooling).toHaveLength(1);
      expect(cooling[0]).toMatchObject({
        kind: 'merge_wal',
        target: 'broken',
        failures: 2,
        last_error_class: 'target',
      });
      expect(cooling[0]!.until_ms).toBeGreaterThan(clock.now() + 0.9 * 3600_000 - 1);
    });
    expect(await (await m.request('/metrics')).text()).toMatch(/^master_task_cooldowns_total\{kind="merge_wal"\} 1$/m);
    expect(
      m.logs.some(
        (l) =>
          l.msg === 'target failed repeatedly; sweeps will skip it until the cooldown lapses' && l.target === 'broken',
      ),
    ).toBe(true);
    await eventually(() => expect(seen.some((c) => c.target === 'broken' && c.failures === 2)).toBe(true));

    const third = await m.scheduler.sweepOnce('merge_wal');
    expect(third).toMatchObject({ enqueued: 1, skipped: { cooldown: 1 } });
    await settled(m);
    expect(fleet.calls('merge-wal', 'broken')).toBe(2);
    expect(await (await m.request('/metrics')).text()).toContain(
      'master_sweep_skipped_total{kind="merge_wal",reason="cooldown"} 1',
    );

    // A manual request is never gated; its failure still counts, with a doubled window.
    const manual = await m.request('/api/v1/tasks', jsonBody({ kind: 'merge_wal', target: 'broken' }));
    expect(manual.status).toBe(202);
    await settled(m);
    const after = (await m.store.getCooldown('merge_wal', 'broken'))!;
    expect(after.failures).toBe(3);
    expect(after.until_ms! - clock.now()).toBeGreaterThan(1.5 * 3600_000);

    // A success clears it.
    fleet.stores.get('broken')!.broken = false;
    await m.request('/api/v1/tasks', jsonBody({ kind: 'merge_wal', target: 'broken' }));
    await settled(m);
    expect(await m.store.getCooldown('merge_wal', 'broken')).toBeUndefined();
    const done = (await m.store.listTasks({ target: 'broken', state: 'done' })).tasks[0] as TaskRecord;
    expect(done.detail).toBe('merged 7985 generations across 1/1 workers');
    expect(await (await m.request('/metrics')).text()).toContain(
      'master_cooldown_cleared_total{kind="merge_wal",reason="success"} 1',
    );
    await reader.cancel();
  });

  it('runs a compact while the merge pool is saturated by hung merges', async () => {
    const stores: Record<string, { pending: number; hangMerges: boolean; fragments?: number }> = {};
    for (let i = 0; i < 4; i++) stores[`hung-${i}`] = { pending: 50, hangMerges: true };
    const fleet = track(
      await startFleetStub({ ...stores, fragmented: { pending: 0, hangMerges: false, fragments: 40 } }),
    );
    const m = track(
      await openMaster(endpoints, new FakeClock(), {
        workers: { endpoints: [fleet.url], timeoutSecs: 60 },
        pools: { taskConcurrency: 1, own: { merge: 2 } },
      }),
    );
    m.scheduler.start();
    await m.scheduler.scanOnce();
    expect((await m.scheduler.sweepOnce('merge_wal')).enqueued).toBe(4);
    await eventually(async () => expect((await m.store.listTasks({ state: 'running' })).total).toBe(2));
    expect((await m.scheduler.sweepOnce('compact')).enqueued).toBe(1);
    await eventually(async () => {
      const [c] = (await m.store.listTasks({ kind: 'compact' })).tasks;
      expect(c).toMatchObject({ state: 'done', detail: 'removed 40 / added 1 fragments' });
    });
    expect((await m.store.listTasks({ kind: 'merge_wal', state: 'running' })).total).toBe(2);
    expect(await m.store.queueDepth('merge_wal')).toBe(2);
  });

  it('finishes nothing and leaves claims to peers when the grace period runs out', async () => {
    const fleet = track(await startFleetStub({ hung: { pending: 50, hangMerges: true } }));
    const clock = new FakeClock();
    // A worker timeout far beyond anything the loop below reaches: stop() closes its etcd watch
    // before it starts the grace timer, and under load the loop can advance the clock a minute
    // meanwhile, which would time the hung call out (finishing the task) before the grace begins.
    const m = await openMaster(endpoints, clock, { workers: { endpoints: [fleet.url], timeoutSecs: 86_400 } });
    m.scheduler.start();
    await m.store.enqueue('merge_wal', 'hung');
    await eventually(async () => expect((await m.store.listTasks({ state: 'running' })).total).toBe(1));
    const stopping = m.scheduler.stop(5000);
    let result: Awaited<typeof stopping> | undefined;
    void stopping.then((r) => (result = r));
    const t0 = clock.now();
    while (!result) await clock.advance(500);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(5000);
    expect(result).toEqual({ finished: false, abandoned: 1 });
    const peer = track(await openMaster(endpoints, clock, { etcd: { prefix: m.config.etcd.prefix } }));
    await m.store.close();
    // The revoke normally frees the claim at once; if it is lost under load, the 5 s lease lapses.
    await eventually(async () =>
      expect(await peer.store.recoverOrphaned()).toMatchObject({ requeued: [expect.any(String)] }),
    );
    await m.events.close();
    await m.kv.close();
  });
});

describe('three masters on one etcd', () => {
  it('sweep once per interval in total and attempt a broken store no more than the threshold before its window', async () => {
    const healthy: Record<string, { pending: number }> = {};
    for (let i = 0; i < 10; i++) healthy[`healthy-${i}`] = { pending: 10 + i };
    const fleet: FleetStub = await startFleetStub({ ...healthy, broken: { pending: 7985, broken: true } });
    fleet.stores.get('broken')!.broken = true;
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const overrides = {
      workers: { endpoints: [fleet.url] },
      intervals: { statsScanSecs: 60 },
      sweeps: { kinds: { merge_wal: { intervalSecs: 60 } } },
      cooldown: { afterFailures: 2, baseSecs: 3600, maxSecs: 21600 },
    };
    const first = await openMaster(endpoints, clock, overrides, 1);
    const shared = { ...overrides, etcd: { prefix: first.config.etcd.prefix } };
    const masters = [
      first,
      await openMaster(endpoints, clock, shared, 2),
      await openMaster(endpoints, clock, shared, 3),
    ];
    try {
      for (const m of masters) m.scheduler.start();
      // Ten minutes in 15 s steps; the healthy stores keep accumulating WAL generations.
      for (let step = 0; step < 40; step++) {
        await settled(...masters);
        if (step % 4 === 3) for (const [name, s] of fleet.stores) if (name !== 'broken') s.pending += 10;
        await clock.advance(15_000);
      }
      await settled(...masters);
      // 600 s of clock from a slot boundary: slots 0..10, each swept by exactly one master.
      const sweeps = masters.map(
        (m) => m.logs.filter((l) => String(l.msg).startsWith('merge_wal sweep queued')).length,
      );
      const total = sweeps.reduce((a, b) => a + b, 0);
      expect(total).toBeGreaterThanOrEqual(10);
      expect(total).toBeLessThanOrEqual(11);
      const scans = masters.map((m) => m.logs.filter((l) => l.msg === 'stats scan done').length);
      const totalScans = scans.reduce((a, b) => a + b, 0);
      expect(totalScans).toBeGreaterThanOrEqual(10);
      expect(totalScans).toBeLessThanOrEqual(11);
      // The work is shared: no master did every run itself.
      expect(Math.max(...sweeps)).toBeLessThan(total);

      expect(fleet.calls('merge-wal', 'broken')).toBe(2);
      for (const m of masters) {
        const cooling = (await (await m.request('/api/v1/scheduler/cooldowns')).json()) as TaskCooldown[];
        expect(cooling.map((c) => [c.target, c.failures])).toEqual([['broken', 2]]);
      }
      const done = (await first.store.listTasks({ state: 'done', limit: 200 })).tasks;
      expect(new Set(done.map((t) => t.target)).size).toBe(10);
    } finally {
      for (const m of masters.reverse()) await m.close();
      await fleet.close();
    }
  }, 120_000);
});
