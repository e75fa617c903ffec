import { describe, expect, it } from 'vitest';
import { auditEntry, cooldown, master, park } from '../../test/fake-master.js';
import { taskMap } from '../../test/task-map.js';
import type { Task } from '../api/types.js';
import {
  MAX_TASKS,
  applyEvents,
  cooldownMap,
  coolingByKind,
  countsFrom,
  mergeInto,
  mergeRows,
  parseGuardOverflow,
} from './fleet.js';
import { EMPTY_FLEET } from './fleet-data.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { LiveMap } from './live-map.js';

function task(n: number, over: Partial<Task> = {}): Task {
  return {
    id: `01a23766-0000-7000-8000-${String(n).padStart(12, '0')}`,
    kind: 'merge_wal',
    target: `store-${n}`,
    state: 'done',
    source: 'sweep',
    enqueued_at: n,
    attempt: 1,
    ...over,
  };
}

describe('applyEvents', () => {
  const loaded = { ...EMPTY_FLEET, cooldowns: cooldownMap([cooldown('a'), cooldown('b')]), tasks: taskMap([task(1)]) };

  it('upserts and deletes cooldowns (a null cooldown is a deletion)', () => {
    const next = applyEvents(loaded, [
      { type: 'cooldown', revision: 5, kind: 'merge_wal', target: 'a', cooldown: null },
      { type: 'cooldown', revision: 6, kind: 'merge_wal', target: 'c', cooldown: cooldown('c') },
      { type: 'cooldown', revision: 7, kind: 'merge_wal', target: 'b', cooldown: cooldown('b', { failures: 9 }) },
    ]);
    expect([...next.cooldowns!.keys()].sort()).toEqual(['merge_wal/b', 'merge_wal/c']);
    expect(next.cooldowns!.get('merge_wal/b')?.failures).toBe(9);
  });

  it('upserts and deletes tasks', () => {
    const next = applyEvents(loaded, [
      { type: 'task', revision: 5, task: task(2, { state: 'running' }) },
      { type: 'task_deleted', revision: 6, id: task(1).id },
    ]);
    expect([...next.tasks!.values()].map((t) => t.target)).toEqual(['store-2']);
  });

  it('changes the live maps in place (no copy per batch) and returns new data only when something applied', () => {
    const data = { ...EMPTY_FLEET, cooldowns: cooldownMap([cooldown('a')]), tasks: taskMap([task(1)]) };
    const revision = (data.cooldowns as LiveMap<unknown>).revision;
    const next = applyEvents(data, [{ type: 'task', revision: 5, task: task(2) }]);
    expect(next).not.toBe(data);
    expect(next.tasks).toBe(data.tasks);
    expect(data.tasks.size).toBe(2);
    expect(next.cooldowns).toBe(data.cooldowns);
    expect((next.cooldowns as LiveMap<unknown>).revision).toBe(revision);
    expect(applyEvents(data, [])).toBe(data);
  });

  it('copies a plain map into a live one once, leaving the plain one alone', () => {
    const plain = new Map([['merge_wal/a', cooldown('a')]]);
    const next = applyEvents({ ...EMPTY_FLEET, cooldowns: plain }, [
      { type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'b', cooldown: cooldown('b') },
    ]);
    expect(next.cooldowns).toBeInstanceOf(LiveMap);
    expect(plain.size).toBe(1);
    expect(next.cooldowns?.size).toBe(2);
  });

  it('notes parks and releases in the activity log, with who parked and why', () => {
    const parked = cooldown('a', { parked: park('disk gone', { parked_at_ms: 500 }) });
    const data = { ...EMPTY_FLEET, cooldowns: cooldownMap([cooldown('a')]) };
    const afterPark = applyEvents(
      data,
      [{ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'a', cooldown: parked }],
      1000,
    );
    expect(afterPark.activity).toEqual([
      {
        at: 500,
        text: 'parked merge_wal a (token@127.0.0.1): disk gone',
        tone: 'warn',
        // What it names, so the audit trail's line of the same park replaces it.
        subject: { source: 'park', keys: ['park merge_wal/a'], by: 'token@127.0.0.1', reason: 'disk gone' },
      },
    ]);
    // A change of the failure record of a parked entry is no new park.
    const again = applyEvents(
      afterPark,
      [{ type: 'cooldown', revision: 2, kind: 'merge_wal', target: 'a', cooldown: { ...parked, failures: 9 } }],
      1000,
    );
    expect(again.activity).toHaveLength(1);
    const released = applyEvents(
      again,
      [{ type: 'cooldown', revision: 3, kind: 'merge_wal', target: 'a', cooldown: null }],
      2000,
    );
    expect(released.activity.at(-1)).toEqual({
      at: 2000,
      text: 'released merge_wal a',
      tone: 'ok',
      subject: { source: 'park', keys: ['delete merge_wal/a'] },
    });
  });

  it('adds a line per audit entry to the activity log, the park note of the same park left out', () => {
    const parked = cooldown('a', { parked: park('disk gone', { parked_at_ms: 500, by: 'alice@10.0.0.5' }) });
    const entry = auditEntry({
      action: 'cooldown.park',
      target: 'a',
      outcome: 'parked',
      reason: 'disk gone',
      at_ms: 500,
    });
    const next = applyEvents(
      loaded,
      [
        { type: 'cooldown', revision: 7, kind: 'merge_wal', target: 'a', cooldown: parked },
        { type: 'audit', revision: 7, entry },
      ],
      1000,
    );
    expect(next.activity.map((a) => a.text)).toEqual(['alice@10.0.0.5 parked merge_wal on a: disk gone']);
    // An audit entry alone (before the lists were read, too) is news.
    const alone = applyEvents(EMPTY_FLEET, [{ type: 'audit', entry: auditEntry() }]);
    expect(alone).not.toBe(EMPTY_FLEET);
    expect(alone.activity.map((a) => a.text)).toEqual(['alice@10.0.0.5 reset merge_wal cooldown of store-12']);
  });

  it('ignores events for lists not read yet, so a partial list never passes for the whole', () => {
    const next = applyEvents(EMPTY_FLEET, [
      { type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'a', cooldown: cooldown('a') },
    ]);
    expect(next.cooldowns).toBeUndefined();
  });

  it('keeps at most MAX_TASKS tasks, dropping the oldest finished ones, never active ones', () => {
    const many = Array.from({ length: MAX_TASKS + 10 }, (_, i) => task(i, i < 5 ? { state: 'queued' } : {}));
    const m = taskMap(many);
    expect(m.size).toBe(MAX_TASKS);
    for (let i = 0; i < 5; i++) expect(m.has(task(i).id)).toBe(true);
    expect(m.has(task(5).id)).toBe(false);
  });
});

