import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMaster, auditEntry, cooldown, startFakeMaster } from '../../test/fake-master.js';
import { ApiError, ConnectionError, MaintdClient, needsNewerMaster, nextLink } from './client.js';

let fake: FakeMaster | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

describe('MaintdClient', () => {
  it('reads cooldowns in pages following Link rel=next, every state, and strips terminal escapes from worker text', async () => {
    fake = await startFakeMaster();
    for (let i = 0; i < 450; i++)
      fake.state.cooldowns.set(`merge_wal/c${i}`, cooldown(`c${i}`, { until_ms: Date.now() + 600_000 }));
    fake.state.cooldowns.set('merge_wal/below', cooldown('below', { until_ms: null }));
    fake.state.cooldowns.set('merge_wal/lapsed', cooldown('lapsed', { until_ms: Date.now() - 1000 }));
    fake.state.cooldowns.set(
      'merge_wal/a',
      cooldown('a', { until_ms: Date.now() + 600_000, last_error: 'Not found\u001b[2J\u001b]0;owned\u0007: x.lance' }),
    );
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const list = await client.cooldowns();
    expect(list).toHaveLength(453);
    expect(list.find((c) => c.target === 'a')?.last_error).toBe('Not found: x.lance');
    expect(list.some((c) => c.target === 'lapsed')).toBe(true);
    const reads = fake.state.requests.filter((r) => r.startsWith('GET /api/v1/scheduler/cooldowns'));
    expect(reads).toEqual([
      'GET /api/v1/scheduler/cooldowns?limit=200',
      'GET /api/v1/scheduler/cooldowns?limit=200&cursor=200',
      'GET /api/v1/scheduler/cooldowns?limit=200&cursor=400',
      'GET /api/v1/scheduler/cooldowns?limit=200&state=below',
      'GET /api/v1/scheduler/cooldowns?limit=200&state=lapsed',
    ]);
  });

  it('reads the policy', async () => {
    fake = await startFakeMaster();
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    expect((await client.policy()).threshold).toBe(3);
  });

  it('parks with a reason (PUT) and releases (DELETE), a release of nothing being false', async () => {
    fake = await startFakeMaster();
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const parked = await client.park('merge_wal', 'broken/1', 'fragment lost');
    expect(parked).toMatchObject({ state: 'parked', parked: { reason: 'fragment lost' } });
    expect(fake.state.requests).toContain('PUT /api/v1/scheduler/cooldowns/merge_wal/broken%2F1');
    expect(await client.release('merge_wal', 'broken/1')).toBe(true);
    expect(await client.release('merge_wal', 'broken/1')).toBe(false);
    await expect(client.park('merge_wal', 'x', '')).rejects.toThrow(/HTTP 400: reason/);
  });

  it('reads one pair’s detail with its timeline; 404 is "none" from a master with the route, "unsupported" from one without', async () => {
    fake = await startFakeMaster();
    const c = cooldown('a');
    fake.state.cooldowns.set('merge_wal/a', c);
    const event = {
      id: '01a23766-0000-7000-8000-000000000001',
      kind: 'merge_wal',
      target: 'a',
      type: 'reset',
      at_ms: 1_700_000_000_000,
      at: '2023-11-14T22:13:20.000Z',
      by: 'ops\u001b[31m@10.0.0.7',
    };
    fake.state.timelines.set('merge_wal/a', [event]);
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const answer = await client.cooldownDetail('merge_wal', 'a');
    expect(answer.status).toBe('ok');
    expect(answer.status === 'ok' && answer.detail.timeline.map((e) => e.by)).toEqual(['ops@10.0.0.7']);
    expect(await client.cooldownDetail('merge_wal', 'nothing')).toEqual({ status: 'none' });
    fake.state.legacy = true;
    expect(await client.cooldownDetail('merge_wal', 'a')).toEqual({ status: 'unsupported' });
  });

  it('sends a bulk action’s filter and dry run as they are; a master that predates them refuses, changing nothing', async () => {
    fake = await startFakeMaster();
    fake.state.cooldowns.set('merge_wal/a', cooldown('a', { last_error: 'lost fragment x' }));
    fake.state.cooldowns.set('merge_wal/b', cooldown('b', { last_error: 'timeout' }));
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const dry = await client.bulkPark({ q: 'Lost Fragment', state: 'any' }, 'restore', true);
    expect([dry.dry_run, dry.count, dry.done, dry.entries.map((e) => e.target)]).toEqual([true, 1, 0, ['a']]);
    expect(fake.state.cooldowns.get('merge_wal/a')?.parked).toBeUndefined();
    const done = await client.bulkReset({ q: 'Lost Fragment', state: 'any' }, false);
    expect([done.count, done.done]).toEqual([1, 1]);
    expect(fake.state.requests.filter((r) => !r.startsWith('GET'))).toEqual([
      'PUT /api/v1/scheduler/cooldowns?state=any&q=Lost+Fragment&dry_run=true',
      'DELETE /api/v1/scheduler/cooldowns?state=any&q=Lost+Fragment&dry_run=false',
    ]);
    fake.state.legacy = true;
    const refused = await client.bulkReset({ q: 'timeout' }, true).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).message).toBe("HTTP 400: unknown query parameter 'q'");
    expect(needsNewerMaster(refused)).toBe(true);
    expect(needsNewerMaster(await client.bulkPark({ q: 'timeout' }, 'r', true).catch((e: unknown) => e))).toBe(true);
    expect(fake.state.cooldowns.has('merge_wal/b')).toBe(true);
  });

  it('searches tasks with q=', async () => {
    fake = await startFakeMaster();
    const t = (n: number, target: string, error?: string) => ({
      id: `01a23766-0000-7000-8000-00000000000${n}`,
      kind: 'merge_wal',
      target,
      state: error ? ('failed' as const) : ('done' as const),
      source: 'sweep' as const,
      enqueued_at: 1,
      attempt: 1,
      ...(error ? { error } : {}),
    });
    fake.state.tasks.push(t(1, 'orders-eu'), t(2, 'events', 'Disk FULL'), t(3, 'other'));
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const page = await client.searchTasks('disk full', 50);
    expect(page.tasks.map((x) => x.target)).toEqual(['events']);
    expect(fake.state.requests.at(-1)).toBe('GET /api/v1/tasks?limit=50&q=disk%20full');
  });

  it('reads the next page from a Link header, whatever else it holds', () => {
    expect(nextLink('</a?cursor=2>; rel="next"')).toBe('/a?cursor=2');
    expect(nextLink('</p>; rel="prev", </n>; rel=next')).toBe('/n');
    expect(nextLink('</p>; rel="prev"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });

  it('follows the stores cursor across pages', async () => {
    fake = await startFakeMaster({
      stores: Array.from({ length: 450 }, (_, i) => ({
        name: `s${String(i).padStart(4, '0')}`,
        pending_wal_generations: i,
        fragment_count: 1,
        row_count: 1,
        owners: [],
        scanned_at: 0,
      })),
    });
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const { stores, total } = await client.stores();
    expect(stores).toHaveLength(450);
    expect(total).toBe(450);
    expect(fake.state.requests.filter((r) => r.startsWith('GET /api/v1/stores'))).toHaveLength(3);
  });

  it('sends the bearer token with every request', async () => {
    fake = await startFakeMaster();
    const seen: (string | null)[] = [];
    const spy: typeof fetch = (input, init) => {
      seen.push(new Request(input, init).headers.get('authorization'));
      return fetch(input, init);
    };
    const client = new MaintdClient({ url: fake.url, token: 's3cret', timeoutMs: 2000, fetch: spy });
    await client.masters();
    await client.metrics();
    await client.resetCooldown('merge_wal', 'nope');
    expect(seen).toEqual(['Bearer s3cret', 'Bearer s3cret', 'Bearer s3cret']);
  });

  it('enqueues manually and tells a new task from a dedupe hit', async () => {
    fake = await startFakeMaster();
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const { task, created } = await client.enqueue('merge_wal', 'orders');
    expect(created).toBe(true);
    expect(task).toMatchObject({ kind: 'merge_wal', target: 'orders', source: 'manual' });
  });

  it('reads the newest of the audit trail, leaving out a malformed entry; from a master without one, undefined', async () => {
    fake = await startFakeMaster();
    const good = auditEntry({ reason: 'disk\u001b[2J swap', action: 'cooldown.park', outcome: 'parked' });
    fake.state.audit = [good, { ...auditEntry({ id: 'bad' }), at_ms: 'yesterday' } as never];
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    expect(await client.audit(5)).toEqual([{ ...good, reason: 'disk swap' }]);
    expect(fake.state.requests.at(-1)).toBe('GET /api/v1/audit?limit=5');
    fake.state.legacy = true;
    expect(await client.audit(5)).toBeUndefined();
  });

  it('reads the capacity and the causes; from a master that predates them, undefined rather than an error', async () => {
    fake = await startFakeMaster();
    fake.state.causes = [
      {
        cause: '3fa2b1c9d0e4',
        example: 'Not found\u001b]0;owned\u0007: x.lance',
        kinds: ['merge_wal'],
        targets: 2,
        failures: 5,
        first_failure: '2023-11-14T21:00:00Z',
        last_failure: '2023-11-14T22:00:00Z',
      },
    ];
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    expect((await client.capacity())?.window_secs).toBe(3600);
    expect((await client.causes())?.map((c) => c.example)).toEqual(['Not found: x.lance']);
    fake.state.legacy = true;
    expect(await client.capacity()).toBeUndefined();
    expect(await client.causes()).toBeUndefined();
  });

  it('sends a cause to a bulk action as cause=, and nothing of a search', async () => {
    fake = await startFakeMaster();
    fake.state.cooldowns.set('merge_wal/a', cooldown('a', { cause: '3fa2b1c9d0e4' }));
    fake.state.cooldowns.set('merge_wal/b', cooldown('b', { cause: 'aaaaaaaaaaaa' }));
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    const r = await client.bulkPark({ cause: '3fa2b1c9d0e4' }, 'why', true);
    expect(r.count).toBe(1);
    expect(fake.state.requests.at(-1)).toBe('PUT /api/v1/scheduler/cooldowns?cause=3fa2b1c9d0e4&dry_run=true');
  });

  it('resets a cooldown, and reports one that was already gone as false', async () => {
    fake = await startFakeMaster();
    fake.state.cooldowns.set('merge_wal/a', cooldown('a'));
    const client = new MaintdClient({ url: fake.url, timeoutMs: 2000 });
    expect(await client.resetCooldown('merge_wal', 'a')).toBe(true);
    expect(await client.resetCooldown('merge_wal', 'a')).toBe(false);
  });

  it('turns an error answer into an ApiError with the master’s message', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'missing or invalid bearer token\u001b[5m' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new MaintdClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
      const err = await client.enqueue('merge_wal', 'x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(401);
      expect((err as ApiError).message).toBe('HTTP 401: missing or invalid bearer token');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('gives up on a master that does not answer within the timeout', async () => {
    fake = await startFakeMaster({ hang: true });
    const client = new MaintdClient({ url: fake.url, timeoutMs: 200 });
    const started = performance.now();
    const err = await client.masters().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toBe('no answer within 0.2s');
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('says "connection refused" when nothing listens', async () => {
    const client = new MaintdClient({ url: await refusedUrl(), timeoutMs: 2000 });
    await expect(client.workers()).rejects.toThrow(new ConnectionError('connection refused'));
  });
});
