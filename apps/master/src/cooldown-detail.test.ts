import { CooldownDetailSchema, MaintdEventSchema, type MaintdEvent } from '@maintd/api';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { FakeClock, type TestMaster, eventually, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
const POLICY = { afterFailures: 2, baseSecs: 600, maxSecs: 7200, jitter: 0, maxPercent: 100 };
const iso = (ms: number): string => new Date(ms).toISOString();

describe('GET /api/v1/scheduler/cooldowns/{kind}/{target}', () => {
  let m: TestMaster;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock, { cooldown: POLICY });
  });
  afterEach(async () => {
    await m.close();
  });

  const detail = async (path: string) => {
    const res = await m.request(`/api/v1/scheduler/cooldowns/${path}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return CooldownDetailSchema.parse(await res.json());
  };

  it('answers why a store is cooling, since when and who touched it, in one request', async () => {
    const t0 = clock.now();
    await m.store.recordFailure('compact', 'store-17', 'f1', 'manifest names a lost fragment', 'target');
    await clock.advance(1000);
    await m.store.recordFailure('compact', 'store-17', 'f2', 'still lost', 'target');
    await clock.advance(1000);
    const until = iso(clock.now() + 86_400_000);
    const park = await m.request('/api/v1/scheduler/cooldowns/compact/store-17', {
      ...jsonBody({ reason: 'restore from backup', until }),
      method: 'PUT',
    });
    expect(park.status).toBe(200);
    const task = (await (
      await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'store-17' }))
    ).json()) as {
      id: string;
    };

    const d = await detail('compact/store-17');
    expect(d).toMatchObject({
      kind: 'compact',
      target: 'store-17',
      entry: { state: 'parked', gating: true, failures: 2, last_error: 'still lost', parked: { by: '127.0.0.1' } },
      applies: true,
    });
    expect(d.policy).toEqual(await (await m.request('/api/v1/scheduler/policy')).json());
    expect(d.timeline.map((e) => [e.type, e.by ?? '', e.reason ?? '', e.error ?? ''])).toEqual([
      ['manual_run', '127.0.0.1', '', ''],
      ['parked', '127.0.0.1', 'restore from backup', ''],
      ['window_opened', '', '', ''],
      ['failure', '', '', 'still lost'],
      ['failure', '', '', 'manifest names a lost fragment'],
    ]);
    for (const e of d.timeline) expect(e.at).toBe(iso(e.at_ms));
    const [manual, parked, opened, , first] = d.timeline;
    expect(manual!.task_id).toBe(task.id);
    expect(parked).toMatchObject({ until_ms: Date.parse(until), until });
    expect(opened).toMatchObject({ failures: 2, until_ms: t0 + 1000 + 600_000, until: iso(t0 + 1000 + 600_000) });
    expect(first).toMatchObject({ at_ms: t0, error_class: 'target', failures: 1 });
    expect(first).not.toHaveProperty('until');

    // `limit` bounds the stored events read; a window that ended by itself shows as lapsed.
    expect((await detail('compact/store-17?limit=2')).timeline.map((e) => e.type)).toEqual(['manual_run', 'parked']);
    await clock.advance(700_000);
    const later = await detail('compact/store-17');
    expect(later.timeline[0]).toMatchObject({ type: 'window_lapsed', at_ms: t0 + 601_000, at: iso(t0 + 601_000) });
    expect(later.entry).toMatchObject({ state: 'parked', gating: true });

    // A reset and release leave no entry, but their events: who, newest first.
    expect((await m.request('/api/v1/scheduler/cooldowns/compact/store-17', { method: 'DELETE' })).status).toBe(200);
    const after = await detail('compact/store-17');
    expect(after.entry).toBeNull();
    expect(
      after.timeline
        .slice(0, 2)
        .map((e) => `${e.type}|${e.by}`)
        .sort(),
    ).toEqual(['released|127.0.0.1', 'reset|127.0.0.1']);
  });

  it('answers 404 naming a pair without a record, a park or an event, and 400 naming a bad limit', async () => {
    const res = await m.request('/api/v1/scheduler/cooldowns/compact/nothing');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no cooldown, park or timeline for compact 'nothing'" });
    for (const limit of ['0', '201', 'x']) {
      const bad = await m.request(`/api/v1/scheduler/cooldowns/compact/nothing?limit=${limit}`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toMatch(/limit/);
    }
    // A lapsed park alone is still a pair to explain: 200, with no entry.
    await m.store.park('compact', 'was-parked', { reason: 'r', by: 'b', untilMs: clock.now() + 1000 });
    await clock.advance(2000);
    const lapsed = await detail('compact/was-parked');
    expect(lapsed.entry).toBeNull();
    expect(lapsed.timeline.map((e) => e.type)).toEqual(['parked']);
  });

  it('says a window of a kind this master does not count gates nothing, where the master that counts it says it gates', async () => {
    for (let i = 0; i < 2; i++) await m.store.recordFailure('compact', 'store-3', `f${i}`, 'boom', 'target');
    const other = await openMaster(endpoints, clock, {
      cooldown: { ...POLICY, kinds: ['merge_wal'] },
      etcd: { prefix: m.config.etcd.prefix },
    });
    try {
      const mine = await detail('compact/store-3');
      expect(mine).toMatchObject({ applies: true, entry: { state: 'cooling', gating: true } });
      const theirs = CooldownDetailSchema.parse(
        await (await other.request('/api/v1/scheduler/cooldowns/compact/store-3')).json(),
      );
      expect(theirs).toMatchObject({ applies: false, entry: { state: 'cooling', gating: false } });
      expect(theirs.policy.kinds).toEqual(['merge_wal']);
      const listed = (await (await other.request('/api/v1/scheduler/cooldowns?limit=10')).json()) as unknown[];
      expect(listed).toEqual([expect.objectContaining({ target: 'store-3', state: 'cooling', gating: false })]);
    } finally {
      await other.close();
    }
  });

  it('streams each new timeline event as a `timeline` event, as the detail serves it', async () => {
    m.events.start();
    await eventually(() => expect(m.events.live).toBe(true));
    const seen: MaintdEvent[] = [];
    m.events.subscribe((e) => {
      if (e.type === 'timeline') seen.push(MaintdEventSchema.parse(e));
    });
    const until = iso(clock.now() + 60_000);
    await m.request('/api/v1/scheduler/cooldowns/merge_wal/store-9', {
      ...jsonBody({ reason: 'disk swap', until }),
      method: 'PUT',
    });
    await m.store.recordFailure('merge_wal', 'store-9', 'f1', 'quota exceeded', 'target');
    await eventually(() => expect(seen).toHaveLength(2));
    const served = (await detail('merge_wal/store-9')).timeline;
    expect(seen.map((e) => (e.type === 'timeline' ? e.event : undefined))).toEqual([...served].reverse());
    expect(seen[0]).toMatchObject({ event: { type: 'parked', by: '127.0.0.1', reason: 'disk swap', until } });
    expect(seen[0]!.revision).toBeGreaterThan(0);
  });
});
