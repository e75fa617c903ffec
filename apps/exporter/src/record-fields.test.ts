import { encodeCooldown, encodePark, encodeTask } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { type NameTable, createKindTable, createStateTable, internName } from './name-table.js';
import {
  TASK_STATES,
  readCooldown,
  readMasterKinds,
  readParkUntil,
  readPendingWal,
  readTask,
} from './record-fields.js';

/** A table that has met merge_wal, compact and index_id, in that order. */
function table(): NameTable {
  const t = createKindTable();
  for (const k of ['merge_wal', 'compact', 'index_id']) internName(t, k);
  return t;
}

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
    expect(readTask(encodeTask(task), true, table(), createStateTable())).toEqual({
      kind: 1,
      state: TASK_STATES.indexOf('done'),
      enqueuedAt: 1_700_000_000_123,
    });
  });

  it('never takes a field name quoted inside a string value for the field', () => {
    const first = JSON.stringify({ remark: '"state":"queued"', ...task });
    expect(readTask(first, false, table(), createStateTable())).toMatchObject({ state: TASK_STATES.indexOf('done') });
  });

  it('reads a record written with whitespace, as a hand-written one may be', () => {
    expect(readTask(JSON.stringify(task, null, 2), true, table(), createStateTable())).toMatchObject({
      kind: 1,
      enqueuedAt: 1_700_000_000_123,
    });
  });

  it('finds a task undecodable when a field is missing, cut off or of the wrong type', () => {
    const kinds = table();
    expect(readTask('{"kind":"merge_wal"', false, kinds, createStateTable())).toBeUndefined();
    expect(readTask('{"kind":"merge_wal","state":"Paused"}', false, kinds, createStateTable())).toBeUndefined();
    expect(readTask('{"kind":"merge_wal","state":7}', false, kinds, createStateTable())).toBeUndefined();
    expect(readTask('{"kind":"Defrag","state":"done"}', false, kinds, createStateTable())).toBeUndefined();
    expect(readTask('{"kind":"de\\"frag","state":"done"}', false, kinds, createStateTable())).toBeUndefined();
    expect(readTask('{"kind":7,"state":"done"}', false, kinds, createStateTable())).toBeUndefined();
    expect(kinds.names).toEqual(['merge_wal', 'compact', 'index_id']);
    expect(
      readTask('{"kind":"compact","state":"done","enqueued_at":1.5}', true, kinds, createStateTable()),
    ).toBeUndefined();
    expect(
      readTask('{"kind":"compact","state":"done","enqueued_at":-1}', true, kinds, createStateTable()),
    ).toBeUndefined();
    expect(
      readTask('{"kind":"compact","state":"done","enqueued_at":"now"}', true, kinds, createStateTable()),
    ).toBeUndefined();
    // enqueued_at is read only when asked for
    expect(readTask('{"kind":"compact","state":"done"}', false, kinds, createStateTable())).toBeDefined();
  });

  it('reads a task of a kind it has not met under that kind, which joins the table', () => {
    const kinds = table();
    expect(readTask(encodeTask({ ...task, kind: 'repair' }), false, kinds, createStateTable())).toMatchObject({
      kind: 3,
    });
    expect(
      readTask(encodeTask({ ...task, kind: 'repair', state: 'queued' }), false, kinds, createStateTable()),
    ).toMatchObject({ kind: 3 });
    expect(kinds.names).toEqual(['merge_wal', 'compact', 'index_id', 'repair']);
  });

  it('reads a task a park holds under today’s held state, leaving the state table as it was', () => {
    const states = createStateTable();
    const held = encodeTask({
      ...task,
      state: 'held',
      held_at: 1_700_000_000_500,
      held_reason: 'parked by ops: moving it, "state":"queued" until then',
    });
    expect(readTask(held, false, table(), states)).toMatchObject({ kind: 1, state: TASK_STATES.indexOf('held') });
    expect(states.names).toEqual([...TASK_STATES]);
  });

  it('reads a task of a later release’s state under that state, which joins the state table after today’s', () => {
    const states = createStateTable();
    const later = JSON.stringify({ ...task, state: 'quarantined' });
    expect(readTask(later, false, table(), states)).toMatchObject({ kind: 1, state: TASK_STATES.length });
    expect(readTask(later, false, table(), states)).toMatchObject({ state: TASK_STATES.length });
    expect(states.names).toEqual([...TASK_STATES, 'quarantined']);
  });

  it('reads the kinds a master registration names, none from one that predates them or is unreadable', () => {
    const info = { id: 'm1', host: 'h', pid: 1, version: '0.1.0', started_at: 0, pools: { general: 2 } };
    expect(readMasterKinds(JSON.stringify({ ...info, kinds: ['merge_wal', 'repair'] }))).toEqual([
      'merge_wal',
      'repair',
    ]);
    expect(readMasterKinds(JSON.stringify(info))).toEqual([]);
    expect(readMasterKinds(JSON.stringify({ ...info, kinds: 'merge_wal' }))).toEqual([]);
    expect(readMasterKinds(JSON.stringify({ ...info, kinds: ['compact', 3] }))).toEqual(['compact']);
    expect(readMasterKinds('{"id":')).toEqual([]);
    expect(readMasterKinds('null')).toEqual([]);
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
