import { describe, expect, inject, it } from 'vitest';
import { etcdHarness, memoryHarness, type KvHarness } from '../testing/harness.js';
import { storeContractFixture } from '../testing/store-contract-fixture.js';

/** `listTasks`' search (`q`), on both adapters: it must count and page only what it matches. */
function searchSuite(name: string, makeHarness: () => Promise<KvHarness>): void {
  describe(`listTasks q (${name})`, () => {
    const fx = storeContractFixture(makeHarness);

    it('matches the store name or the error, ignoring case, with the other filters, and counts and pages only the matches', async () => {
      const s = await fx.open();
      const lost = await s.enqueue('compact', 'store-LOST-1');
      const quota = await s.enqueue('merge_wal', 'store-2');
      const other = await s.enqueue('compact', 'store-3');
      await fx.h.clock.advance(1);
      await s.finish(await fx.claimOrFail(s, ['merge_wal']), {
        ok: false,
        error: 'Quota exceeded on lost-fragment bucket',
        errorClass: 'target',
      });
      const ids = (q: string, more: object = {}): Promise<string[]> =>
        s.listTasks({ q, ...more }).then((p) => p.tasks.map((t) => t.id));

      expect(await ids('lost')).toEqual([quota.task.id, lost.task.id]);
      expect(await ids('QUOTA')).toEqual([quota.task.id]);
      expect(await ids('lost', { kind: 'compact' })).toEqual([lost.task.id]);
      expect(await ids('lost', { state: 'failed' })).toEqual([quota.task.id]);
      expect(await ids('nothing like it')).toEqual([]);
      expect(await ids('store-')).toEqual([other.task.id, quota.task.id, lost.task.id]);

      const first = await s.listTasks({ q: 'lost', limit: 1 });
      expect(first).toMatchObject({ total: 2, tasks: [{ id: quota.task.id }] });
      const second = await s.listTasks({ q: 'lost', limit: 1, cursor: first.nextCursor! });
      expect(second).toEqual({ tasks: [expect.objectContaining({ id: lost.task.id })], total: 2, nextCursor: null });
      // Without `q` the unfiltered list is unchanged.
      expect((await s.listTasks()).total).toBe(3);
    });
  });
}

searchSuite('MemoryKv', memoryHarness);
searchSuite('EtcdKv', () => etcdHarness(inject('etcdEndpoints')));
