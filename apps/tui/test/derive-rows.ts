import type { FleetData } from '../src/state/fleet-data.js';
import { type ListSpec, matcher } from '../src/views/list-spec.js';

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Rows of a list after the filter (every word must match) and the sort, by a full sort: what the
 * App's incremental `SortedIndex` must always equal.
 */
export function deriveRows<T>(spec: ListSpec<T>, data: FleetData, filter: string, sort: number): readonly T[] {
  const match = matcher(spec, filter);
  const all = [...(spec.source(data)?.values() ?? [])].filter(match);
  const order = spec.sorts[sort % spec.sorts.length];
  if (!order) return all;
  const rank = order.rank;
  return all.sort(
    (a, b) => (rank ? rank(b, data) - rank(a, data) : 0) || order.compare(a, b) || byText(spec.key(a), spec.key(b)),
  );
}
