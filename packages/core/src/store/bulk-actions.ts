import type { ParkRecord } from '../model.js';
import type { CooldownStore } from './cooldown-store.js';
import type { Actor, Pair } from './operator-action.js';
import type { ParkOptions, ParkStore } from './park-store.js';

/**
 * What a {@link TaskStore} offers for an operator's action over many stores at once
 * (docs/ARCHITECTURE.md §2.9): each store as its single action would do it, with its own
 * timeline event, in transactions of up to 50 stores, and the whole action ONE audit entry whose
 * `count` grows in each of those transactions, so it is exactly what committed whenever it stops.
 */
export interface BulkActions {
  /**
   * Resets the cooldown records of `pairs`, each with its `reset` event naming `actor`, recorded
   * as `actor.audit`. `onReset` hears each pair as it commits. Answers, per pair, whether its
   * record was reset (false: it had none).
   */
  resetCooldowns(pairs: readonly Pair[], actor?: Actor, onReset?: (pair: Pair) => void): Promise<boolean[]>;
  /**
   * Parks every pair of `pairs` with `options`, each with its `parked` event, recorded as
   * `options.audit`. `onParked` hears each park as it commits. Every pair is validated before any
   * is parked.
   */
  park(pairs: readonly Pair[], options: ParkOptions, onParked?: (park: ParkRecord) => void): Promise<ParkRecord[]>;
}

/** The bulk actions over a store's cooldowns and parks. */
export function bulkActions(cooldowns: CooldownStore, parks: ParkStore): BulkActions {
  return {
    resetCooldowns: (pairs, actor, onReset) => cooldowns.resetMany(pairs, actor, onReset),
    park: (pairs, options, onParked) => parks.parkMany(pairs, options, onParked),
  };
}
