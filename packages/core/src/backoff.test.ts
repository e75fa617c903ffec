import { describe, expect, it } from 'vitest';
import { reconnectBackoff } from './backoff.js';
import { seededRandom } from './random.js';

/** The first `n` waits of a fresh backoff. */
function waits(n: number, seed: number, initialMs = 250, maxMs = 5000): number[] {
  let b = reconnectBackoff({ initialMs, maxMs, random: seededRandom(seed) }).next();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(b.duration);
    b = b.next(undefined);
  }
  return out;
}

describe('reconnectBackoff', () => {
  it('doubles up to its cap, each wait drawn from the upper half of its step in whole ms', () => {
    const steps = [250, 500, 1000, 2000, 4000, 5000, 5000];
    const got = waits(steps.length, 7);
    got.forEach((w, i) => {
      expect(Number.isInteger(w)).toBe(true);
      expect(w).toBeGreaterThanOrEqual(steps[i]! / 2);
      expect(w).toBeLessThan(steps[i]!);
    });
  });

  it('draws the same waits from the same seed and others from another', () => {
    expect(waits(6, 3)).toEqual(waits(6, 3));
    expect(waits(6, 3)).not.toEqual(waits(6, 4));
  });
});
