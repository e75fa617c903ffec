import { FakeClock, MemoryKv } from '@maintd/core';
import { eventually } from '@maintd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CAPACITY_WRITE_MS } from './scheduler/capacity.js';
import { type TestScheduler, openScheduler, startFleetStub } from './testing/index.js';

describe('capacity', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it("counts each finished task's slot time by kind and result, and answers the fleet's hour from every master", async () => {
    const fleet = await startFleetStub({ ok: { pending: 20 }, broken: { pending: 20, broken: true } });
    cleanup.push(() => fleet.close());
    const clock = new FakeClock(Date.parse('2026-12-06T10:00:00Z'));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    // Every worker call takes 3 s of the fake clock: a task's slot time is what its calls took.
    const slow: typeof fetch = async (input, init) => {
      await clock.advance(3000);
      return fetch(input, init);
    };
    const open = (): Promise<TestScheduler> =>
      openScheduler(
        kv,
        clock,
        { workers: { endpoints: [fleet.url] }, etcd: { prefix: '/capacity-test' } },
        { fetch: slow },
      );
    const a = await open();
    cleanup.push(() => a.close());
    const b = await open();
    cleanup.push(() => b.close());
    await a.store.enqueue('merge_wal', 'ok', { source: 'sweep' });
    await a.store.enqueue('merge_wal', 'broken', { source: 'sweep' });
    a.scheduler.start();
    await eventually(async () => {
      const text = await a.metrics.registry.metrics();
      expect(text).toContain('master_task_busy_seconds_total{kind="merge_wal",result="success"} 3');
      expect(text).toContain('master_task_busy_seconds_total{kind="merge_wal",result="failed"} 3');
    });
    // b has counted nothing: it answers a's slot time once a's record is written.
    await clock.advance(CAPACITY_WRITE_MS);
    await eventually(async () => {
      const merge = (await b.scheduler.capacity()).find((k) => k.kind === 'merge_wal');
      expect(merge).toMatchObject({
        busy_seconds: { success: 3, failed: 3 },
        failed_share: 0.5,
        tasks: 2,
        failed_tasks: 1,
      });
      // Both masters' merge pools: 4 slots each (MERGE_WAL_CONCURRENCY).
      expect(merge?.slots).toBe(8);
      expect(merge?.top).toEqual([
        { target: 'broken', busy_seconds: 3, failed_seconds: 3, tasks: 1, failed_tasks: 1 },
        { target: 'ok', busy_seconds: 3, failed_seconds: 0, tasks: 1, failed_tasks: 0 },
      ]);
    });
    // a answers the same from its own ledger; a's record outlives a.
    expect((await a.scheduler.capacity()).find((k) => k.kind === 'merge_wal')?.tasks).toBe(2);
    await a.close();
    expect((await b.scheduler.capacity()).find((k) => k.kind === 'merge_wal')).toMatchObject({ tasks: 2, slots: 4 });
  });
});
