/**
 * etcd faults: three real masters, each given all three members of a real etcd cluster, with
 * `maintd-sim` workers, while etcd loses a member, goes away entirely, and freezes
 * (docs/ARCHITECTURE.md §2.3–2.6, §3.4). The masters must keep serving what they can, answer 503 (never hang) for
 * what needs etcd, lose no task, and recover without a restart.
 */
import { randomBytes } from 'node:crypto';
import type { TaskKind, TaskRecord } from '@maintd/core';
import { type EtcdCluster, startEtcdCluster } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
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

const MASTERS = 3;
/** Deadline of every unary etcd call (packages/core/src/kv/etcd.ts, `callTimeoutMs` default; the master keeps it). */
const ETCD_CALL_DEADLINE_MS = 5000;
/**
 * What one etcd call may take against a frozen etcd: one deadline bounds the whole call. (This
 * suite found that the deadline used to bound only one gRPC attempt: a half-open circuit per
 * endpoint and the retry of a channel reset stacked up to 2 × 3 × the deadline, 17.8 s measured.
 * `EtcdKv` now races the whole call against the deadline.)
 */
const ETCD_CALL_BOUND_MS = ETCD_CALL_DEADLINE_MS;
/** `/readyz` gives etcd this long (apps/master/src/routes/health.ts READY_TIMEOUT_MS). */
const READY_TIMEOUT_MS = 2000;
/** Scheduling slack on a busy 2-core machine. */
const SLACK_MS = 2000;
const OUTAGE_MS = 20_000;
/**
 * After a leader dies, calls sent within this window may stall on the dead leader until the call
 * deadline: the election (1 s timeout on these members) plus the clients noticing.
 */
const FAILOVER_WINDOW_MS = 3000;
/** How long requests keep being sent to frozen etcd (it stays frozen until they all answered). */
const FREEZE_SEND_MS = 8000;
const KINDS: readonly TaskKind[] = ['merge_wal', 'compact'];

/** One HTTP exchange as a client saw it; status 0 = no answer (network error or client timeout). */
interface Sample {
  /** The master asked. */
  readonly master: string;
  readonly route: string;
  /** When the request was sent, ms since the test process started. */
  readonly at: number;
  readonly status: number;
  readonly ms: number;
  readonly text: string;
}

