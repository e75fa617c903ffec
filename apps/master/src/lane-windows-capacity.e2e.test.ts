/**
 * The manual lane, maintenance windows, slot time and failure causes (docs/ARCHITECTURE.md §2.6,
 * §2.7, §3.2, §3.5) through the real `maintd` binary on the test etcd, its workers a stub on
 * loopback: what the unit tests show of each part, shown once more end to end.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EtcdKv, type TaskRecord, TaskStore } from '@maintd/core';
import { eventually, freePort } from '@maintd/core/testing';
import { type StubReply, type StubRequest, type StubWorker, startStubWorker } from '@maintd/scheduler/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../bin/maintd.js');
const endpoints = inject('etcdEndpoints');

/** Worker time of one merge in the manual-lane scenario. */
const MERGE_MS = 400;

interface Daemon {
  readonly url: string;
  readonly prefix: string;
  readonly output: () => string;
}

const children: ChildProcess[] = [];
const workers: StubWorker[] = [];
const stores: TaskStore[] = [];
const kvs: EtcdKv[] = [];

afterAll(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const s of stores.splice(0)) await s.close();
  for (const kv of kvs.splice(0)) await kv.close();
  for (const w of workers.splice(0)) await w.close();
});

async function stubWorker(handler: (req: StubRequest) => StubReply): Promise<StubWorker> {
  const w = await startStubWorker(handler);
  workers.push(w);
  return w;
}

/**
 * Runs the `maintd` binary on `prefix` with `env` (on top of quiet defaults: no sweep, no stats
 * scan) and waits until it is ready.
 */
