import type { TaskCooldown, TaskRecord } from '@maintd/core';
import { type EtcdCluster, startEtcdCluster } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from './harness/api.js';
import { Cleanup, TaskHistory, lifecycleViolations, terminalRecords, uniquePrefix } from './harness/cluster-fixture.js';
import {
  type Master,
  type SimWorkers,
  eventually,
  logLines,
  startMaster,
  startSimWorkers,
} from './harness/processes.js';
import { type TcpProxy, startTcpProxy } from './harness/proxy.js';
import { recordFigures } from './harness/report.js';

const TTL_SECS = 5;
const RECOVERY_INTERVAL_MS = (TTL_SECS * 1000) / 2;
/**
 * How long the broken store's owner works before failing: long enough that C is still running
 * the task when it is cut off (A and B start in between: 8 s was not always enough for two
 * masters to start on a loaded two-core machine), and that C's worker call ends, and its finish
 * starts retrying, while C is still cut off.
 */
const BROKEN_LATENCY_MS = 15_000;
/** Well past the broken store's answer, so that each of its calls fails on its reply, not a timeout. */
const WORKER_TIMEOUT_SECS = BROKEN_LATENCY_MS / 1000 + 12;
/** How long a run of the broken store may take to fail, from its claim: its latency plus slack. */
const FAIL_WITHIN_MS = BROKEN_LATENCY_MS + 22_000;
/**
 * C's lease expires at most TTL after the cut (it was kept alive until then) and a peer's next
 * recovery pass (every TTL/2) requeues the task, which is then claimed at once. Slack: 3 s for
 * scheduling delays on a loaded two-core machine.
 */
const RECLAIM_BOUND_MS = TTL_SECS * 1000 + RECOVERY_INTERVAL_MS + 3_000;
const CLAIM_LOST = 'claim lost before completion; result discarded';