/** Sends a request to a master and times it; never throws. */
async function timed(
  m: Master,
  path: string,
  route: string,
  init: RequestInit = {},
  timeoutMs = ETCD_CALL_BOUND_MS + 15_000,
): Promise<Sample> {
  const at = performance.now();
  const base = { master: m.id, route, at };
  try {
    const res = await fetch(`${m.url}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { ...base, status: res.status, ms: performance.now() - at, text };
  } catch (err) {
    return { ...base, status: 0, ms: performance.now() - at, text: String(err) };
  }
}

function postTask(m: Master, kind: TaskKind, target: string, dependsOn?: readonly string[]): Promise<Sample> {
  return timed(m, '/api/v1/tasks', 'POST /tasks', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind, target, ...(dependsOn ? { depends_on: dependsOn } : {}) }),
  });
}

function show(s: Sample): string {
  return `${s.master} ${s.route} → ${s.status} after ${Math.round(s.ms)} ms at +${Math.round(s.at)} ms: ${s.text.slice(0, 160)}`;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}

/** p50 / p99 / max of the samples' response times, per route. */
function timings(samples: readonly Sample[]): Record<string, { n: number; p50: number; p99: number; max: number }> {
  const out: Record<string, { n: number; p50: number; p99: number; max: number }> = {};
  for (const route of new Set(samples.map((s) => s.route))) {
    const ms = samples.filter((s) => s.route === route).map((s) => s.ms);
    out[route] = { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.round(Math.max(...ms)) };
  }
  return out;
}

function statusCounts(samples: readonly Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) out[`${s.route} ${s.status}`] = (out[`${s.route} ${s.status}`] ?? 0) + 1;
  return out;
}

const terminal = (t: TaskRecord): boolean => t.state === 'done' || t.state === 'failed';

describe('etcd faults', () => {
  let cluster: EtcdCluster;
  let sim: SimWorkers;
  const masters: Master[] = [];
  let apis: Api[] = [];
  let healthy: string[] = [];
  let broken: string[] = [];

  /** Waits until every task is done or failed, and checks each ended as its store decides. */
  const settle = async (ids: Iterable<string>, timeoutMs = 60_000): Promise<TaskRecord[]> => {
    const want = [...new Set(ids)];
    const tasks = await eventually(
      async () => {
        const out: TaskRecord[] = [];
        for (const id of want) {
          const t = await apis[out.length % MASTERS]!.task(id);
          if (!terminal(t)) throw new Error(`task ${t.kind} ${t.target} still ${t.state} (attempt ${t.attempt})`);
          out.push(t);
        }
        return out;
      },
      timeoutMs,
      500,
    );
    for (const t of tasks) {
      if (broken.includes(t.target)) {
        expect(t.state, `${t.kind} ${t.target}`).toBe('failed');
        expect(t.error_class).toBe('target');
      } else {
        expect(t.state, `${t.kind} ${t.target}: ${t.error ?? ''}`).toBe('done');
      }
    }
    return tasks;
  };

  const allReady = (): Promise<void> =>
    eventually(
      async () => {
        for (const m of masters) {
          const r = await timed(m, `/readyz`, 'GET /readyz', {}, 5000);
          expect(r.status, `${m.id}: ${r.text}`).toBe(200);
        }
      },
      45_000,
      250,
    );

  /** The masters are the processes started in beforeAll: alive, never restarted, nothing fatal. */
  const sameMastersAlive = (pids: readonly number[]): void => {
    masters.forEach((m, i) => {
      expect(m.running(), `${m.id} exited:\n${m.output().slice(-3000)}`).toBe(true);
      expect(m.pid).toBe(pids[i]);
      expect(logLines(m.output()).filter((l) => l.level === 60)).toEqual([]);
    });
  };

  /** Enqueues `n` tasks over healthy and broken stores, round-robin over the masters. */
  const enqueueBatch = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const target = i % 6 === 5 ? broken[i % broken.length]! : healthy[i % healthy.length]!;
      const t = await apis[i % MASTERS]!.enqueue(KINDS[i % 2]!, target);
      ids.push(t.id);
    }
    return ids;
  };

  const leaderIndex = async (): Promise<number> => {
    for (const [i, ep] of cluster.endpoints.entries()) {
      const res = await fetch(`${ep}/v3/maintenance/status`, { method: 'POST', body: '{}' });
      const s = (await res.json()) as { header: { member_id: string }; leader: string };
      if (s.header.member_id === s.leader) return i;
    }
    throw new Error('no member reports itself the leader');
  };

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
    sim = await startSimWorkers(['--workers', '2', '--stores', '24', '--broken', '2', '--latency-ms', '300']);
    broken = [...sim.broken];
    const names = new Set<string>();
    for (const ep of sim.endpoints) {
      const r = (await (await fetch(`${ep}/api/v1/internal/stores`)).json()) as { stores: { name: string }[] };
      for (const s of r.stores) names.add(s.name);
    }
    healthy = [...names].filter((n) => !broken.includes(n)).sort();
    const env = {
      ETCD_ENDPOINTS: cluster.endpoints.join(','),
      ETCD_PREFIX: `/faults-etcd-${randomBytes(4).toString('hex')}`,
      WORKER_ENDPOINTS: sim.endpoints.join(','),
      TASK_CONCURRENCY: '2',
      MERGE_WAL_CONCURRENCY: '2',
      LOG_LEVEL: 'info',
    };
    masters.push(
      ...(await Promise.all(Array.from({ length: MASTERS }, (_, i) => startMaster(env, { id: `etcd-fault-${i}` })))),
    );
    apis = masters.map((m) => new Api(m.url));
  });

  afterAll(async () => {
    await Promise.all(masters.map((m) => m.stop()));
    await sim?.stop();
    await cluster?.stop();
  });

  it('with the leader SIGKILLed under load, the API keeps serving (a 503 only for calls caught in the failover, and their retry succeeds), every task completes, and the member rejoins', async () => {
    const pids = masters.map((m) => m.pid);
    const victim = await leaderIndex();
    const samples: Sample[] = [];
    const ids = new Set<string>();
    const loadMs = 16_000;
    const killAtMs = 3000;
    const t0 = performance.now();
    let killedAt = Infinity;
    const logical = { operations: 0, retried: 0, failed: [] as string[] };
    /** One logical operation: retried on 503 (what a client does with "retry later"), at most 3 times. */
    const op = async (send: () => Promise<Sample>): Promise<Sample> => {
      logical.operations++;
      for (let attempt = 1; ; attempt++) {
        const s = await send();
        samples.push(s);
        if ((s.status >= 200 && s.status <= 299) || s.status !== 503 || attempt > 3) {
          if (attempt > 1) logical.retried++;
          if (s.status < 200 || s.status > 299) logical.failed.push(show(s));
          return s;
        }
        await delay(200);
      }
    };
    // One client per master: enqueue, read the list, read a task back; as fast as they answer.
    const client = async (i: number): Promise<void> => {
      const m = masters[i]!;
      let n = 0;
      while (performance.now() - t0 < loadMs) {
        n++;
        const target = n % 5 === 0 ? broken[n % broken.length]! : healthy[(i * 7 + n) % healthy.length]!;
        const post = await op(() => postTask(m, KINDS[n % 2]!, target));
        if (post.status === 202 || post.status === 200) ids.add((JSON.parse(post.text) as TaskRecord).id);
        await op(() => timed(m, '/api/v1/tasks?limit=20', 'GET /tasks'));
        const some = [...ids][Math.floor(ids.size / 2)];
        if (some) await op(() => timed(m, `/api/v1/tasks/${some}`, 'GET /tasks/{id}'));
        await delay(50);
      }
    };
    const killer = (async () => {
      await delay(killAtMs);
      killedAt = performance.now();
      cluster.members[victim]!.signal('SIGKILL');
      await cluster.members[victim]!.exited;
    })();
    await Promise.all([...masters.map((_, i) => client(i)), killer]);
    const downUnderLoadMs = performance.now() - killedAt;

    // Every logical operation succeeded (with at most 3 retries on 503).
    expect(logical.failed).toEqual([]);
    expect(ids.size).toBeGreaterThan(10);
    // Precisely what went wrong on the way: only 503 "store unavailable" answers, each within the
    // etcd call deadline, each for a request sent in the failover window (from the kill until a
    // new leader is elected: etcd's election timeout is 1 s); nothing at all before the kill or
    // after the window, no 500, no request without an answer.
    const bad = samples.filter((s) => s.status < 200 || s.status > 299);
    const failoverEndsAt = killedAt + FAILOVER_WINDOW_MS;
    const unexpected = bad.filter(
      (s) =>
        s.status !== 503 ||
        !s.text.includes('the store (etcd) is unavailable') ||
        s.ms > ETCD_CALL_BOUND_MS + SLACK_MS ||
        s.at + s.ms < killedAt ||
        s.at > failoverEndsAt,
    );
    expect(unexpected.map(show)).toEqual([]);
    expect(samples.filter((s) => s.at > failoverEndsAt).length).toBeGreaterThan(30);

    const tasks = await settle(ids);
    sameMastersAlive(pids);

    const member = await cluster.restart(victim);
    const health = (await (await fetch(`${member.clientUrl}/health`)).json()) as { health: string };
    expect(health.health).toBe('true');
    await allReady();
    // The cluster works with the member back: a new task completes.
    const after = await apis[0]!.enqueue('merge_wal', healthy[0]!);
    await settle([after.id], 30_000);

    recordFigures('etcd: leader SIGKILLed under API load', {
      injected: `SIGKILL of the etcd leader (member ${victim} of 3) ${killAtMs} ms into ${loadMs} ms of API load; restarted afterwards`,
      masters: MASTERS,
      requests: samples.length,
      logical_operations: logical.operations,
      operations_that_needed_a_retry: logical.retried,
      non_2xx: bad.length,
      non_2xx_detail: bad.map((b) => ({
        route: b.route,
        status: b.status,
        ms: Math.round(b.ms),
        sent_ms_after_kill: Math.round(b.at - killedAt),
      })),
      statuses: statusCounts(samples),
      response_ms: timings(samples),
      member_down_ms_under_load: Math.round(downUnderLoadMs),
      tasks: tasks.length,
      done: tasks.filter((t) => t.state === 'done').length,
      failed_on_broken_stores: tasks.filter((t) => t.state === 'failed').length,
      reruns: tasks.filter((t) => t.attempt > 1).length,
      lost: 0,
    });
  });

  it('with the whole cluster down for 20 s, masters stay up, answer 503 promptly, lose no task, and recover on their own', async () => {
    const pids = masters.map((m) => m.pid);
    const before = await enqueueBatch(24);
    // Some of them are running when etcd goes.
    await eventually(async () => {
      const running = (await apis[0]!.raw('/tasks?state=running&limit=50')).text;
      expect((JSON.parse(running) as { tasks: TaskRecord[] }).tasks.length).toBeGreaterThan(0);
    }, 10_000);

    const down = performance.now();
    for (const m of cluster.members) m.signal('SIGKILL');
    await Promise.all(cluster.members.map((m) => m.exited));
    const samples: Sample[] = [];
    let rounds = 0;
    while (performance.now() - down < OUTAGE_MS) {
      rounds++;
      const round = await Promise.all(
        masters.flatMap((m) => [
          timed(m, `/healthz`, 'GET /healthz'),
          timed(m, `/readyz`, 'GET /readyz'),
          timed(m, `/api/v1/tasks/${before[0]!}`, 'GET /tasks/{id}'),
          postTask(m, 'merge_wal', healthy[rounds % healthy.length]!),
        ]),
      );
      samples.push(...round);
      for (const m of masters)
        expect(m.running(), `${m.id} died during the outage:\n${m.output().slice(-3000)}`).toBe(true);
      await delay(500);
    }
    const outageMs = performance.now() - down;
    await Promise.all(cluster.members.map((_, i) => cluster.restart(i)));
    const restartedAfter = performance.now();

    const by = (route: string): Sample[] => samples.filter((s) => s.route === route);
    expect(rounds).toBeGreaterThan(5);
    // Liveness holds throughout; readiness says no, quickly; what needs etcd says 503, quickly.
    for (const s of by('GET /healthz')) expect(s.status).toBe(200);
    for (const s of by('GET /readyz')) {
      expect(s.status).toBe(503);
      expect(JSON.parse(s.text)).toMatchObject({ ready: false, store: 'unavailable' });
      expect(s.ms).toBeLessThanOrEqual(READY_TIMEOUT_MS + SLACK_MS);
    }
    for (const s of [...by('GET /tasks/{id}'), ...by('POST /tasks')]) {
      expect(s.status, s.text).toBe(503);
      expect(JSON.parse(s.text)).toEqual({ error: 'the store (etcd) is unavailable; retry later' });
      expect(s.ms).toBeLessThanOrEqual(ETCD_CALL_DEADLINE_MS + SLACK_MS);
    }

    // Recovery without restarting a master.
    await allReady();
    const readyAfterMs = performance.now() - restartedAfter;
    const tasks = await settle(before);
    const after = await enqueueBatch(6);
    await settle(after, 30_000);
    sameMastersAlive(pids);

    recordFigures('etcd: whole cluster down for 20 s', {
      injected: 'SIGKILL of all 3 etcd members, restarted on their data after the outage',
      outage_ms: Math.round(outageMs),
      probe_rounds: rounds,
      statuses: statusCounts(samples),
      response_ms: timings(samples),
      ready_again_ms_after_restart: Math.round(readyAfterMs),
      tasks_before_outage: tasks.length,
      done: tasks.filter((t) => t.state === 'done').length,
      failed_on_broken_stores: tasks.filter((t) => t.state === 'failed').length,
      reruns: tasks.filter((t) => t.attempt > 1).length,
      tasks_after_recovery: after.length,
      lost: 0,
      master_restarts: 0,
    });
  });

  it('with every etcd member frozen (SIGSTOP), calls that need etcd answer 503 instead of hanging, and all works again after SIGCONT', async () => {
    const pids = masters.map((m) => m.pid);
    const before = await enqueueBatch(12);
    const frozen = performance.now();
    for (const m of cluster.members) m.signal('SIGSTOP');
    const samples: Sample[] = [];
    try {
      // A batch per master every second, not waiting for the last one: calls land in every state
      // of the client's circuit breakers (closed, open, half-open). etcd stays frozen until every
      // call has answered, so each answer is one given while etcd was away.
      const pending: Promise<void>[] = [];
      for (let batch = 0; performance.now() - frozen < FREEZE_SEND_MS; batch++) {
        for (const m of masters) {
          const target = healthy[batch % healthy.length]!;
          for (const p of [
            timed(m, '/healthz', 'GET /healthz'),
            timed(m, '/readyz', 'GET /readyz'),
            timed(m, `/api/v1/tasks/${before[batch % before.length]!}`, 'GET /tasks/{id}'),
            postTask(m, 'compact', target),
            postTask(m, 'merge_wal', target, [before[0]!]),
          ]) {
            pending.push(p.then((sample) => void samples.push(sample)));
          }
        }
        await delay(1000);
      }
      await Promise.all(pending);
    } finally {
      for (const m of cluster.members) m.signal('SIGCONT');
    }
    const frozenMs = performance.now() - frozen;
    const thawed = performance.now();

    const by = (route: string): Sample[] => samples.filter((s) => s.route === route);
    for (const s of by('GET /healthz')) expect(s.status).toBe(200);
    for (const s of by('GET /readyz')) {
      expect(s.status).toBe(503);
      expect(s.ms).toBeLessThanOrEqual(READY_TIMEOUT_MS + SLACK_MS);
    }
    // No hang: every call that needs etcd gives up with 503 within the bound of one etcd call.
    const needEtcd = [...by('GET /tasks/{id}'), ...by('POST /tasks')];
    expect(needEtcd.length).toBeGreaterThan(0);
    const late = needEtcd.filter((s) => s.status !== 503 || s.ms > ETCD_CALL_BOUND_MS + SLACK_MS);
    expect(late.map(show)).toEqual([]);
    const overOneDeadline = needEtcd.filter((s) => s.ms > ETCD_CALL_DEADLINE_MS + SLACK_MS);

    await allReady();
    const readyAfterMs = performance.now() - thawed;
    const tasks = await settle(before);
    const after = await enqueueBatch(6);
    await settle(after, 30_000);
    sameMastersAlive(pids);

    recordFigures('etcd: every member frozen (SIGSTOP)', {
      injected: `SIGSTOP of all 3 etcd members for ${Math.round(frozenMs)} ms, then SIGCONT`,
      etcd_call_deadline_ms: ETCD_CALL_DEADLINE_MS,
      calls_over_one_deadline_plus_slack: overOneDeadline.map((o) => ({ route: o.route, ms: Math.round(o.ms) })),
      statuses: statusCounts(samples),
      response_ms: timings(samples),
      ready_again_ms_after_sigcont: Math.round(readyAfterMs),
      tasks_before_freeze: tasks.length,
      reruns: tasks.filter((t) => t.attempt > 1).length,
      tasks_after_recovery: after.length,
      lost: 0,
    });
  });
});
