import {
  CLUSTER_CHECK_MS,
  FEATURE_SETTLE_MS,
  FakeClock,
  type Kv,
  MemoryKv,
  StoreUnavailableError,
  type TaskKind,
  type TaskRecord,
} from '@maintd/core';
import { eventually, interceptKv } from '@maintd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HELD_TASKS } from './features/index.js';
import { KINDS, KIND_NAMES, kindSpec } from './kinds/index.js';
import { type FleetStub, type TestScheduler, openScheduler, startFleetStub } from './testing/index.js';

describe('Scheduler over the kind registry', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function setup(
    stores: Parameters<typeof startFleetStub>[0],
    cooldown: { afterFailures: number } = { afterFailures: 2 },
  ): Promise<{ fleet: FleetStub; s: TestScheduler; clock: FakeClock; kv: MemoryKv }> {
    const fleet = await startFleetStub(stores);
    cleanup.push(() => fleet.close());
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const s = await openScheduler(kv, clock, {
      workers: { endpoints: [fleet.url] },
      cooldown: { ...cooldown, maxPercent: 100 },
    });
    cleanup.push(() => s.close());
    return { fleet, s, clock, kv };
  }

  /** Waits until nothing is queued or running, then returns every task, oldest first. */
  async function drained(s: TestScheduler): Promise<TaskRecord[]> {
    return eventually(async () => {
      // The queue first: a claim committing meanwhile is then still in flight, so not idle.
      expect(await s.store.queueDepth()).toBe(0);
      expect(s.scheduler.idle).toBe(true);
      const { tasks } = await s.store.listTasks({ limit: 200 });
      return [...tasks].reverse();
    });
  }

  it('runs an index build after a compaction that added fragments, to done on the store’s owner', async () => {
    const { fleet, s } = await setup({ big: { fragments: 40 }, small: { fragments: 2 } });
    await s.scheduler.scanOnce();
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({ candidates: 1, enqueued: 1 });
    s.scheduler.start();
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.kind, t.target, t.state, t.source, t.detail])).toEqual([
      ['compact', 'big', 'done', 'sweep', 'removed 40 / added 1 fragments'],
      ['index_id', 'big', 'done', 'sweep', 'built btree index on id'],
    ]);
    expect(fleet.calls('index-id', 'big')).toBe(1);
    expect(fleet.calls('index-id', 'small')).toBe(0);
    const metrics = await s.metrics.registry.metrics();
    expect(metrics).toMatch(/^master_task_enqueued_total\{kind="index_id",source="sweep"\} 1$/m);
    expect(metrics).toMatch(/^master_tasks_total\{kind="index_id",result="success"\} 1$/m);
  });

  it('requeues a dead master’s task when the next master starts, runs it at once and logs the recovery', async () => {
    const { fleet, s: dead, clock } = await setup({ orphan: {} });
    await dead.store.enqueue('compact', 'orphan', { source: 'manual' });
    expect(await dead.store.claimNext(['compact'])).toBeDefined();
    // Its session ends with it (a revoke, as a SIGKILLed master's lease lapsing would).
    await dead.store.close();
    const s = await openScheduler(dead.kv, clock, {
      etcd: { prefix: dead.config.etcd.prefix },
      workers: { endpoints: [fleet.url] },
    });
    cleanup.push(() => s.close());
    s.scheduler.start();
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.target, t.state])).toEqual([['orphan', 'done']]);
    expect(s.logs.filter((l) => l.msg === 'recovered orphaned tasks')).toMatchObject([
      { at: 'start', requeued: [tasks[0]!.id], failed: [] },
    ]);
  });

  it('runs a manual index build and cools a broken store down for index_id like any kind', async () => {
    const { fleet, s, clock } = await setup({ broken: { broken: true }, fine: {} });
    s.scheduler.start();
    for (let i = 0; i < 2; i++) {
      await s.store.enqueue('index_id', 'broken', { source: 'manual' });
      await drained(s);
    }
    const cooldown = await s.store.getCooldown('index_id', 'broken');
    expect(cooldown).toMatchObject({ failures: 2, last_error_class: 'target' });
    expect(cooldown?.until_ms).toBeGreaterThan(clock.now());
    expect(cooldown?.last_error).toContain('Not found: /data/broken.lance');
    expect(await s.store.getCooldown('compact', 'broken')).toBeUndefined();
    expect(fleet.calls('index-id', 'broken')).toBe(2);

    await s.store.enqueue('index_id', 'fine', { source: 'manual' });
    const tasks = await drained(s);
    expect(tasks.at(-1)).toMatchObject({ kind: 'index_id', target: 'fine', state: 'done' });
    expect(await s.metrics.registry.metrics()).toMatch(/^master_task_cooldowns_total\{kind="index_id"\} 1$/m);
  });

  it('does not follow a compaction up with an index build while the store cools for index_id', async () => {
    const { s } = await setup({ big: { fragments: 40 } }, { afterFailures: 1 });
    await s.store.recordFailure('index_id', 'big', 'earlier', 'Not found: …', 'target');
    await s.store.enqueue('compact', 'big', { source: 'manual' });
    s.scheduler.start();
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.kind, t.state])).toEqual([['compact', 'done']]);
    expect(await s.metrics.registry.metrics()).toMatch(
      /^master_sweep_skipped_total\{kind="index_id",reason="cooldown"\} 1$/m,
    );
  });

  it('sweeps and follows up a store an earlier policy cooled, once masters run with the cooldown off', async () => {
    const fleet = await startFleetStub({ big: { fragments: 40 } });
    cleanup.push(() => fleet.close());
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const workers = { endpoints: [fleet.url] };
    const before = await openScheduler(kv, clock, { workers, cooldown: { afterFailures: 1, maxPercent: 100 } });
    await before.store.recordFailure('compact', 'big', 'earlier-1', 'Not found: …', 'target');
    await before.store.recordFailure('index_id', 'big', 'earlier-2', 'Not found: …', 'target');
    expect(await before.store.coolingTargets('compact')).toEqual(new Set(['big']));
    await before.close();
    // The same fleet restarted with TASK_COOLDOWN_AFTER_FAILURES=0: the windows above (600 s and
    // more) must not outlive the setting.
    const s = await openScheduler(kv, clock, {
      workers,
      cooldown: { afterFailures: 0 },
      etcd: { prefix: before.config.etcd.prefix },
    });
    cleanup.push(() => s.close());
    await s.scheduler.scanOnce();
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({
      enqueued: 1,
      skipped: { parked: 0, cooldown: 0, active: 0 },
    });
    s.scheduler.start();
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.kind, t.state])).toEqual([
      ['compact', 'done'],
      ['index_id', 'done'],
    ]);
  });

  it('skips a parked store in sweeps and follow-ups, runs a manual task on it whose success keeps the park, and sweeps it again once released', async () => {
    const { fleet, s } = await setup({ parked: { fragments: 40 }, other: { fragments: 40 } }, { afterFailures: 1 });
    await s.store.recordFailure('compact', 'parked', 'earlier', 'Not found: …', 'target');
    await s.store.park('compact', 'parked', { reason: 'manifest names a lost fragment', by: 'test' });
    await s.store.park('index_id', 'parked', { reason: 'same store', by: 'test' });
    await s.scheduler.scanOnce();
    // Parked wins over cooling: the store counts once, as parked.
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({
      candidates: 2,
      enqueued: 1,
      skipped: { parked: 1, cooldown: 0, active: 0 },
    });
    await s.store.enqueue('compact', 'parked', { source: 'manual' });
    s.scheduler.start();
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.kind, t.target, t.state, t.source]).sort()).toEqual(
      [
        ['compact', 'other', 'done', 'sweep'],
        ['compact', 'parked', 'done', 'manual'],
        ['index_id', 'other', 'done', 'sweep'],
      ].sort(),
    );
    expect(fleet.calls('compact', 'parked')).toBe(1);
    // The success cleared the failure count, never the park.
    expect(await s.store.getCooldown('compact', 'parked')).toBeUndefined();
    expect(await s.store.getPark('compact', 'parked')).toMatchObject({ reason: 'manifest names a lost fragment' });
    const metrics = await s.metrics.registry.metrics();
    expect(metrics).toMatch(/^master_sweep_skipped_total\{kind="compact",reason="parked"\} 1$/m);
    expect(metrics).toMatch(/^master_sweep_skipped_total\{kind="index_id",reason="parked"\} 1$/m);

    fleet.stores.get('parked')!.fragments = 40;
    await s.scheduler.scanOnce();
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({ enqueued: 0, skipped: { parked: 1 } });
    expect(await s.store.unpark('compact', 'parked')).toBe(true);
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({ enqueued: 1, skipped: { parked: 0 } });
  });

  it('lets a park with an end time lapse: the sweep after it enqueues the store again', async () => {
    const { s, clock } = await setup({ parked: { fragments: 40 } });
    await s.store.park('compact', 'parked', { reason: 'until the restore', by: 'test', untilMs: clock.now() + 60_000 });
    await s.scheduler.scanOnce();
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({ enqueued: 0, skipped: { parked: 1 } });
    await clock.advance(60_000);
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({ enqueued: 1, skipped: { parked: 0 } });
  });

  it('holds the sweep task of a store parked after it was queued once every master reads held tasks, and runs it when released', async () => {
    const { fleet, s, clock } = await setup({ late: { fragments: 40 } });
    s.scheduler.start();
    // The only master understands held_tasks: switched on at the first check, written after the settle.
    await clock.advance(CLUSTER_CHECK_MS);
    await eventually(async () =>
      expect((await s.store.cluster.read())?.features.map((f) => f.name)).toEqual([HELD_TASKS]),
    );
    await clock.advance(FEATURE_SETTLE_MS);
    expect(s.scheduler.featureInUse(HELD_TASKS)).toBe(true);
    // Queued by a sweep, then parked before any slot claims it: the task waits, the worker is not called.
    await s.store.park('compact', 'late', { reason: 'restore running', by: 'ops' });
    const { task } = await s.store.enqueue('compact', 'late', { source: 'sweep' });
    await eventually(async () => expect((await s.store.getTask(task.id))?.state).toBe('held'));
    expect(fleet.calls('compact', 'late')).toBe(0);
    expect(await s.store.getTask(task.id)).toMatchObject({ held_reason: 'parked by ops: restore running' });

    expect(await s.store.unpark('compact', 'late', { by: 'ops' })).toBe(true);
    const tasks = await drained(s);
    expect(tasks.map((t) => [t.id, t.state])).toContainEqual([task.id, 'done']);
    expect(fleet.calls('compact', 'late')).toBe(1);
  });

  it('runs the sweep task of a parked store while a master that cannot read held tasks is live', async () => {
    const { fleet, s, clock, kv } = await setup({ late: { fragments: 40 } });
    const older = await openScheduler(kv, clock, { etcd: { prefix: s.config.etcd.prefix } }, { features: {} });
    cleanup.push(() => older.close());
    s.scheduler.start();
    await clock.advance(CLUSTER_CHECK_MS + FEATURE_SETTLE_MS);
    expect(s.scheduler.featureInUse(HELD_TASKS)).toBe(false);
    await s.store.park('compact', 'late', { reason: 'restore running', by: 'ops' });
    const { task } = await s.store.enqueue('compact', 'late', { source: 'sweep' });
    // As the previous release did: a task queued before its park runs once.
    await eventually(async () => expect((await s.store.getTask(task.id))?.state).toBe('done'));
    expect(fleet.calls('compact', 'late')).toBe(1);
  });

  it('gives every kind with a sweep its own periodic job and threshold setting', () => {
    const sweeping = KIND_NAMES.filter((k: TaskKind) => kindSpec(k).sweep !== undefined);
    expect(sweeping).toEqual(['merge_wal', 'compact']);
    const jobs = sweeping.map((k) => kindSpec(k).sweep?.job);
    expect(new Set(jobs).size).toBe(jobs.length);
    expect(Object.keys(KINDS)).toEqual(KIND_NAMES);
  });
});

