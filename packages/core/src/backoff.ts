import type { Random } from './random.js';
import { ExponentialBackoff, type GeneratorFn, noJitterGenerator } from 'cockatiel';

/**
 * How often a daemon mentions, at warn, an etcd outage that goes on: its first failed retry says
 * so, then one line a minute; the attempts between are debug lines.
 */
export const OUTAGE_REMINDER_MS = 60_000;

/** Settings of {@link reconnectBackoff}. */
export interface ReconnectBackoffOptions {
  /** The first wait before jitter, in ms. */
  readonly initialMs: number;
  /** The longest wait before jitter, in ms. */
  readonly maxMs: number;
  /** Source of the jitter. */
  readonly random: Random;
}

/**
 * Waits that double from `initialMs` up to `maxMs`, each drawn from its upper half
 * (`[d/2, d)`, whole ms), so that clients cut off together (dashboards, a redundant pair of
 * exporters) do not all reconnect, or re-read the prefix, at the same instant. The schedule is
 * cockatiel's; the jitter is not, because cockatiel's jittering generators
 * call `Math.random` and a test must be able to pin the waits with a seeded {@link Random}.
 */
export function reconnectBackoff(options: ReconnectBackoffOptions): ExponentialBackoff<number> {
  const generator: GeneratorFn<number> = (attempt, o) => {
    const [delay, next] = noJitterGenerator(attempt, o);
    return [Math.floor(delay * (0.5 + options.random.next() / 2)), next];
  };
  return new ExponentialBackoff({ generator, initialDelay: options.initialMs, maxDelay: options.maxMs });
}
