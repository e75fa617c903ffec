import { describe, expect, it } from 'vitest';
import { MANUAL_STREAK } from '../store/claimer.js';
import { MANUAL_QUEUE_MARK } from '../store/manual-lane.js';
import type { TaskStore } from '../task-store.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/**
 * The manual lane's contract (docs/ARCHITECTURE.md §2.6): a queued manual task is claimed before
 * the automatic work queued before it, FIFO among manual tasks, without starving automatic work;
 * of a kind whose automatic work may not start (outside its window), only manual tasks are claimed.
 */
export function laneContract(fx: StoreContractFixture): void {
  const { open, claimOrFail } = fx;

  async function sweepTasks(s: TaskStore, n: number, prefix = 'auto'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await s.enqueue('merge_wal', `${prefix}-${i}`, { source: 'sweep' })).task.id);
    return ids;
  }

  describe('the manual lane', () => {
    it('claims manual tasks before the automatic ones queued before them, oldest manual first', async () => {
      const s = await open();
      const auto = await sweepTasks(s, 5);
      const m1 = (await s.enqueue('merge_wal', 'urgent-1', { source: 'manual' })).task.id;
      const m2 = (await s.enqueue('merge_wal', 'urgent-2', { source: 'manual' })).task.id;
      const order: string[] = [];
      for (let i = 0; i < 7; i++) order.push((await claimOrFail(s, ['merge_wal'])).task.id);
      expect(order).toEqual([m1, m2, ...auto]);
    });

    it("claims a peer's manual task first, whichever master queued it", async () => {
      const a = await open();
      const b = await open();
      await sweepTasks(a, 3);
      const manual = (await b.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      expect((await claimOrFail(a, ['merge_wal'])).task.id).toBe(manual);
    });

    it('takes automatic work first once after a streak of manual claims, so sweeps are not starved', async () => {
      const s = await open();
      const auto = await sweepTasks(s, 3);
      const manual: string[] = [];
      for (let i = 0; i < 2 * MANUAL_STREAK; i++) {
        manual.push((await s.enqueue('merge_wal', `urgent-${i}`, { source: 'manual' })).task.id);
      }
      const order: string[] = [];
      for (let i = 0; i < 2 * MANUAL_STREAK + 2; i++) order.push((await claimOrFail(s, ['merge_wal'])).task.id);
      expect(order).toEqual([...manual.slice(0, MANUAL_STREAK), auto[0], ...manual.slice(MANUAL_STREAK), auto[1]]);
    });

    it('claims only manual tasks of a kind whose automatic work may not start', async () => {
      const s = await open();
      await sweepTasks(s, 2);
      const compact = (await s.enqueue('compact', 'c-1', { source: 'sweep' })).task.id;
      expect(await s.claimNext(['merge_wal'], { automaticKinds: [] })).toBeUndefined();
      const manual = (await s.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      expect((await s.claimNext(['merge_wal', 'compact'], { automaticKinds: ['compact'] }))?.task.id).toBe(manual);
      expect((await s.claimNext(['merge_wal', 'compact'], { automaticKinds: ['compact'] }))?.task.id).toBe(compact);
      expect(await s.claimNext(['merge_wal', 'compact'], { automaticKinds: ['compact'] })).toBeUndefined();
    });

    it("keeps a dead master's manual task in the lane when recovery requeues it", async () => {
      const a = await open();
      await sweepTasks(a, 2);
      const manual = (await a.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      expect((await claimOrFail(a, ['merge_wal'])).task.id).toBe(manual);
      await a.session.close();
      const b = await open();
      expect((await claimOrFail(b, ['merge_wal'])).task.id).toBe(manual);
    });

    it('removes a lane key whose task a release before the lane claimed from the queue', async () => {
      const s = await open();
      const manual = (await s.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      const kv = await fx.h.connect();
      // What a 0.1.0 master's claim leaves: the queue key gone, the lane key it does not know of kept.
      await kv.delete(s.keys.queue('merge_wal', manual));
      const auto = await sweepTasks(s, 1);
      expect((await claimOrFail(s, ['merge_wal'])).task.id).toBe(auto[0]);
      await s.recoverOrphaned();
      expect((await kv.range(s.keys.manualPrefix())).kvs).toEqual([]);
    });

    it('finds a peer’s manual task once the store is fed its queue watch', async () => {
      const a = await open();
      const b = await open();
      await sweepTasks(a, 2);
      const manual = (await b.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      // Fed from now: the lane's mirror loads before it is live, and until then a claim reads the
      // lane, so the peer's task is found either way.
      const kv = await fx.h.connect();
      await kv.watch(a.keys.queuePrefix(), (events) => a.observeQueue(events));
      a.setQueueFeed(true);
      expect((await claimOrFail(a, ['merge_wal'])).task.id).toBe(manual);
    });

    it('marks a manual task’s queue key, which a fed peer’s lane mirror is kept by, and no automatic one', async () => {
      const s = await open();
      const [auto] = await sweepTasks(s, 1);
      const manual = (await s.enqueue('merge_wal', 'urgent', { source: 'manual' })).task.id;
      const kv = await fx.h.connect();
      expect((await kv.get(s.keys.queue('merge_wal', manual)))?.value).toBe(MANUAL_QUEUE_MARK);
      expect((await kv.get(s.keys.queue('merge_wal', auto!)))?.value).toBe('');
    });
  });
}