describe('Scheduler queue watch', () => {
  it('opens another queue watch after one failed while it opened, and runs what is queued meanwhile', async () => {
    const fleet = await startFleetStub({ small: { fragments: 2 } });
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const mem = new MemoryKv({ clock });
    // The first queue watch fails as it opens: it reports its error, then delivers nothing.
    let opened = 0;
    const kv: Kv = {
      ...interceptKv(mem, (forward, ...args) => forward(...args)),
      watch: async (prefix, listener, options) => {
        if (!prefix.includes('/queue/') || ++opened > 1) return mem.watch(prefix, listener, options);
        const w = await mem.watch(prefix, () => undefined, options);
        options?.onError?.(new StoreUnavailableError('watch dropped as it opened'));
        return w;
      },
    };
    const s = await openScheduler(kv, clock, { workers: { endpoints: [fleet.url] } });
    try {
      s.scheduler.start();
      await eventually(() => expect(opened).toBe(1));
      const { task } = await s.store.enqueue('compact', 'small', { source: 'manual' });
      // Polls run it meanwhile; a watch taken for live would never have been replaced.
      await eventually(async () => {
        await clock.advance(1000);
        expect(opened).toBeGreaterThan(1);
        expect((await s.store.getTask(task.id))?.state).toBe('done');
      });
    } finally {
      await s.close();
      await mem.close();
      await fleet.close();
    }
  });
});

