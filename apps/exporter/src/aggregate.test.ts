import {
  FakeClock,
  type TaskCooldown,
  type TaskKind,
  type TaskRecord,
  type TaskState,
  type ParkRecord,
  createIdGenerator,
  encodeCooldown,
  encodePark,
  encodeTask,
  keysFor,
  seededRandom,
} from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { type Change, applyChange, createAggregate } from './aggregate.js';
import { MAX_STATES } from './name-table.js';
import { TASK_STATES } from './record-fields.js';
import { type KindSummary, summarize } from './summary.js';

const keys = keysFor('/maintd');

/** A small world of records written the way TaskStore writes them, on a FakeClock. */
function world(seed = 1) {
  const clock = new FakeClock();
  const newId = createIdGenerator(clock, seededRandom(seed));
  const agg = createAggregate('/maintd');
  const put = (key: string, value: string): void => applyChange(agg, { type: 'put', key, value, modRevision: 0 });
  const del = (key: string): void => applyChange(agg, { type: 'delete', key, value: '', modRevision: 0 });
  const task = (kind: TaskKind, state: TaskState = 'queued', over: Partial<TaskRecord> = {}): TaskRecord => {
    const t: TaskRecord = {
      id: newId(),
      kind,
      target: 'store-1',
      state,
      source: 'sweep',
      enqueued_at: clock.now(),
      attempt: 0,
      ...over,
    };
    put(keys.task(t.id), encodeTask(t));
    return t;
  };
  const move = (t: TaskRecord, state: TaskState): TaskRecord => {
    const next = { ...t, state };
    put(keys.task(t.id), encodeTask(next));
    return next;
  };
  const cooldown = (kind: TaskKind, target: string, over: Partial<TaskCooldown> = {}): TaskCooldown => {
    const c: TaskCooldown = {
      kind,
      target,
      failures: 3,
      until_ms: clock.now() + 600_000,
      last_error: 'HTTP 500: Not found: /data/x.lance',
      last_error_class: 'target',
      first_failure_ms: clock.now(),
      last_failure_ms: clock.now(),
      last_task_id: 't',
      ...over,
    };
    put(keys.cooldown(kind, target), encodeCooldown(c));
    return c;
  };
  const park = (kind: TaskKind, target: string, over: Partial<ParkRecord> = {}): ParkRecord => {
    const p: ParkRecord = {
      kind,
      target,
      reason: 'disk being replaced',
      by: 'token@10.0.0.7',
      parked_at_ms: clock.now(),
      until_ms: null,
      ...over,
    };
    put(keys.parked(kind, target), encodePark(p));
    return p;
  };
  const stats = (name: string, pending: number): void =>
    put(
      keys.stats(name),
      JSON.stringify({
        name,
        pending_wal_generations: pending,
        fragment_count: 1,
        row_count: 1,
        owners: [],
        scanned_at: 0,
      }),
    );
  // A kind left out of the summary (no record, no master running it) reads as all zeros.
  const kind = (k: TaskKind): KindSummary =>
    summarize(agg, clock.now()).kinds.find((s) => s.kind === k) ?? {
      kind: k,
      tasks: { queued: 0, running: 0, done: 0, failed: 0, held: 0 },
      queueOldestAgeSeconds: 0,
      cooldownsActive: 0,
      cooldownFailuresMax: 0,
      cooldownOldestAgeSeconds: 0,
      parked: 0,
    };
  return {
    clock,
    agg,
    put,
    del,
    task,
    move,
    cooldown,
    park,
    stats,
    kind,
    summary: () => summarize(agg, clock.now()),
  };
}

