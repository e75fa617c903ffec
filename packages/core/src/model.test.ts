import { describe, expect, it } from 'vitest';
import { DEFAULT_COOLDOWN_POLICY, nextCooldown } from './cooldown-policy.js';
import {
  type ParkRecord,
  ParkRecordSchema,
  type TaskCooldown,
  TaskCooldownSchema,
  type TaskRecord,
  TaskRecordSchema,
  cooldownState,
  encodeCooldown,
  encodePark,
  encodeTask,
  isParked,
} from './model.js';
import { decode, stripRun } from './store/codec.js';

describe('isParked', () => {
  it('is false without a park', () => {
    expect(isParked(undefined, 1_000)).toBe(false);
  });

  it('holds an open-ended park in force forever', () => {
    expect(isParked({ until_ms: null }, Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('holds a timed park in force until, and not at, its until_ms', () => {
    expect(isParked({ until_ms: 2_000 }, 1_999)).toBe(true);
    expect(isParked({ until_ms: 2_000 }, 2_000)).toBe(false);
    expect(isParked({ until_ms: 2_000 }, 2_001)).toBe(false);
  });

  it('accepts any shape that carries until_ms, as the exporter and dashboard hold', () => {
    const apiPark = { reason: 'disk swap', by: 'ops', until_ms: 5_000, until: '1970-01-01T00:00:05.000Z' };
    expect(isParked(apiPark, 4_000)).toBe(true);
  });
});

describe('cooldownState', () => {
  it('is undefined with neither a record nor a park', () => {
    expect(cooldownState(undefined, undefined, 1_000)).toBeUndefined();
  });

  it('is undefined with only a lapsed park: it gates nothing', () => {
    expect(cooldownState(undefined, { until_ms: 1_000 }, 1_000)).toBeUndefined();
  });

  it('is parked while a park is in force, whatever the record says', () => {
    expect(cooldownState(undefined, { until_ms: null }, 1_000)).toBe('parked');
    expect(cooldownState({ until_ms: 9_000 }, { until_ms: 2_000 }, 1_000)).toBe('parked');
    expect(cooldownState({ until_ms: null }, { until_ms: null }, 1_000)).toBe('parked');
  });

  it('is below when failures are counted but no window opened', () => {
    expect(cooldownState({ until_ms: null }, undefined, 1_000)).toBe('below');
  });

  it('is cooling before until_ms and lapsed from until_ms on', () => {
    expect(cooldownState({ until_ms: 2_000 }, undefined, 1_999)).toBe('cooling');
    expect(cooldownState({ until_ms: 2_000 }, undefined, 2_000)).toBe('lapsed');
    expect(cooldownState({ until_ms: 2_000 }, undefined, 3_000)).toBe('lapsed');
  });

  it('falls back to the record once the park has lapsed', () => {
    expect(cooldownState({ until_ms: 9_000 }, { until_ms: 1_000 }, 2_000)).toBe('cooling');
  });
});

/** A stored value as the store reads it back. */
function stored(value: object | string): {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  version: number;
  lease: undefined;
} {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return { key: '/maintd/x', value: text, createRevision: 1, modRevision: 1, version: 1, lease: undefined };
}

const TASK: TaskRecord = {
  id: '01890a5d-ac96-774b-bcce-b302099a8057',
  kind: 'compact',
  target: 'store-1',
  state: 'queued',
  source: 'sweep',
  enqueued_at: 1_000,
  attempt: 0,
};
/** Fields this release does not know, as a newer release would write them. */
const NEWER = { priority: 7, labels: { team: 'storage' } };

describe('records of a newer release', () => {
  it('writes back the fields of a decoded task this release does not know, after the known ones in their fixed order', () => {
    const task = decode(TaskRecordSchema, stored({ ...NEWER, ...TASK }));
    expect(task).toEqual(expect.objectContaining(TASK));
    const running: TaskRecord = { ...task, state: 'running', started_at: 2_000, attempt: 1, owner: 'm1' };
    const { id, kind, target, source, enqueued_at } = TASK;
    expect(encodeTask(running)).toBe(
      JSON.stringify({
        ...{ id, kind, target, state: 'running', source, enqueued_at, started_at: 2_000, attempt: 1, owner: 'm1' },
        ...NEWER,
      }),
    );
  });

  it('keeps them through the spreads and deletes of the store rewrites, and back to the queue', () => {
    const running = decode(
      TaskRecordSchema,
      stored({ ...TASK, state: 'running', started_at: 2_000, owner: 'm1', ...NEWER }),
    );
    const requeued: TaskRecord = { ...stripRun(running), state: 'queued' };
    expect(JSON.parse(encodeTask(requeued))).toEqual({ ...TASK, ...NEWER });
  });

  it('shows them to no one else: the decoded record serialises, and lists its keys, as known fields only', () => {
    const task = decode(TaskRecordSchema, stored({ ...TASK, ...NEWER }));
    expect(JSON.parse(encodeTask(task))).toEqual({ ...TASK, ...NEWER });
    expect(JSON.stringify(task)).toBe(JSON.stringify(TASK));
    expect(Object.keys(task)).toEqual(Object.keys(TASK));
  });

  it('lets a field this release knows win over a kept field of the same name, present or absent', () => {
    // Decoded by a schema that did not know `detail` and `error`, as an older release would.
    const older = TaskRecordSchema.omit({ detail: true, error: true });
    const task = decode(older, stored({ ...TASK, state: 'done', detail: 'old text', error: 'stale', ...NEWER }));
    const done: TaskRecord = { ...task, detail: 'merged 3 generations' };
    expect(JSON.parse(encodeTask(done))).toEqual({ ...TASK, state: 'done', detail: 'merged 3 generations', ...NEWER });
  });

  it('keeps fields named like object internals or array indexes as plain data, after the known ones', () => {
    const raw = `{"0":"zero","__proto__":{"polluted":true},"constructor":1,${JSON.stringify(TASK).slice(1)}`;
    const task = decode(TaskRecordSchema, stored(raw));
    const text = encodeTask(task);
    expect(text).toBe(`${JSON.stringify(TASK).slice(0, -1)},"0":"zero","__proto__":{"polluted":true},"constructor":1}`);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it("carries a cooldown record's unknown fields into the next record the policy decides", () => {
    const prev: TaskCooldown = {
      kind: 'compact',
      target: 'store-1',
      failures: 1,
      until_ms: null,
      last_error: 'e1',
      last_error_class: 'target',
      first_failure_ms: 1_000,
      last_failure_ms: 1_000,
      last_task_id: 't1',
    };
    const read = decode(TaskCooldownSchema, stored({ ...prev, ...NEWER }));
    const report = { kind: 'compact', target: 'store-1', taskId: 't2', error: 'e2', errorClass: 'target' } as const;
    const next = nextCooldown(DEFAULT_COOLDOWN_POLICY, read, report, 5_000);
    if (next.action !== 'write') throw new Error(`expected a write, got ${next.action}`);
    expect(JSON.parse(encodeCooldown(next.record))).toEqual({
      ...prev,
      failures: 2,
      last_error: 'e2',
      last_failure_ms: 5_000,
      last_task_id: 't2',
      ...NEWER,
    });
    // A record decided from none has nothing to carry.
    const first = nextCooldown(DEFAULT_COOLDOWN_POLICY, undefined, report, 5_000);
    if (first.action !== 'write') throw new Error(`expected a write, got ${first.action}`);
    expect(Object.keys(JSON.parse(encodeCooldown(first.record)) as object)).toEqual(Object.keys(prev));
  });

  it("writes back a park's unknown fields when it is replaced from the park read", () => {
    const park: ParkRecord = {
      kind: 'compact',
      target: 'store-1',
      reason: 'first',
      by: 'ops',
      parked_at_ms: 1_000,
      until_ms: null,
    };
    const read = decode(ParkRecordSchema, stored({ ...park, ...NEWER }));
    expect(encodePark({ ...read, reason: 'second', parked_at_ms: 2_000 })).toBe(
      JSON.stringify({ ...park, reason: 'second', parked_at_ms: 2_000, ...NEWER }),
    );
  });
});