describe('Scheduler worker status', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  /** Two masters on one store and prefix, each with its own worker list; neither started. */
  async function twoMasters(
    scannerEndpoints: readonly string[],
    peerEndpoints: readonly string[],
  ): Promise<{ scanner: TestScheduler; peer: TestScheduler; clock: FakeClock }> {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const scanner = await openScheduler(kv, clock, { workers: { endpoints: scannerEndpoints } });
    cleanup.push(() => scanner.close());
    const peer = await openScheduler(kv, clock, {
      etcd: { prefix: scanner.config.etcd.prefix },
      workers: { endpoints: peerEndpoints },
    });
    cleanup.push(() => peer.close());
    return { scanner, peer, clock };
  }

  const fleetOf = async (stores: Parameters<typeof startFleetStub>[0]): Promise<FleetStub> => {
    const fleet = await startFleetStub(stores);
    cleanup.push(() => fleet.close());
    return fleet;
  };

  it('answers the latest scan on a master that never ran one, and nulls for a worker never scanned', async () => {
    const a = await fleetOf({ s1: {}, s2: {} });
    const b = await fleetOf({ s2: {}, s3: {} });
    const unscanned = 'http://127.0.0.1:9';
    const { scanner, peer, clock } = await twoMasters([a.url, b.url], [a.url, b.url, unscanned]);
    const never = (endpoint: string) => ({ endpoint, ok: null, error: null, last_scan_at: null, stores: 0 });
    expect(await peer.scheduler.workerStatus()).toEqual([never(a.url), never(b.url), never(unscanned)]);

    await scanner.scheduler.scanOnce();
    const at = clock.now();
    expect(await peer.scheduler.workerStatus()).toEqual([
      { endpoint: a.url, ok: true, error: null, last_scan_at: at, stores: 2 },
      { endpoint: b.url, ok: true, error: null, last_scan_at: at, stores: 2 },
      never(unscanned),
    ]);
  });

  it('keeps the store count a failed worker last reported, though another master scanned it before', async () => {
    const a = await fleetOf({ s1: {} });
    const b = await fleetOf({ s2: {}, s3: {}, s4: {} });
    const { scanner, peer, clock } = await twoMasters([a.url, b.url], [a.url, b.url]);
    await scanner.scheduler.scanOnce();
    await b.close();
    await clock.advance(60_000);
    await peer.scheduler.scanOnce();
    const [first, second] = await scanner.scheduler.workerStatus();
    expect(first).toEqual({ endpoint: a.url, ok: true, error: null, last_scan_at: clock.now(), stores: 1 });
    expect(second).toMatchObject({ endpoint: b.url, ok: false, last_scan_at: clock.now(), stores: 3 });
    expect(second?.error).toEqual(expect.stringContaining(b.url));
  });

  it('leaves out a worker this master no longer has configured', async () => {
    const a = await fleetOf({ s1: {} });
    const b = await fleetOf({ s2: {} });
    const { scanner, peer } = await twoMasters([a.url, b.url], [a.url]);
    await scanner.scheduler.scanOnce();
    expect((await peer.scheduler.workerStatus()).map((w) => w.endpoint)).toEqual([a.url]);
  });
});
