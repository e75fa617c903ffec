import type { CooldownSort } from '@maintd/scheduler/api';
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

/** `until` runs soonest first; `failures` and `last_failure` worst and latest first. Ties: kind, target. */
export function comparePositions(sort: CooldownSort, a: Position, b: Position): number {
  if (a.value !== b.value) {
    const ascending = sort === 'until';
    return a.value < b.value === ascending ? -1 : 1;
  }
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.target !== b.target) return a.target < b.target ? -1 : 1;
  return 0;
}

/** The key order of the stored records: kind, then target (targets are ASCII: their hex sorts alike). */
function byKey(a: CooldownPair, b: CooldownPair): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.target < b.target ? -1 : a.target > b.target ? 1 : 0;
}

/** The comparator of `order`: a total order, since no two entries share a kind and a target. */
export function comparatorOf(order: Order): (a: CooldownPair, b: CooldownPair) => number {
  return order === 'key' ? byKey : (a, b) => comparePositions(order, position(a, order), position(b, order));
}

/**
 * `pairs` in `order`. Sorting by a sort's comparator would read each entry's sort value once per
 * comparison: this reads it once per entry.
 */
export function sortPairs<T extends CooldownPair>(pairs: T[], order: Order): T[] {
  if (order === 'key') return pairs.sort(byKey);
  const keyed = pairs.map((e) => ({ e, p: position(e, order) }));
  keyed.sort((a, b) => comparePositions(order, a.p, b.p));
  return keyed.map((x) => x.e);
}
