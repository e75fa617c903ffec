import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, inject, it } from 'vitest';
import { FakeClock } from '../clock.js';
import { EtcdKv } from './etcd.js';
import { MemoryKv } from './memory.js';
import type { Kv } from './port.js';

// A full collection on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Grants `n` leases and keeps only weak references to them (their `lost` signals, which the
 * adapter must keep while it may still abort them), then collects the heap and counts those
 * still held.
 */
async function leasesHeld(kv: Kv, n: number, keepAlive: boolean, between?: () => Promise<void>): Promise<number> {
  const refs: WeakRef<AbortSignal>[] = [];
  for (let i = 0; i < n; i++) refs.push(new WeakRef((await kv.grant(5, { keepAlive })).lost));
  await between?.();
  // A WeakRef's target lives at least to the end of the job that made it.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return refs.filter((r) => r.deref() !== undefined).length;
}

describe('leases left to expire by themselves (a cooldown record’s, one per failure)', () => {
  it('EtcdKv holds none once their holder drops them, and holds kept-alive leases until released', async () => {
    const kv = new EtcdKv({ endpoints: inject('etcdEndpoints') });
    try {
      expect(await leasesHeld(kv, 50, false)).toBe(0);
      // The same measure sees a lease the client must keep: its keepalives run until close.
      expect(await leasesHeld(kv, 3, true)).toBe(3);
    } finally {
      await kv.close();
    }
  });

  it('MemoryKv holds each until it expires, and none after', async () => {
    const clock = new FakeClock();
    const kv = new MemoryKv({ clock });
    expect(await leasesHeld(kv, 50, false)).toBe(50);
    expect(await leasesHeld(kv, 50, false, () => clock.advance(5_001))).toBe(0);
    await kv.close();
  });
});
