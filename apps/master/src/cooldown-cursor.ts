import { KIND_PATTERN, ValidationError } from '@maintd/core';
import { type CooldownSort, CooldownSortSchema } from '@maintd/api';
import type { Position } from './cooldown-order.js';

/**
 * The cursor of the entry a page ended on: base64url of `[sort, value, kind, target]`. Opaque to
 * clients; it names a position, not an offset, so a page boundary survives inserts and deletes.
 */
export function encodeCursor(sort: CooldownSort, p: Position): string {
  const value = Number.isFinite(p.value) ? p.value : null;
  return Buffer.from(JSON.stringify([sort, value, p.kind, p.target]), 'utf8').toString('base64url');
}

/**
 * The position a cursor of a page sorted by `sort` names. Anything but a cursor {@link encodeCursor}
 * gave for that sort is a {@link ValidationError} of the field `cursor`.
 */
export function decodeCursor(cursor: string, sort: CooldownSort): Position {
  const bad = (why: string): ValidationError => new ValidationError(`invalid cursor: ${why}`, { field: 'cursor' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad('not a cursor from a previous page');
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw bad('not a cursor from a previous page');
  const [s, value, kind, target] = parsed as unknown[];
  const of = CooldownSortSchema.safeParse(s);
  if (!of.success) throw bad('not a cursor from a previous page');
  if (of.data !== sort) throw bad(`it continues a page sorted by ${of.data}, not ${sort}`);
  if (
    (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) ||
    typeof kind !== 'string' ||
    !KIND_PATTERN.test(kind) ||
    typeof target !== 'string'
  ) {
    throw bad('not a cursor from a previous page');
  }
  // A missing value sorts last: +Infinity for `until`, -Infinity for the descending orders.
  const missing = sort === 'until' ? Infinity : -Infinity;
  return { value: value ?? missing, kind, target };
}
