import { openApiDocument } from '@maintd/api';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { FakeClock, type TestMaster, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');

/** A request each mutation of the API would accept, by operationId: every mutation needs one here. */
const VALID: Record<string, { readonly path: string; readonly init: RequestInit }> = {
  enqueueTask: { path: '/api/v1/tasks', init: jsonBody({ kind: 'compact', target: 'store-1' }) },
  parkTarget: {
    path: '/api/v1/scheduler/cooldowns/compact/store-1',
    init: { ...jsonBody({ reason: 'lost fragment' }), method: 'PUT' },
  },
  resetCooldown: { path: '/api/v1/scheduler/cooldowns/merge_wal/store-1', init: { method: 'DELETE' } },
  resetCooldowns: { path: '/api/v1/scheduler/cooldowns?kind=merge_wal', init: { method: 'DELETE' } },
  parkTargets: {
    path: '/api/v1/scheduler/cooldowns?kind=merge_wal&q=quota',
    init: { ...jsonBody({ reason: 'quota' }), method: 'PUT' },
  },
  patchCluster: { path: '/api/v1/cluster', init: { ...jsonBody({ preserve_downgrade: true }), method: 'PATCH' } },
};

/** Every mutation of the OpenAPI document: what the master serves, whoever adds a route. */
const MUTATIONS = Object.entries(openApiDocument().paths ?? {}).flatMap(([path, item]) =>
  (['post', 'put', 'patch', 'delete'] as const).flatMap((method) => {
    const id = item?.[method]?.operationId;
    return id ? [{ name: `${method.toUpperCase()} ${path}`, id }] : [];
  }),
);

const withQuery = (path: string, extra: string): string => `${path}${path.includes('?') ? '&' : '?'}${extra}`;

describe('a query parameter or body field the API does not know', () => {
  let m: TestMaster;

  beforeEach(async () => {
    m = await openMaster(endpoints, new FakeClock());
    // A cooling merge_wal window and a park on store-1, a merge_wal count on store-2.
    for (let i = 0; i < 3; i++)
      await m.store.recordFailure('merge_wal', 'store-1', `a${i}`, 'quota exceeded', 'target');
    await m.store.recordFailure('merge_wal', 'store-2', 'b0', 'lost fragment', 'target');
    await m.store.park('merge_wal', 'store-1', { reason: 'restore', by: 'op' });
  });
  afterEach(async () => {
    await m.close();
  });

  /** Every key of this master's prefix with its revision: equal snapshots mean nothing was written. */
  const snapshot = async (): Promise<string[]> =>
    (await m.kv.range(`${m.config.etcd.prefix}/`)).kvs.map((kv) => `${kv.key}@${kv.modRevision}`);

  const errorOf = async (res: Response): Promise<string> => {
    const body = (await res.json()) as { error: string };
    expect(Object.keys(body)).toEqual(['error']);
    return body.error;
  };

  it('answers a filtered dry run of the bulk reset with its count and resets nothing', async () => {
    const before = await snapshot();
    const res = await m.request('/api/v1/scheduler/cooldowns?kind=merge_wal&q=quota&dry_run=true', {
      method: 'DELETE',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      dry_run: true,
      count: 1,
      done: 0,
      deleted: 0,
      entries: [{ kind: 'merge_wal', target: 'store-1', last_error: 'quota exceeded' }],
    });
    expect((await m.store.listCooldowns({ all: true })).map((c) => c.target)).toEqual(['store-1', 'store-2']);
    expect(await snapshot()).toEqual(before);
    expect(await (await m.request('/metrics')).text()).not.toMatch(/^master_cooldown_cleared_total\{/m);
  });

  it('refuses a bulk reset with a parameter of a later release, naming each, and resets nothing', async () => {
    const before = await snapshot();
    const res = await m.request('/api/v1/scheduler/cooldowns?kind=merge_wal&older_than=1h&confirm=yes', {
      method: 'DELETE',
    });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("unknown query parameters 'older_than', 'confirm'");
    expect(await snapshot()).toEqual(before);
  });

  it('covers every mutation of the OpenAPI document with a request it would accept', () => {
    expect(MUTATIONS.length).toBeGreaterThanOrEqual(4);
    for (const { name, id } of MUTATIONS) expect(VALID, `${name} (${id}) needs a request in VALID`).toHaveProperty(id);
  });

  it.each(MUTATIONS)(
    'refuses an unknown query parameter on $name with 400 naming it, and writes nothing',
    async ({ id }) => {
      const { path, init } = VALID[id]!;
      const before = await snapshot();
      // A parameter no release defines, as a later release's would be to this one.
      const res = await m.request(withQuery(path, 'confirm=yes'), init);
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toBe("unknown query parameter 'confirm'");
      expect(await snapshot()).toEqual(before);
    },
  );

  it('keeps the cooldown and the park when a single reset carries an unknown parameter', async () => {
    const res = await m.request('/api/v1/scheduler/cooldowns/merge_wal/store-1?force', { method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("unknown query parameter 'force'");
    expect(await m.store.getCooldown('merge_wal', 'store-1')).toMatchObject({ failures: 3 });
    expect(await m.store.getPark('merge_wal', 'store-1')).toMatchObject({ reason: 'restore' });
  });

  it('parks nothing and enqueues nothing when the request carries an unknown parameter', async () => {
    const park = await m.request('/api/v1/scheduler/cooldowns/compact/store-3?until_ms=1', {
      ...jsonBody({ reason: 'lost fragment' }),
      method: 'PUT',
    });
    expect(park.status).toBe(400);
    expect(await errorOf(park)).toBe("unknown query parameter 'until_ms'");
    expect(await m.store.getPark('compact', 'store-3')).toBeUndefined();
    const task = await m.request('/api/v1/tasks?priority=high', jsonBody({ kind: 'compact', target: 'store-3' }));
    expect(task.status).toBe(400);
    expect(await errorOf(task)).toBe("unknown query parameter 'priority'");
    expect((await m.store.listTasks({ limit: 10 })).tasks).toEqual([]);
  });

  it('matches parameter names exactly: a known name in another case is unknown', async () => {
    const res = await m.request('/api/v1/scheduler/cooldowns?Kind=compact', { method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("unknown query parameter 'Kind'");
    expect(await m.store.listCooldowns({ all: true })).toHaveLength(2);
  });

  it('names an unknown parameter before a malformed known one', async () => {
    const res = await m.request('/api/v1/scheduler/cooldowns?kind=Re-pair&confirm=yes', { method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("unknown query parameter 'confirm'");
  });

  it('refuses unknown body fields of a park and an enqueue with 400 naming them, and writes nothing', async () => {
    const before = await snapshot();
    const park = await m.request('/api/v1/scheduler/cooldowns/compact/store-3', {
      ...jsonBody({ reason: 'lost fragment', dry_run: true }),
      method: 'PUT',
    });
    expect(park.status).toBe(400);
    expect(await errorOf(park)).toBe("unknown field 'dry_run'");
    const task = await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'x', priority: 1, after: 5 }));
    expect(task.status).toBe(400);
    expect(await errorOf(task)).toBe("unknown fields 'priority', 'after'");
    expect(await snapshot()).toEqual(before);
  });

  it('ignores an unknown query parameter on a read, which changes nothing', async () => {
    const plain = await m.request('/api/v1/scheduler/cooldowns?all=true');
    const searched = await m.request('/api/v1/scheduler/cooldowns?all=true&older_than=1h');
    expect(searched.status).toBe(200);
    expect(await searched.json()).toEqual(await plain.json());
    expect((await m.request('/api/v1/tasks?limit=5&dry_run=true')).status).toBe(200);
    expect((await m.request('/api/v1/scheduler/cooldowns?limit=5&older_than=1h')).status).toBe(200);
  });
});
