import { describe, expect, it } from 'vitest';
import { TASK_STATES } from './record-fields.js';
import { MAX_KINDS, MAX_STATES, createKindTable, createStateTable, internName, nameAt } from './name-table.js';

describe('name table', () => {
  it('gives each kind name an index when first met and the same one after', () => {
    const t = createKindTable();
    expect(internName(t, 'merge_wal')).toBe(0);
    expect(internName(t, 'repair')).toBe(1);
    expect(internName(t, 'merge_wal')).toBe(0);
    expect(t.names).toEqual(['merge_wal', 'repair']);
  });

  it('refuses a name that is not a kind’s, as core’s pattern says', () => {
    const t = createKindTable();
    for (const bad of ['', 'Merge', '1st', 'a-b', 'a/b', `a${'b'.repeat(63)}`]) expect(internName(t, bad)).toBe(-1);
    expect(internName(t, `a${'b'.repeat(62)}`)).toBe(0);
    expect(t.names).toHaveLength(1);
  });

  it('stops adding kinds when full, still finding the ones it holds', () => {
    const t = createKindTable();
    for (let i = 0; i < MAX_KINDS; i++) expect(internName(t, `k${i}`)).toBe(i);
    expect(internName(t, 'one_too_many')).toBe(-1);
    expect(internName(t, 'k7')).toBe(7);
  });

  it('reads the kind of a JSON string in place, adding a new one and refusing what is no string', () => {
    const t = createKindTable();
    internName(t, 'merge');
    const json = '{"kind":"merge_wal","other":"merge"}';
    expect(nameAt(t, json, json.indexOf('"merge_wal"'))).toBe(1);
    expect(nameAt(t, json, json.indexOf('"merge"'))).toBe(0);
    expect(nameAt(t, '{"kind":3}', 8)).toBe(-1);
    expect(nameAt(t, '{"kind":"cut', 8)).toBe(-1);
    expect(nameAt(t, json, -1)).toBe(-1);
    expect(t.names).toEqual(['merge', 'merge_wal']);
  });

  it('holds today’s task states first, in schema order, then a later release’s up to its limit', () => {
    const t = createStateTable();
    expect(t.names).toEqual([...TASK_STATES]);
    expect(t.names).toEqual(['queued', 'running', 'done', 'failed', 'held']);
    const json = '{"state":"quarantined"}';
    expect(nameAt(t, json, json.indexOf('"quarantined"'))).toBe(TASK_STATES.length);
    expect(nameAt(t, '{"state":"running"}', 9)).toBe(TASK_STATES.indexOf('running'));
    expect(nameAt(t, '{"state":"held"}', 9)).toBe(TASK_STATES.indexOf('held'));
    for (const bad of ['Quarantined', 'on-hold', '']) expect(internName(t, bad)).toBe(-1);
    // Room for at least one later state beside today's.
    expect(t.names.length).toBeLessThan(MAX_STATES);
    for (let i = t.names.length; i < MAX_STATES; i++) expect(internName(t, `s${i}`)).toBe(i);
    expect(internName(t, 'one_too_many')).toBe(-1);
    expect(internName(t, 'quarantined')).toBe(TASK_STATES.length);
    expect(internName(t, 'held')).toBe(TASK_STATES.indexOf('held'));
  });
});
