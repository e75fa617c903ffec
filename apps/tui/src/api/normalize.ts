import type { Cooldown, CooldownState, Park } from './types.js';

/** The fields every master sends with a cooldown entry; the rest came later (or only with a failure). */
interface CooldownCore {
  readonly kind: Cooldown['kind'];
  readonly target: string;
  readonly failures: number;
  readonly until_ms: number | null;
  readonly until?: string | null | undefined;
  readonly state?: CooldownState | undefined;
  readonly last_error: string;
  readonly parked?: Park | undefined;
}

/** Whether a park is in force at `nowMs` (a lapsed park counts as not parked). */
export function parkInForce(park: Park | undefined, nowMs: number): boolean {
  return park !== undefined && (park.until_ms === null || nowMs < park.until_ms);
}

/**
 * The state of an entry at `nowMs`, from its fields: a window ends and a park lapses without an
 * event, so the `state` a master served goes stale while the dashboard runs; this does not.
 */
export function entryState(c: Pick<Cooldown, 'until_ms' | 'parked'>, nowMs: number): CooldownState {
  if (parkInForce(c.parked, nowMs)) return 'parked';
  if (c.until_ms === null) return 'below';
  return c.until_ms > nowMs ? 'cooling' : 'lapsed';
}

/**
 * An entry as the current API serves it, from any master: `until` (added after the first
 * release) and `state` (added with parks) are derived when a master did not send them.
 */
export function normalizeCooldown<C extends CooldownCore>(c: C, nowMs: number): C & Pick<Cooldown, 'until' | 'state'> {
  return {
    ...c,
    until: c.until ?? (c.until_ms === null ? null : new Date(c.until_ms).toISOString()),
    state: c.state ?? entryState({ until_ms: c.until_ms, ...(c.parked ? { parked: c.parked } : {}) }, nowMs),
  };
}
