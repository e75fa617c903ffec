import { type Clock, FakeClock, StoreUnavailableError } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { StoreProbe } from './store-probe.js';

/** A probe that answers as `up` says, counting its calls. */
function counted(): { probe: () => Promise<void>; calls: () => number; up: { value: boolean } } {
  let calls = 0;
  const up = { value: true };
  return {
    probe: () => {
      calls++;
      return up.value ? Promise.resolve() : Promise.reject(new StoreUnavailableError('etcd is unreachable (test)'));
    },
    calls: () => calls,
    up,
  };
}

describe('StoreProbe', () => {
  it('shares one probe among the readers of an interval and probes again once it has passed', async () => {
    const clock = new FakeClock();
    const p = counted();
    const probe = new StoreProbe(p.probe, clock);
    await Promise.all(Array.from({ length: 10 }, () => probe.vouch()));
    expect(p.calls()).toBe(1);
    await clock.advance(249);
    await probe.vouch();
    expect(p.calls()).toBe(1);
    await clock.advance(1);
    await Promise.all([probe.vouch(), probe.vouch()]);
    expect(p.calls()).toBe(2);
  });

  it('keeps no failure: every read while etcd is away asks again, and the first after it is back succeeds', async () => {
    const clock = new FakeClock();
    const p = counted();
    const probe = new StoreProbe(p.probe, clock);
    p.up.value = false;
    await expect(probe.vouch()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(probe.vouch()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(p.calls()).toBe(2);
    p.up.value = true;
    await expect(probe.vouch()).resolves.toBeUndefined();
  });

  it('vouches for nothing after the clock steps back', async () => {
    // A wall clock may step back; FakeClock never does.
    let now = 10_000;
    const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
    const p = counted();
    const probe = new StoreProbe(p.probe, clock);
    await probe.vouch();
    now = 5_000;
    await probe.vouch();
    expect(p.calls()).toBe(2);
  });
});
