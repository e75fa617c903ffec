import { FakeClock, MemoryKv } from '@maintd/core';
import { interceptKv } from '@maintd/core/testing';
import { describe, expect, it } from 'vitest';
import { openScheduler, startFleetStub } from './testing/index.js';

describe('Scheduler stop', () => {
  it('waits for the run of a claim that was in flight when it was asked to stop, so no claimed task is left to recovery', async () => {
    const fleet = await startFleetStub({ small: { fragments: 2 } });
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const mem = new MemoryKv({ clock });
    // The first claim's transaction waits until stop() has been called: a SIGTERM that lands
    // while a claim is on its way to etcd (seen in tests/upgrade: the claim committed, the
    // master stopped without waiting for its run, and recovery ran the task a second time).
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = (): void => undefined;
    const claimInFlight = new Promise<void>((resolve) => (held = resolve));
    let first = true;
    const kv = interceptKv(mem, async (forward, compares, success, failure) => {
      if (first && success.some((op) => op.type === 'put' && op.key.includes('/running/'))) {
        first = false;
        held();
        await gate;
      }
      return forward(compares, success, failure);
    });
    const s = await openScheduler(kv, clock, { workers: { endpoints: [fleet.url] } });
    try {
      const { task } = await s.store.enqueue('compact', 'small', { source: 'manual' });
      s.scheduler.start();
      await claimInFlight;
      const stopped = s.scheduler.stop(5000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      expect(await stopped).toEqual({ finished: true, abandoned: 0 });
      // The claim committed: its run finished before stop() returned, not after the session went.
      expect((await s.store.getTask(task.id))?.state).toBe('done');
    } finally {
      await s.close();
      await mem.close();
      await fleet.close();
    }
  });
});
