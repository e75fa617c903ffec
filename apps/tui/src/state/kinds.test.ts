import { describe, expect, it } from 'vitest';
import { cooldown, master, policy } from '../../test/fake-master.js';
import { taskMap } from '../../test/task-map.js';
import type { Task } from '../api/types.js';
import { applyEvents, cooldownMap } from './fleet.js';
import { EMPTY_FLEET } from './fleet-data.js';
import { byKind, fleetKinds, runnableKinds, withKinds } from './kinds.js';

function task(n: number, kind: string): Task {
  return {
    id: `01a23766-0000-7000-8000-${String(n).padStart(12, '0')}`,
    kind,
    target: `store-${n}`,
    state: 'queued',
    source: 'sweep',
    enqueued_at: n,
    attempt: 0,
  };
}

describe('fleetKinds', () => {
  it('lists the kinds the masters register in their order, then the policy’s, then the records’ by name', () => {
    const data = {
      ...EMPTY_FLEET,
      masters: [
        { ...master('a'), kinds: ['merge_wal', 'compact'] },
        { ...master('b'), kinds: ['compact', 'repair'] },
      ],
      policy: policy({ kinds: ['merge_wal', 'index_id'] }),
      cooldowns: cooldownMap([cooldown('x', { kind: 'zeta' }), cooldown('y', { kind: 'alpha' })]),
      tasks: taskMap([task(1, 'beta'), task(2, 'repair')]),
    };
    expect(fleetKinds(data)).toEqual(['merge_wal', 'compact', 'repair', 'index_id', 'alpha', 'beta', 'zeta']);
  });

  it('names no kind of its own: nothing read, no kind; a master that predates `kinds` leaves it to the records', () => {
    expect(fleetKinds(EMPTY_FLEET)).toEqual([]);
    const { kinds: _, ...older } = master('old');
    expect(fleetKinds({ ...EMPTY_FLEET, masters: [older], tasks: taskMap([task(1, 'merge_wal')]) })).toEqual([
      'merge_wal',
    ]);
  });

  it('picks up a kind from the event stream, and keeps the same list object while the kinds stay the same', () => {
    const data = { ...EMPTY_FLEET, masters: [master()], tasks: taskMap([]) };
    const before = fleetKinds(data);
    const same = applyEvents(data, [{ type: 'task', revision: 1, task: task(1, 'merge_wal') }]);
    expect(fleetKinds(same)).toBe(before);
    const more = applyEvents(same, [{ type: 'task', revision: 2, task: task(2, 'repair') }]);
    expect(fleetKinds(more)).toEqual([...before, 'repair']);
    // Seen once, it stays listed for the session (at zero) after its last record goes.
    const gone = applyEvents(more, [{ type: 'task_deleted', revision: 3, id: task(2, 'repair').id }]);
    expect(fleetKinds(gone)).toEqual([...before, 'repair']);
  });

  it('adds kinds to a list without repeating one, the list itself when nothing is new', () => {
    const kinds = ['a', 'b'];
    expect(withKinds(kinds, ['b', 'a'])).toBe(kinds);
    expect(withKinds(kinds, ['c', 'a', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('makes per-kind records in which a kind named like an Object property is absent until set', () => {
    const r = byKind<number>();
    // `constructor` is a well-formed kind name (lowercase, letters only).
    expect(r['constructor']).toBeUndefined();
    expect(Object.getPrototypeOf(r)).toBeNull();
    r['constructor'] = 1;
    expect(r['constructor']).toBe(1);
  });
});

describe('runnableKinds', () => {
  const records = {
    policy: policy({ kinds: ['merge_wal', 'index_id'] }),
    cooldowns: cooldownMap([cooldown('x', { kind: 'zeta' })]),
    tasks: taskMap([task(1, 'beta'), task(2, 'repair')]),
  };

  it('lists what the live masters register they run, in the order of the first that lists each, and nothing else', () => {
    const data = {
      ...EMPTY_FLEET,
      ...records,
      masters: [
        { ...master('a'), kinds: ['merge_wal', 'compact'] },
        { ...master('b'), kinds: ['compact', 'verify', 'merge_wal'] },
      ],
    };
    expect(runnableKinds(data)).toEqual(['merge_wal', 'compact', 'verify']);
  });

  it('beside a master of 0.0.x that registers no kinds, takes those the others register', () => {
    const { kinds: _, ...older } = master('old');
    const data = { ...EMPTY_FLEET, ...records, masters: [older, { ...master('new'), kinds: ['merge_wal', 'verify'] }] };
    expect(runnableKinds(data)).toEqual(['merge_wal', 'verify']);
  });

  it('with only masters of 0.0.x, falls back to the policy’s kinds, then the records’ by name', () => {
    const { kinds: _, ...older } = master('old');
    expect(runnableKinds({ ...EMPTY_FLEET, ...records, masters: [older] })).toEqual([
      'merge_wal',
      'index_id',
      'beta',
      'repair',
      'zeta',
    ]);
    expect(runnableKinds({ ...EMPTY_FLEET, masters: [older] })).toEqual([]);
  });
});
