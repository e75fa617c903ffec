import { failureCause } from '@maintd/core';
import type { CooldownState } from '@maintd/api';
import type { CooldownPair, CooldownStateFilter } from './cooldown-query.js';

/**
 * Whether `e` matches a search (`needle`, lowercased; undefined matches all): its store name or
 * its last error contains it, ignoring case. A park's reason is not searched: the list's `q` is
 * about failures and names.
 */
export function matchesSearch(e: CooldownPair, needle: string | undefined): boolean {
  if (needle === undefined) return true;
  return e.target.toLowerCase().includes(needle) || (e.cooldown?.last_error.toLowerCase().includes(needle) ?? false);
}

/**
 * Whether an entry in `state` (undefined: neither a record nor a park in force, never listed)
 * passes a page's `state` filter: absent selects `cooling` and `parked`, `any` every state.
 */
export function matchesState(state: CooldownState | undefined, filter: CooldownStateFilter | undefined): boolean {
  if (state === undefined) return false;
  if (filter === 'any') return true;
  return filter === undefined ? state === 'cooling' || state === 'parked' : state === filter;
}

/** Whether `e`'s latest failure has `cause` (undefined matches all; a park without a record has none). */
export function matchesCause(e: CooldownPair, cause: string | undefined): boolean {
  if (cause === undefined) return true;
  return e.cooldown !== undefined && failureCause(e.cooldown.last_error, e.target) === cause;
}