describe('counts and the fleet guard', () => {
  it('counts queued and running per kind, using per-kind totals for long queues', () => {
    const queued = { tasks: [task(1, { state: 'queued' }), task(2, { state: 'queued', kind: 'compact' })], total: 2 };
    const running = { tasks: [task(3, { state: 'running' })], total: 1 };
    const kinds = ['merge_wal', 'compact', 'index_id'];
    expect(countsFrom(kinds, queued, running)).toEqual({
      merge_wal: { queued: 1, running: 1 },
      compact: { queued: 1, running: 0 },
      index_id: { queued: 0, running: 0 },
    });
    expect(countsFrom(kinds, queued, running, { merge_wal: 500 }).merge_wal?.queued).toBe(500);
  });

  it('counts a kind no master named as soon as a page or a total shows it', () => {
    const queued = { tasks: [task(1, { state: 'queued', kind: 'repair' })], total: 1 };
    const running = { tasks: [task(2, { state: 'running', kind: 'repair' })], total: 1 };
    expect(countsFrom(['merge_wal'], queued, running, { rebuild: 7 })).toEqual({
      merge_wal: { queued: 0, running: 0 },
      repair: { queued: 1, running: 1 },
      rebuild: { queued: 7, running: 0 },
    });
    // A kind may be named like a property of every object: it still reads as its own count.
    expect(countsFrom([], { tasks: [], total: 0 }, { tasks: [], total: 0 }).constructor).toBeUndefined();
  });

  it('reads the guard-overflow counter per kind from Prometheus text', () => {
    const text = [
      '# HELP master_cooldown_guard_overflow_total Windows not opened',
      'master_cooldown_guard_overflow_total{kind="merge_wal"} 3',
      'master_cooldown_guard_overflow_total{kind="compact"} 0',
      'master_cooldown_guard_overflow_total{kind="repair"} 2',
      'master_cooldown_guard_overflow_total{kind="Bad-Kind"} 9',
      'master_task_cooldowns_total{kind="merge_wal"} 7',
    ].join('\n');
    expect(parseGuardOverflow(text)).toEqual({ merge_wal: 3, compact: 0, repair: 2 });
  });

  it('counts only open windows as cooling, against the number of stores', () => {
    const data = {
      ...EMPTY_FLEET,
      masters: [master()],
      storesTotal: 8,
      cooldowns: cooldownMap([
        cooldown('a', { until_ms: 2000 }),
        cooldown('b', { until_ms: 500 }),
        cooldown('c', { until_ms: null }),
        cooldown('d', { kind: 'compact', until_ms: 5000 }),
        cooldown('e', { kind: 'repair', until_ms: 5000 }),
      ]),
    };
    // The masters' kinds, and a kind only a record shows.
    expect(coolingByKind(data, 1000)).toEqual({
      merge_wal: { cooling: 1, stores: 8, percent: 12.5 },
      compact: { cooling: 1, stores: 8, percent: 12.5 },
      index_id: { cooling: 0, stores: 8, percent: 0 },
      repair: { cooling: 1, stores: 8, percent: 12.5 },
    });
  });

  it('leaves parked targets out of the cooling count, as the master’s guard does', () => {
    const data = {
      ...EMPTY_FLEET,
      storesTotal: 4,
      cooldowns: cooldownMap([
        cooldown('a', { until_ms: 2000 }),
        cooldown('b', { until_ms: 2000, parked: park('why') }),
      ]),
    };
    expect(coolingByKind(data, 1000).merge_wal?.cooling).toBe(1);
  });

  it('keys cooldowns by kind and target', () => {
    expect(cooldownKey('compact', 'x.y')).toBe('compact/x.y');
  });
});

