import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { FakeClock, type TestMaster, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');

describe('the cluster feature gates over the API', () => {
  let m: TestMaster;

  beforeEach(async () => {
    m = await openMaster(endpoints, new FakeClock());
  });
  afterEach(async () => {
    await m.close();
  });

  /** Registers a master of a newer release, as its session would, understanding `held_tasks` and a feature of its own. */
  const registerNewer = (): Promise<unknown> =>
    m.kv.put(
      m.store.keys.master('newer-1'),
      JSON.stringify({
        id: 'newer-1',
        host: 'h2',
        pid: 7,
        version: '0.2.0',
        started_at: 0,
        pools: { general: 4 },
        kinds: ['merge_wal', 'compact', 'index_id'],
        features: ['held_tasks', 'quarantine'],
        region: 'eu-1',
      }),
    );
  const patch = (body: unknown, query = ''): Promise<Response> =>
    m.request(`/api/v1/cluster${query}`, { ...jsonBody(body), method: 'PATCH' });

  it('says in GET /api/v1/masters which versions run and which feature waits for which master', async () => {
    await registerNewer();
    const body = (await (await m.request('/api/v1/masters')).json()) as {
      masters: { id: string; features?: string[] }[];
      cluster: unknown;
    };
    expect(body.masters.map((x) => [x.id, x.features])).toEqual(
      expect.arrayContaining([
        [m.config.masterId, ['held_tasks']],
        ['newer-1', ['held_tasks', 'quarantine']],
      ]),
    );
    expect(body.cluster).toEqual({
      versions: ['0.0.0', '0.2.0'],
      preserve_downgrade: false,
      features: [
        {
          name: 'held_tasks',
          state: 'ready',
          understood_by: [m.config.masterId, 'newer-1'].sort(),
          waiting_for: [],
          enabled_at: null,
        },
        {
          name: 'quarantine',
          state: 'waiting',
          understood_by: ['newer-1'],
          waiting_for: [m.config.masterId],
          enabled_at: null,
        },
      ],
    });
  });

  it('holds new features off with PATCH /api/v1/cluster, naming who, and lets them on again', async () => {
    const held = await patch({ preserve_downgrade: true });
    expect(held.status).toBe(200);
    // This release's own feature, which every live master understands, is held off.
    expect(await held.json()).toEqual({
      versions: ['0.0.0'],
      preserve_downgrade: true,
      features: [
        { name: 'held_tasks', state: 'held', understood_by: [m.config.masterId], waiting_for: [], enabled_at: null },
      ],
    });
    expect(await m.store.cluster.read()).toMatchObject({ preserve_downgrade: true, updated_by: '127.0.0.1' });
    const masters = (await (await m.request('/api/v1/masters')).json()) as { cluster: { preserve_downgrade: boolean } };
    expect(masters.cluster.preserve_downgrade).toBe(true);
    expect(await (await patch({ preserve_downgrade: false })).json()).toMatchObject({ preserve_downgrade: false });
    expect(await m.store.cluster.read()).toMatchObject({ preserve_downgrade: false });
  });

  it('refuses a malformed change, an unknown field or parameter with 400 naming it, and changes nothing', async () => {
    for (const [body, query, field] of [
      [{}, '', 'preserve_downgrade'],
      [{ preserve_downgrade: 'yes' }, '', 'preserve_downgrade'],
      [{ preserve_downgrade: true, finalize: true }, '', 'finalize'],
      [{ preserve_downgrade: true }, '?dry_run=true', 'dry_run'],
    ] as const) {
      const res = await patch(body, query);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(field);
    }
    expect(await m.store.cluster.read()).toBeUndefined();
  });

  it('needs the bearer token for PATCH /api/v1/cluster from another host', async () => {
    const res = await m.app.request(
      '/api/v1/cluster',
      { ...jsonBody({ preserve_downgrade: true }), method: 'PATCH' },
      {
        incoming: { socket: { remoteAddress: '10.0.0.7' } },
      },
    );
    expect(res.status).toBe(403);
    expect(await m.store.cluster.read()).toBeUndefined();
  });
});
