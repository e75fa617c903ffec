import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type Clock,
  EtcdKv,
  FakeClock,
  type Kv,
  type MasterInfo,
  MemoryKv,
  StoreAccessDeniedError,
  type StoreStats,
  StoreUnavailableError,
  type TaskKind,
  type TaskRecord,
  TaskStore,
  keysFor,
  seededRandom,
  systemClock,
} from '@maintd/core';
import { startEtcd } from '@maintd/core/testing';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { caughtUp, eventually, expectedSummary, gatedWatchKv } from '../test/helpers.js';
import { createExporterMetrics } from './metrics.js';
import type { KindSummary } from './summary.js';
import { type SyncInfo, ClusterWatcher } from './watcher.js';

const endpoints = inject('etcdEndpoints');

const info = (n: number): Omit<MasterInfo, 'id'> => ({
  host: hostname(),
  pid: process.pid + n,
  version: 'test',
  started_at: 0,
  pools: { general: 1 },
});

const stats = (name: string, pending: number): StoreStats => ({
  name,
  pending_wal_generations: pending,
  fragment_count: 3,
  row_count: 10,
  owners: ['http://w1'],
  scanned_at: 0,
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

/** A store on `kv` and a FakeClock, cooling after two failures, the guard out of the way. */
async function openStore(kv: EtcdKv, prefix: string, clock: Clock, id = 'm1', n = 0) {
  const store = await TaskStore.open({
    kv,
    clock,
    prefix,
    masterId: id,
    random: seededRandom(n + 1),
    leaseTtlSecs: 5,
    cooldown: { afterFailures: 2, maxPercent: 100, jitter: 0 },
    info: info(n),
  });
  cleanup.push(() => store.close());
  return store;
}

/** Runs a task of `kind` on `target` to the given outcome (claiming the oldest runnable task). */
async function run(store: TaskStore, kind: TaskKind, target: string, ok: boolean): Promise<void> {
  await store.enqueue(kind, target);
  const claim = await store.claimNext([kind]);
  if (claim?.task.target !== target) throw new Error(`claimed ${claim?.task.target}, not ${target}`);
  await store.finish(
    claim,
    ok
      ? { ok: true, detail: 'merged 3 generations across 1/1 workers' }
      : { ok: false, error: 'http://w1: HTTP 500: Not found: /data/x.lance', errorClass: 'target' },
  );
}

function newKv(eps: readonly string[] = endpoints): EtcdKv {
  const kv = new EtcdKv({ endpoints: eps, callTimeoutMs: 2000 });
  cleanup.push(() => kv.close());
  return kv;
}

function newWatcher(kv: Kv, prefix: string, clock: Clock, extra: { checkIntervalMs?: number; pageSize?: number } = {}) {
  const syncs: SyncInfo[] = [];
  const w = new ClusterWatcher({ kv, prefix, clock, onSync: (s) => syncs.push(s), ...extra });
  cleanup.push(() => w.close());
  w.start();
  return { w, syncs };
}

describe('ClusterWatcher against a real etcd', () => {
  it('matches the store’s state after a scripted sequence of enqueues, claims, finishes, cooldowns and parks, within one watch round trip', async () => {
    const prefix = `/test/${randomUUID()}`;
    const clock = new FakeClock();
    const kv = newKv();
    const store = await openStore(kv, prefix, clock);
    // State from before the exporter started comes from its range read…
    await store.enqueue('compact', 'store-a');
    await clock.advance(5000);
    await run(store, 'merge_wal', 'store-b', true);
    await store.putStats([stats('store-a', 3), stats('store-b', 40), stats('store-c', 0)]);
    await store.park('compact', 'store-z', { reason: 'disk being replaced', by: 'ops@10.0.0.7' });

    const { w } = newWatcher(newKv(), prefix, clock, { pageSize: 2 });
    await eventually(() => expect(w.up).toBe(true));
    await caughtUp(w, kv, prefix);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));

    // …and everything after it from the watch.
    await run(store, 'merge_wal', 'broken-3', false);
    await run(store, 'merge_wal', 'broken-3', false);
    await run(store, 'merge_wal', 'broken-3', false); // third failure: a doubled window
    for (const t of ['s1', 's2', 's3']) {
      await store.enqueue('merge_wal', t);
      await clock.advance(1000);
    }
    expect((await store.claimNext(['merge_wal']))?.task.target).toBe('s1'); // running from now on
    const a = await store.claimNext(['compact']);
    expect(a?.task.target).toBe('store-a');
    await store.finish(a!, { ok: true, detail: 'removed 3 / added 1 fragments' });
    await run(store, 'compact', 'broken-1', false);
    await run(store, 'compact', 'broken-1', false); // second failure opens a window
    await run(store, 'compact', 'broken-2', false); // one failure: counting, not cooling
    await store.enqueue('compact', 'store-b');
    await store.putStats([stats('store-b', 12), stats('store-d', 5)]);
    await store.deleteStats(['store-c']);
    // A park of a cooling target: counted as parked, still cooling, out of the cooling age.
    await store.park('merge_wal', 'broken-3', { reason: 'known broken', by: 'ops', untilMs: clock.now() + 3600_000 });
    await store.park('index_id', 'store-b', { reason: 'index rebuild by hand', by: 'ops' });
    const peer = await openStore(newKv(), prefix, clock, 'm2', 1);
    await clock.advance(2500);

    await caughtUp(w, kv, prefix);
    const expected = await expectedSummary(store, clock.now());
    expect(w.summary()).toEqual(expected);
    // The script did what it says, so the comparison above is not between two empty states.
    expect(expected).toMatchObject({ masters: 2, stores: 3, pendingWalGenerations: 20 });
    expect(expected.kinds.find((k) => k.kind === 'merge_wal')).toMatchObject({
      tasks: { queued: 2, running: 1, done: 1, failed: 3 },
      queueOldestAgeSeconds: 4.5,
      cooldownsActive: 1,
      cooldownFailuresMax: 3,
      cooldownOldestAgeSeconds: 0,
      parked: 1,
    });
    expect(expected.kinds.find((k) => k.kind === 'compact')).toMatchObject({
      tasks: { queued: 1, running: 0, done: 1, failed: 3 },
      queueOldestAgeSeconds: 2.5,
      cooldownsActive: 1,
      cooldownFailuresMax: 2,
      parked: 1,
    });
    expect(expected.kinds.find((k) => k.kind === 'index_id')).toMatchObject({ parked: 1 });

    // A success clears a cooldown; a master that leaves is gone with its session.
    const b = await store.claimNext(['compact']);
    await store.finish(b!, { ok: true, detail: 'removed 1 / added 1 fragments' });
    await run(store, 'compact', 'broken-1', true);
    await peer.close();
    await store.unpark('compact', 'store-z');
    await caughtUp(w, kv, prefix);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));
    expect(w.summary()?.masters).toBe(1);

    // Windows and parks lapse on the clock alone: no etcd event is involved.
    await clock.advance(48 * 3600 * 1000);
    const byKind = (f: (k: KindSummary) => number) => Object.fromEntries(w.summary()!.kinds.map((k) => [k.kind, f(k)]));
    expect(byKind((k) => k.cooldownsActive)).toEqual({ merge_wal: 0, compact: 0, index_id: 0 });
    expect(byKind((k) => k.parked)).toEqual({ merge_wal: 0, compact: 0, index_id: 1 });
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));
  });

  it('exports a kind only a newer master runs, from its registration and then its records, none of them invalid', async () => {
    const prefix = `/test/${randomUUID()}`;
    const clock = new FakeClock();
    const kv = newKv();
    const store = await openStore(kv, prefix, clock);
    await store.enqueue('merge_wal', 'a');
    const { w } = newWatcher(newKv(), prefix, clock);
    await eventually(() => expect(w.up).toBe(true));
    const newer = await TaskStore.open({
      kv: newKv(),
      clock,
      prefix,
      masterId: 'm2',
      random: seededRandom(9),
      leaseTtlSecs: 5,
      cooldown: { afterFailures: 2, maxPercent: 100, jitter: 0 },
      info: { ...info(2), kinds: ['merge_wal', 'repair'] },
    });
    cleanup.push(() => newer.close());
    await caughtUp(w, kv, prefix);
    // Registered, no record yet: its series are there, at zero.
    expect(w.summary()?.kinds.map((k) => k.kind)).toEqual(['merge_wal', 'repair']);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));

    await run(newer, 'repair', 'c', false);
    await run(newer, 'repair', 'c', false);
    await newer.enqueue('repair', 'b');
    await clock.advance(2000);
    await newer.park('repair', 'd', { reason: 'by hand', by: 'ops' });
    await newer.close();
    await caughtUp(w, kv, prefix);
    const expected = await expectedSummary(store, clock.now());
    expect(w.summary()).toEqual(expected);
    expect(expected).toMatchObject({ masters: 1, invalidRecords: 0 });
    // Its master gone, the kind stays while its records do.
    expect(expected.kinds.find((k) => k.kind === 'repair')).toMatchObject({
      tasks: { queued: 1, running: 0, done: 0, failed: 2 },
      queueOldestAgeSeconds: 2,
      cooldownsActive: 1,
      cooldownFailuresMax: 2,
      parked: 1,
    });
  });

  it('counts the tasks a park holds under held, from the sync and the watch, and queued again once released, none of them invalid', async () => {
    const prefix = `/test/${randomUUID()}`;
    const clock = new FakeClock();
    const kv = newKv();
    const store = await openStore(kv, prefix, clock);
    // Held as a master holds them once `held_tasks` is in use (docs/ARCHITECTURE.md §2.7): the
    // claim moves the record to `held` and its queue key to P/held/, with a timeline event.
    const hold = async (target: string): Promise<void> => {
      await store.park('merge_wal', target, { reason: 'disk being replaced', by: 'ops' });
      await store.enqueue('merge_wal', target, { source: 'sweep' }); // a manual task is never held
      expect(await store.claimNext(['merge_wal'], { holdParked: true })).toBeUndefined();
    };
    await hold('p1');
    const { w } = newWatcher(newKv(), prefix, clock);
    await eventually(() => expect(w.up).toBe(true));
    const metrics = createExporterMetrics(w, { defaultMetrics: false });
    expect(w.summary()?.kinds).toMatchObject([{ kind: 'merge_wal', tasks: { queued: 0, held: 1 }, parked: 1 }]);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));

    await clock.advance(3000);
    await hold('p2');
    await store.enqueue('merge_wal', 'q');
    await caughtUp(w, kv, prefix);
    expect(w.summary()).toMatchObject({ invalidRecords: 0, states: ['queued', 'running', 'done', 'failed', 'held'] });
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));
    expect(w.summary()?.kinds).toMatchObject([{ kind: 'merge_wal', tasks: { queued: 1, held: 2 }, parked: 2 }]);
    const text = await metrics.render();
    expect(text).toContain('master_cluster_tasks{kind="merge_wal",state="held"} 2');
    expect(text).toContain('master_cluster_tasks{kind="merge_wal",state="queued"} 1');
    expect(text).toContain('maintd_exporter_invalid_records 0');

    // Released, each pair's held task is queued again, with its id and so its age.
    await store.unpark('merge_wal', 'p1', { by: 'ops' });
    await store.unpark('merge_wal', 'p2', { by: 'ops' });
    await caughtUp(w, kv, prefix);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));
    expect(w.summary()?.kinds).toMatchObject([
      { kind: 'merge_wal', tasks: { queued: 3, held: 0 }, parked: 0, queueOldestAgeSeconds: 3 },
    ]);
    expect(w.summary()?.invalidRecords).toBe(0);
  });

  it('counts a task a later master left in a state this exporter does not know under that state, from the sync and the watch, none of them invalid', async () => {
    const prefix = `/test/${randomUUID()}`;
    const clock = new FakeClock();
    const kv = newKv();
    const store = await openStore(kv, prefix, clock);
    const keys = keysFor(prefix);
    const early = await store.enqueue('merge_wal', 'a');
    // Written as a later master might once a gate of its own is on (docs/ARCHITECTURE.md §2.8).
    const later = async (t: TaskRecord): Promise<void> => {
      await kv.put(keys.task(t.id), JSON.stringify({ ...t, state: 'quarantined', quarantined_by: 'ops' }));
    };
    await later(early.task);
    const { w } = newWatcher(newKv(), prefix, clock);
    await eventually(() => expect(w.up).toBe(true));
    const metrics = createExporterMetrics(w, { defaultMetrics: false });
    expect(w.summary()?.kinds).toMatchObject([{ kind: 'merge_wal', tasks: { queued: 0, held: 0, quarantined: 1 } }]);

    await clock.advance(3000);
    const late = await store.enqueue('merge_wal', 'b');
    await store.enqueue('merge_wal', 'c');
    await later(late.task);
    await caughtUp(w, kv, prefix);
    expect(w.summary()).toMatchObject({
      invalidRecords: 0,
      states: ['queued', 'running', 'done', 'failed', 'held', 'quarantined'],
    });
    expect(w.summary()?.kinds).toMatchObject([{ kind: 'merge_wal', tasks: { queued: 1, quarantined: 2 } }]);
    const text = await metrics.render();
    expect(text).toContain('master_cluster_tasks{kind="merge_wal",state="quarantined"} 2');
    expect(text).toContain('master_cluster_tasks{kind="merge_wal",state="queued"} 1');
    expect(text).toContain('maintd_exporter_invalid_records 0');
  });

  it('re-syncs from a fresh range when its watch starts on a compacted revision', async () => {
    const prefix = `/test/${randomUUID()}`;
    const clock = new FakeClock();
    const kv = newKv();
    const store = await openStore(kv, prefix, clock);
    await store.enqueue('merge_wal', 'a');
    const gated = gatedWatchKv(newKv());
    const { w, syncs } = newWatcher(gated.kv, prefix, clock);

    // Between its range read and its watch, etcd moves on and compacts the history it would need.
    await gated.watchRequested;
    await run(store, 'merge_wal', 'a', false);
    await run(store, 'merge_wal', 'a', false);
    await store.enqueue('compact', 'b');
    await kv.compact(await kv.revision());
    gated.open();

    // The re-sync first waits a moment on the watcher's clock (a watch that fails at once must not spin).
    await eventually(async () => {
      await clock.advance(100);
      expect(syncs.map((s) => s.reason)).toEqual(['start', 'compacted']);
    });
    await caughtUp(w, kv, prefix);
    expect(w.up).toBe(true);
    expect(w.summary()).toEqual(await expectedSummary(store, clock.now()));
    expect(w.summary()?.kinds.find((k) => k.kind === 'merge_wal')).toMatchObject({
      cooldownsActive: 1,
      tasks: { failed: 2 },
    });
  });

  it('reports down while etcd is stopped and in sync again after it restarts, without restarting itself', async () => {
    let etcd = await startEtcd();
    cleanup.push(() => etcd.stop());
    const prefix = `/test/${randomUUID()}`;
    const kv = newKv([etcd.clientUrl]);
    const store = await openStore(kv, prefix, systemClock);
    await store.enqueue('merge_wal', 'before');
    await run(store, 'compact', 'broken', false);
    await run(store, 'compact', 'broken', false);
    const { w, syncs } = newWatcher(newKv([etcd.clientUrl]), prefix, systemClock, { checkIntervalMs: 100 });
    const metrics = createExporterMetrics(w, { defaultMetrics: false });
    const up = async (): Promise<string | undefined> => /^maintd_exporter_up (\d)$/m.exec(await metrics.render())?.[1];
    await eventually(async () => expect(await up()).toBe('1'));

    await etcd.stop({ keepData: true });
    await eventually(async () => expect(await up()).toBe('0'));
    expect(w.summary()).toBeUndefined();

    etcd = await startEtcd({ dataDir: etcd.dataDir, clientPort: etcd.clientPort, peerPort: etcd.peerPort });
    await eventually(async () => expect(await up()).toBe('1'), 15_000);
    expect(syncs.map((s) => s.reason)).toEqual(['start', 'reconnect']);
    // Changes after the restart arrive through the new watch.
    await eventually(async () => void (await store.enqueue('merge_wal', 'after')), 10_000);
    await store.putStats([stats('after', 9)]);
    await caughtUp(w, kv, prefix);
    const now = Date.now();
    const s = w.summary()!;
    const expected = await expectedSummary(store, now);
    // Ages run on the real clock here: compare them loosely, everything else exactly.
    const strip = (x: typeof s) => ({
      ...x,
      kinds: x.kinds.map((k) => ({ ...k, queueOldestAgeSeconds: 0, cooldownOldestAgeSeconds: 0 })),
    });
    expect(strip(s)).toEqual(strip(expected));
    const of = (x: typeof s, kind: string) => x.kinds.find((k) => k.kind === kind)!;
    expect(of(s, 'merge_wal').tasks.queued).toBe(2);
    expect(of(s, 'compact').cooldownsActive).toBe(1);
    expect(of(s, 'merge_wal').queueOldestAgeSeconds).toBeCloseTo(of(expected, 'merge_wal').queueOldestAgeSeconds, 0);
  }, 45_000);
});

