import { describe, expect, it } from 'vitest';
import { FakeClock, systemClock } from './clock.js';

describe('FakeClock', () => {
  it('moves only when told, waking sleepers in deadline order', async () => {
    const clock = new FakeClock(1000);
    const woke: string[] = [];
    void clock.sleep(300).then(() => woke.push(`b@${clock.now()}`));
    void clock.sleep(100).then(() => woke.push(`a@${clock.now()}`));
    void clock.sleep(5000).then(() => woke.push('late'));
    await clock.advance(500);
    expect(woke).toEqual(['a@1100', 'b@1300']);
    expect(clock.now()).toBe(1500);
    expect(clock.pendingSleepers).toBe(1);
  });

  it('lets a woken loop run again within the same advance', async () => {
    const clock = new FakeClock(0);
    const ticks: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        ticks.push(clock.now());
      }
    })();
    await clock.advance(100);
    expect(ticks).toEqual([10, 20, 30]);
  });

  it('rejects an aborted sleep and forgets it', async () => {
    const clock = new FakeClock(0);
    const ctl = new AbortController();
    const p = clock.sleep(100, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pendingSleepers).toBe(0);
    await expect(clock.sleep(1, ctl.signal)).rejects.toThrow('stop');
  });

  it('reads whole milliseconds like Date.now(), even after waking a sleeper that asked for a fraction', async () => {
    const clock = new FakeClock(1000);
    const woke: number[] = [];
    void clock.sleep(1.25).then(() => woke.push(clock.now()));
    await clock.advance(1);
    expect(woke).toEqual([]);
    await clock.advance(5);
    expect(woke).toEqual([1002]);
    expect(clock.now()).toBe(1006);
  });

  it('refuses to move backwards', async () => {
    const clock = new FakeClock(100);
    await expect(clock.set(50)).rejects.toThrow(RangeError);
  });
});

describe('systemClock', () => {
  it('sleeps for real and rejects an aborted sleep with the signal’s own reason', async () => {
    const t0 = performance.now();
    await systemClock.sleep(20);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    const reason = new Error('woken');
    const ctl = new AbortController();
    const sleeping = systemClock.sleep(60_000, ctl.signal);
    ctl.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    await expect(systemClock.sleep(10, ctl.signal)).rejects.toBe(reason);
  });
});
