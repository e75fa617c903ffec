import { encodeCooldown, encodePark, encodeTask } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { TASK_STATES, readCooldown, readParkUntil, readPendingWal, readTask } from './record-fields.js';

const task = {
  id: '0190f0e2-0000-7000-8000-000000000001',
  kind: 'compact',
  target: 'store-1',
  state: 'done',
  source: 'sweep',
  enqueued_at: 1_700_000_000_123,
  attempt: 1,
  detail: 'a detail that quotes a record: {"kind":"merge_wal","state":"queued"}',
} as const;

describe('record fields', () => {
  it('reads the kind, state and enqueued_at of a task record as TaskStore writes it', () => {
    expect(readTask(encodeTask(task), true)).toEqual({
      kind: 1,
      state: TASK_STATES.indexOf('done'),
      enqueuedAt: 1_700_000_000_123,
    });
  });

  it('never takes a field name quoted inside a string value for the field', () => {
    const first = JSON.stringify({ remark: '"state":"queued"', ...task });
    expect(readTask(first, false)).toMatchObject({ state: TASK_STATES.indexOf('done') });
  });

  it('reads a record written with whitespace, as a hand-written one may be', () => {
    expect(readTask(JSON.stringify(task, null, 2), true)).toMatchObject({ kind: 1, enqueuedAt: 1_700_000_000_123 });
  });

  it('finds a task undecodable when a field is missing, cut off or of the wrong type', () => {
    expect(readTask('{"kind":"merge_wal"', false)).toBeUndefined();
    expect(readTask('{"kind":"merge_wal","state":"paused"}', false)).toBeUndefined();
    expect(readTask('{"kind":"defrag","state":"done"}', false)).toBeUndefined();
    expect(readTask('{"kind":"compact","state":"done","enqueued_at":1.5}', true)).toBeUndefined();
    expect(readTask('{"kind":"compact","state":"done","enqueued_at":-1}', true)).toBeUndefined();
    expect(readTask('{"kind":"compact","state":"done","enqueued_at":"now"}', true)).toBeUndefined();
    // enqueued_at is read only when asked for
    expect(readTask('{"kind":"compact","state":"done"}', false)).toBeDefined();
  });

  it('reads a cooldown record’s failures, window and first failure, an open window as null', () => {
    const c = {
      kind: 'merge_wal',
      target: 't',
      failures: 4,
      until_ms: 1_700_000_600_000,
      last_error: 'HTTP 500',
      last_error_class: 'target',
      first_failure_ms: 1_700_000_000_000,
      last_failure_ms: 1_700_000_300_000,
      last_task_id: 'x',
    } as const;
    expect(readCooldown(encodeCooldown(c))).toEqual({
      failures: 4,
      untilMs: 1_700_000_600_000,
      firstFailureMs: 1_700_000_000_000,
    });
    expect(readCooldown(encodeCooldown({ ...c, until_ms: null }))).toMatchObject({ untilMs: null });
    expect(readCooldown('{"failures":"many"}')).toBeUndefined();
    expect(readCooldown(encodeCooldown({ ...c, failures: 0 }))).toBeUndefined();
  });

  it('reads a park’s end and a stats row’s pending generations', () => {
    const park = { kind: 'merge_wal', target: 't', reason: 'r', by: 'b', parked_at_ms: 1 } as const;
    expect(readParkUntil(encodePark({ ...park, until_ms: null }))).toBeNull();
    expect(readParkUntil(encodePark({ ...park, until_ms: 5 }))).toBe(5);
    expect(readParkUntil('{"until_ms":"tomorrow"}')).toBeUndefined();
    expect(readPendingWal('{"name":"s","pending_wal_generations":12,"owners":[]}')).toBe(12);
    expect(readPendingWal('{"name":"s"}')).toBeUndefined();
  });
});
