import { type Clock, systemClock } from '../clock.js';
import { type CooldownPolicy, DEFAULT_COOLDOWN_POLICY } from '../cooldown-policy.js';
import { type Keys, keysFor } from '../keys.js';
import { Session } from '../session.js';
import type { RecoveryResult } from './lifecycle.js';
import { type StoreParts, storeParts } from './parts.js';
import { type TaskStoreOptions, sessionOptions } from './store-options.js';

/** What {@link openStore} hands the store it opens. */
export interface OpenedStore {
  readonly keys: Keys;
  readonly session: Session;
  /** The effective cooldown policy: the defaults under the options' overrides. */
  readonly policy: CooldownPolicy;
  readonly parts: StoreParts;
  /** The tasks of dead masters recovered before the store was handed out. */
  readonly recovered: RecoveryResult;
}

/**
 * Opens a store's session (which registers the master), wires its parts, recovers orphaned tasks
 * and prunes history when it may hold something to prune (counts first: a history within its
 * limits is not read). A failure after the session opened closes it again.
 */
export async function openStore(options: TaskStoreOptions): Promise<OpenedStore> {
  const clock: Clock = options.clock ?? systemClock;
  const keys = keysFor(options.prefix);
  const session = await Session.open(sessionOptions(options, keys, clock));
  const policy = Object.freeze({ ...DEFAULT_COOLDOWN_POLICY, ...options.cooldown });
  const parts = storeParts(options, keys, session, clock, policy);
  try {
    const recovered = await recoverOrphaned(parts);
    await parts.history.maybePrune();
    return { keys, session, policy, parts, recovered };
  } catch (err) {
    await session.close();
    throw err;
  }
}

/**
 * Requeues (or fails) the running tasks whose claim is gone. Requeued orphans mean a master
 * died: the claimer's view of the live masters is dropped, so that its share is handed out now
 * rather than at the next read of the masters.
 */
export async function recoverOrphaned(parts: StoreParts): Promise<RecoveryResult> {
  const result = await parts.lifecycle.recoverOrphaned();
  if (result.requeued.length > 0) parts.shares.mastersChanged();
  await parts.lane.removeStale();
  return result;
}
