import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { keysFor } from './keys.js';
import { MemoryKv } from './kv/memory.js';
import { Session, type SessionEvent } from './session.js';
import { interceptKv, withClockRunning } from './testing/harness.js';
import type { GrantOptions } from './kv/port.js';

const info = { host: 'h', pid: 1, version: '0.0.0', started_at: 0, pools: { general: 4 } };

describe('Session', () => {
  it('refuses a lease TTL under 5 seconds', async () => {
    const clock = new FakeClock();
    await expect(
      Session.open({ kv: new MemoryKv({ clock }), keys: keysFor('/t'), clock, masterId: 'm', ttlSecs: 4 }),
    ).rejects.toThrow(/≥ 5/);
  });

  it('registers while alive, renews after a loss, and deregisters on close', async () => {
    const clock = new FakeClock();
    const kv = new MemoryKv({ clock });
    const keys = keysFor('/t');
    const events: SessionEvent[] = [];
    const s = await Session.open({ kv, keys, clock, masterId: 'm1', ttlSecs: 5, info, onEvent: (e) => events.push(e) });
    expect(JSON.parse((await kv.get(keys.master('m1')))!.value)).toMatchObject({ id: 'm1', pools: { general: 4 } });
    const first = s.lease!.id;
    await clock.advance(60_000);
    expect(s.lease?.id).toBe(first);

    await s.lease!.revoke();
    s.markLost(first);
    expect(s.alive).toBe(false);
    const renewed = await withClockRunning(clock, s.ready());
    expect(renewed.id).not.toBe(first);
    expect(events.map((e) => e.type)).toEqual(['lost', 'renewed']);
    expect(await kv.get(keys.master('m1'))).toBeDefined();

    await s.close();
    expect(await kv.get(keys.master('m1'))).toBeUndefined();
    await expect(s.ready()).rejects.toThrow(/closed/);
    kv.destroy();
  });

  it('notices a lease lost while it registered, instead of holding it for good', async () => {
    const clock = new FakeClock();
    const mem = new MemoryKv({ clock });
    const lost = new AbortController();
    const kv = {
      ...interceptKv(mem, (forward, ...args) => forward(...args)),
      grant: async (ttl: number, o?: GrantOptions) => ({ ...(await mem.grant(ttl, o)), lost: lost.signal }),
      // The lease is lost while its master key is being written.
      put: async (...args: Parameters<MemoryKv['put']>) => {
        lost.abort();
        return mem.put(...args);
      },
    };
    const events: SessionEvent[] = [];
    const s = await Session.open({
      kv,
      keys: keysFor('/t'),
      clock,
      masterId: 'm',
      ttlSecs: 5,
      info,
      onEvent: (e) => events.push(e),
    });
    await new Promise((r) => setImmediate(r));
    expect(s.alive).toBe(false);
    expect(events[0]?.type).toBe('lost');
    await s.close();
    mem.destroy();
  });

  it('notices its lease expiring when keepalives stop', async () => {
    const clock = new FakeClock();
    const root = new MemoryKv({ clock });
    const client = root.connect();
    const events: SessionEvent[] = [];
    const s = await Session.open({
      kv: client,
      keys: keysFor('/t'),
      clock,
      masterId: 'm',
      ttlSecs: 5,
      onEvent: (e) => events.push(e),
    });
    await client.close();
    await clock.advance(6000);
    expect(events[0]?.type).toBe('lost');
    expect(s.alive).toBe(false);
    await s.close();
    root.destroy();
  });
});
