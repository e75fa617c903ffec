import { type Clock, FakeClock, seededRandom } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { SimClock } from './sim-clock.js';

/**
 * A busy little world on a clock: actors that sleep (often to the same deadline), hop through
 * promise chains of different lengths when woken, start sleeps for others and abort each other.
 * Returns what happened, in order.
 */
async function world(clock: Clock & { advance(ms: number): Promise<void> }, seed: number): Promise<string[]> {
  const random = seededRandom(seed);
  const log: string[] = [];
  const controllers: AbortController[] = [];
  const actor = async (id: number): Promise<void> => {
    for (let round = 0; round < 40; round++) {
      const ctl = new AbortController();
      controllers[id] = ctl;
      const ms = [0, 10, 10, 25, 100][Math.floor(random.next() * 5)]!;
      try {
        await clock.sleep(ms, random.next() < 0.7 ? ctl.signal : undefined);
      } catch (err) {
        log.push(`${id} aborted@${clock.now()}: ${(err as Error).message}`);
        continue;
      }
      const hops = Math.floor(random.next() * 4);
      for (let h = 0; h < hops; h++) await Promise.resolve();
      log.push(`${id} woke@${clock.now()} after ${hops} hops`);
      if (random.next() < 0.2) controllers[Math.floor(random.next() * 6)]?.abort(new Error(`by ${id}`));
      if (random.next() < 0.1) void clock.sleep(5).then(() => log.push(`${id}'s errand@${clock.now()}`));
    }
  };
  const actors = Array.from({ length: 6 }, (_, i) => actor(i));
  for (let minute = 0; minute < 30; minute++) await clock.advance(60);
  for (const c of controllers) c?.abort(new Error('end'));
  await clock.advance(1000);
  await Promise.all(actors);
  return log;
}

describe('SimClock', () => {
  it('wakes, aborts and interleaves exactly as FakeClock does', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const fake = await world(new FakeClock(0), seed);
      const sim = await world(new SimClock(0), seed);
      expect(fake.length).toBeGreaterThan(100);
      expect(sim).toEqual(fake);
    }
  });

  it('counts pending sleepers, forgetting aborted ones', async () => {
    const clock = new SimClock(1000);
    const ctl = new AbortController();
    const aborted = clock.sleep(50, ctl.signal);
    void clock.sleep(100);
    expect(clock.pendingSleepers).toBe(2);
    ctl.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(clock.pendingSleepers).toBe(1);
    await expect(clock.sleep(1, ctl.signal)).rejects.toThrow('stop');
    await clock.advance(100);
    expect(clock.pendingSleepers).toBe(0);
    expect(clock.now()).toBe(1100);
  });
});
