import { randomUUID } from 'node:crypto';
import { EtcdKv, TaskStore } from '@maintd/core';
import { type EtcdServer, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from './harness/api.js';
import { type Master, type SimWorkers, eventually, startMaster, startSimWorkers } from './harness/processes.js';
import { recordFigures } from './harness/report.js';

const MASTERS = 6;
const STORES = 5000;
const TASKS = 2000;

let etcd: EtcdServer;
let workers: SimWorkers;
const masters: Master[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  workers = await startSimWorkers([
    '--workers',
    '3',
    '--stores',
    String(STORES),
    '--broken',
    '0',
    '--seed',
    '7',
    '--merge-latency-ms',
    '0',
    '--merge-ms-per-generation',
    '0',
  ]);
});

afterAll(async () => {
  await Promise.all(masters.map((m) => m.stop()));
  await workers?.stop();
  await etcd?.stop();
});

/**
 * The core benchmark's measure (`pnpm bench:core`, concurrency 16): bare TaskStore lifecycles
 * (enqueue → claim → finish) against the same etcd, in this process, for `seconds`.
 */
async function coreLifecycleRate(endpoints: string[], seconds: number): Promise<number> {
  const kv = new EtcdKv({ endpoints });
  const prefix = `/load-baseline/${randomUUID()}`;
  const store = await TaskStore.open({ kv, prefix, masterId: 'baseline' });
  let n = 0;
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < end) {
        await store.enqueue('compact', `s-${n++}`);
        for (;;) {
          const claim = await store.claimNext(['compact']);
          if (claim) {
            await store.finish(claim, { ok: true, detail: 'ok' });
            break;
          }
        }
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - t0) / 1000);
  await store.close();
  await kv.deletePrefix(`${prefix}/`);
  await kv.close();
  return rate;
}

describe('load: 6 masters, 5,000 stores, 2,000 tasks enqueued at once', () => {
  it('completes every task exactly once, and reports the rate against the core lifecycle benchmark', async () => {
    const baseline = await coreLifecycleRate([etcd.clientUrl], 3);
    const env = {
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: `/load/${randomUUID()}`,
      WORKER_ENDPOINTS: workers.endpoints.join(','),
      // The inventory is scanned at its default interval (once at startup within this run), so
      // the masters carry 5,000 stores' stats.
      STATS_SCAN_INTERVAL_SECS: '60',
      // Every task must stay listable to be counted (the default keeps the newest 1,000).
      TASK_HISTORY_LIMIT: '10000',
      LOG_LEVEL: 'warn',
    };
    masters.push(...(await Promise.all(Array.from({ length: MASTERS }, () => startMaster(env)))));
    const apis = masters.map((m) => new Api(m.url));
    // One merge per store, on distinct stores (depless tasks dedupe per store), sent to the six
    // masters round-robin by 64 concurrent clients.
    const targets = Array.from({ length: TASKS }, (_, i) => `store-${String(i * 2).padStart(4, '0')}`);
    const t0 = performance.now();
    const ids = new Set<string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < targets.length) {
          const i = next++;
          const task = await apis[i % MASTERS]!.enqueue('merge_wal', targets[i]!);
          ids.add(task.id);
        }
      }),
    );
    const enqueuedMs = performance.now() - t0;
    expect(ids.size).toBe(TASKS);

    const api = apis[0]!;
    const count = async (state: string): Promise<number> => {
      const res = await api.raw(`/tasks?state=${state}&limit=1`);
      if (res.status !== 200) throw new Error(`count ${state}: HTTP ${res.status} ${res.text}`);
      return (JSON.parse(res.text) as { total: number }).total;
    };
    await eventually(
      async () => {
        const terminal = (await count('done')) + (await count('failed'));
        if (terminal < TASKS) throw new Error(`${terminal}/${TASKS} finished`);
      },
      180_000,
      250,
    );
    const completedMs = performance.now() - t0;
    const finished = await api.allTasks();
    const byId = new Map(finished.map((t) => [t.id, t]));
    const lost = [...ids].filter((id) => !byId.has(id));
    const failed = finished.filter((t) => t.state === 'failed');
    const repeated = finished.filter((t) => t.attempt !== 1);
    for (const t of repeated) console.log(`run more than once: ${JSON.stringify(t)}`);
    // Tasks each master ran, from its own counter.
    const owners = new Map<string, number>();
    for (const m of masters) {
      const text = await (await fetch(`${m.url}/metrics`)).text();
      const ran = [...text.matchAll(/^master_tasks_total\{[^}]*kind="merge_wal"[^}]*\} (\d+)/gm)].reduce(
        (sum, x) => sum + Number(x[1]),
        0,
      );
      owners.set(m.id, ran);
    }
    const rate = TASKS / (completedMs / 1000);
    const figures = {
      masters: MASTERS,
      stores: STORES,
      tasks: TASKS,
      enqueue_seconds: +(enqueuedMs / 1000).toFixed(1),
      complete_seconds: +(completedMs / 1000).toFixed(1),
      tasks_per_second: +rate.toFixed(1),
      core_lifecycles_per_second_c16: +baseline.toFixed(1),
      ratio_to_core_lifecycles: +(rate / baseline).toFixed(2),
      failed: failed.length,
      lost: lost.length,
      run_more_than_once: repeated.length,
      tasks_per_master: Object.fromEntries([...owners].sort()),
    };
    recordFigures('load', figures);
    console.log(`load: ${JSON.stringify(figures)}`);
    expect(lost).toEqual([]);
    expect(failed.map((t) => `${t.target}: ${t.error ?? ''}`)).toEqual([]);
    expect(finished.filter((t) => ids.has(t.id) && t.state === 'done')).toHaveLength(TASKS);
    expect(repeated).toEqual([]);
    // Every master took part (the claim loops share the queue), and the counters add up.
    expect([...owners.values()].every((n) => n > 0)).toBe(true);
    expect([...owners.values()].reduce((a, b) => a + b, 0)).toBe(TASKS);
  });
});
