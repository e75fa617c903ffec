import fc from 'fast-check';
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
    for (const k of ['p/\u{1F600}', 'p/\uFFFD', 'p/zz', 'p/z', 'p/A']) await kv.put(k, k);
    expect((await kv.range('p/')).kvs.map((e) => e.key)).toEqual(['p/A', 'p/z', 'p/zz', 'p/\uFFFD', 'p/\u{1F600}']);
    kv.destroy();
  });

  it('answers every prefix range as a byte-order sort of the matching keys, whatever their characters', async () => {
    // Characters on both sides of the surrogates, pairs among them, and the neighbours of the
    // bounds the search special-cases. Keys and prefixes are whole characters (well-formed UTF-16):
    // a lone surrogate has no UTF-8 encoding of its own, so etcd could not hold such a key.
    const char = fc.constantFrom(
      ...['a', 'b', '/', '\u007f', '\u0080', '\u07ff', '\ud7fe', '\ud7ff', '\ue000', '\ufffd', '\uffff'],
      ...['\u{10000}', '\u{1f600}', '\u{10ffff}'],
    );
    const chars = fc.array(char, { minLength: 1, maxLength: 4 });
    const bytes = (k: string): Buffer => Buffer.from(k, 'utf8');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(chars, { maxLength: 30, selector: (cs) => cs.join('') }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(chars, { maxLength: 4 }),
        async (keyChars, removedAt, otherPrefixes) => {
          const keys = keyChars.map((cs) => cs.join(''));
          const kv = new MemoryKv({ clock: new FakeClock() });
          for (const k of keys) await kv.put(k, k);
          const removed = new Set(removedAt.map((i) => keys[i % Math.max(1, keys.length)]));
          for (const k of removed) if (k !== undefined) await kv.delete(k);
          const left = keys.filter((k) => !removed.has(k));
          // Every key's every leading run of characters, others, and the empty prefix.
          const prefixes = new Set([
            '',
            ...keyChars.flatMap((cs) => cs.map((_, i) => cs.slice(0, i + 1).join(''))),
            ...otherPrefixes.map((cs) => cs.join('')),
          ]);
          for (const prefix of prefixes) {
            const want = left.filter((k) => k.startsWith(prefix)).sort((x, y) => Buffer.compare(bytes(x), bytes(y)));
            const got = await kv.range(prefix);
            expect(got.kvs.map((e) => e.key)).toEqual(want);
            expect(got.count).toBe(want.length);
            expect((await kv.range(prefix, { countOnly: true })).count).toBe(want.length);
          }
          kv.destroy();
        },
      ),
      { numRuns: 300 },
    );
  });
});
