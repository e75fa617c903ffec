import { ValidationError } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cooldown-cursor.js';

describe('cooldown cursor', () => {
  it('decodes to the position it encodes, in its own sort', () => {
    const p = { value: 1_767_225_600_000, kind: 'merge_wal', target: 'store-a/b' };
    for (const sort of ['until', 'failures', 'last_failure'] as const) {
      expect(decodeCursor(encodeCursor(sort, p), sort)).toEqual(p);
    }
  });

  it('keeps a missing value where the order puts it: last', () => {
    const cursor = (sort: 'until' | 'last_failure', value: number): string =>
      encodeCursor(sort, { value, kind: 'compact', target: 't' });
    expect(decodeCursor(cursor('until', Infinity), 'until').value).toBe(Infinity);
    expect(decodeCursor(cursor('last_failure', -Infinity), 'last_failure').value).toBe(-Infinity);
  });

  it('is opaque: base64url, no offset', () => {
    expect(encodeCursor('failures', { value: 3, kind: 'compact', target: 'a' })).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('refuses a malformed cursor, or one of another sort, as a validation error of `cursor`', () => {
    const other = encodeCursor('failures', { value: 3, kind: 'compact', target: 'a' });
    expect(() => decodeCursor(other, 'until')).toThrow(
      /invalid cursor: it continues a page sorted by failures, not until/,
    );
    const raw = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const bad of [
      '',
      'x',
      '!!!',
      raw([1, 2]),
      raw(['sideways', 1, 'compact', 'a']),
      raw(['until', 'soon', 'compact', 'a']),
      raw(['until', 1, 'No pe', 'a']),
      raw(['until', 1, 'compact', 7]),
      raw({ sort: 'until' }),
    ]) {
      let thrown: unknown;
      try {
        decodeCursor(bad, 'until');
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ValidationError);
      expect(thrown).toMatchObject({ field: 'cursor', message: 'invalid cursor: not a cursor from a previous page' });
    }
  });
});
