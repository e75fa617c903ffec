import { FakeClock, MemoryKv, type TaskRecord } from '@maintd/core';
import { withClockRunning } from '@maintd/core/testing';
import { openScheduler } from '@maintd/scheduler/testing';
import { describe, expect, it } from 'vitest';
import { Fleet } from './fleet.js';
import { createSimWorker, inProcessEndpoints, inProcessFetch } from './worker-app.js';

describe('index_id on simulated workers', () => {
  it('follows a compaction that added fragments with an index build that reaches done, and fails it on a broken store', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const fleet = new Fleet({ workers: 3, stores: 12, broken: 1, seed: 3 }, clock);
    const apps = Array.from({ length: 3 }, (_, i) => createSimWorker(fleet, i, clock));
    const kv = new MemoryKv({ clock });
    const s = await openScheduler(
      kv,
      clock,
      { workers: { endpoints: inProcessEndpoints(3) }, cooldown: { afterFailures: 1, maxPercent: 100 } },
      { fetch: inProcessFetch(apps) },
    );
    try {
      await withClockRunning(clock, s.scheduler.scanOnce(), 50);
      const healthy = fleet.stores.find((x) => !x.broken && x.fragments > 1)!;
      const broken = fleet.stores.find((x) => x.broken)!;
      await s.store.enqueue('compact', healthy.name, { source: 'manual' });
      await s.store.enqueue('index_id', broken.name, { source: 'manual' });
      s.scheduler.start();
      const settled = (async (): Promise<TaskRecord[]> => {
        for (;;) {
          const { tasks } = await s.store.listTasks({ limit: 20 });
          const ended = tasks.filter((t) => t.state === 'done' || t.state === 'failed');
          if (ended.length === 3 && s.scheduler.idle) return [...tasks].reverse();
          await clock.sleep(100);
        }
      })();
      const tasks = await withClockRunning(clock, settled, 50);
      expect(tasks.map((t) => [t.kind, t.target, t.state, t.source])).toEqual([
        ['compact', healthy.name, 'done', 'manual'],
        ['index_id', broken.name, 'failed', 'manual'],
        ['index_id', healthy.name, 'done', 'sweep'],
      ]);
      expect(tasks[2]?.detail).toBe('built btree index on id');
      expect(tasks[1]).toMatchObject({ error_class: 'target' });
      expect(tasks[1]?.error).toContain(`Not found: /data/${broken.name}.lance/data/`);
      expect(await s.store.coolingTargets('index_id')).toEqual(new Set([broken.name]));
    } finally {
      await s.close();
      await kv.close();
    }
  });
});
