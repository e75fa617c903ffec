import { CapacitySchema, CauseSchema, CooldownSchema, PolicySchema, WindowSchema } from '@maintd/api';
import { CapacityLedger, failureCause, parseTaskWindows } from '@maintd/core';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { FakeClock, type TestMaster, eventually, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
const POLICY = { afterFailures: 2, baseSecs: 600, maxSecs: 7200, jitter: 0, maxPercent: 100 };
const LOST = (store: string, fragment: string): string =>
  `http://w1:8080: HTTP 500: Not found: s3://lake/${store}/data/${fragment}.lance (merged 0 generations across 0/1 workers)`;

function windows(text: string): { tz: string; list: ReturnType<typeof parse> } {
  return { tz: 'UTC', list: parse(text) };
}
function parse(text: string) {
  const r = parseTaskWindows(text, 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.windows;
}

describe('failure causes', () => {
  const masters: TestMaster[] = [];
  afterEach(async () => {
    for (const m of masters.splice(0)) await m.close();
  });

  async function seeded(live: boolean): Promise<TestMaster> {
    const clock = new FakeClock();
    const m = await openMaster(endpoints, clock, { cooldown: POLICY });
    masters.push(m);
    // Five stores fail on a lost fragment, each naming its own store and fragment; one store is
    // below the threshold. Another store fails otherwise.
    for (const [i, store] of ['orders', 'users', 'events', 'billing', 'audit-log'].entries()) {
      const times = i === 4 ? 1 : 2;
      for (let n = 0; n < times; n++) {
        await m.store.recordFailure('merge_wal', store, `${store}-${n}`, LOST(store, `4f1c2a9b${i}e0${n}`), 'target');
      }
    }
    await m.store.recordFailure('compact', 'orders', 'c-1', 'permission denied', 'target');
    if (live) {
      m.events.start();
      await eventually(() => expect(m.events.cooldowns.list(undefined, true, clock.now())).toHaveLength(6));
    }
    return m;
  }

  for (const live of [false, true]) {
    it(`groups stores failing alike into one cause, below the threshold included (${live ? 'watch index' : 'store read'})`, async () => {
      const m = await seeded(live);
      const causes = z.array(CauseSchema.strict()).parse(await (await m.request('/api/v1/scheduler/causes')).json());
      const lost = failureCause(LOST('orders', '4f1c2a9b0e00'), 'orders');
      expect(causes.map((c) => [c.cause, c.targets, c.failures, c.kinds])).toEqual([
        [lost, 5, 9, ['merge_wal']],
        [failureCause('permission denied', 'orders'), 1, 1, ['compact']],
      ]);
      expect(causes[0]?.example).toContain('Not found: s3://lake/');
      const compactOnly = z
        .array(CauseSchema)
        .parse(await (await m.request('/api/v1/scheduler/causes?kind=compact')).json());
      expect(compactOnly.map((c) => c.targets)).toEqual([1]);
    });
  }

  it('lists, dry-runs and parks the stores of one cause in one request each', async () => {
    const m = await seeded(false);
    const lost = failureCause(LOST('orders', '0a1b2c3d4e5f'), 'orders');
    const list = z
      .array(CooldownSchema.strict())
      .parse(await (await m.request(`/api/v1/scheduler/cooldowns?all=true&cause=${lost}`)).json());
    expect(list.map((c) => c.target).sort()).toEqual(['audit-log', 'billing', 'events', 'orders', 'users']);
    expect(new Set(list.map((c) => c.cause))).toEqual(new Set([lost]));
    const put = (query: string): Promise<Response> =>
      m.request(`/api/v1/scheduler/cooldowns?${query}`, {
        method: 'PUT',
        body: JSON.stringify({ reason: 'lost fragments after the bucket migration' }),
        headers: { 'content-type': 'application/json' },
      });
    const dry = (await (await put(`cause=${lost}&dry_run=true`)).json()) as { count: number; done: number };
    expect(dry).toMatchObject({ count: 5, done: 0 });
    expect(await m.store.listParks()).toEqual([]);
    const done = (await (await put(`cause=${lost}`)).json()) as { count: number; done: number };
    expect(done).toMatchObject({ count: 5, done: 5 });
    expect((await m.store.listParks()).map((p) => p.target).sort()).toEqual([
      'audit-log',
      'billing',
      'events',
      'orders',
      'users',
    ]);
    expect((await put('cause=not-a-cause')).status).toBe(400);
  });
});

describe('maintenance windows and capacity over the API', () => {
  const masters: TestMaster[] = [];
  afterEach(async () => {
    for (const m of masters.splice(0)) await m.close();
  });

  it("shows each kind's window with whether it is open and when that changes", async () => {
    const clock = new FakeClock(Date.parse('2026-12-06T18:48:00Z'));
    const m = await openMaster(endpoints, clock, { windows: windows('compact=22:00-05:00') });
    masters.push(m);
    const policy = PolicySchema.strict().parse(await (await m.request('/api/v1/scheduler/policy')).json());
    expect(policy.windows).toEqual([
      { kind: 'compact', spec: '22:00-05:00', tz: 'UTC', open: false, next_change: '2026-12-06T22:00:00.000Z' },
    ]);
    z.array(WindowSchema.strict()).parse(policy.windows);
  });

  it('flags the masters whose windows differ: one without the window would claim what the others hold back', async () => {
    const clock = new FakeClock();
    const prefix = `/windows-${Math.random().toString(16).slice(2)}`;
    const a = await openMaster(endpoints, clock, { etcd: { prefix }, windows: windows('compact=22:00-05:00') });
    masters.push(a);
    const b = await openMaster(endpoints, clock, { etcd: { prefix } }, 2);
    masters.push(b);
    const body = (await (await a.request('/api/v1/masters')).json()) as {
      window_disagreements?: { id: string; windows: string[] }[];
    };
    expect(body.window_disagreements).toEqual([{ id: b.store.masterId, windows: [] }]);
    const fromB = (await (await b.request('/api/v1/masters')).json()) as { window_disagreements?: unknown };
    expect(fromB.window_disagreements).toEqual([{ id: a.store.masterId, windows: ['compact=22:00-05:00@UTC'] }]);
  });

  it("answers the fleet's slot time from every master's record", async () => {
    const clock = new FakeClock();
    const m = await openMaster(endpoints, clock);
    masters.push(m);
    const peer = new CapacityLedger();
    peer.record('merge_wal', 'broken', 720, true, clock.now());
    peer.record('merge_wal', 'fine', 240, false, clock.now());
    await m.kv.put(m.store.keys.capacity('gone-master'), JSON.stringify(peer.snapshot('gone-master', clock.now())));
    const body = CapacitySchema.strict().parse(await (await m.request('/api/v1/capacity')).json());
    expect(body.window_secs).toBe(3600);
    const merge = body.kinds.find((k) => k.kind === 'merge_wal');
    expect(merge).toMatchObject({ slots: 4, busy_seconds: { success: 240, failed: 720 }, failed_share: 0.75 });
    expect(merge?.top[0]).toEqual({
      target: 'broken',
      busy_seconds: 720,
      failed_seconds: 720,
      tasks: 1,
      failed_tasks: 1,
    });
  });
});