describe('cluster aggregate', () => {
  it('counts tasks by kind and state, moving a task between states on each put of its record', () => {
    const w = world();
    const a = w.task('merge_wal');
    w.task('merge_wal');
    w.task('compact');
    expect(w.kind('merge_wal').tasks).toEqual({ queued: 2, running: 0, done: 0, failed: 0, held: 0 });
    const running = w.move(a, 'running');
    expect(w.kind('merge_wal').tasks).toEqual({ queued: 1, running: 1, done: 0, failed: 0, held: 0 });
    w.move(running, 'failed');
    expect(w.kind('merge_wal').tasks).toEqual({ queued: 1, running: 0, done: 0, failed: 1, held: 0 });
    expect(w.kind('compact').tasks).toEqual({ queued: 1, running: 0, done: 0, failed: 0, held: 0 });
  });

  it('removes exactly the deleted task’s contribution when history pruning deletes it', () => {
    const w = world();
    const done = w.move(w.task('compact'), 'done');
    w.move(w.task('compact'), 'done');
    w.del(keys.task(done.id));
    w.del(keys.task(done.id)); // a replayed delete of a key already gone changes nothing
    expect(w.kind('compact').tasks).toEqual({ queued: 0, running: 0, done: 1, failed: 0, held: 0 });
  });

  it('keys a task by its id, and still counts one whose key does not end in a UUID', () => {
    const w = world();
    const t = w.task('merge_wal');
    w.put(`${keys.tasksPrefix}legacy-1`, encodeTask({ ...t, state: 'done' }));
    expect(w.kind('merge_wal').tasks).toMatchObject({ queued: 1, done: 1 });
    w.del(`${keys.tasksPrefix}legacy-1`);
    w.del(keys.task(t.id));
    expect(w.kind('merge_wal').tasks).toEqual({ queued: 0, running: 0, done: 0, failed: 0, held: 0 });
    expect(w.agg.tasks.size).toBe(0);
  });

  it('reports the age of the oldest task still queued, computed at scrape time', async () => {
    const w = world();
    const first = w.task('merge_wal');
    await w.clock.advance(30_000);
    w.task('merge_wal');
    await w.clock.advance(15_000);
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(45);
    await w.clock.advance(5_000);
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(50);
    w.move(first, 'running');
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(20);
    expect(w.kind('compact').queueOldestAgeSeconds).toBe(0);
  });

  it('takes a queued task’s age from its UUIDv7 id, and from enqueued_at only when its key tells no time', async () => {
    const w = world();
    const t = w.task('merge_wal');
    await w.clock.advance(60_000);
    const legacy = `${keys.tasksPrefix}legacy-1`;
    w.put(legacy, encodeTask({ ...t, id: 'legacy-1', enqueued_at: w.clock.now() - 90_000 }));
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(90);
    w.del(legacy);
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(60);
    w.put(keys.task(t.id), encodeTask({ ...t, enqueued_at: 0 })); // the id was made at enqueue
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(60);
  });

  it('keeps a recovered task’s age: it returns to the queue with its original enqueued_at', async () => {
    const w = world();
    const t = w.task('merge_wal');
    await w.clock.advance(10_000);
    w.task('merge_wal');
    const running = w.move(t, 'running');
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(0);
    w.move(running, 'queued'); // recoverOrphaned: id and enqueued_at kept
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(10);
    expect(w.kind('merge_wal').tasks.queued).toBe(2);
  });

  it('stops counting a lapsed window as active without any etcd change', async () => {
    const w = world();
    w.cooldown('merge_wal', 'broken-1', { until_ms: w.clock.now() + 60_000 });
    w.cooldown('merge_wal', 'broken-2', { until_ms: w.clock.now() + 120_000 });
    w.cooldown('merge_wal', 'counting', { failures: 1, until_ms: null });
    expect(w.kind('merge_wal').cooldownsActive).toBe(2);
    await w.clock.advance(60_000);
    expect(w.kind('merge_wal').cooldownsActive).toBe(1);
    await w.clock.advance(60_000);
    expect(w.kind('merge_wal').cooldownsActive).toBe(0);
    expect(w.kind('compact').cooldownsActive).toBe(0);
  });

  it('tracks the highest failure count exactly as records are rewritten and deleted', () => {
    const w = world();
    w.cooldown('compact', 'a', { failures: 7 });
    w.cooldown('compact', 'b', { failures: 7 });
    w.cooldown('compact', 'c', { failures: 2, until_ms: null });
    expect(w.kind('compact').cooldownFailuresMax).toBe(7);
    w.del(keys.cooldown('compact', 'a'));
    expect(w.kind('compact').cooldownFailuresMax).toBe(7);
    w.cooldown('compact', 'b', { failures: 8 });
    expect(w.kind('compact').cooldownFailuresMax).toBe(8);
    w.del(keys.cooldown('compact', 'b')); // success cleared it
    expect(w.kind('compact').cooldownFailuresMax).toBe(2);
    w.del(keys.cooldown('compact', 'c'));
    expect(w.kind('compact').cooldownFailuresMax).toBe(0);
  });

  it('measures how long the longest-failing cooling target has been failing', async () => {
    const w = world();
    const start = w.clock.now();
    await w.clock.advance(3_600_000);
    w.cooldown('merge_wal', 'old', { first_failure_ms: start, until_ms: w.clock.now() + 600_000 });
    w.cooldown('merge_wal', 'new', { first_failure_ms: w.clock.now() - 60_000, until_ms: w.clock.now() + 1_200_000 });
    w.cooldown('merge_wal', 'lapsed', { first_failure_ms: start - 1000, until_ms: w.clock.now() - 1 });
    expect(w.kind('merge_wal').cooldownOldestAgeSeconds).toBe(3600);
    await w.clock.advance(600_000); // "old" lapses; "new" is still cooling
    expect(w.kind('merge_wal').cooldownOldestAgeSeconds).toBe(660);
  });

  it('sums pending generations over stats rows and counts stores, following rewrites and deletes', () => {
    const w = world();
    w.stats('s1', 10);
    w.stats('s2', 5);
    w.stats('s1', 3);
    expect(w.summary()).toMatchObject({ stores: 2, pendingWalGenerations: 8 });
    w.del(keys.stats('s2'));
    expect(w.summary()).toMatchObject({ stores: 1, pendingWalGenerations: 3 });
  });

  it('counts masters by their session-bound registration keys', () => {
    const w = world();
    w.put(keys.master('m1'), '{}');
    w.put(keys.master('m2'), '{}');
    w.put(keys.master('m1'), '{}');
    expect(w.summary().masters).toBe(2);
    w.del(keys.master('m1'));
    expect(w.summary().masters).toBe(1);
  });

  it('counts the tasks, cooldowns and parks of a kind it was never told of under that kind, not as invalid', async () => {
    // What a newer master writes: its kind is data to this exporter, as to the master that predates it.
    const w = world();
    w.task('repair');
    await w.clock.advance(3000);
    const running = w.move(w.task('repair'), 'running');
    w.cooldown('repair', 'broken', { failures: 4 });
    w.park('repair', 'fragile');
    expect(w.summary().invalidRecords).toBe(0);
    expect(w.kind('repair')).toEqual({
      kind: 'repair',
      tasks: { queued: 1, running: 1, done: 0, failed: 0, held: 0 },
      queueOldestAgeSeconds: 3,
      cooldownsActive: 1,
      cooldownFailuresMax: 4,
      cooldownOldestAgeSeconds: 0,
      parked: 1,
    });
    w.move(running, 'done');
    expect(w.kind('repair').tasks).toEqual({ queued: 1, running: 0, done: 1, failed: 0, held: 0 });
  });

  it('counts a task a park holds under held, out of the queue while held, and ignores its held and timeline keys', async () => {
    // What a master writes once `held_tasks` is in use (docs/ARCHITECTURE.md §2.7): the record
    // turns `held`, its queue key moves to P/held/, and the pair's timeline gains an event.
    const w = world();
    const a = w.task('merge_wal', 'queued', { target: 'parked-1' });
    await w.clock.advance(5000);
    const b = w.task('merge_wal');
    w.park('merge_wal', 'parked-1');
    w.put(
      keys.task(a.id),
      encodeTask({ ...a, state: 'held', held_at: w.clock.now(), held_reason: 'parked by ops: disk' }),
    );
    w.del(keys.queue('merge_wal', a.id));
    w.put(keys.held('merge_wal', 'parked-1', a.id), '');
    w.put(keys.timeline('merge_wal', 'parked-1', b.id), '{"type":"held","at":0}');
    expect(w.summary()).toMatchObject({ invalidRecords: 0, states: ['queued', 'running', 'done', 'failed', 'held'] });
    expect(w.kind('merge_wal')).toMatchObject({
      tasks: { queued: 1, running: 0, done: 0, failed: 0, held: 1 },
      // The held task left the queue: the oldest queued one is the younger.
      queueOldestAgeSeconds: 0,
      parked: 1,
    });
    // Released: the same record, queued again with its id, so its age is its enqueue's.
    w.del(keys.parked('merge_wal', 'parked-1'));
    w.del(keys.held('merge_wal', 'parked-1', a.id));
    w.move(a, 'queued');
    expect(w.kind('merge_wal')).toMatchObject({ tasks: { queued: 2, held: 0 }, queueOldestAgeSeconds: 5, parked: 0 });
    w.del(keys.timeline('merge_wal', 'parked-1', b.id));
    expect(w.summary().invalidRecords).toBe(0);
  });

  it('counts a task of a later release’s state under that state, not as invalid, and out of the queue while in it', async () => {
    // What a later master may write once a gate of its own is on (docs/ARCHITECTURE.md §2.8): a
    // state this release does not know, `quarantined` say.
    const w = world();
    const later = (t: TaskRecord): void => w.put(keys.task(t.id), JSON.stringify({ ...t, state: 'quarantined' }));
    const a = w.task('merge_wal');
    await w.clock.advance(5000);
    const b = w.task('merge_wal');
    later(a);
    later(w.task('repair', 'running'));
    const s = w.summary();
    expect(s.invalidRecords).toBe(0);
    expect(s.states).toEqual(['queued', 'running', 'done', 'failed', 'held', 'quarantined']);
    expect(w.kind('merge_wal')).toMatchObject({
      tasks: { queued: 1, running: 0, done: 0, failed: 0, held: 0, quarantined: 1 },
      // The task left the queue: the oldest queued one is the younger.
      queueOldestAgeSeconds: 0,
    });
    expect(w.kind('repair').tasks).toEqual({ queued: 0, running: 0, done: 0, failed: 0, held: 0, quarantined: 1 });
    w.move(a, 'queued');
    expect(w.kind('merge_wal')).toMatchObject({ tasks: { queued: 2, quarantined: 0 }, queueOldestAgeSeconds: 5 });
    w.move(b, 'done');
    w.del(keys.task(a.id));
    expect(w.kind('merge_wal').tasks).toEqual({ queued: 0, running: 0, done: 1, failed: 0, held: 0, quarantined: 0 });
  });

  it('leaves out, as invalid, a task whose state is no state’s name or one beyond the states it tells apart', () => {
    const w = world();
    const t = w.task('merge_wal');
    for (const state of ['Held', 'on-hold', 7]) {
      w.put(keys.task(t.id), JSON.stringify({ ...t, state }));
      expect(w.summary().invalidRecords).toBe(1);
      expect(w.kind('merge_wal').tasks).toEqual({ queued: 0, running: 0, done: 0, failed: 0, held: 0 });
    }
    // Today's states, then later ones up to the limit: one more is beyond it.
    for (let i = TASK_STATES.length; i < MAX_STATES; i++) {
      w.put(keys.task(w.task('merge_wal').id), JSON.stringify({ ...t, state: `s${i}` }));
    }
    w.put(keys.task(t.id), JSON.stringify({ ...t, state: 'one_too_many' }));
    expect(w.summary().states).toHaveLength(MAX_STATES);
    expect(w.summary().invalidRecords).toBe(1);
  });

  it('shows a kind while a live master runs it or a record of it exists, in name order', () => {
    const w = world();
    const info = { id: 'm1', host: 'h', pid: 1, version: '0.1.0', started_at: 0, pools: {} };
    w.put(keys.master('m1'), JSON.stringify({ ...info, kinds: ['merge_wal', 'compact'] }));
    w.put(keys.master('m0'), JSON.stringify({ ...info, id: 'm0' })); // predates `kinds`: counted, names none
    expect(w.summary().masters).toBe(2);
    expect(w.summary().kinds.map((k) => k.kind)).toEqual(['compact', 'merge_wal']);
    expect(w.kind('compact').tasks).toEqual({ queued: 0, running: 0, done: 0, failed: 0, held: 0 });
    const t = w.task('repair');
    expect(w.summary().kinds.map((k) => k.kind)).toEqual(['compact', 'merge_wal', 'repair']);
    w.del(keys.master('m1'));
    expect(w.summary().kinds.map((k) => k.kind)).toEqual(['repair']);
    w.del(keys.task(t.id));
    expect(w.summary().kinds).toEqual([]);
    expect(w.summary().masters).toBe(1);
  });

  it('ignores queue, held, claim, lock, dedupe, sweep and timeline keys, and keys of another prefix', () => {
    const w = world();
    const other = keysFor('/maintd2');
    const t = w.task('compact');
    w.put(keys.queue('compact', t.id), '');
    w.put(keys.held('compact', 'store-1', t.id), '');
    w.put(keys.timeline('compact', 'store-1', t.id), '{"type":"failure","at":0,"error":"HTTP 500"}');
    w.put(keys.timeline('compact', 'store-2', t.id), 'not json');
    w.put(keys.claim(t.id), 'm1');
    w.put(keys.targetLock('store-1'), t.id);
    w.put(keys.dedupe('compact', 'store-1'), t.id);
    w.put(keys.sweep('merge_wal'), '{}');
    w.put(other.master('m9'), '{}');
    expect(() => w.put(other.task(t.id), 'not json')).not.toThrow();
    expect(w.summary()).toMatchObject({ masters: 0, stores: 0, invalidRecords: 0 });
    expect(w.kind('compact').tasks.queued).toBe(1);
  });

  it('leaves an undecodable value out of every number and counts it until the key is fixed or deleted', () => {
    const w = world();
    const t = w.task('merge_wal');
    w.put(keys.task(t.id), '{"kind":"merge_wal"');
    w.put(keys.cooldown('merge_wal', 'x'), '{"failures":"many"}');
    w.put(`${keys.cooldownPrefix()}Defrag/6869`, encodeCooldown(w.cooldown('compact', 'hi')));
    expect(w.kind('merge_wal').tasks.queued).toBe(0);
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(0);
    expect(w.summary().invalidRecords).toBe(3);
    w.put(keys.task(t.id), encodeTask(t));
    w.del(keys.cooldown('merge_wal', 'x'));
    expect(w.summary().invalidRecords).toBe(1);
    expect(w.kind('merge_wal').tasks.queued).toBe(1);
  });

  it('leaves out a record of a new kind that is undecodable otherwise, and shows no series for that kind', () => {
    const w = world();
    const t = w.task('merge_wal');
    w.put(keys.task(t.id), '{"kind":"repair","state":"Paused"}');
    expect(w.summary()).toMatchObject({ invalidRecords: 1, kinds: [] });
  });

  it('ends in the same numbers when changes already in a snapshot are replayed over it', async () => {
    // What a sync does: pages read at later revisions, then the watch replays from the first.
    const clock = new FakeClock();
    const random = seededRandom(42);
    const newId = createIdGenerator(clock, random);
    const live = createAggregate('/maintd');
    const log: Change[] = [];
    const last = new Map<string, Change>();
    const emit = (type: 'put' | 'delete', key: string, value = ''): void => {
      const c: Change = { type, key, value, modRevision: log.length + 1 };
      log.push(c);
      last.set(key, c);
      applyChange(live, c);
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random.next() * xs.length)]!;
    const tasks: TaskRecord[] = [];
    for (let step = 0; step < 3000; step++) {
      await clock.advance(Math.floor(random.next() * 1000));
      const r = random.next();
      if (r < 0.3 || tasks.length === 0) {
        const t: TaskRecord = {
          id: newId(),
          kind: pick(['merge_wal', 'compact'] as const),
          target: 's',
          state: 'queued',
          source: 'sweep',
          enqueued_at: clock.now(),
          attempt: 0,
        };
        tasks.push(t);
        emit('put', keys.task(t.id), encodeTask(t));
      } else if (r < 0.8) {
        const i = Math.floor(random.next() * tasks.length);
        const t: TaskRecord = { ...tasks[i]!, state: pick(TASK_STATES) };
        tasks[i] = t;
        emit('put', keys.task(t.id), encodeTask(t));
      } else if (r < 0.9) {
        const [t] = tasks.splice(Math.floor(random.next() * tasks.length), 1);
        emit('delete', keys.task(t!.id));
      } else {
        const kind = pick(['merge_wal', 'compact'] as const);
        const target = `s${Math.floor(random.next() * 20)}`;
        if (random.next() < 0.3) emit('delete', keys.cooldown(kind, target));
        else {
          const c: TaskCooldown = {
            kind,
            target,
            failures: 1 + Math.floor(random.next() * 6),
            until_ms: clock.now() + Math.floor(random.next() * 100_000),
            last_error: 'e',
            last_error_class: 'target',
            first_failure_ms: clock.now() - Math.floor(random.next() * 100_000),
            last_failure_ms: clock.now(),
            last_task_id: 't',
          };
          emit('put', keys.cooldown(kind, target), encodeCooldown(c));
        }
      }
    }
    const synced = createAggregate('/maintd');
    for (const c of last.values()) if (c.type === 'put') applyChange(synced, c);
    for (const c of log.slice(Math.floor(log.length / 3))) applyChange(synced, c);
    expect(summarize(synced, clock.now())).toEqual(summarize(live, clock.now()));
    expect(synced.revision).toBe(log.length);
  });

  it('counts parks apart from cooldowns: a parked target is cooling only while its window is open, and never in the cooling age', async () => {
    const w = world();
    w.cooldown('merge_wal', 'broken-1', { until_ms: w.clock.now() + 60_000 });
    await w.clock.advance(600_000);
    w.cooldown('merge_wal', 'broken-2', { until_ms: w.clock.now() + 600_000 });
    w.park('merge_wal', 'healthy-but-fragile'); // parked, no failure record
    expect(w.kind('merge_wal')).toMatchObject({ parked: 1, cooldownsActive: 1, cooldownOldestAgeSeconds: 0 });
    // broken-1's window lapsed long ago: parking it changes no cooling number.
    w.park('merge_wal', 'broken-1');
    expect(w.kind('merge_wal')).toMatchObject({ parked: 2, cooldownsActive: 1 });
    // broken-2 is cooling: parked, it still counts as cooling but no longer ages the alert's gauge.
    await w.clock.advance(60_000);
    expect(w.kind('merge_wal').cooldownOldestAgeSeconds).toBe(60);
    w.park('merge_wal', 'broken-2');
    expect(w.kind('merge_wal')).toMatchObject({ parked: 3, cooldownsActive: 1, cooldownOldestAgeSeconds: 0 });
    w.del(keys.parked('merge_wal', 'broken-2'));
    expect(w.kind('merge_wal')).toMatchObject({ parked: 2, cooldownsActive: 1, cooldownOldestAgeSeconds: 60 });
    expect(w.kind('compact').parked).toBe(0);
  });

  it('stops counting a park at its end without any etcd change, and an open-ended one only once it is released', async () => {
    const w = world();
    w.park('compact', 'a', { until_ms: w.clock.now() + 60_000 });
    w.park('compact', 'b');
    expect(w.kind('compact').parked).toBe(2);
    await w.clock.advance(59_999);
    expect(w.kind('compact').parked).toBe(2);
    await w.clock.advance(1);
    expect(w.kind('compact').parked).toBe(1); // as isParked: lapsed at until_ms exactly
    await w.clock.advance(365 * 24 * 3600_000);
    expect(w.kind('compact').parked).toBe(1);
    w.park('compact', 'a'); // parked again, open-ended
    w.del(keys.parked('compact', 'b'));
    expect(w.kind('compact').parked).toBe(1);
    expect(w.agg.parks.flatMap((m) => [...m.keys()])).toEqual([keys.cooldown('compact', 'a')]);
  });

  it('leaves out a park it cannot read, or under a key whose kind is not a kind’s name, as an invalid record', () => {
    const w = world();
    w.put(keys.parked('merge_wal', 'x'), '{"until_ms":"tomorrow"}');
    w.put(
      `${keys.parkedPrefix()}De-frag/abcd`,
      encodePark({ kind: 'merge_wal', target: 'y', reason: 'r', by: 'b', parked_at_ms: 0, until_ms: null }),
    );
    expect(w.summary()).toMatchObject({ invalidRecords: 2 });
    expect(w.summary().kinds).toEqual([]);
    w.park('merge_wal', 'x');
    expect(w.summary()).toMatchObject({ invalidRecords: 1 });
    expect(w.kind('merge_wal').parked).toBe(1);
  });

  it('keeps the queue heap within a bound when tasks leave it out of order between scrapes', () => {
    const w = world();
    const stuck = w.task('merge_wal'); // the oldest never leaves: nothing ever pops from the top
    for (let i = 0; i < 20_000; i++) w.move(w.task('merge_wal'), 'running');
    expect(w.agg.queues[0]!.ids.length).toBeLessThanOrEqual(2 * 1 + 1024 + 1); // merge_wal's heap
    expect(w.kind('merge_wal').tasks.queued).toBe(1);
    w.move(stuck, 'done');
    expect(w.kind('merge_wal').queueOldestAgeSeconds).toBe(0);
  });
});