/**
 * A Kv over `kv` that, while `down`, fails reads as an unreachable etcd does, recording when the
 * watcher tried: `ranges` (a sync's first read) and `probes` (the periodic revision check).
 */
function unreachableWhileDown(kv: Kv, clock: Clock) {
  const state = { down: false, ranges: [] as number[], probes: [] as number[] };
  const unavailable = (): Promise<never> => Promise.reject(new StoreUnavailableError('etcd: connection refused'));
  const wrapped: Kv = {
    get: (key) => kv.get(key),
    range: (prefix, o) => {
      if (!state.down) return kv.range(prefix, o);
      state.ranges.push(clock.now());
      return unavailable();
    },
    txn: (c, ok, failed) => kv.txn(c, ok, failed),
    put: (key, value, o) => kv.put(key, value, o),
    delete: (key) => kv.delete(key),
    deletePrefix: (prefix) => kv.deletePrefix(prefix),
    grant: (ttl, o) => kv.grant(ttl, o),
    watch: (prefix, listener, o) => kv.watch(prefix, listener, o),
    revision: (probeKey) => {
      if (!state.down) return kv.revision(probeKey);
      state.probes.push(clock.now());
      return unavailable();
    },
    close: () => kv.close(),
  };
  return { kv: wrapped, state };
}

