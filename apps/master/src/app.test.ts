import { type CooldownView, CooldownSchema, EventMessageSchema, PolicySchema, openApiDocument } from '@maintd/api';
import { KIND_NAMES } from '@maintd/scheduler';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { type Kv, OUTAGE_REMINDER_MS, StoreFullError, type Watch } from '@maintd/core';
import { interceptKv } from '@maintd/core/testing';
import {
  FakeClock,
  type SwitchableKv,
  type TestMaster,
  eventually,
  jsonBody,
  openMaster,
  switchableKv,
} from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
/** How long the task watch outlives its last use (a minute), and one of its checks (5 s). */
const PAST_TASK_WATCH_LINGER_MS = 65_000;
/** How long one successful probe vouches that etcd answers, for every list read. */
const PROBE_VOUCH_MS = 250;

describe('HTTP API', () => {
  let m: TestMaster;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock);
  });
  afterEach(async () => {
    await m.close();
  });

  const keyCount = async (): Promise<number> =>
    (await m.kv.range(`${m.config.etcd.prefix}/`, { countOnly: true })).count;

  it('enqueues a manual task with 202 and answers a dedupe hit with 200 and the same record', async () => {
    const first = await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'store-1' }));
    expect(first.status).toBe(202);
    const task = (await first.json()) as { id: string; state: string; source: string };
    expect(task).toMatchObject({ state: 'queued', source: 'manual', kind: 'compact', target: 'store-1' });
    const again = await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'store-1' }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(task);

    const one = await m.request(`/api/v1/tasks/${task.id}`);
    expect(await one.json()).toEqual(task);
    const list = (await (await m.request('/api/v1/tasks?limit=10')).json()) as { tasks: unknown[]; total: number };
    expect(list).toMatchObject({ total: 1, next_cursor: null });
    expect(list.tasks).toEqual([task]);
    const metrics = await (await m.request('/metrics')).text();
    expect(metrics).toContain('master_task_enqueued_total{kind="compact",source="manual"} 1');
  });

  it('pages tasks newest first with a cursor, and filters them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await m.request(
        '/api/v1/tasks',
        jsonBody({ kind: i % 2 ? 'merge_wal' : 'compact', target: `s${i}` }),
      );
      ids.push(((await res.json()) as { id: string }).id);
      await clock.advance(1);
    }
    const first = await m.request('/api/v1/tasks?limit=2&kind=compact');
    const p1 = (await first.json()) as { tasks: { id: string }[]; next_cursor: string };
    expect(p1.tasks.map((t) => t.id)).toEqual([ids[4], ids[2]]);
    expect(first.headers.get('link')).toBe(`</api/v1/tasks?limit=2&kind=compact&cursor=${p1.next_cursor}>; rel="next"`);
    const last = await m.request(`/api/v1/tasks?limit=2&kind=compact&cursor=${p1.next_cursor}`);
    expect(((await last.json()) as { next_cursor: string | null }).next_cursor).toBeNull();
    expect(last.headers.get('link')).toBeNull();
    const all = (await (await m.request('/api/v1/tasks?limit=2')).json()) as { next_cursor: string };
    const p2 = (await (await m.request(`/api/v1/tasks?limit=2&cursor=${all.next_cursor}`)).json()) as {
      tasks: { id: string }[];
      next_cursor: string | null;
    };
    expect(p2.tasks.map((t) => t.id)).toEqual([ids[2], ids[1]]);
    const merges = (await (await m.request('/api/v1/tasks?kind=merge_wal')).json()) as {
      tasks: { id: string }[];
      total: number;
    };
    expect(merges.total).toBe(2);
    expect(merges.tasks.map((t) => t.id)).toEqual([ids[3], ids[1]]);
  });

  it('lists, resets one and bulk-resets cooldowns', async () => {
    await m.store.recordFailure('merge_wal', 'broken', 't1', 'boom', 'target');
    for (let i = 0; i < 3; i++) await m.store.recordFailure('compact', `c${i}`, `x${i}`, 'boom', 'target');
    for (let i = 0; i < 3; i++) await m.store.recordFailure('compact', 'c0', `y${i}`, 'boom', 'target');
    const active = (await (await m.request('/api/v1/scheduler/cooldowns')).json()) as { target: string }[];
    expect(active.map((c) => c.target)).toEqual(['c0']);
    const all = (await (await m.request('/api/v1/scheduler/cooldowns?all=true')).json()) as unknown[];
    expect(all).toHaveLength(4);
    expect((await m.request('/api/v1/scheduler/cooldowns?kind=merge_wal&all=1')).status).toBe(200);

    const del = await m.request('/api/v1/scheduler/cooldowns/compact/c0', { method: 'DELETE' });
    expect(await del.json()).toEqual({ deleted: 1 });
    const missing = await m.request('/api/v1/scheduler/cooldowns/compact/c0', { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no cooldown or park for compact 'c0'" });
    const bulk = await m.request('/api/v1/scheduler/cooldowns?kind=compact', { method: 'DELETE' });
    // `deleted` as before the filter, beside the bulk result.
    expect(await bulk.json()).toMatchObject({ deleted: 2, dry_run: false, count: 2, done: 2 });
    expect(await (await m.request('/metrics')).text()).toContain(
      'master_cooldown_cleared_total{kind="compact",reason="operator"} 3',
    );
    // Without a kind: every kind's records, each counted under its own kind.
    await m.store.recordFailure('compact', 'c9', 'z1', 'boom', 'target');
    const everything = await m.request('/api/v1/scheduler/cooldowns', { method: 'DELETE' });
    expect(await everything.json()).toMatchObject({ deleted: 2, done: 2 });
    expect(await m.store.listCooldowns({ all: true })).toEqual([]);
    const metrics = await (await m.request('/metrics')).text();
    expect(metrics).toContain('master_cooldown_cleared_total{kind="compact",reason="operator"} 4');
    expect(metrics).toContain('master_cooldown_cleared_total{kind="merge_wal",reason="operator"} 1');
  });

  it('serves stores with their cooldown state, searched and paged', async () => {
    await m.store.putStats(
      ['alpha', 'beta', 'gamma', 'alphabet'].map((name, i) => ({
        name,
        pending_wal_generations: i,
        fragment_count: 1,
        row_count: 1,
        owners: ['http://w'],
        scanned_at: 0,
      })),
    );
    await m.store.recordFailure('compact', 'beta', 't', 'boom', 'target');
    const firstPage = await m.request('/api/v1/stores?limit=2');
    const page = (await firstPage.json()) as {
      stores: { name: string; cooldowns: { failures: number }[] }[];
      total: number;
      next_cursor: string;
    };
    expect(page.stores.map((s) => s.name)).toEqual(['alpha', 'alphabet']);
    expect(page.total).toBe(4);
    expect(firstPage.headers.get('link')).toBe(`</api/v1/stores?limit=2&cursor=alphabet>; rel="next"`);
    const lastPage = await m.request(`/api/v1/stores?limit=2&cursor=${page.next_cursor}`);
    expect(lastPage.headers.get('link')).toBeNull();
    const next = (await lastPage.json()) as typeof page;
    expect(next.stores.map((s) => [s.name, s.cooldowns.length])).toEqual([
      ['beta', 1],
      ['gamma', 0],
    ]);
    const search = (await (await m.request('/api/v1/stores?search=ALPHA')).json()) as typeof page;
    expect(search.total).toBe(2);
  });

  it('serves health, readiness, masters, workers, metrics and the OpenAPI document', async () => {
    expect(await (await m.request('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await m.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, store: 'ok', session: 'held' });
    const masters = (await (await m.request('/api/v1/masters')).json()) as { masters: { id: string }[] };
    expect(masters.masters.map((x) => x.id)).toEqual([m.config.masterId]);
    expect(await (await m.request('/api/v1/workers')).json()).toEqual({ workers: [] });
    const metrics = await m.request('/metrics');
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('http_requests_total{method="GET",route="/readyz",status="200"} 1');
    const doc = (await (await m.request('/api/v1/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/api/v1/audit',
        '/api/v1/capacity',
        '/api/v1/cluster',
        '/api/v1/events',
        '/api/v1/masters',
        '/api/v1/openapi.json',
        '/api/v1/scheduler/causes',
        '/api/v1/scheduler/cooldowns',
        '/api/v1/scheduler/cooldowns/{kind}/{target}',
        '/api/v1/scheduler/policy',
        '/api/v1/stores',
        '/api/v1/tasks',
        '/api/v1/tasks/{id}',
        '/api/v1/workers',
        '/healthz',
        '/metrics',
        '/readyz',
      ].sort(),
    );
  });

  it('serves every cooldown with `until` (ISO 8601) beside `until_ms`, null below the threshold', async () => {
    for (let i = 0; i < 3; i++) await m.store.recordFailure('compact', 'hot', `h${i}`, 'boom', 'target');
    await m.store.recordFailure('compact', 'cold', 'c0', 'boom', 'target');
    await m.store.putStats([
      { name: 'hot', pending_wal_generations: 1, fragment_count: 1, row_count: 1, owners: [], scanned_at: 0 },
    ]);
    const listed = z
      .array(CooldownSchema.strict())
      .parse(await (await m.request('/api/v1/scheduler/cooldowns?all=true')).json());
    const hot = listed.find((c) => c.target === 'hot');
    expect(hot?.until_ms).toEqual(expect.any(Number));
    expect(hot?.until).toBe(new Date(hot!.until_ms!).toISOString());
    expect(listed.find((c) => c.target === 'cold')).toMatchObject({ until_ms: null, until: null });
    const stores = (await (await m.request('/api/v1/stores')).json()) as { stores: { cooldowns: unknown[] }[] };
    expect(stores.stores[0]?.cooldowns).toEqual([hot]);
  });

  it('streams events that match the documented messages, cooldowns with `until`', async () => {
    m.events.start();
    await eventually(() => expect(m.events.live).toBe(true));
    const res = await m.request('/api/v1/events');
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
    const messages: z.infer<typeof EventMessageSchema>[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        const frames = buf.split('\n\n');
        buf = frames.pop() ?? '';
        for (const frame of frames) {
          const fields: Record<string, unknown> = Object.fromEntries(
            frame
              .split('\n')
              .map((line) => /^(event|id|data): (.*)$/.exec(line))
              .filter((x) => x !== null)
              .map(([, k, v]): [string, unknown] => [k!, k === 'data' ? (JSON.parse(v!) as unknown) : v]),
          );
          if (Object.keys(fields).length === 0) continue; // a keepalive comment
          // Strict: the parsed message must be exactly what was sent, no field undocumented.
          const parsed = EventMessageSchema.parse(fields);
          expect(parsed).toEqual(fields);
          messages.push(parsed);
        }
      }
    })();
    try {
      await eventually(() => expect(messages[0]?.event).toBe('hello'));
      const task = (await (await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'ev' }))).json()) as {
        id: string;
      };
      for (let i = 0; i < 3; i++) await m.store.recordFailure('compact', 'ev', `e${i}`, 'boom', 'target');
      await m.request('/api/v1/scheduler/cooldowns/compact/ev', { method: 'DELETE' });
      await eventually(() => {
        expect(messages.some((x) => x.event === 'task' && x.data.task.id === task.id)).toBe(true);
        const cooldowns = messages.flatMap((x) => (x.event === 'cooldown' ? [x.data.cooldown] : []));
        expect(cooldowns.at(-1)).toBeNull();
        const cooling = cooldowns.find((c) => c?.failures === 3);
        expect(cooling?.until).toBe(new Date(cooling!.until_ms!).toISOString());
        expect(cooldowns.find((c) => c?.failures === 1)?.until).toBeNull();
      });
      // Each event of the store's timeline, as it commits: the manual run and the reset name who.
      await eventually(() => {
        const timeline = messages.flatMap((x) => (x.event === 'timeline' ? [x.data.event] : []));
        expect(timeline.map((e) => e.type)).toEqual([
          'manual_run',
          'failure',
          'failure',
          'failure',
          'window_opened',
          'reset',
        ]);
        expect(timeline[0]).toMatchObject({ by: '127.0.0.1', task_id: task.id });
        expect(timeline.at(-1)).toMatchObject({ by: '127.0.0.1', failures: 3 });
      });
      for (const x of messages) {
        if (x.event === 'task' || x.event === 'task_deleted' || x.event === 'cooldown' || x.event === 'timeline') {
          expect(x.id).toBe(String(x.data.revision));
        }
      }
    } finally {
      await reader.cancel();
      await reading.catch(() => undefined);
    }
  });

  it('answers 404 with the task id for an unknown task', async () => {
    const id = '01900000-0000-7000-8000-000000000000';
    const res = await m.request(`/api/v1/tasks/${id}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: `task '${id}' not found` });
  });

  const post = (body: string | object, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  const put = (body: object): RequestInit => ({
    method: 'PUT',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  const badRequests: [string, string, RequestInit | undefined, number, RegExp][] = [
    ['malformed JSON', '/api/v1/tasks', post('{"kind": "compact", '), 400, /JSON/],
    ['a JSON array body', '/api/v1/tasks', post('[]'), 400, /body|expected object/],
    ['an empty body', '/api/v1/tasks', post(''), 400, /JSON|body/],
    ['a kind this master does not run', '/api/v1/tasks', post({ kind: 'repair', target: 'x' }), 400, /kind/],
    ['a malformed kind', '/api/v1/tasks', post({ kind: 'Re-pair', target: 'x' }), 400, /kind/],
    ['a missing kind', '/api/v1/tasks', post({ target: 'x' }), 400, /kind/],
    ['a missing target', '/api/v1/tasks', post({ kind: 'compact' }), 400, /target/],
    ['a numeric target', '/api/v1/tasks', post({ kind: 'compact', target: 42 }), 400, /target/],
    ['an empty target', '/api/v1/tasks', post({ kind: 'compact', target: '' }), 400, /target/],
    ['a 300-char target', '/api/v1/tasks', post({ kind: 'compact', target: 'a'.repeat(300) }), 400, /target/],
    ['a path-traversal target', '/api/v1/tasks', post({ kind: 'compact', target: '../x' }), 400, /target/],
    ['a target with a slash', '/api/v1/tasks', post({ kind: 'compact', target: 'a/b' }), 400, /target/],
    [
      'a target with control characters',
      '/api/v1/tasks',
      post({ kind: 'compact', target: 'a\u001b[2Jb' }),
      400,
      /target/,
    ],
    ['a target with a space', '/api/v1/tasks', post({ kind: 'compact', target: 'a b' }), 400, /target/],
    [
      'depends_on not an array',
      '/api/v1/tasks',
      post({ kind: 'compact', target: 'x', depends_on: 'abc' }),
      400,
      /depends_on/,
    ],
    [
      'depends_on with a non-id',
      '/api/v1/tasks',
      post({ kind: 'compact', target: 'x', depends_on: ['nope'] }),
      400,
      /depends_on/,
    ],
    ['an unknown field', '/api/v1/tasks', post({ kind: 'compact', target: 'x', priority: 1 }), 400, /priority/],
    [
      'a body over 16 KiB',
      '/api/v1/tasks',
      post({ kind: 'compact', target: 'x', pad: 'y'.repeat(17_000) }),
      413,
      /16384/,
    ],
    ['a malformed task id', '/api/v1/tasks/not-a-uuid', undefined, 400, /id/],
    ['limit 0', '/api/v1/tasks?limit=0', undefined, 400, /limit/],
    ['limit 1000', '/api/v1/tasks?limit=1000', undefined, 400, /limit/],
    ['a non-numeric limit', '/api/v1/tasks?limit=abc', undefined, 400, /limit/],
    ['a bad cursor', '/api/v1/tasks?cursor=../../x', undefined, 400, /cursor/],
    ['an unknown state filter', '/api/v1/tasks?state=cancelled', undefined, 400, /state/],
    ['a malformed kind filter', '/api/v1/scheduler/cooldowns?kind=Re-pair', undefined, 400, /kind/],
    ['a non-boolean all', '/api/v1/scheduler/cooldowns?all=maybe', undefined, 400, /all/],
    ['reset of a malformed kind', '/api/v1/scheduler/cooldowns/Re-pair/x', { method: 'DELETE' }, 400, /kind/],
    ['reset of an invalid target', '/api/v1/scheduler/cooldowns/compact/.hidden', { method: 'DELETE' }, 400, /target/],
    [
      'reset of an unknown cooldown',
      '/api/v1/scheduler/cooldowns/compact/never-failed',
      { method: 'DELETE' },
      404,
      /no cooldown/,
    ],
    ['a park without a reason', '/api/v1/scheduler/cooldowns/compact/x', put({}), 400, /reason/],
    ['a park with an empty reason', '/api/v1/scheduler/cooldowns/compact/x', put({ reason: '' }), 400, /reason/],
    [
      'a park with a reason over 512 characters',
      '/api/v1/scheduler/cooldowns/compact/x',
      put({ reason: 'r'.repeat(513) }),
      400,
      /reason/,
    ],
    [
      'a park whose reason is only control characters',
      '/api/v1/scheduler/cooldowns/compact/x',
      put({ reason: '\u0007\u001b' }),
      400,
      /reason/,
    ],
    [
      'a park until a past time',
      '/api/v1/scheduler/cooldowns/compact/x',
      put({ reason: 'r', until: '2020-01-01T00:00:00Z' }),
      400,
      /until/,
    ],
    [
      'a park until a time that is not ISO 8601',
      '/api/v1/scheduler/cooldowns/compact/x',
      put({ reason: 'r', until: 'tomorrow' }),
      400,
      /until/,
    ],
    [
      'a park with an unknown field',
      '/api/v1/scheduler/cooldowns/compact/x',
      put({ reason: 'r', by: 'me' }),
      400,
      /'by'/,
    ],
    ['a park of a malformed kind', '/api/v1/scheduler/cooldowns/Re-pair/x', put({ reason: 'r' }), 400, /kind/],
    ['a park of an invalid target', '/api/v1/scheduler/cooldowns/compact/.x', put({ reason: 'r' }), 400, /target/],
    ['a cooldown page of 0', '/api/v1/scheduler/cooldowns?limit=0', undefined, 400, /limit/],
    ['a cooldown page of 201', '/api/v1/scheduler/cooldowns?limit=201', undefined, 400, /limit/],
    ['an unknown cooldown state', '/api/v1/scheduler/cooldowns?limit=5&state=hot', undefined, 400, /state/],
    ['an unknown cooldown sort', '/api/v1/scheduler/cooldowns?limit=5&sort=name', undefined, 400, /sort/],
    ['a forged cooldown cursor', '/api/v1/scheduler/cooldowns?limit=5&cursor=WzEsMl0', undefined, 400, /cursor/],
    ['a cooldown cursor with dots', '/api/v1/scheduler/cooldowns?limit=5&cursor=a.b', undefined, 400, /cursor/],
    ['a cooldown state without limit', '/api/v1/scheduler/cooldowns?state=parked', undefined, 400, /state/],
    ['all with a cooldown limit', '/api/v1/scheduler/cooldowns?limit=5&all=true', undefined, 400, /all/],
    ['a bad store search', '/api/v1/stores?search=%1b%5b2J', undefined, 400, /search/],
    ['a bad store cursor', '/api/v1/stores?cursor=a%2Fb', undefined, 400, /cursor/],
    ['an unknown route', '/api/v1/nope', undefined, 404, /no route/],
  ];

  it.each(badRequests)(
    'rejects %s with a 4xx naming the problem and writes nothing',
    async (_name, path, init, status, message) => {
      const before = await keyCount();
      const res = await m.request(path, init);
      expect(res.status).toBe(status);
      const body = (await res.json()) as { error: string };
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toMatch(message);
      expect(await keyCount()).toBe(before);
    },
  );

  it('has at least 25 bad-request cases', () => {
    expect(badRequests.length).toBeGreaterThanOrEqual(25);
  });
});

describe('cooldown pages, parks and the policy', () => {
  let m: TestMaster;
  let clock: FakeClock;
  const POLICY = { afterFailures: 2, baseSecs: 600, maxSecs: 7200, jitter: 0.1, maxPercent: 100 };

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock, { cooldown: POLICY });
  });
  afterEach(async () => {
    await m.close();
  });

  const pad = (i: number): string => `s${String(i).padStart(2, '0')}`;
  const KINDS = ['merge_wal', 'compact', 'index_id'] as const;

  /**
   * 21 entries of three kinds: 18 with a failure record (1–4 failures, so below the threshold or
   * cooling for windows of several lengths, at several times, some of them tied), 3 of those also
   * parked, and 3 parked stores that never failed (one of them until a given time).
   */
  async function seed(): Promise<void> {
    for (let i = 0; i < 18; i++) {
      for (let f = 0; f < (i % 4) + 1; f++) {
        await m.store.recordFailure(KINDS[i % 3]!, pad(i), `t${i}-${f}`, `e${i}`, 'target');
      }
      if (i % 5 === 0) await clock.advance(1000); // ties in last_failure_ms and until_ms, and distinct ones
    }
    for (const i of [1, 6, 11]) await m.store.park(KINDS[i % 3]!, pad(i), { reason: 'r', by: 'b' });
    await m.store.park('compact', 'p-only', { reason: 'broken manifest', by: 'b' });
    await m.store.park('merge_wal', 'p-only', { reason: 'broken manifest', by: 'b' });
    await m.store.park('compact', 'p-until', { reason: 'restore', by: 'b', untilMs: clock.now() + 3_600_000 });
  }

  const key = (c: { kind: string; target: string }): string => `${c.kind}/${c.target}`;
  const entries = async (path: string): Promise<CooldownView[]> =>
    z.array(CooldownSchema.strict()).parse(await (await m.request(path)).json());

  /** Every entry of a paged list, following its Link headers; checks each page's headers on the way. */
  async function walk(path: string): Promise<{ items: CooldownView[]; pages: number }> {
    const items: CooldownView[] = [];
    let next: string | null = path;
    let pages = 0;
    let total: string | null = null;
    while (next !== null) {
      const res = await m.request(next);
      expect(res.status, next).toBe(200);
      const page = z.array(CooldownSchema.strict()).parse(await res.json());
      items.push(...page);
      total ??= res.headers.get('x-total-count');
      expect(res.headers.get('x-total-count')).toBe(total);
      const link = res.headers.get('link');
      next = link === null ? null : /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
      pages++;
      expect(pages).toBeLessThan(100);
    }
    expect(items).toHaveLength(Number(total));
    return { items, pages };
  }

  /** The order each sort promises: until soonest first, failures and last failure most/latest first, missing last. */
  const ORDERS = {
    until: (c: CooldownView) => c.until_ms ?? Infinity,
    failures: (c: CooldownView) => -c.failures,
    last_failure: (c: CooldownView) => -(c.last_failure_ms ?? -Infinity),
  } as const;
  const byName = (a: CooldownView, b: CooldownView): number =>
    a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.target < b.target ? -1 : a.target > b.target ? 1 : 0;
  const sorted = (sort: keyof typeof ORDERS, xs: readonly CooldownView[]): CooldownView[] =>
    [...xs].sort((a, b) => {
      const [va, vb] = [ORDERS[sort](a), ORDERS[sort](b)];
      return va !== vb ? (va < vb ? -1 : 1) : byName(a, b);
    });

  for (const live of [false, true]) {
    it(`walks several pages of every sort and returns each entry exactly once, in order (served from ${live ? 'the watch index' : 'a store read'})`, async () => {
      await seed();
      if (live) {
        m.events.start();
        await eventually(() => {
          expect(m.events.live).toBe(true);
          expect(m.events.cooldowns.list(undefined, true, clock.now())).toHaveLength(21);
        });
      }
      const everything = await entries('/api/v1/scheduler/cooldowns?all=true');
      expect(everything).toHaveLength(21);
      const skipped = everything.filter((c) => c.state === 'cooling' || c.state === 'parked');
      expect(skipped.filter((c) => c.state === 'parked')).toHaveLength(6);
      expect(skipped.length).toBeGreaterThan(10);
      for (const sort of ['until', 'failures', 'last_failure'] as const) {
        for (const limit of [1, 4, 7]) {
          const { items, pages } = await walk(`/api/v1/scheduler/cooldowns?limit=${limit}&sort=${sort}`);
          expect(pages).toBe(Math.ceil(skipped.length / limit));
          expect(new Set(items.map(key)).size).toBe(items.length);
          expect(items.map(key)).toEqual(sorted(sort, skipped).map(key));
        }
      }
      // The default order is `until`, and a filter by kind pages only that kind.
      const merges = await walk('/api/v1/scheduler/cooldowns?limit=2&kind=merge_wal');
      expect(merges.items.map(key)).toEqual(
        sorted(
          'until',
          skipped.filter((c) => c.kind === 'merge_wal'),
        ).map(key),
      );
    });
  }

  for (const live of [false, true]) {
    it(`filters a page by state, says when a window lapses or a park ends, and sends no Link on the last page (${live ? 'watch index' : 'store read'})`, async () => {
      await seed();
      if (live) {
        m.events.start();
        await eventually(() => {
          expect(m.events.live).toBe(true);
          expect(m.events.cooldowns.list(undefined, true, clock.now())).toHaveLength(21);
        });
      }
      for (const state of ['cooling', 'below', 'parked'] as const) {
        const res = await m.request(`/api/v1/scheduler/cooldowns?limit=200&state=${state}`);
        const page = z.array(CooldownSchema.strict()).parse(await res.json());
        expect(page.length).toBeGreaterThan(0);
        expect(page.every((c) => c.state === state)).toBe(true);
        expect(res.headers.get('x-total-count')).toBe(String(page.length));
        expect(res.headers.get('link')).toBeNull();
      }
      const parked = await entries('/api/v1/scheduler/cooldowns?limit=200&state=parked');
      // A parked store that never failed: no failure fields, failures 0, an empty error.
      expect(parked.find((c) => key(c) === 'compact/p-only')).toEqual({
        kind: 'compact',
        target: 'p-only',
        state: 'parked',
        gating: true,
        failures: 0,
        until_ms: null,
        until: null,
        last_error: '',
        parked: {
          reason: 'broken manifest',
          by: 'b',
          parked_at_ms: clock.now(),
          parked_at: new Date(clock.now()).toISOString(),
          until_ms: null,
          until: null,
        },
      });
      const whole = await entries('/api/v1/scheduler/cooldowns');
      expect(whole.filter((c) => c.state === 'cooling').length).toBeGreaterThan(0);
      // Windows lapse and parks end with time alone, without any write: a later page says so,
      // and so does the whole list, kept or not.
      await clock.advance(2 * 3600_000);
      const later = await entries('/api/v1/scheduler/cooldowns');
      expect(later.map((c) => c.state)).toEqual(['parked', 'parked', 'parked', 'parked', 'parked']);
      expect((await entries('/api/v1/scheduler/cooldowns?limit=200&state=lapsed')).length).toBeGreaterThan(0);
      expect(await entries('/api/v1/scheduler/cooldowns?limit=200&state=cooling')).toEqual([]);
      const stillParked = await entries('/api/v1/scheduler/cooldowns?limit=200&state=parked');
      expect(stillParked.map(key)).not.toContain('compact/p-until');
      expect(stillParked).toHaveLength(5);
    });
  }

  it('parks a store with a reason, lists it as parked, keeps the park through a manual success, and releases it on DELETE', async () => {
    m.events.start();
    await eventually(() => expect(m.events.live).toBe(true));
    const cooldownEvents: (CooldownView | null)[] = [];
    m.events.subscribe((e) => {
      if (e.type === 'cooldown' && e.target === 'broken') cooldownEvents.push(e.cooldown);
    });
    for (let i = 0; i < 2; i++) await m.store.recordFailure('compact', 'broken', `f${i}`, 'Not found', 'target');
    const until = new Date(clock.now() + 86_400_000).toISOString();
    const res = await m.request('/api/v1/scheduler/cooldowns/compact/broken', {
      method: 'PUT',
      body: JSON.stringify({ reason: 'manifest names a lost fragment', until }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const parked = CooldownSchema.strict().parse(await res.json());
    expect(parked).toMatchObject({
      kind: 'compact',
      target: 'broken',
      state: 'parked',
      failures: 2,
      last_error: 'Not found',
      parked: {
        reason: 'manifest names a lost fragment',
        by: '127.0.0.1',
        parked_at_ms: clock.now(),
        parked_at: new Date(clock.now()).toISOString(),
        until_ms: Date.parse(until),
        until,
      },
    });
    expect(m.logs.some((l) => l.msg === 'target parked by operator' && l.target === 'broken')).toBe(true);
    // This master's own park shows at once (before its watch reports it), and then on the stream.
    expect(await entries('/api/v1/scheduler/cooldowns?limit=10&state=parked')).toEqual([parked]);
    await eventually(() => expect(cooldownEvents.at(-1)).toEqual(parked));
    expect(await (await m.request('/metrics')).text()).toMatch(/^master_task_parked\{kind="compact"\} 1$/m);

    // A manual task runs on the parked store; its success clears the count, never the park.
    expect((await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'broken' }))).status).toBe(202);
    const claim = await m.store.claimNext(['compact']);
    await m.store.finish(claim!, { ok: true, detail: 'removed 3 / added 1 fragments' });
    await eventually(() => expect(cooldownEvents.at(-1)).toMatchObject({ state: 'parked', failures: 0 }));
    expect(await entries('/api/v1/scheduler/cooldowns')).toEqual([
      {
        kind: 'compact',
        target: 'broken',
        state: 'parked',
        gating: true,
        failures: 0,
        until_ms: null,
        until: null,
        last_error: '',
        parked: parked.parked,
      },
    ]);

    const released = await m.request('/api/v1/scheduler/cooldowns/compact/broken', { method: 'DELETE' });
    expect(await released.json()).toEqual({ deleted: 1 });
    expect(await m.store.getPark('compact', 'broken')).toBeUndefined();
    expect(await entries('/api/v1/scheduler/cooldowns?limit=10&state=parked')).toEqual([]);
    await eventually(() => expect(cooldownEvents.at(-1)).toBeNull());
    expect(await (await m.request('/metrics')).text()).toMatch(/^master_task_parked\{kind="compact"\} 0$/m);
    expect(m.logs.some((l) => l.msg === 'target released by operator' && l.target === 'broken')).toBe(true);
    expect((await m.request('/api/v1/scheduler/cooldowns/compact/broken', { method: 'DELETE' })).status).toBe(404);
  });

  it('releases both the failure record and the park with one DELETE', async () => {
    for (let i = 0; i < 2; i++) await m.store.recordFailure('merge_wal', 'x', `f${i}`, 'boom', 'target');
    await m.store.park('merge_wal', 'x', { reason: 'r', by: 'b' });
    const res = await m.request('/api/v1/scheduler/cooldowns/merge_wal/x', { method: 'DELETE' });
    expect(await res.json()).toEqual({ deleted: 2 });
    expect(await m.store.getCooldown('merge_wal', 'x')).toBeUndefined();
    expect(await m.store.getPark('merge_wal', 'x')).toBeUndefined();
  });

  it('serves the cooldown policy it runs, equal to its configuration', async () => {
    const res = await m.request('/api/v1/scheduler/policy');
    expect(res.status).toBe(200);
    const policy = PolicySchema.strict().parse(await res.json());
    const c = m.config.cooldown;
    expect(policy).toEqual({
      threshold: c.afterFailures,
      base_secs: c.baseSecs,
      max_secs: c.maxSecs,
      jitter: c.jitter,
      kinds: c.kinds === 'all' ? [...KIND_NAMES] : [...c.kinds],
      guard_percent: c.maxPercent,
      count_infrastructure_failures: c.countInfrastructure,
      master_id: m.config.masterId,
    });
    expect(policy).toMatchObject({ threshold: 2, base_secs: 600, max_secs: 7200, guard_percent: 100 });
  });
});

describe('API authorisation', () => {
  it('requires the bearer token for mutations when MASTER_API_TOKEN is set, but not for reads', async () => {
    const m = await openMaster(endpoints, new FakeClock(), { apiToken: 's3cret-token' });
    try {
      const body = { kind: 'compact', target: 'store-1' };
      expect((await m.request('/api/v1/tasks', jsonBody(body))).status).toBe(401);
      expect((await m.request('/api/v1/tasks', jsonBody(body, { authorization: 'Bearer wrong' }))).status).toBe(401);
      const denied = await m.request('/api/v1/scheduler/cooldowns', { method: 'DELETE' });
      expect(denied.status).toBe(401);
      expect(JSON.stringify(await denied.json())).not.toContain('s3cret');
      expect((await m.request('/api/v1/tasks', jsonBody(body, { authorization: 'Bearer s3cret-token' }))).status).toBe(
        202,
      );
      expect((await m.request('/api/v1/tasks')).status).toBe(200);
      // A non-loopback client with the right token is fine too.
      const remote = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
      const res = await m.app.request(
        '/api/v1/tasks',
        jsonBody({ kind: 'merge_wal', target: 'x' }, { authorization: 'Bearer s3cret-token' }),
        remote,
      );
      expect(res.status).toBe(202);
      // Who parked: the token's name (MASTER_API_TOKEN is `default`), and where from.
      const park = await m.app.request(
        '/api/v1/scheduler/cooldowns/compact/x',
        {
          method: 'PUT',
          body: JSON.stringify({ reason: 'broken' }),
          headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret-token' },
        },
        remote,
      );
      expect(((await park.json()) as CooldownView).parked?.by).toBe('default@10.1.2.3');
      const unauthenticated = await m.app.request(
        '/api/v1/scheduler/cooldowns/compact/x',
        { method: 'PUT', body: JSON.stringify({ reason: 'broken' }), headers: { 'content-type': 'application/json' } },
        remote,
      );
      expect(unauthenticated.status).toBe(401);
    } finally {
      await m.close();
    }
  });

  it('lets only loopback clients mutate when no token is set', async () => {
    const m = await openMaster(endpoints, new FakeClock());
    try {
      const remote = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
      const res = await m.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'x' }), remote);
      expect(res.status).toBe(403);
      expect((await m.app.request('/api/v1/tasks', {}, remote)).status).toBe(200);
      const v6 = { incoming: { socket: { remoteAddress: '::1' } } };
      expect((await m.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'x' }), v6)).status).toBe(202);
      const mapped = { incoming: { socket: { remoteAddress: '::ffff:127.0.0.1' } } };
      expect((await m.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'x' }), mapped)).status).toBe(
        200,
      );
    } finally {
      await m.close();
    }
  });
});

describe('the task watch', () => {
  it('is open from the start and then only for a task list read or an event stream, streams what changes after hello, and closes a linger after its last use', async () => {
    const clock = new FakeClock();
    const opened: string[] = [];
    let open = 0;
    const m = await openMaster(endpoints, clock, {}, 1, (inner) => {
      const plain = interceptKv(inner, (forward, ...args) => forward(...args));
      return {
        ...plain,
        watch: async (...args: Parameters<Kv['watch']>): Promise<Watch> => {
          const w = await plain.watch(...args);
          if (args[0] !== `${m.config.etcd.prefix}/tasks/`) return w;
          opened.push(args[0]);
          open++;
          return { close: () => (open--, w.close()) };
        },
      };
    });
    try {
      // Open from the start; unused for the linger (and one check), it closes.
      m.events.start();
      await eventually(() => expect([m.events.live, m.events.tasksLive, open]).toEqual([true, true, 1]));
      await clock.advance(PAST_TASK_WATCH_LINGER_MS);
      await eventually(() => expect([m.events.tasksLive, open]).toEqual([false, 0]));
      // Enqueues, sweeps and cooldown reads need no task watch.
      await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'a' }));
      await m.request('/api/v1/scheduler/cooldowns');
      expect(opened).toHaveLength(1);

      // A task list read waits for the watch it opens, so its answer can be kept.
      expect((await m.request('/api/v1/tasks')).status).toBe(200);
      expect([m.events.tasksLive, open, opened.length]).toEqual([true, 1, 2]);
      await clock.advance(PAST_TASK_WATCH_LINGER_MS);
      await eventually(() => expect([m.events.tasksLive, open]).toEqual([false, 0]));

      // A stream reopens it before its hello: a task queued after hello is streamed.
      const res = await m.request('/api/v1/events');
      const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const until = async (pattern: RegExp): Promise<void> => {
        while (!pattern.test(text)) text += decoder.decode((await reader.read()).value, { stream: true });
      };
      await until(/event: hello/);
      expect([m.events.tasksLive, open, opened.length]).toEqual([true, 1, 3]);
      await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'b' }));
      await until(/event: task\n.*"target":"b"/);
      await reader.cancel();
      await clock.advance(PAST_TASK_WATCH_LINGER_MS);
      await eventually(() => expect([m.events.tasksLive, open]).toEqual([false, 0]));
    } finally {
      await m.close();
    }
  });
});

describe('etcd out of space', () => {
  it('answers a write 503 saying what the operator must do, and still serves reads', async () => {
    let full = false;
    const m = await openMaster(endpoints, new FakeClock(), {}, 1, (inner) =>
      interceptKv(inner, (forward, ...args) =>
        full ? Promise.reject(new StoreFullError('etcd is out of space (NOSPACE alarm: …)')) : forward(...args),
      ),
    );
    try {
      expect((await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'a' }))).status).toBe(202);
      full = true;
      const refused = await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'b' }));
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        error: 'etcd is out of space and refuses writes until an operator compacts, defragments and disarms it',
      });
      // The master's log says it too, with the cause, as the loops' would.
      expect(m.logs.filter((l) => l.level === 40 && String(l.msg).includes('answered 503'))).toMatchObject([
        {
          msg: expect.stringMatching(
            /^etcd is out of space and refuses writes \(POST \/api\/v1\/tasks answered 503\): compact and defragment it/,
          ) as unknown,
          err: { message: expect.stringContaining('NOSPACE alarm') as unknown },
        },
      ]);
      const list = await m.request('/api/v1/tasks');
      expect(list.status).toBe(200);
      expect(((await list.json()) as { total: number }).total).toBe(1);
    } finally {
      await m.close();
    }
  });
});

describe('lists while etcd is unreachable', () => {
  let m: TestMaster;
  let kv: SwitchableKv;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock, {}, 1, (inner) => (kv = switchableKv(inner)));
    m.events.start();
    await eventually(() => expect(m.events.live).toBe(true));
    await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'a' }));
    for (let i = 0; i < 3; i++) await m.store.recordFailure('compact', 'a', `t${i}`, 'boom', 'target');
    await m.store.putStats([
      { name: 'a', pending_wal_generations: 1, fragment_count: 1, row_count: 1, owners: [], scanned_at: 0 },
    ]);
    // The cooldown lists follow etcd through the master's watch: on a loaded machine its first
    // read may come before the watch has delivered the failures above, and a list kept then
    // would change under the tests' feet.
    await eventually(async () => {
      const res = await m.request('/api/v1/scheduler/cooldowns?all=true');
      expect(((await res.json()) as { failures: number }[]).map((c) => c.failures)).toEqual([3]);
    });
  });
  afterEach(async () => {
    kv.down = false;
    await m.close();
  });

  const LISTS = [
    '/api/v1/tasks',
    '/api/v1/tasks?kind=compact&limit=5',
    '/api/v1/scheduler/cooldowns',
    '/api/v1/scheduler/cooldowns?all=true',
    '/api/v1/scheduler/cooldowns?limit=5',
    '/api/v1/scheduler/cooldowns?limit=5&state=below&sort=failures',
    '/api/v1/stores',
    '/api/v1/masters',
    '/api/v1/workers',
  ];

  it('answers 503, never a cached copy, on every list once the last probe is older than its interval, though the event watch still looks live', async () => {
    const before = new Map<string, string>();
    for (const path of LISTS) {
      for (let i = 0; i < 2; i++) {
        const res = await m.request(path);
        expect(res.status, path).toBe(200);
        before.set(path, await res.text());
      }
    }
    kv.down = true;
    await clock.advance(PROBE_VOUCH_MS);
    expect(m.events.live).toBe(true);
    for (const path of LISTS) {
      const res = await m.request(path);
      expect(res.status, path).toBe(503);
      expect(await res.json(), path).toEqual({ error: 'the store (etcd) is unavailable; retry later' });
    }
    kv.down = false;
    for (const path of LISTS) {
      const res = await m.request(path);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toBe(before.get(path));
    }
  });

  it('logs why it answered 503 once per outage, as the loops do: one warning naming the cause, the rest at debug, a reminder a minute', async () => {
    kv.down = true;
    await clock.advance(PROBE_VOUCH_MS);
    const from = m.logs.length;
    for (const path of ['/api/v1/tasks', '/api/v1/stores', '/api/v1/tasks'])
      expect((await m.request(path)).status).toBe(503);
    const outageLines = (): Record<string, unknown>[] =>
      m.logs
        .slice(from)
        .filter((l) => String(l.msg).includes('answered 503') || String(l.msg).startsWith('etcd still'));
    const warned = outageLines().filter((l) => l.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      msg: 'etcd unreachable (GET /api/v1/tasks answered 503); retrying, and logging at debug until it is back',
      method: 'GET',
      path: '/api/v1/tasks',
      err: { message: expect.stringContaining('etcd is unreachable (test)') as unknown },
    });
    expect(
      outageLines()
        .filter((l) => l.level === 20)
        .map((l) => l.msg),
    ).toEqual(['GET /api/v1/stores answered 503', 'GET /api/v1/tasks answered 503']);
    await clock.advance(OUTAGE_REMINDER_MS);
    expect((await m.request('/api/v1/stores')).status).toBe(503);
    expect(
      outageLines()
        .filter((l) => l.level === 40)
        .map((l) => l.msg),
    ).toEqual([warned[0]?.msg, expect.stringMatching(/^etcd still unreachable after \d+ s$/)]);
  });

  it.each(['/api/v1/scheduler/cooldowns?all=true', '/api/v1/scheduler/cooldowns?limit=5'])(
    'still serves a kept list without re-reading it: one probe shared by every reader of an interval, no range read (%s)',
    async (path) => {
      const first = await (await m.request(path)).text();
      await clock.advance(PROBE_VOUCH_MS);
      const ranges = kv.calls.get('range') ?? 0;
      const probes = kv.calls.get('revision') ?? 0;
      const bodies = await Promise.all(Array.from({ length: 10 }, async () => (await m.request(path)).text()));
      expect(bodies).toEqual(Array.from({ length: 10 }, () => first));
      expect(kv.calls.get('range') ?? 0).toBe(ranges);
      expect((kv.calls.get('revision') ?? 0) - probes).toBe(1);
    },
  );
});
