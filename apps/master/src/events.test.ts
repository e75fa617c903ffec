import { DEFAULT_COOLDOWN_POLICY, FakeClock, type Kv, MemoryKv, keysFor } from '@maintd/core';
import { interceptKv } from '@maintd/core/testing';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EventHub } from './events.js';

/** A Kv whose watches open only when the test says, counting the ones opened and closed. */
function gatedWatches(kv: Kv): { kv: Kv; open: () => void; requested: () => number; live: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let requested = 0;
  let live = 0;
  const wrapped: Kv = {
    ...interceptKv(kv, (forward, ...args) => forward(...args)),
    watch: async (prefix, listener, options) => {
      requested++;
      await gate;
      const w = await kv.watch(prefix, listener, options);
      live++;
      return { close: () => ((live -= 1), w.close()) };
    },
  };
  return { kv: wrapped, open: release, requested: () => requested, live: () => live };
}

describe('EventHub', () => {
  it('closes when it is closed while its watches are still being opened, leaving none open', async () => {
    const clock = new FakeClock(0);
    const mem = new MemoryKv({ clock });
    const gated = gatedWatches(mem);
    const hub = new EventHub(
      gated.kv,
      keysFor('/maintd-test'),
      clock,
      pino({ level: 'silent' }),
      DEFAULT_COOLDOWN_POLICY,
    );
    hub.start();
    await expect.poll(() => gated.requested()).toBeGreaterThan(0);
    const closed = hub.close();
    // The watches open only after the stop: a hub that listened for it only then waited for good.
    gated.open();
    const hung = new Promise((r) => setTimeout(() => r('still closing after 2 s'), 2000).unref());
    expect(await Promise.race([closed.then(() => 'closed'), hung])).toBe('closed');
    expect(gated.live()).toBe(0);
    await mem.close();
  });
});