describe('merging a re-read', () => {
  it('changes only the entries that differ, deletes the missing ones, and keeps the map', () => {
    const live = cooldownMap([cooldown('a'), cooldown('b'), cooldown('c')]);
    const a = live.get('merge_wal/a');
    const before = live.revision;
    const merged = mergeInto(live, [
      ['merge_wal/a', cooldown('a')],
      ['merge_wal/b', cooldown('b', { failures: 9 })],
      ['merge_wal/d', cooldown('d')],
    ]);
    expect(merged).toBe(live);
    expect(merged.get('merge_wal/a')).toBe(a);
    expect([...merged.keys()].sort()).toEqual(['merge_wal/a', 'merge_wal/b', 'merge_wal/d']);
    expect([...new Set(merged.changedSince(before))].sort()).toEqual(['merge_wal/b', 'merge_wal/c', 'merge_wal/d']);
  });

  it('keeps a re-read list whole when nothing changed, else reuses its unchanged rows', () => {
    const rows = [
      { name: 'a', n: 1 },
      { name: 'b', n: 2 },
    ];
    expect(
      mergeRows(
        rows,
        [
          { name: 'a', n: 1 },
          { name: 'b', n: 2 },
        ],
        (r) => r.name,
      ),
    ).toBe(rows);
    const next = mergeRows(
      rows,
      [
        { name: 'a', n: 1 },
        { name: 'b', n: 3 },
      ],
      (r) => r.name,
    );
    expect(next).not.toBe(rows);
    expect(next[0]).toBe(rows[0]);
    expect(next[1]).toEqual({ name: 'b', n: 3 });
  });
});
