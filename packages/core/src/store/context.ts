import type { Clock } from '../clock.js';
import type { Keys } from '../keys.js';
import type { Kv } from '../kv/port.js';
import type { Random } from '../random.js';
import type { Session } from '../session.js';

/**
 * What every part of a TaskStore works against, fixed for its lifetime. Parts get this instead
 * of the facade so that none of them can reach another part's state by accident.
 */
export interface StoreContext {
  readonly kv: Kv;
  readonly keys: Keys;
  readonly clock: Clock;
  readonly random: Random;
  /** Written as claim owner and lock holder. */
  readonly masterId: string;
  /** Claims, target locks and coordination locks ride on its lease. */
  readonly session: Session;
}