async function startMaster(prefix: string, env: Record<string, string>): Promise<Daemon> {
  const port = await freePort();
  const proc = spawn(process.execPath, [BIN], {
    env: {
      PATH: process.env.PATH ?? '',
      MASTER_HOST: '127.0.0.1',
      MASTER_PORT: String(port),
      ETCD_ENDPOINTS: endpoints.join(','),
      ETCD_PREFIX: prefix,
      ETCD_LEASE_TTL_SECS: '5',
      STATS_SCAN_INTERVAL_SECS: '0',
      MERGE_WAL_INTERVAL_SECS: '0',
      COMPACTION_INTERVAL_SECS: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (proc.exitCode !== null) throw new Error(`maintd exited early:\n${out}`);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    },
    20_000,
    50,
  );
  return { url, prefix, output: () => out };
}

/** A TaskStore on `prefix` that registers no master: the test's hand in the queue, as a sweep's. */
async function storeOn(prefix: string): Promise<TaskStore> {
  const kv = new EtcdKv({ endpoints: [...endpoints] });
  kvs.push(kv);
  const store = await TaskStore.open({ kv, masterId: `e2e-${randomUUID()}`, prefix });
  stores.push(store);
  return store;
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** `POST /api/v1/tasks`: a manual run. */
async function runManually(d: Daemon, kind: string, target: string): Promise<string> {
  const task = await json<{ id: string }>(`${d.url}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind, target }),
  });
  return task.id;
}

async function finished(store: TaskStore, id: string, timeoutMs = 10_000): Promise<TaskRecord> {
  return eventually(
    async () => {
      const t = await store.getTask(id);
      if (t?.state !== 'done' && t?.state !== 'failed') throw new Error(`task ${id} is ${t?.state ?? 'gone'}`);
      return t;
    },
    timeoutMs,
    25,
  );
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const mergeOk = (req: StubRequest): StubReply =>
  req.path.includes('/merge-wal/')
    ? { status: 200, body: { reclaimed: 1 }, delayMs: MERGE_MS }
    : { status: 200, body: { stores: [] } };

describe('the maintd binary on etcd: manual lane, windows, slot time and causes', () => {
  // Slot time reaches a peer through `P/capacity/<id>`, written every 10 s: the failing merges
  // run from the start, so that their record is written while the other scenarios run.
  const capacity = {
    prefix: `/e2e-capacity/${randomUUID()}`,
    healthy: ['ok-1', 'ok-2', 'ok-3'],
    broken: ['broken-1', 'broken-2', 'broken-3'],
    ids: [] as string[],
    master: undefined as Daemon | undefined,
    store: undefined as TaskStore | undefined,
  };

  beforeAll(async () => {
    // Errors that differ only in ids and numbers: one cause.
    const worker = await stubWorker((req) => {
      if (!req.path.includes('/merge-wal/')) return { status: 200, body: { stores: [] } };
      if (req.name?.startsWith('broken-'))
        return {
          status: 500,
          raw: `manifest ${randomUUID()} of ${req.name} unreadable at offset ${Math.floor(Math.random() * 1e6)}`,
          delayMs: 300,
        };
      return { status: 200, body: { reclaimed: 2 }, delayMs: 100 };
    });
    capacity.master = await startMaster(capacity.prefix, { WORKER_ENDPOINTS: worker.url });
    capacity.store = await storeOn(capacity.prefix);
    for (const target of [...capacity.broken, ...capacity.healthy]) {
      capacity.ids.push((await capacity.store.enqueue('merge_wal', target, { source: 'sweep' })).task.id);
    }
  }, 30_000);

  it('claims manual runs ahead of 200 queued automatic merges on one slot, and still drains the automatic ones', async () => {
    const prefix = `/e2e-lane/${randomUUID()}`;
    const worker = await stubWorker(mergeOk);
    const store = await storeOn(prefix);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.enqueue('merge_wal', `auto-${i}`, { source: 'sweep' })),
    );
    const d = await startMaster(prefix, { WORKER_ENDPOINTS: worker.url, MERGE_WAL_CONCURRENCY: '1' });
    // The slot is busy with automatic work before the first manual run arrives.
    await eventually(async () => expect(await store.queueDepth('merge_wal')).toBeLessThan(199), 10_000, 25);

    const before = await store.queueDepth('merge_wal');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(await runManually(d, 'merge_wal', `manual-${i}`));
      // Spaced out, as operators' runs come: each arrives while an automatic merge holds the slot.
      await new Promise((r) => setTimeout(r, MERGE_MS + 300));
    }
    const runs = await Promise.all(ids.map((id) => finished(store, id)));
    const after = await store.queueDepth('merge_wal');

    const waits = runs.map((t) => (t.started_at ?? Number.NaN) - t.enqueued_at).sort((a, b) => a - b);
    const automaticDrained = before - after;
    console.info(
      `[e2e] manual-run wait on 1 merge slot, ${MERGE_MS} ms merges, 200 automatic queued: ` +
        `p50 ${percentile(waits, 50)} ms, p99 ${percentile(waits, 99)} ms, max ${waits.at(-1)} ms; ` +
        `${automaticDrained} automatic merges claimed meanwhile`,
    );
    for (const t of runs) expect(t).toMatchObject({ state: 'done', source: 'manual' });
    for (const w of waits) expect(w).toBeLessThanOrEqual(MERGE_MS + 1000);
    // Not starved: automatic merges keep running between the manual ones.
    expect(automaticDrained).toBeGreaterThanOrEqual(3);
    expect(worker.maxInFlight).toBe(1);
  }, 40_000);

  it('outside its window, enqueues and claims no automatic compaction, yet runs a manual one', async () => {
    const prefix = `/e2e-window/${randomUUID()}`;
    const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
    // An hour-long window starting two hours from now (UTC): closed now, whatever the time of day.
    const now = Date.now();
    const spec = `${hhmm(now + 2 * 3_600_000)}-${hhmm(now + 3 * 3_600_000)}`;
    const worker = await stubWorker((req) => {
      if (req.path.includes('/compact/'))
        return { status: 200, body: { fragments_removed: 20, fragments_added: 1 }, delayMs: 50 };
      return {
        status: 200,
        body: {
          stores: ['frag-1', 'frag-2'].map((name) => ({
            name,
            pending_wal_generations: 0,
            fragment_count: 100,
            row_count: 1000,
          })),
        },
      };
    });
    const store = await storeOn(prefix);
    const d = await startMaster(prefix, {
      WORKER_ENDPOINTS: worker.url,
      TASK_WINDOWS: `compact=${spec}`,
      STATS_SCAN_INTERVAL_SECS: '1',
      COMPACTION_INTERVAL_SECS: '1',
    });

    // The sweep sees both stores due and enqueues neither.
    await eventually(
      async () => {
        const metrics = await (await fetch(`${d.url}/metrics`)).text();
        const skipped = /^master_sweep_skipped_total\{kind="compact",reason="window"\} (\d+)/m.exec(metrics);
        expect(Number(skipped?.[1] ?? 0)).toBeGreaterThan(0);
        expect(metrics).toMatch(/^master_task_window_open\{kind="compact"\} 0$/m);
      },
      15_000,
      100,
    );
    const policy = await json<{ windows?: { kind: string; spec: string; open: boolean; next_change: string }[] }>(
      `${d.url}/api/v1/scheduler/policy`,
    );
    expect(policy.windows).toEqual([
      { kind: 'compact', spec, tz: 'UTC', open: false, next_change: expect.any(String) as string },
    ]);
    const nextChange = Date.parse(policy.windows![0]!.next_change);
    expect(nextChange).toBeGreaterThan(now + 3_600_000);
    expect(nextChange).toBeLessThanOrEqual(now + 2 * 3_600_000 + 60_000);

    // Its registration names the window, so that peers can tell whether they agree.
    const masters = await json<{ masters: { windows?: string[] }[]; window_disagreements?: unknown }>(
      `${d.url}/api/v1/masters`,
    );
    expect(masters.masters.map((m) => m.windows)).toEqual([[`compact=${spec}@UTC`]]);
    expect(masters.window_disagreements).toBeUndefined();

    // An automatic compaction queued by hand waits while manual ones run one after another: with
    // three of the four general slots idle all along, and the queue's oldest task, it would
    // otherwise have started with the first of them.
    const held = await store.enqueue('compact', 'queued-auto', { source: 'sweep' });
    const manual = ['manual-1', 'manual-2', 'manual-3'];
    for (const target of manual) {
      expect(await finished(store, await runManually(d, 'compact', target))).toMatchObject({
        state: 'done',
        source: 'manual',
      });
    }
    expect(await store.getTask(held.task.id)).toMatchObject({ state: 'queued', source: 'sweep' });
    // Nothing but the held task and the manual runs was ever queued: the sweep enqueued nothing.
    const tasks = await store.listTasks({ kind: 'compact' });
    expect(tasks.tasks.map((t) => t.target).sort()).toEqual([...manual, 'queued-auto']);
    expect(worker.requests.filter((r) => r.path.includes('/compact/')).map((r) => r.name)).toEqual(manual);
  }, 40_000);

  it("answers the fleet's slot time with the failed share, groups the failing stores into one cause, and parks them by it", async () => {
    const { master, store, prefix, broken, healthy } = capacity;
    if (!master || !store) throw new Error('the capacity master did not start');
    const runs = await Promise.all(capacity.ids.map((id) => finished(store, id, 20_000)));
    expect(
      runs
        .filter((t) => t.state === 'failed')
        .map((t) => t.target)
        .sort(),
    ).toEqual(broken);

    // A peer that ran none of it answers from the first master's record (written every 10 s).
    const peer = await startMaster(prefix, { MERGE_WAL_CONCURRENCY: '1' });
    interface Capacity {
      kinds: {
        kind: string;
        busy_seconds: { success: number; failed: number };
        failed_share: number;
        failed_tasks: number;
        top: { target: string; failed_tasks: number }[];
      }[];
    }
    const started = performance.now();
    const merge = await eventually(
      async () => {
        const body = await json<Capacity>(`${peer.url}/api/v1/capacity`);
        const k = body.kinds.find((x) => x.kind === 'merge_wal');
        expect(k?.failed_tasks).toBe(broken.length);
        return k!;
      },
      15_000,
      250,
    );
    console.info(
      `[e2e] capacity on a peer after ${Math.round(performance.now() - started)} ms: merge_wal ` +
        `${merge.busy_seconds.success.toFixed(2)} s ok, ${merge.busy_seconds.failed.toFixed(2)} s failed, ` +
        `failed share ${merge.failed_share.toFixed(2)}`,
    );
    expect(merge.busy_seconds.failed).toBeGreaterThan(0);
    expect(merge.busy_seconds.success).toBeGreaterThan(0);
    expect(merge.failed_share).toBeGreaterThan(0);
    expect(merge.failed_share).toBeLessThan(1);
    // The failing merges took longest: they lead the top.
    expect(
      merge.top
        .slice(0, broken.length)
        .map((s) => s.target)
        .sort(),
    ).toEqual(broken);
    expect(merge.top.map((s) => s.target).sort()).toEqual([...broken, ...healthy].sort());

    const causes = await json<{ cause: string; kinds: string[]; targets: number }[]>(
      `${master.url}/api/v1/scheduler/causes`,
    );
    expect(causes).toHaveLength(1);
    const [cause] = causes;
    expect(cause).toMatchObject({ kinds: ['merge_wal'], targets: broken.length });

    const byCause = `${master.url}/api/v1/scheduler/cooldowns?cause=${cause!.cause}`;
    const park = (dryRun: boolean): Promise<{ dry_run: boolean; count: number; done: number }> =>
      json(`${byCause}${dryRun ? '&dry_run=true' : ''}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'e2e: one cause, parked at once' }),
      });
    expect(await park(true)).toMatchObject({ dry_run: true, count: broken.length, done: 0 });
    expect(await store.listParks({ kind: 'merge_wal' })).toEqual([]);
    expect(await park(false)).toMatchObject({ dry_run: false, count: broken.length, done: broken.length });
    const parks = await store.listParks({ kind: 'merge_wal' });
    expect(parks.map((p) => p.target).sort()).toEqual(broken);
  }, 40_000);
});
