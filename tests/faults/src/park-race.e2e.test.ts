/**
 * Parks racing claims: three real masters drain a queue of automatic tasks while an operator
 * parks their stores one after another through the API. From the moment a park commits, no
 * automatic task of its (kind, store) may start — a task queued before the park is held
 * (docs/ARCHITECTURE.md §2.7) — and a release queues the held ones again. Judged on etcd's own
 * history: the revision at which each park committed against the revision at which each task
 * of its store started.
 */
import { EtcdKv, TaskStore, type WatchEvent, encodeClusterRecord, keysFor, seededRandom } from '@maintd/core';
import { type EtcdServer, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from './harness/api.js';
import { TaskHistory, uniquePrefix } from './harness/cluster-fixture.js';
import { type Master, type SimWorkers, eventually, startMaster, startSimWorkers } from './harness/processes.js';
import { recordFigures } from './harness/report.js';
import { ResumingWatch } from './harness/resuming-watch.js';

const MASTERS = 3;
const STORES = 240;
/** Each worker call takes this long, so the queue drains over seconds while the parks land. */
const LATENCY_MS = 150;

describe('parks racing claims', () => {
  let etcd: EtcdServer;
  let sim: SimWorkers;
  const masters: Master[] = [];
  let apis: Api[] = [];
  let prefix: string;

  beforeAll(async () => {
    etcd = await startEtcd();
    sim = await startSimWorkers([
      '--workers',
      '2',
      '--stores',
      String(STORES),
      '--broken',
      '0',
      '--latency-ms',
      String(LATENCY_MS),
    ]);
    prefix = uniquePrefix('park-race');
    // A fleet that switched holds on a minute ago (docs/ARCHITECTURE.md §2.8), as every fleet of
    // this release soon is: the masters hold from their first cluster check, with no wait here
    // for a switch-on and its settle time.
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl] });
    const since = Date.now() - 60_000;
    await kv.put(
      keysFor(prefix).cluster,
      encodeClusterRecord({
        features: [{ name: 'held_tasks', enabled_at: since, enabled_by: 'an-earlier-master' }],
        preserve_downgrade: false,
        updated_at: since,
        updated_by: 'an-earlier-master',
      }),
    );
    await kv.close();
    const env = {
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: prefix,
      WORKER_ENDPOINTS: sim.endpoints.join(','),
      TASK_CONCURRENCY: '4',
      LOG_LEVEL: 'info',
    };
    masters.push(
      ...(await Promise.all(Array.from({ length: MASTERS }, (_, i) => startMaster(env, { id: `park-race-${i}` })))),
    );
    apis = masters.map((m) => new Api(m.url));
  });

  afterAll(async () => {
    await Promise.all(masters.map((m) => m.stop()));
    await sim?.stop();
    await etcd?.stop();
  });

  it('no automatic task of a parked store starts after its park commits; a release runs the held ones', async () => {
    // Holds are a cluster feature, on in this fleet; each master reads it at its first cluster
    // check, which starts with the master: a second is ample for it to land.
    const res = await apis[0]!.raw('/masters');
    const body = JSON.parse(res.text) as { cluster?: { features?: { name: string; state: string }[] } };
    expect(body.cluster?.features?.find((f) => f.name === 'held_tasks')?.state).toBe('enabled');
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const kv = new EtcdKv({ endpoints: [etcd.clientUrl] });
    const history = await TaskHistory.start([etcd.clientUrl], prefix);
    // When each park committed, from etcd's own order of writes.
    const parkedAt = new Map<string, number>();
    const parks = await ResumingWatch.start(kv, `${prefix}/parked/`, (e: WatchEvent) => {
      if (e.type === 'put') parkedAt.set(e.key, e.modRevision);
    });
    // The sweeps' side, as a sweep enqueues: a store of its own, not registered as a master.
    const sweeper = await TaskStore.open({ kv, prefix, masterId: 'test-sweeper' });
    const stores = Array.from({ length: STORES }, (_, i) => `store-${String(i).padStart(3, '0')}`);
    try {
      const enqueueing = Promise.all(stores.map((s) => sweeper.enqueue('compact', s, { source: 'sweep' })));
      // Parks in a shuffled order, ten at a time, spread over the masters, while they drain the queue.
      const random = seededRandom(7);
      const order = [...stores];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random.next() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async (_, lane) => {
          for (let i = next++; i < order.length; i = next++) {
            const res = await apis[(lane + i) % MASTERS]!.raw(`/scheduler/cooldowns/compact/${order[i]!}`, {
              method: 'PUT',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ reason: 'racing the claims' }),
            });
            expect(res.status, res.text).toBe(200);
          }
        }),
      );
      const tasks = await enqueueing;
      await eventually(async () => {
        const active = await apis[0]!.allTasks({ state: 'running' });
        expect(active).toEqual([]);
        expect(await apis[0]!.allTasks({ state: 'queued' })).toEqual([]);
      }, 60_000);
      await history.caughtUp();

      const violations: string[] = [];
      let held = 0;
      let ranBefore = 0;
      for (const { task } of tasks) {
        const parkRevision = parkedAt.get(sweeper.keys.parked('compact', task.target));
        if (parkRevision === undefined) throw new Error(`no park seen for ${task.target}`);
        const starts = history.changes(task.id).filter((c) => c.record?.state === 'running');
        for (const start of starts) {
          if (start.revision > parkRevision) {
            violations.push(
              `${task.id} (${task.target}) started at revision ${start.revision}, after its park at ${parkRevision}`,
            );
          } else ranBefore++;
        }
        const latest = history.latest(task.id);
        if (latest?.state === 'held') {
          held++;
          expect(latest.held_reason).toMatch(/^parked by .+: racing the claims$/);
        }
      }
      recordFigures('park-race', { stores: STORES, held, ranBefore, violations: violations.length });
      expect(violations).toEqual([]);
      // Both sides of the race happened: some tasks started before their park, some were held.
      expect(held).toBeGreaterThan(0);
      expect(ranBefore).toBeGreaterThan(0);
      expect(held + ranBefore).toBe(STORES);

      // Releasing every store queues the held tasks again; each runs once, to done.
      const heldIds = tasks.map((t) => t.task.id).filter((id) => history.latest(id)?.state === 'held');
      for (const [i, store] of stores.entries()) {
        const res = await apis[i % MASTERS]!.raw(`/scheduler/cooldowns/compact/${store}`, { method: 'DELETE' });
        expect(res.status, res.text).toBe(200);
      }
      await eventually(async () => {
        await history.caughtUp();
        for (const id of heldIds) expect(history.latest(id)?.state, id).toBe('done');
      }, 60_000);
      for (const id of heldIds) {
        expect(history.changes(id).filter((c) => c.record?.state === 'running')).toHaveLength(1);
      }
    } finally {
      await sweeper.close();
      await parks.close();
      await history.close();
      await kv.close();
    }
  });
});
