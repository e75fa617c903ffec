import { AuditPageSchema, EventMessageSchema } from '@maintd/api';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { tokenDigest } from './auth/api-token.js';
import { FakeClock, type TestMaster, eventually, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
const SECRET = 'alice-secret-token-0123456789';
const BOB = 'bob-secret-token-9876543210';
const remote = { incoming: { socket: { remoteAddress: '10.0.0.7' } } };

describe('the audit trail over the API', () => {
  let m: TestMaster;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock, { cooldown: { afterFailures: 1, maxPercent: 100 } }, 1, undefined, {
      tokens: () => [
        { name: 'alice', scope: 'operate', digest: tokenDigest(SECRET) },
        { name: 'bob', scope: 'operate', digest: tokenDigest(BOB) },
      ],
    });
  });
  afterEach(async () => {
    await m.close();
  });

  /** A request from 10.0.0.7 with alice's token (or `token`). */
  const as = (path: string, init: RequestInit = {}, token = SECRET): Promise<Response> =>
    Promise.resolve(
      m.app.request(
        path,
        { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` } },
        remote,
      ),
    );
  const page = async (query = ''): Promise<ReturnType<typeof AuditPageSchema.parse>> => {
    const res = await as(`/api/v1/audit${query}`);
    expect(res.status).toBe(200);
    return AuditPageSchema.parse(await res.json());
  };

  it('records every mutation route once, naming the token’s name and the client, never the token', async () => {
    for (const t of ['a', 'b', 'c']) await m.store.recordFailure('compact', t, `${t}-1`, 'boom', 'target');
    const enqueue = await as('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'a' }));
    expect(enqueue.status).toBe(202);
    // A dedupe hit commits nothing: no entry.
    expect((await as('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'a' }))).status).toBe(200);
    expect(
      (await as('/api/v1/scheduler/cooldowns/compact/a', { ...jsonBody({ reason: 'disk swap' }), method: 'PUT' }))
        .status,
    ).toBe(200);
    // The record and the park: two transactions, two entries.
    expect((await as('/api/v1/scheduler/cooldowns/compact/a', { method: 'DELETE' })).status).toBe(200);
    expect(
      (await as('/api/v1/scheduler/cooldowns?kind=compact', { ...jsonBody({ reason: 'rack 7' }), method: 'PUT' }))
        .status,
    ).toBe(200);
    expect((await as('/api/v1/scheduler/cooldowns?kind=compact&dry_run=true', { method: 'DELETE' })).status).toBe(200);
    expect((await as('/api/v1/scheduler/cooldowns?kind=compact&state=any', { method: 'DELETE' })).status).toBe(200);
    expect((await as('/api/v1/cluster', { ...jsonBody({ preserve_downgrade: true }), method: 'PATCH' })).status).toBe(
      200,
    );

    const { entries, next_cursor } = await page();
    expect(next_cursor).toBeNull();
    const brief = entries.map((e) => [e.action, e.outcome, e.target ?? '', e.count ?? ''].join('|'));
    // The reset and the release of one DELETE commit in parallel: either may be the newer.
    expect([...brief.slice(0, 3), ...brief.slice(3, 5).sort(), ...brief.slice(5)]).toEqual([
      'cluster.update|preserve_downgrade_set||',
      'cooldowns.reset|reset||2',
      'cooldowns.park|parked||2',
      'cooldown.release|released|a|',
      'cooldown.reset|reset|a|',
      'cooldown.park|parked|a|',
      'task.enqueue|queued|a|',
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ who: 'alice', client: '10.0.0.7', master_id: m.store.masterId });
      expect(e.at).toBe(new Date(e.at_ms).toISOString());
    }
    expect(entries[1]).toMatchObject({
      route: 'DELETE /api/v1/scheduler/cooldowns',
      filter: { kind: 'compact', state: 'any' },
      matched: 2,
    });
    expect(entries[2]).toMatchObject({ reason: 'rack 7', until_ms: null, until: null, filter: { kind: 'compact' } });
    expect(entries.at(-1)!.task_id).toBe(((await enqueue.json()) as { id: string }).id);
    // One info line per entry, with the name and never the token.
    const lines = m.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('audit: '));
    expect(lines).toHaveLength(entries.length);
    expect(JSON.stringify(m.logs)).not.toContain(SECRET);
    expect((await m.kv.range(`${m.config.etcd.prefix}/`)).kvs.some((kv) => kv.value.includes(SECRET))).toBe(false);
  });

  it('pages the trail newest first and filters it by who, action, kind and target', async () => {
    for (const t of ['s-1', 's-2', 's-3']) {
      await as(`/api/v1/scheduler/cooldowns/compact/${t}`, { ...jsonBody({ reason: 'r' }), method: 'PUT' });
      await as(`/api/v1/scheduler/cooldowns/merge_wal/${t}`, { ...jsonBody({ reason: 'r' }), method: 'PUT' }, BOB);
    }
    const first = await as('/api/v1/audit?limit=4');
    const body = AuditPageSchema.parse(await first.json());
    expect(body.entries.map((e) => `${e.kind}/${e.target}`)).toEqual([
      'merge_wal/s-3',
      'compact/s-3',
      'merge_wal/s-2',
      'compact/s-2',
    ]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')![1]!;
    const second = AuditPageSchema.parse(await (await as(next)).json());
    expect(second.entries.map((e) => `${e.kind}/${e.target}`)).toEqual(['merge_wal/s-1', 'compact/s-1']);
    expect(second.next_cursor).toBeNull();
    expect((await page('?who=bob')).entries.map((e) => e.kind)).toEqual(['merge_wal', 'merge_wal', 'merge_wal']);
    expect((await page('?who=alice&target=s-2')).entries.map((e) => e.kind)).toEqual(['compact']);
    expect((await page('?kind=merge_wal&limit=1')).next_cursor).not.toBeNull();
    expect((await page('?action=task.enqueue')).entries).toEqual([]);
    expect((await as('/api/v1/audit?cursor=nope')).status).toBe(400);
  });

  it('streams each entry as an audit event', async () => {
    m.events.start();
    await eventually(() => expect(m.events.live).toBe(true));
    const seen: unknown[] = [];
    const off = m.events.subscribe((e) => {
      if (e.type === 'audit') seen.push(EventMessageSchema.parse({ event: 'audit', id: String(e.revision), data: e }));
    });
    try {
      await as('/api/v1/scheduler/cooldowns/compact/x', { ...jsonBody({ reason: 'r' }), method: 'PUT' });
      await eventually(() => expect(seen).toHaveLength(1));
      expect(seen[0]).toMatchObject({ data: { entry: { who: 'alice', action: 'cooldown.park', target: 'x' } } });
    } finally {
      off();
    }
  });
});
