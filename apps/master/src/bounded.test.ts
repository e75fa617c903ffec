import { describe, expect, it } from 'vitest';
import { countBounded } from './bounded.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('countBounded', () => {
  it('runs every item with at most `limit` in flight and counts those that returned true', async () => {
    let inFlight = 0;
    let most = 0;
    const done = await countBounded(
      Array.from({ length: 100 }, (_, i) => i),
      16,
      async (i) => {
        most = Math.max(most, ++inFlight);
        await tick();
        inFlight--;
        return i % 3 === 0;
      },
    );
    expect(done).toBe(34);
    expect(most).toBe(16);
    expect(await countBounded([], 16, () => Promise.resolve(true))).toBe(0);
  });

  it('starts nothing after the first failure, lets the calls in flight end, and rejects with it', async () => {
    const started: number[] = [];
    let ended = 0;
    const run = countBounded(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (i) => {
        started.push(i);
        await tick();
        ended++;
        if (i === 5) throw new Error('etcd went away');
        return true;
      },
    );
    await expect(run).rejects.toThrow('etcd went away');
    expect(started.length).toBeLessThan(12);
    expect(ended).toBe(started.length);
  });
});
