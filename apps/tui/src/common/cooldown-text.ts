import { isParked } from '@maintd/core';
import type { Cooldown, Policy } from '../api/types.js';
import { formatCountdown } from '../format.js';

/**
 * Time left of what holds the sweeps back: the park's end when parked (`-` when it lasts until
 * released), else the window's; `-` below the threshold and once the window lapsed (the UNTIL
 * column says when it ended).
 */
export function timeLeft(c: Cooldown, now: number): string {
  if (isParked(c.parked, now)) return c.parked?.until_ms == null ? '-' : formatCountdown(c.parked.until_ms, now);
  return c.until_ms === null || c.until_ms <= now ? '-' : formatCountdown(c.until_ms, now);
}

/** The count against the threshold: `4/3`, or just `4` without a policy (or for a kind not counted). */
export function countText(c: Cooldown, policy: Policy | undefined): string {
  if (!policy || policy.threshold <= 0 || !policy.kinds.includes(c.kind)) return String(c.failures);
  return `${c.failures}/${policy.threshold}`;
}

// A failure the master words `<verb> failed: <error>` (an executor that threw).
const VERB_FAILED_FIRST = /^([a-z_ ]+ failed): (.+)$/s;

/**
 * The cause of a failure, first: the master leads with the first worker's own error, except when
 * the executor itself threw (`executor failed: …`), which is turned around here, so the column
 * always starts with why.
 */
export function causeOf(error: string): string {
  const m = VERB_FAILED_FIRST.exec(error);
  return m ? `${m[2]} (${m[1]})` : error;
}
