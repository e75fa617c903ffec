import { isParked } from '@maintd/core';
import type { Cooldown, TaskKind } from '../api/types.js';

/** One (kind, target) an action applies to. */
export interface ActionItem {
  readonly kind: TaskKind;
  readonly target: string;
}

/**
 * The operator actions: run now (the row's kind, or on a store a kind the operator picks), reset
 * the cooldown, park with a reason, release a park.
 */
export type ActionKind = 'run' | 'reset' | 'park' | 'release';

/**
 * An action whose items are alternatives by kind: per row, one item for each kind the operator
 * may pick, of which the confirm dialog takes one for every row.
 */
export interface KindPick {
  /** The kind selected when the dialog opens, when offered; else the first offered. */
  readonly preferred: TaskKind;
}

/** The parked entries among these, as action items (what `u` releases). */
export function parkedItems(entries: readonly (Cooldown | undefined)[], now: number): ActionItem[] {
  return entries.flatMap((c) => (c && isParked(c.parked, now) ? [{ kind: c.kind, target: c.target }] : []));
}
