import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock.js';
import { ClosedError, LeaseNotFoundError } from '../errors.js';
import { MemoryKv } from './memory.js';

describe('MemoryKv', () => {
  it('signals a lease as lost when it expires on the clock', async () => {
    const clock = new FakeClock();
    const kv = new MemoryKv({ clock });
    const lease = await kv.grant(2, { keepAlive: false });
    await kv.put('k', 'v', { lease: lease.id });
    await clock.advance(1999);
    expect(lease.lost.aborted).toBe(false);
    await clock.advance(1);
    expect(lease.lost.aborted).toBe(true);
    expect(lease.lost.reason).toBeInstanceOf(LeaseNotFoundError);
    expect(await kv.get('k')).toBeUndefined();
    kv.destroy();
  });

  it('stops a closed client’s keepalives, so only its leases expire', async () => {
    const clock = new FakeClock();
    const root = new MemoryKv({ clock });
    const a = root.connect();
    const b = root.connect();
    const la = await a.grant(5);
    const lb = await b.grant(5);
    await a.put('a', '1', { lease: la.id });
    await b.put('b', '1', { lease: lb.id });
    await a.close();
    await clock.advance(20_000);
    expect(await b.get('a')).toBeUndefined();
    expect((await b.get('b'))?.value).toBe('1');
    await expect(a.get('b')).rejects.toBeInstanceOf(ClosedError);
    root.destroy();
  });

  it('refuses a transaction branch beyond etcd’s 128-operation limit', async () => {
    const kv = new MemoryKv({ clock: new FakeClock() });
    const ops = Array.from({ length: 129 }, (_, i) => ({ type: 'put' as const, key: `k${i}`, value: '' }));
    await expect(kv.txn([], ops)).rejects.toThrow(/too many operations/);
    await expect(kv.txn([], ops.slice(0, 128))).resolves.toMatchObject({ succeeded: true });
    kv.destroy();
  });

  it('orders keys by their UTF-8 bytes, as etcd does', async () => {
    const kv = new MemoryKv({ clock: new FakeClock() });
    for (const k of ['p/\u{1F600}', 'p/\uFFFD', 'p/z', 'p/A']) await kv.put(k, k);
    expect((await kv.range('p/')).kvs.map((e) => e.key)).toEqual(['p/A', 'p/z', 'p/\uFFFD', 'p/\u{1F600}']);
    kv.destroy();
  });
});
