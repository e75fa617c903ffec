import { describe, expect, it } from 'vitest';
import { MAX_KINDS, createKindTable, internKind, kindAt } from './kind-table.js';

describe('kind table', () => {
  it('gives each kind name an index when first met and the same one after', () => {
    const t = createKindTable();
    expect(internKind(t, 'merge_wal')).toBe(0);
    expect(internKind(t, 'repair')).toBe(1);
    expect(internKind(t, 'merge_wal')).toBe(0);
    expect(t.names).toEqual(['merge_wal', 'repair']);
  });

  it('refuses a name that is not a kind’s, as core’s pattern says', () => {
    const t = createKindTable();
    for (const bad of ['', 'Merge', '1st', 'a-b', 'a/b', `a${'b'.repeat(63)}`]) expect(internKind(t, bad)).toBe(-1);
    expect(internKind(t, `a${'b'.repeat(62)}`)).toBe(0);
    expect(t.names).toHaveLength(1);
  });

  it('stops adding kinds when full, still finding the ones it holds', () => {
    const t = createKindTable();
    for (let i = 0; i < MAX_KINDS; i++) expect(internKind(t, `k${i}`)).toBe(i);
    expect(internKind(t, 'one_too_many')).toBe(-1);
    expect(internKind(t, 'k7')).toBe(7);
  });

  it('reads the kind of a JSON string in place, adding a new one and refusing what is no string', () => {
    const t = createKindTable();
    internKind(t, 'merge');
    const json = '{"kind":"merge_wal","other":"merge"}';
    expect(kindAt(t, json, json.indexOf('"merge_wal"'))).toBe(1);
    expect(kindAt(t, json, json.indexOf('"merge"'))).toBe(0);
    expect(kindAt(t, '{"kind":3}', 8)).toBe(-1);
    expect(kindAt(t, '{"kind":"cut', 8)).toBe(-1);
    expect(kindAt(t, json, -1)).toBe(-1);
    expect(t.names).toEqual(['merge', 'merge_wal']);
  });
});
