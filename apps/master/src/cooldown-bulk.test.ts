import { BULK_SAMPLE_MAX, BulkResultSchema, CooldownSchema, type CooldownView } from '@maintd/api';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { FakeClock, type TestMaster, eventually, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
const POLICY = { afterFailures: 2, baseSecs: 600, maxSecs: 7200, jitter: 0, maxPercent: 100 };
const BulkReset = BulkResultSchema.extend({ deleted: z.number().int().nonnegative() }).strict();

describe('search and bulk actions over the cooldown list', () => {
  let m: TestMaster;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock, { cooldown: POLICY });
  });
  afterEach(async () => {
    await m.close();
  });

  /** Every key of this master's prefix with its revision: equal snapshots mean nothing was written. */
  const snapshot = async (): Promise<string[]> =>
    (await m.kv.range(`${m.config.etcd.prefix}/`)).kvs.map((kv) => `${kv.key}@${kv.modRevision}`);
  const key = (c: { kind: string; target: string }): string => `${c.kind}/${c.target}`;
  const list = async (path: string): Promise<CooldownView[]> =>
    z.array(CooldownSchema.strict()).parse(await (await m.request(path)).json());
  const fail = async (kind: 'merge_wal' | 'compact', target: string, error: string, times = 1): Promise<void> => {
    for (let i = 0; i < times; i++) await m.store.recordFailure(kind, target, `${target}-${i}`, error, 'target');
  };
  const bulk = (method: 'PUT' | 'DELETE', query: string, body?: unknown): Promise<Response> =>
    m.request(`/api/v1/scheduler/cooldowns?${query}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });

  /** Cooling, below and parked entries of both kinds; `quota` is in two errors and one store name. */
  async function seed(): Promise<void> {
    await fail('merge_wal', 'store-1', 'Quota exceeded on bucket b1', 2);
    await fail('merge_wal', 'store-2', 'lost fragment f-2');
    await fail('compact', 'QUOTA-box', 'boom');
    await fail('compact', 'store-4', 'quota exceeded', 2);
    await m.store.park('compact', 'p-quota', { reason: 'r', by: 'b' });
  }

  for (const live of [false, true]) {
    it(`searches the list by store name or last error, ignoring case, with kind, state and paging (${live ? 'watch index' : 'store read'})`, async () => {
      await seed();
      if (live) {
        m.events.start();
        await eventually(() => expect(m.events.cooldowns.list(undefined, true, clock.now())).toHaveLength(5));
      }
      expect((await list('/api/v1/scheduler/cooldowns?all=true&q=QuOtA')).map(key)).toEqual([
        'compact/QUOTA-box',
        'compact/p-quota',
        'compact/store-4',
        'merge_wal/store-1',
      ]);
      // Unpaged without `all`: what gates, searched.
      expect((await list('/api/v1/scheduler/cooldowns?q=quota')).map(key)).toEqual([
        'compact/p-quota',
        'compact/store-4',
        'merge_wal/store-1',
      ]);
      expect((await list('/api/v1/scheduler/cooldowns?limit=10&q=quota&kind=merge_wal')).map(key)).toEqual([
        'merge_wal/store-1',
      ]);
      expect((await list('/api/v1/scheduler/cooldowns?limit=10&q=quota&state=below')).map(key)).toEqual([
        'compact/QUOTA-box',
      ]);
      // Paged over `any` state: the header counts the matches, the pages follow each other.
      const first = await m.request('/api/v1/scheduler/cooldowns?limit=3&state=any&q=quota');
      expect(first.headers.get('x-total-count')).toBe('4');
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')![1]!;
      expect(next).toContain('q=quota');
      const second = await list(next);
      expect(second).toHaveLength(1);
      expect((await list('/api/v1/scheduler/cooldowns?limit=10&q=nothing-like-it')).length).toBe(0);
      for (const bad of ['', 'x'.repeat(201)]) {
        const res = await m.request(`/api/v1/scheduler/cooldowns?limit=10&q=${bad}`);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: string }).error).toMatch(/\bq\b/);
      }
    });
  }

  it('searches the task list by store name or error, counting and paging only the matches', async () => {
    const lost = (await m.store.enqueue('compact', 'store-LOST')).task;
    const failed = (await m.store.enqueue('merge_wal', 'store-2')).task;
    await m.store.enqueue('compact', 'store-3');
    const claim = await m.store.claimNext(['merge_wal']);
    await m.store.finish(claim!, { ok: false, error: 'manifest names a Lost fragment', errorClass: 'target' });
    const page = (await (await m.request('/api/v1/tasks?q=lost&limit=1')).json()) as {
      tasks: { id: string }[];
      total: number;
      next_cursor: string;
    };
    expect(page.total).toBe(2);
    expect(page.tasks.map((t) => t.id)).toEqual([failed.id]);
    const rest = (await (await m.request(`/api/v1/tasks?q=lost&limit=1&cursor=${page.next_cursor}`)).json()) as {
      tasks: { id: string }[];
      next_cursor: string | null;
    };
    expect(rest).toMatchObject({ tasks: [{ id: lost.id }], next_cursor: null });
    const failedOnly = (await (await m.request('/api/v1/tasks?q=LOST&state=failed')).json()) as { total: number };
    expect(failedOnly.total).toBe(1);
    expect((await m.request('/api/v1/tasks?q=')).status).toBe(400);
  });

  it('parks exactly the matches of a search in one request, each with a parked event on its timeline', async () => {
    const lost = Array.from({ length: 40 }, (_, i) => `lost-${String(i).padStart(2, '0')}`);
    for (const t of lost) await fail('merge_wal', t, `manifest names lost fragment ${t}`);
    await fail('merge_wal', 'fine', 'quota exceeded');
    await fail('compact', 'lost-00', 'manifest names lost fragment');

    const res = await bulk('PUT', 'kind=merge_wal&q=LOST%20fragment', { reason: 'lost fragment' });
    expect(res.status).toBe(200);
    const answer = BulkResultSchema.strict().parse(await res.json());
    expect(answer).toMatchObject({ dry_run: false, count: 40, done: 40 });
    // The entries as they were before: below the threshold, not yet parked.
    expect(answer.entries.map((e) => [key(e), e.state])).toEqual(lost.map((t) => [`merge_wal/${t}`, 'below']));

    const parks = await m.store.listParks();
    expect(parks.map(key)).toEqual(lost.map((t) => `merge_wal/${t}`));
    for (const p of parks) expect(p).toMatchObject({ reason: 'lost fragment', by: '127.0.0.1', until_ms: null });
    for (const t of [lost[0]!, lost[39]!]) {
      const [newest] = await m.store.timelines.read('merge_wal', t);
      expect(newest).toMatchObject({ type: 'parked', by: '127.0.0.1', reason: 'lost fragment' });
    }
    expect(await m.store.timelines.read('merge_wal', 'fine')).not.toContainEqual(
      expect.objectContaining({ type: 'parked' }),
    );
    expect(m.logs.filter((l) => l.msg === 'targets parked by operator')).toEqual([
      expect.objectContaining({ kind: 'merge_wal', state: 'any', q: 'LOST fragment', count: 40, done: 40 }),
    ]);
    // This master's next read shows the parks at once.
    expect((await list('/api/v1/scheduler/cooldowns?limit=200&state=parked')).length).toBe(40);
  });

  it('answers a dry run of either action with the count and the first matches, and changes nothing', async () => {
    for (let i = 0; i < BULK_SAMPLE_MAX + 5; i++) await fail('compact', `s-${String(i).padStart(3, '0')}`, 'boom');
    await fail('merge_wal', 'other', 'quota exceeded');
    const before = await snapshot();
    for (const method of ['PUT', 'DELETE'] as const) {
      for (const dry of ['true', '1']) {
        const res = await bulk(method, `q=boom&dry_run=${dry}`, method === 'PUT' ? { reason: 'r' } : undefined);
        expect(res.status).toBe(200);
        const body = (await res.json()) as z.infer<typeof BulkReset>;
        expect(body).toMatchObject({ dry_run: true, count: BULK_SAMPLE_MAX + 5, done: 0 });
        expect(body.entries).toHaveLength(BULK_SAMPLE_MAX);
        expect(body.entries[0]).toMatchObject({ kind: 'compact', target: 's-000', state: 'below' });
        if (method === 'DELETE') expect(BulkReset.parse(body).deleted).toBe(0);
      }
    }
    const res = await bulk('DELETE', 'kind=merge_wal&q=quota&dry_run=true');
    expect(BulkReset.parse(await res.json())).toMatchObject({ dry_run: true, count: 1, done: 0, deleted: 0 });
    expect(await snapshot()).toEqual(before);
  });

  it('resets only the matches of a search, keeps their parks, and counts each reset', async () => {
    await seed();
    await m.store.park('merge_wal', 'store-1', { reason: 'keep', by: 'op' });
    const res = await bulk('DELETE', 'q=quota');
    const body = BulkReset.parse(await res.json());
    // p-quota matches by name but has no record to reset.
    expect(body).toMatchObject({ dry_run: false, count: 3, done: 3, deleted: 3 });
    expect(body.entries.map(key).sort()).toEqual(['compact/QUOTA-box', 'compact/store-4', 'merge_wal/store-1']);
    expect((await m.store.listCooldowns({ all: true })).map(key)).toEqual(['merge_wal/store-2']);
    expect((await m.store.listParks()).map(key)).toEqual(['compact/p-quota', 'merge_wal/store-1']);
    const [reset] = await m.store.timelines.read('compact', 'store-4');
    expect(reset).toMatchObject({ type: 'reset', by: '127.0.0.1', failures: 2 });
    const metrics = await (await m.request('/metrics')).text();
    expect(metrics).toContain('master_cooldown_cleared_total{kind="compact",reason="operator"} 2');
    expect(metrics).toContain('master_cooldown_cleared_total{kind="merge_wal",reason="operator"} 1');
    expect(m.logs.filter((l) => l.msg === 'cooldowns reset by operator')).toEqual([
      expect.objectContaining({ kind: 'all', state: 'any', q: 'quota', count: 3, done: 3 }),
    ]);
  });

  it('resets every record of a kind without a state, below and lapsed included, and only the state asked for with one', async () => {
    await fail('compact', 'cooling', 'e', 2);
    await clock.advance(700_000);
    await fail('compact', 'now-cooling', 'e', 2);
    await fail('compact', 'below', 'e');
    await fail('merge_wal', 'other', 'e', 2);
    const states = async (): Promise<string[]> =>
      (await list('/api/v1/scheduler/cooldowns?limit=200&state=any&kind=compact')).map((c) => `${c.target}:${c.state}`);
    // By `until`: the lapsed window ended first, a count below the threshold has none.
    expect(await states()).toEqual(['cooling:lapsed', 'now-cooling:cooling', 'below:below']);
    const lapsed = BulkReset.parse(await (await bulk('DELETE', 'kind=compact&state=lapsed')).json());
    expect(lapsed).toMatchObject({ count: 1, done: 1, entries: [{ target: 'cooling', state: 'lapsed' }] });
    const all = BulkReset.parse(await (await bulk('DELETE', 'kind=compact')).json());
    expect(all).toMatchObject({ count: 2, done: 2, deleted: 2 });
    expect((await m.store.listCooldowns({ all: true })).map(key)).toEqual(['merge_wal/other']);
  });

  it('refuses a bulk park with an end in the past or without a reason, and parks nothing', async () => {
    await fail('compact', 'x', 'boom');
    const past = await bulk('PUT', 'q=x', { reason: 'r', until: new Date(clock.now() - 1).toISOString() });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: string }).error).toMatch(/until/);
    expect((await bulk('PUT', 'q=x', {})).status).toBe(400);
    expect(await m.store.listParks()).toEqual([]);
  });
});