describe('ClusterWatcher reconnect backoff', () => {
  it('retries an unreachable etcd after doubling, jittered waits capped at 5 s, and starts over once in sync again', async () => {
    const clock = new FakeClock();
    const memory = new MemoryKv({ clock });
    cleanup.push(() => memory.close());
    const { kv, state } = unreachableWhileDown(memory, clock);
    state.down = true;
    const syncs: SyncInfo[] = [];
    const w = new ClusterWatcher({
      kv,
      prefix: '/backoff',
      clock,
      random: seededRandom(11),
      checkIntervalMs: 1000,
      onSync: (info) => syncs.push(info),
    });
    cleanup.push(() => w.close());
    w.start();
    // The same draws the watcher makes, in the same order: half to all of each nominal wait.
    const draws = seededRandom(11);
    const jittered = (nominal: number): number => Math.floor(nominal * (0.5 + draws.next() / 2));
    const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);

    await clock.advance(30_000);
    const first = gaps(state.ranges);
    expect(first.length).toBeGreaterThanOrEqual(7);
    expect(first).toEqual(first.map((_, i) => jittered(Math.min(250 * 2 ** i, 5000))));
    expect(w.up).toBe(false);

    state.down = false;
    await clock.advance(5000);
    expect(w.up).toBe(true);
    expect(syncs.map((s) => s.reason)).toEqual(['start']);
    jittered(5000); // the wait that was running when etcd came back

    // In sync, then unreachable again: the periodic check notices, and the waits start over.
    state.down = true;
    state.ranges = [];
    await clock.advance(10_000);
    expect(state.probes).toHaveLength(1);
    expect(gaps([state.probes[0]!, ...state.ranges]).slice(0, 4)).toEqual([
      jittered(250),
      jittered(500),
      jittered(1000),
      jittered(2000),
    ]);
    state.down = false;
    await clock.advance(5000);
    expect(syncs.map((s) => s.reason)).toEqual(['start', 'reconnect']);
  });
});

