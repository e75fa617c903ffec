import type { CooldownSort } from '@maintd/api';
import type { CooldownPair } from './cooldown-query.js';

/** A position in one order: the sort value (±Infinity when the entry has none), then kind, then target. */
export interface Position {
  readonly value: number;
  readonly kind: string;
  readonly target: string;
}

/** An order the index keeps its entries in: one of the API's sorts, or the key order of the unpaged list. */
export type Order = CooldownSort | 'key';

/** The value an entry is ordered by: what the served entry shows (a missing one sorts last). */
function sortValue(e: CooldownPair, sort: CooldownSort): number {
  switch (sort) {
    case 'until':
      return e.cooldown?.until_ms ?? Infinity;
    case 'failures':
      return e.cooldown?.failures ?? 0;
    case 'last_failure':
      return e.cooldown?.last_failure_ms ?? -Infinity;
  }
}

/** Where `e` stands in the order `sort`. */
export function position(e: CooldownPair, sort: CooldownSort): Position {
  return { value: sortValue(e, sort), kind: e.kind, target: e.target };
}

/** Two sort values in `sort`: `until` runs soonest first; `failures` and `last_failure` worst and latest first. */
function compareValues(sort: CooldownSort, a: number, b: number): number {
  if (a === b) return 0;
  return a < b === (sort === 'until') ? -1 : 1;
}

/** The key order of the stored records: kind, then target (targets are ASCII: their hex sorts alike). */
function compareKeys(a: { kind: string; target: string }, b: { kind: string; target: string }): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.target < b.target ? -1 : a.target > b.target ? 1 : 0;
}

/** Two positions in the order `sort`: by sort value, ties by kind, then target. */
export function comparePositions(sort: CooldownSort, a: Position, b: Position): number {
  return compareValues(sort, a.value, b.value) || compareKeys(a, b);
}

/**
 * The comparator of `order`: a total order, since no two entries share a kind and a target. It
 * reads the sort values in place, with no position built per comparison.
 */
export function comparatorOf(order: Order): (a: CooldownPair, b: CooldownPair) => number {
  if (order === 'key') return compareKeys;
  return (a, b) => compareValues(order, sortValue(a, order), sortValue(b, order)) || compareKeys(a, b);
}
