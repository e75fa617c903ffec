import { KIND_NAMES } from '@maintd/scheduler';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { FakeClock, type TestMaster, eventually, jsonBody, openMaster } from '../test/harness.js';

const endpoints = inject('etcdEndpoints');
/** A task as a newer master running a kind this one does not (`repair`) writes it. */
const REPAIR_ID = '019b76da-a800-7000-8000-000000000001';

describe('kinds this master does not run', () => {
  let m: TestMaster;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    m = await openMaster(endpoints, clock);
  });
  afterEach(async () => {
    await m.close();
  });

  /** Writes a queued `repair` task straight into the store, with a field this release does not know. */
  async function writeRepairTask(): Promise<void> {
    const { keys } = m.store;
    const record = {
      id: REPAIR_ID,
      kind: 'repair',
      target: 'store-9',
      state: 'queued',
      source: 'manual',
      enqueued_at: clock.now(),
      attempt: 0,
      priority: 3,
    };
    await m.kv.put(keys.task(REPAIR_ID), JSON.stringify(record));
    await m.kv.put(keys.queue('repair', REPAIR_ID), REPAIR_ID);
  }

  for (const live of [false, true]) {
    it(`lists a queued task of another release's kind with 200, filtered by it too, and never claims it (${live ? 'watch' : 'store read'})`, async () => {
      if (live) m.events.start();
      await writeRepairTask();
      const own = (await (
        await m.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 'store-1' }))
      ).json()) as {
        id: string;
      };
      const all = await eventually(async () => {
        const res = await m.request('/api/v1/tasks?limit=10');
        expect(res.status).toBe(200);
        const page = (await res.json()) as { tasks: { id: string; kind: string }[]; total: number };
        expect(page.total).toBe(2);
        return page;
      });
      expect(all.tasks.map((t) => [t.id, t.kind])).toEqual([
        [own.id, 'compact'],
        [REPAIR_ID, 'repair'],
      ]);
      expect(all.tasks[1]).not.toHaveProperty('priority');
      const only = (await (await m.request('/api/v1/tasks?kind=repair&state=queued')).json()) as { total: number };
      expect(only.total).toBe(1);
      expect((await m.request(`/api/v1/tasks/${REPAIR_ID}`)).status).toBe(200);

      const claim = await m.store.claimNext(m.scheduler.kinds);
      expect(claim?.task.id).toBe(own.id);
      expect(await m.store.claimNext(m.scheduler.kinds)).toBeUndefined();
    });
  }

  it('refuses to enqueue a kind it does not run, or a malformed one, with 400 naming kind', async () => {
    for (const kind of ['repair', 'Repair', 'merge/wal']) {
      const res = await m.request('/api/v1/tasks', jsonBody({ kind, target: 'store-1' }));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/\bkind\b/);
    }
    expect((await m.store.listTasks()).total).toBe(0);
    expect((await m.request('/api/v1/tasks?kind=Repair')).status).toBe(400);
  });

  it('serves its version and the kinds it runs in GET /api/v1/masters, and its policy over them', async () => {
    const { masters } = (await (await m.request('/api/v1/masters')).json()) as {
      masters: { id: string; version: string; kinds: string[] }[];
    };
    expect(masters).toMatchObject([{ id: m.config.masterId, version: '0.0.0', kinds: [...KIND_NAMES] }]);
    const policy = (await (await m.request('/api/v1/scheduler/policy')).json()) as { kinds: string[] };
    expect(policy.kinds).toEqual([...KIND_NAMES]);
  });

  it("lists, counts and resets another release's cooldowns and parks", async () => {
    m.events.start();
    await m.store.recordFailure('repair', 'store-9', 't1', 'disk gone', 'target');
    await m.store.park('repair', 'store-8', { reason: 'vendor ticket', by: 'ops' });
    const listed = await eventually(async () => {
      const res = await m.request('/api/v1/scheduler/cooldowns?all=true');
      expect(res.status).toBe(200);
      const body = (await res.json()) as { kind: string; target: string }[];
      expect(body).toHaveLength(2);
      return body;
    });
    expect(listed.map((c) => [c.kind, c.target])).toEqual([
      ['repair', 'store-8'],
      ['repair', 'store-9'],
    ]);
    // The list may be served from a store read while the hub's watch is still catching up; the
    // gauge is the hub's, so it can trail the list by an event.
    await eventually(async () =>
      expect(await (await m.request('/metrics')).text()).toMatch(/^master_task_parked\{kind="repair"\} 1$/m),
    );

    const reset = await m.request('/api/v1/scheduler/cooldowns', { method: 'DELETE' });
    // `deleted` as before the filter, beside the bulk result; a kind it does not run is not gating here.
    expect(await reset.json()).toMatchObject({ deleted: 1, done: 1, entries: [{ kind: 'repair', gating: false }] });
    expect(await m.store.getCooldown('repair', 'store-9')).toBeUndefined();
    expect((await m.request('/api/v1/scheduler/cooldowns/repair/store-8', { method: 'DELETE' })).status).toBe(200);
    await eventually(async () =>
      expect(await (await m.request('/metrics')).text()).toMatch(/^master_task_parked\{kind="repair"\} 0$/m),
    );
  });
});
