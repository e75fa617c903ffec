/**
 * Cooldown under contention: six real masters on one etcd fail the same broken stores as fast as
 * they can. Runs of one store serialise on its target lock, and each failure commits with its
 * count in the finish transaction, guarded by the record's revision read at claim time.
 * Whatever the interleaving, and whichever master dies mid-finish, every failed task must count
 * exactly once (docs/ARCHITECTURE.md §2.6, §2.7).
 */
import { randomBytes } from 'node:crypto';
import type { TaskCooldown, TaskKind, TaskRecord } from '@maintd/core';
import { type EtcdServer, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from './harness/api.js';
import {
  type Master,
  type SimWorkers,
  eventually,
  logLines,
  startMaster,
  startSimWorkers,
} from './harness/processes.js';
import { recordFigures } from './harness/report.js';

const MASTERS = 6;
/** Tasks per (kind, broken store). */
const PER_PAIR = 50;
const KINDS: readonly TaskKind[] = ['merge_wal', 'compact'];
const STORES = 6;

/** Sums the samples of one counter in a Prometheus text exposition, filtered by a label matcher. */
function counter(text: string, name: string, labels: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * Every task, following cursors. (`Api.allTasks` asks for `limit=500`, which the API rejects
 * with 400: its limit is 1..200.)
 */
async function allTasks(api: Api): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.raw(`/tasks?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(`list tasks: HTTP ${res.status} ${res.text}`);
    const page = JSON.parse(res.text) as { tasks: TaskRecord[]; next_cursor: string | null };
    out.push(...page.tasks);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

describe('cooldown under contention', () => {
  let etcd: EtcdServer;
  let sim: SimWorkers;
  const masters: Master[] = [];
  let apis: Api[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    // One worker owns every store; the broken ones fail at once (no latency), so failures of one
    // store follow each other as fast as the target lock allows.
    sim = await startSimWorkers([
      '--workers',
      '1',
      '--stores',
      String(STORES),
      '--broken',
      '2',
      '--broken-latency-ms',
      '0',
    ]);
    const prefix = `/faults-contention-${randomBytes(4).toString('hex')}`;
    const env = {
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: prefix,
      WORKER_ENDPOINTS: sim.endpoints.join(','),
      // One scan at start-up, so the stores are known and the fleet guard applies.
      STATS_SCAN_INTERVAL_SECS: '3600',
      // The guard holds back any window while another store of the kind is cooling: with two
      // broken stores it trips, and must still never lose a count.
      TASK_COOLDOWN_MAX_PERCENT: '0',
      LOG_LEVEL: 'info',
    };
    masters.push(
      ...(await Promise.all(Array.from({ length: MASTERS }, (_, i) => startMaster(env, { id: `contention-${i}` })))),
    );
    apis = masters.map((m) => new Api(m.url));
    await eventually(async () => {
      const res = await apis[0]!.raw('/stores');
      expect((JSON.parse(res.text) as { total: number }).total).toBe(STORES);
    }, 20_000);
  });

  afterAll(async () => {
    await Promise.all(masters.map((m) => m.stop()));
    await sim?.stop();
    await etcd?.stop();
  });

  it('six masters failing the same broken stores concurrently count every failure exactly once', async () => {
    const api = apis[0]!;
    const broken = [...sim.broken];
    expect(broken).toHaveLength(2);
    const healthy = (await api.raw('/stores')).text.match(/store-\d+/)?.[0];
    expect(healthy).toBeDefined();

    // A done task for the rest to depend on: tasks with dependencies are not deduplicated, so
    // many can be queued for one (kind, store) at once. Manual tasks are never cooldown-gated.
    const base = await api.enqueue('merge_wal', healthy!);
    await eventually(async () => expect((await api.task(base.id)).state).toBe('done'), 15_000);

    const t0 = performance.now();
    const pairs = broken.flatMap((target) => KINDS.map((kind) => ({ kind, target })));
    const enqueued = await Promise.all(
      Array.from({ length: PER_PAIR }, (_, i) =>
        pairs.map((p, j) => apis[(i + j) % MASTERS]!.enqueue(p.kind, p.target, [base.id])),
      ).flat(),
    );
    expect(new Set(enqueued.map((t) => t.id)).size).toBe(PER_PAIR * pairs.length);

    const tasks = await eventually(
      async () => {
        const all = (await allTasks(api)).filter((t) => t.id !== base.id);
        const active = all.filter((t) => t.state === 'queued' || t.state === 'running');
        if (active.length > 0 || all.length < enqueued.length) throw new Error(`${active.length} tasks still active`);
        return all;
      },
      90_000,
      250,
    );
    const elapsedMs = performance.now() - t0;
    // Each master did some of the work.
    const owners = new Set<string>();
    for (const m of masters) {
      for (const l of logLines(m.output())) if (l.msg === 'task failed') owners.add(m.id);
    }

    // The count commits with the task record: no waiting for it.
    const cooldowns = await eventually(async () => {
      const list = await api.cooldowns(true);
      for (const p of pairs) {
        const failed = tasks.filter((t) => t.kind === p.kind && t.target === p.target && t.state === 'failed');
        const record = list.find((c) => c.kind === p.kind && c.target === p.target);
        expect(record?.failures, `${p.kind} ${p.target}`).toBe(failed.length);
      }
      return list;
    }, 10_000);

    const byPair = (p: { kind: TaskKind; target: string }): TaskRecord[] =>
      tasks.filter((t) => t.kind === p.kind && t.target === p.target);
    for (const p of pairs) {
      const mine = byPair(p);
      expect(mine).toHaveLength(PER_PAIR);
      // Every one ran against the broken store and failed there (a worker error: class target).
      for (const t of mine) {
        expect(t.state, t.error).toBe('failed');
        expect(t.error_class).toBe('target');
        expect(t.error).toContain(`Not found: /data/${p.target}.lance/data/`);
      }
      const record = cooldowns.find((c) => c.kind === p.kind && c.target === p.target) as TaskCooldown;
      expect(record.failures).toBe(PER_PAIR);
      expect(record.last_error_class).toBe('target');
      expect(mine.map((t) => t.id)).toContain(record.last_task_id);
    }

    const metrics = await Promise.all(masters.map(async (m) => (await fetch(`${m.url}/metrics`)).text()));
    const conflicts = metrics.reduce(
      (n, t) => n + counter(t, 'master_etcd_cas_conflicts_total', 'op="record_failure"'),
      0,
    );
    const guardOverflows = metrics.reduce((n, t) => n + counter(t, 'master_cooldown_guard_overflow_total', 'kind='), 0);
    const windowsOpened = metrics.reduce((n, t) => n + counter(t, 'master_task_cooldowns_total', 'kind='), 0);
    const bookkeepingFailed = masters.reduce(
      (n, m) => n + logLines(m.output()).filter((l) => l.msg === 'cooldown bookkeeping failed').length,
      0,
    );
    expect(bookkeepingFailed).toBe(0);
    // Runs of one store serialise on its lock and each reads the record its predecessor's finish
    // committed: no finish ever met a changed record (only an operator or recordFailure could).
    expect(conflicts).toBe(0);
    // And the guard really did hold windows back, without costing a count.
    expect(guardOverflows).toBeGreaterThan(0);

    recordFigures('cooldown under contention', {
      injected: `${MASTERS} masters, 2 broken stores answering at once, TASK_COOLDOWN_MAX_PERCENT=0`,
      tasks: tasks.length,
      failed: tasks.filter((t) => t.state === 'failed').length,
      masters_that_ran_tasks: owners.size,
      counts: Object.fromEntries(cooldowns.map((c) => [`${c.kind} ${c.target}`, c.failures])),
      lost: pairs.reduce(
        (n, p) => n + PER_PAIR - (cooldowns.find((c) => c.kind === p.kind && c.target === p.target)?.failures ?? 0),
        0,
      ),
      finish_cas_conflicts: conflicts,
      guard_overflows: guardOverflows,
      windows_opened: windowsOpened,
      bookkeeping_failures: bookkeepingFailed,
      elapsed_ms: Math.round(elapsedMs),
    });
  });
  it('masters SIGKILLed while they fail tasks lose no count: every failed task is counted exactly once', async () => {
    const prefix = `/faults-kill-finish-${randomBytes(4).toString('hex')}`;
    // Broken stores that take 300 ms to fail: most kills catch a failing task in flight.
    const slow = await startSimWorkers([
      '--workers',
      '1',
      '--stores',
      '4',
      '--broken',
      '2',
      '--broken-latency-ms',
      '300',
    ]);
    const env = {
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: prefix,
      WORKER_ENDPOINTS: slow.endpoints.join(','),
      // Counting only: no window opens and the guard never applies, so every failure is a write.
      TASK_COOLDOWN_AFTER_FAILURES: '100000',
      TASK_COOLDOWN_MAX_PERCENT: '100',
      TASK_MAX_ATTEMPTS: '1000',
      LOG_LEVEL: 'info',
    };
    let started = 0;
    const start = (): Promise<Master> => startMaster(env, { id: `kill-finish-${++started}` });
    const live: Master[] = await Promise.all([start(), start(), start()]);
    const all = [...live];
    try {
      const api = (): Api => new Api(live[0]!.url);
      // A store no worker holds: every worker answers 404, so its merge is done with 0 generations.
      const base = await api().enqueue('merge_wal', 'no-such-store');
      await eventually(async () => expect((await api().task(base.id)).state).toBe('done'), 15_000);
      const broken = [...slow.broken];
      const enqueued = await Promise.all(
        Array.from({ length: 40 }, (_, i) => api().enqueue('compact', broken[i % broken.length]!, [base.id])),
      );
      // Kill masters while the broken stores' tasks fail back to back, each replaced at once.
      let kills = 0;
      for (; kills < 8; kills++) {
        await new Promise((resolve) => setTimeout(resolve, 250 + 100 * (kills % 3)));
        // The master running a failing task dies (else any): mid-task, or mid-finish.
        const running = JSON.parse((await api().raw('/tasks?state=running&limit=50')).text) as { tasks: TaskRecord[] };
        const owners = new Set(running.tasks.map((t) => t.owner));
        const at = Math.max(
          0,
          live.findIndex((m) => owners.has(m.id)),
        );
        const victim = live.splice(at, 1)[0]!;
        victim.kill('SIGKILL');
        const next = await start();
        live.push(next);
        all.push(next);
      }
      const tasks = await eventually(
        async () => {
          const mine = (await allTasks(api())).filter((t) => enqueued.some((e) => e.id === t.id));
          const active = mine.filter((t) => t.state === 'queued' || t.state === 'running');
          if (active.length > 0) throw new Error(`${active.length} tasks still active`);
          return mine;
        },
        90_000,
        250,
      );
      const cooldowns = await api().cooldowns(true);
      const counts = Object.fromEntries(
        broken.map((target) => {
          const failed = tasks.filter((t) => t.target === target && t.state === 'failed' && t.error_class === 'target');
          const record = cooldowns.find((c) => c.kind === 'compact' && c.target === target);
          return [target, { failed: failed.length, counted: record?.failures ?? 0 }];
        }),
      );
      for (const [target, c] of Object.entries(counts)) expect(c.counted, target).toBe(c.failed);
      const rerun = tasks.filter((t) => t.attempt > 1).length;
      // The kills really did catch tasks in flight.
      expect(rerun).toBeGreaterThan(0);
      recordFigures('masters killed during failing finishes', {
        injected: `${kills} SIGKILLs of 3 masters while 40 tasks failed back to back on 2 broken stores`,
        tasks: tasks.length,
        rerun_after_a_kill: rerun,
        counts,
        lost: Object.values(counts).reduce((n, c) => n + c.failed - c.counted, 0),
      });
    } finally {
      await Promise.all(all.map((m) => m.stop(2000).catch(() => undefined)));
      await slow.stop();
    }
  });
});