describe('partition', () => {
  const cleanup = new Cleanup();
  const prefix = uniquePrefix('partition');
  let cluster: EtcdCluster;
  let sim: SimWorkers;
  let proxy: TcpProxy;
  let history: TaskHistory;
  let a: Master;
  let b: Master;
  let c: Master;
  let broken: string;
  let healthy: string[];
  const figures: Record<string, unknown> = {};

  /** C's partition and what the peers did about it (filled in by the first test). */
  let task: TaskRecord;
  let second: TaskRecord;
  let cutAt = 0;
  let healAt = 0;
  let cStartedAt = 0;
  let peer = '';

  const env = (endpoints: readonly string[]): Record<string, string> => ({
    ETCD_ENDPOINTS: endpoints.join(','),
    ETCD_PREFIX: prefix,
    ETCD_LEASE_TTL_SECS: String(TTL_SECS),
    WORKER_ENDPOINTS: sim.endpoints.join(','),
    WORKER_TIMEOUT_SECS: String(WORKER_TIMEOUT_SECS),
  });
  const ready = async (m: Master): Promise<number> =>
    (await fetch(`${m.url}/readyz`, { signal: AbortSignal.timeout(5000) })).status;
  const cooldownOf = async (api: Api, target: string): Promise<TaskCooldown | undefined> =>
    (await api.cooldowns(true)).find((x) => x.kind === 'compact' && x.target === target);
  /** C's log lines about one task. */
  const cLog = (taskId: string): Record<string, unknown>[] => logLines(c.output()).filter((l) => l.task_id === taskId);

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
    cleanup.add(() => cluster.stop());
    sim = await startSimWorkers([
      '--workers',
      '3',
      '--stores',
      '12',
      '--broken',
      '1',
      '--broken-latency-ms',
      String(BROKEN_LATENCY_MS),
    ]);
    cleanup.add(() => sim.stop());
    broken = sim.broken[0] ?? '';
    healthy = Array.from({ length: 12 }, (_, i) => `store-${String(i).padStart(2, '0')}`).filter(
      (s) => !sim.broken.includes(s.replace('store-', 'broken-')),
    );
    // C reaches etcd only through the proxy, to one member; A and B reach every member.
    proxy = await startTcpProxy(cluster.endpoints[0] ?? '');
    cleanup.add(() => proxy.close());
    history = await TaskHistory.start(cluster.endpoints, prefix);
    cleanup.add(() => history.close());
  });

  afterAll(async () => {
    for (const m of [a, b, c] as (Master | undefined)[]) if (m) cleanup.add(() => m.stop(3000));
    await cleanup.run();
  });

  it('a master cut off from etcd loses its claim: a peer requeues the task within the lease TTL plus one recovery interval and runs it', async () => {
    expect(broken).toMatch(/^broken-/);
    // C starts alone, so that C is the one to claim the broken store's compaction.
    c = await startMaster(env([proxy.url]), { id: 'master-c' });
    const apiC = new Api(c.url);
    task = await apiC.enqueue('compact', broken);
    await eventually(async () => {
      const t = await apiC.task(task.id);
      expect([t.state, t.owner, t.attempt]).toEqual(['running', c.id, 1]);
    });
    [a, b] = await Promise.all([
      startMaster(env(cluster.endpoints), { id: 'master-a' }),
      startMaster(env(cluster.endpoints), { id: 'master-b' }),
    ]);
    const apiA = new Api(a.url);
    // C is still on it (its worker answers after BROKEN_LATENCY_MS) when the network drops.
    const before = await apiA.task(task.id);
    expect([before.state, before.owner]).toEqual(['running', c.id]);
    cStartedAt = before.started_at ?? 0;
    figures.c_claim_age_at_cut_ms = Date.now() - cStartedAt;
    cutAt = Date.now();
    proxy.cut();

    // C notices: not ready (no store, then no session), but alive.
    await eventually(async () => expect(await ready(c)).toBe(503), 15_000);
    expect(c.running()).toBe(true);

    // A peer requeues C's task once C's lease has expired, and claims it: attempt 2.
    const reclaimed = await eventually(async () => {
      const t = await apiA.task(task.id);
      expect(t.state).toBe('running');
      expect(t.attempt).toBe(2);
      return t;
    }, 30_000);
    expect([a.id, b.id]).toContain(reclaimed.owner);
    peer = reclaimed.owner ?? '';
    const reclaimDelay = (reclaimed.started_at ?? Infinity) - cutAt;
    expect(reclaimDelay).toBeLessThanOrEqual(RECLAIM_BOUND_MS);
    const requeue = history.changes(task.id).find((ch) => ch.record?.state === 'queued' && ch.record.attempt === 1);
    figures.requeue_delay_ms = requeue ? requeue.seenAt - cutAt : null;
    figures.reclaim_delay_ms = reclaimDelay;
    figures.reclaim_bound_ms = RECLAIM_BOUND_MS;

    // The peer's run fails (the store is broken) and that failure is counted.
    // The count commits in the finish's own transaction (docs/ARCHITECTURE.md §2.6), but the
    // cooldown list is served from the master's watch-kept index, so it may trail the task's
    // terminal state by a watch event.
    await eventually(async () => expect((await apiA.task(task.id)).state).toBe('failed'), FAIL_WITHIN_MS);
    await eventually(
      async () => expect(await cooldownOf(apiA, broken)).toMatchObject({ failures: 1, last_task_id: task.id }),
      10_000,
    );

    // A second failure of the same (kind, store) while C is still cut off: if C's late result
    // were counted after this one, it would show as a third failure naming the first task
    // (the count is idempotent only against the latest task id).
    second = await apiA.enqueue('compact', broken);
    expect(second.id).not.toBe(task.id);
    await eventually(async () => expect((await apiA.task(second.id)).state).toBe('failed'), FAIL_WITHIN_MS);
    await eventually(
      async () => expect(await cooldownOf(apiA, broken)).toMatchObject({ failures: 2, last_task_id: second.id }),
      10_000,
    );

    // All this time C held on to its result: nothing about the task reached etcd from C.
    expect(proxy.isCut).toBe(true);
    expect(c.running()).toBe(true);
    expect(cLog(task.id).map((l) => l.msg)).not.toContain(CLAIM_LOST);
  });

  it("after the partition heals, the cut-off master's late finish is rejected as a lost claim and counts no cooldown failure", async () => {
    expect(proxy.isCut).toBe(true);
    healAt = Date.now();
    // C's worker answered long ago: its finish has been waiting for etcd, and arrives late.
    expect(healAt - cStartedAt).toBeGreaterThan(BROKEN_LATENCY_MS + 1000);
    figures.partition_secs = Math.round((healAt - cutAt) / 100) / 10;
    proxy.heal();

    // C's finish, retried while etcd was away, now reaches etcd and fails the claim check.
    const lost = await eventually(() => {
      const line = cLog(task.id).find((l) => l.msg === CLAIM_LOST);
      if (!line) throw new Error(`C has not logged '${CLAIM_LOST}' for ${task.id}`);
      return line;
    }, 30_000);
    expect(lost).toMatchObject({ level: 40, kind: 'compact', target: broken, master_id: c.id });
    figures.late_finish_rejected_after_heal_ms = Date.parse(String(lost.time)) - healAt;
    // C logged no outcome for the task and did no cooldown bookkeeping for it.
    const cMsgs = cLog(task.id).map((l) => l.msg);
    expect(cMsgs).not.toContain('task failed');
    expect(cMsgs).not.toContain('task done');
    expect(logLines(c.output()).filter((l) => String(l.msg).includes('cooldown'))).toEqual([]);

    // The cooldown counts only the two failures whose finish committed, the latest last.
    const apiA = new Api(a.url);
    const cooldown = await cooldownOf(apiA, broken);
    expect(cooldown).toMatchObject({ failures: 2, last_task_id: second.id, until_ms: null });
    figures.cooldown_failures = cooldown?.failures;
    figures.committed_failures = 2;

    // etcd's history: the task became terminal once, by the peer's attempt.
    await history.caughtUp();
    for (const id of [task.id, second.id]) expect(lifecycleViolations(id, history.changes(id))).toEqual([]);
    const terminal = terminalRecords(history.changes(task.id));
    expect(terminal.map((t) => [t.state, t.attempt])).toEqual([['failed', 2]]);
    const claims = history.changes(task.id).flatMap((ch) => (ch.record?.state === 'running' ? [ch.record] : []));
    expect(claims.map((t) => [t.owner, t.attempt])).toEqual([
      [c.id, 1],
      [peer, 2],
    ]);
  });

  it('the cut-off master rejoins: ready again, listed among the masters, and claims and completes new work without ever crashing', async () => {
    await eventually(async () => expect(await ready(c)).toBe(200), 30_000, 50);
    figures.c_ready_within_ms_of_heal = Date.now() - healAt;
    const apiA = new Api(a.url);
    await eventually(async () => expect((await apiA.masters()).map((m) => m.id)).toContain(c.id), 15_000);
    const msgs = logLines(c.output()).map((l) => String(l.msg));
    expect(msgs).toContain('session renewed');
    expect(msgs.some((m) => m.startsWith('session lost'))).toBe(true);

    // New work, enqueued through C, until C has claimed and completed some of it: A and B
    // compete for the same tasks, and win most races while C's queue watch is still
    // reconnecting (C then claims on its 2 s poll). Later tasks depend on a finished one, since
    // depless ones dedupe per (kind, store).
    const apiC = new Api(c.url);
    const first = healthy[0] ?? 'store-00';
    const seed = await apiC.enqueue('compact', first);
    await eventually(async () => expect((await apiC.task(seed.id)).state).toBe('done'), 20_000);
    const ids: string[] = [seed.id];
    let round = 0;
    const doneByC = await eventually(
      async () => {
        const batch = await Promise.all(
          healthy.slice(0, 6).map((s, i) => apiC.enqueue(i % 2 ? 'compact' : 'merge_wal', s, [seed.id])),
        );
        round++;
        ids.push(...batch.map((t) => t.id));
        await eventually(async () => {
          for (const t of batch) expect(['done', 'failed']).toContain((await apiC.task(t.id)).state);
        }, 30_000);
        await history.caughtUp();
        const mine = ids.filter((id) => {
          const changes = history.changes(id);
          const lastClaim = changes.findLast((ch) => ch.record?.state === 'running')?.record;
          return lastClaim?.owner === c.id && history.latest(id)?.state === 'done';
        });
        if (mine.length === 0) throw new Error(`C completed none of ${ids.length} new tasks`);
        return mine;
      },
      120_000,
      0,
    );
    for (const id of ids) expect(lifecycleViolations(id, history.changes(id))).toEqual([]);
    const cDone = logLines(c.output())
      .filter((l) => l.msg === 'task done')
      .map((l) => l.task_id);
    for (const id of doneByC) expect(cDone).toContain(id);
    figures.new_tasks = ids.length;
    figures.new_tasks_completed_by_c = doneByC.length;
    figures.new_work_rounds = round;

    // C never crashed: still running, nothing fatal logged, and it shuts down cleanly.
    expect(c.running()).toBe(true);
    expect(logLines(c.output()).filter((l) => Number(l.level) >= 60)).toEqual([]);
    expect(await c.stop()).toBe(0);
    figures.c_crashed = false;
    recordFigures('partition', { masters: 3, lease_ttl_secs: TTL_SECS, ...figures });
  });
});
