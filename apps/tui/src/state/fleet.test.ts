import { describe, expect, it } from 'vitest';
import { cooldown } from '../../test/fake-master.js';
import type { Task } from '../api/types.js';
import {
  EMPTY_FLEET,
  MAX_TASKS,
  applyEvents,
  cooldownKey,
  cooldownMap,
  coolingByKind,
  countsFrom,
  parseGuardOverflow,
  taskMap,
} from './fleet.js';

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

  it('never mutates its input, and copies only the maps a batch touches', () => {
    const next = applyEvents(loaded, [{ type: 'task', revision: 5, task: task(2) }]);
    expect(loaded.tasks.size).toBe(1);
    expect(next.cooldowns).toBe(loaded.cooldowns);
    expect(applyEvents(loaded, [])).toBe(loaded);
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
    expect(countsFrom(queued, running)).toEqual({
      merge_wal: { queued: 1, running: 1 },
      compact: { queued: 1, running: 0 },
      index_id: { queued: 0, running: 0 },
    });
    expect(countsFrom(queued, running, { merge_wal: 500 }).merge_wal.queued).toBe(500);
  });

  it('reads the guard-overflow counter per kind from Prometheus text', () => {
    const text = [
      '# HELP master_cooldown_guard_overflow_total Windows not opened',
      'master_cooldown_guard_overflow_total{kind="merge_wal"} 3',
      'master_cooldown_guard_overflow_total{kind="compact"} 0',
      'master_task_cooldowns_total{kind="merge_wal"} 7',
    ].join('\n');
    expect(parseGuardOverflow(text)).toEqual({ merge_wal: 3, compact: 0 });
  });

  it('counts only open windows as cooling, against the number of stores', () => {
    const data = {
      ...EMPTY_FLEET,
      storesTotal: 8,
      cooldowns: cooldownMap([
        cooldown('a', { until_ms: 2000 }),
        cooldown('b', { until_ms: 500 }),
        cooldown('c', { until_ms: null }),
        cooldown('d', { kind: 'compact', until_ms: 5000 }),
      ]),
    };
    expect(coolingByKind(data, 1000)).toEqual({
      merge_wal: { cooling: 1, stores: 8, percent: 12.5 },
      compact: { cooling: 1, stores: 8, percent: 12.5 },
      index_id: { cooling: 0, stores: 8, percent: 0 },
    });
  });

  it('keys cooldowns by kind and target', () => {
    expect(cooldownKey('compact', 'x.y')).toBe('compact/x.y');
  });
});