describe('ClusterWatcher on an etcd it cannot use', () => {
  /** A logger that keeps its lines as objects. */
  const recording = (): { logger: pino.Logger; lines: Record<string, unknown>[] } => {
    const lines: Record<string, unknown>[] = [];
    return {
      lines,
      logger: pino(
        { level: 'debug' },
        { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
      ),
    };
  };

  it('warns once per attempt, naming the endpoints, the cause and the next wait', async () => {
    const clock = new FakeClock();
    const memory = new MemoryKv({ clock });
    cleanup.push(() => memory.close());
    const { kv, state } = unreachableWhileDown(memory, clock);
    state.down = true;
    const { logger, lines } = recording();
    const w = new ClusterWatcher({
      kv,
      clock,
      logger,
      random: seededRandom(3),
      endpoints: ['http://e1:2379', 'http://e2:2379'],
    });
    cleanup.push(() => w.close());
    w.start();
    await clock.advance(10_000);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.length).toBe(state.ranges.length);
    warnings.forEach((l, i) => {
      expect(l).toMatchObject({ attempt: i + 1, endpoints: ['http://e1:2379', 'http://e2:2379'], phase: 'range' });
      expect(l.msg).toBe(
        `etcd not reachable at http://e1:2379, http://e2:2379: etcd: connection refused; retrying in ${((l.retry_in_ms as number) / 1000).toFixed(1)} s`,
      );
    });
    state.down = false;
    await clock.advance(5000);
    expect(w.up).toBe(true);
  });

  it('once it has been in sync, warns on an outage’s first retry and once a minute, and logs the retries between at debug', async () => {
    const clock = new FakeClock();
    const memory = new MemoryKv({ clock });
    cleanup.push(() => memory.close());
    const { kv, state } = unreachableWhileDown(memory, clock);
    const { logger, lines } = recording();
    const w = new ClusterWatcher({ kv, clock, logger, random: seededRandom(5), endpoints: ['http://e1:2379'] });
    cleanup.push(() => w.close());
    w.start();
    await clock.advance(1000);
    expect(w.up).toBe(true);
    state.down = true;
    await clock.advance(150_000);
    const retries = lines.filter((l) => String(l.msg).startsWith('etcd not reachable at http://e1:2379'));
    // Every 5 s or so for 150 s: about 30 attempts, each logged, three of them at warn.
    expect(retries.length).toBeGreaterThan(25);
    expect(retries.map((l) => l.attempt)).toEqual(retries.map((_, i) => i + 1));
    const warned = retries.filter((l) => l.level === 40);
    expect(warned.map((l) => l.attempt)).toEqual([1, expect.any(Number), expect.any(Number)]);
    expect(lines.filter((l) => l.level === 40 && String(l.msg).startsWith('etcd stopped answering'))).toHaveLength(1);
    state.down = false;
    await clock.advance(6000);
    expect(w.up).toBe(true);
    // The next outage warns on its first retry again.
    state.down = true;
    const before = lines.length;
    await clock.advance(15_000);
    const next = lines.slice(before).filter((l) => String(l.msg).startsWith('etcd not reachable'));
    expect(next.filter((l) => l.level === 40).map((l) => l.attempt)).toEqual([1]);
  });

  /** `kv` whose reads fail as `state.fail` says: refused credentials, or no answer. */
  const failing = (kv: Kv) => {
    const state = { fail: undefined as 'denied' | 'unavailable' | undefined, ranges: 0 };
    const error = (): Error =>
      state.fail === 'denied'
        ? new StoreAccessDeniedError('etcd refused the credentials: authentication failed')
        : new StoreUnavailableError('etcd: connection refused');
    const wrapped: Kv = {
      get: (key) => kv.get(key),
      range: (prefix, o) => {
        state.ranges++;
        return state.fail ? Promise.reject(error()) : kv.range(prefix, o);
      },
      txn: (c, ok, failed) => kv.txn(c, ok, failed),
      put: (key, value, o) => kv.put(key, value, o),
      delete: (key) => kv.delete(key),
      deletePrefix: (prefix) => kv.deletePrefix(prefix),
      grant: (ttl, o) => kv.grant(ttl, o),
      watch: (prefix, listener, o) => kv.watch(prefix, listener, o),
      revision: (probeKey) => (state.fail ? Promise.reject(error()) : kv.revision(probeKey)),
      close: () => kv.close(),
    };
    return { kv: wrapped, state };
  };

  it('gives up on refused credentials or a TLS mismatch before its first sync, and retries them after one', async () => {
    const clock = new FakeClock();
    const memory = new MemoryKv({ clock });
    cleanup.push(() => memory.close());
    const given: string[] = [];
    const onMisconfigured = (reason: string): void => void given.push(reason);

    const denied = failing(memory);
    denied.state.fail = 'denied';
    const a = new ClusterWatcher({ kv: denied.kv, clock, onMisconfigured });
    cleanup.push(() => a.close());
    a.start();
    await clock.advance(10_000);
    expect(given).toEqual(['etcd refused the credentials: authentication failed']);
    expect(denied.state.ranges).toBe(1);

    const mismatch = failing(memory);
    mismatch.state.fail = 'unavailable';
    const reason = 'the certificate of etcd at https://e1:2379 is not trusted by ETCD_CA_CERT';
    const b = new ClusterWatcher({ kv: mismatch.kv, clock, explain: () => Promise.resolve(reason), onMisconfigured });
    cleanup.push(() => b.close());
    b.start();
    await clock.advance(10_000);
    expect(given).toEqual(['etcd refused the credentials: authentication failed', reason]);
    expect(mismatch.state.ranges).toBe(1);

    // In sync first: the same refusal is then a credential rotation in progress, retried.
    const later = failing(memory);
    const c = new ClusterWatcher({ kv: later.kv, clock, checkIntervalMs: 1000, onMisconfigured });
    cleanup.push(() => c.close());
    c.start();
    await clock.advance(100);
    expect(c.up).toBe(true);
    later.state.fail = 'denied';
    await clock.advance(10_000);
    expect(c.up).toBe(false);
    expect(later.state.ranges).toBeGreaterThan(2);
    expect(given).toHaveLength(2);
  });
});
