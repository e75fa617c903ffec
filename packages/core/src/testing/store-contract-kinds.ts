import { describe, expect, it } from 'vitest';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The kinds the shipped registry runs: what a master of this release passes to `claimNext`. */
const RUNS = ['merge_wal', 'compact', 'index_id'] as const;
/** A well-formed kind that only a newer release runs. */
const NEWER_KIND = 'repair';

/**
 * The TaskStore contract on kinds (docs/ARCHITECTURE.md §2.1): core checks a kind's name, not
 * membership in a list, so a task, cooldown or park of a kind this master does not run is stored
 * data it lists and counts, and never claims.
 */
export function kindsContract(fx: StoreContractFixture): void {
  const { open, claimOrFail } = fx;

  describe('kinds', () => {
    it.each(['Compact', 'merge/wal', '', '1st', 'a'.repeat(64), 'index-id'])(
      'refuses the malformed kind %j at enqueue, park and failure count, naming kind',
      async (kind) => {
        const s = await open();
        const refused = { name: 'ValidationError', field: 'kind', message: expect.stringContaining('kind') as unknown };
        await expect(s.enqueue(kind, 'store-1')).rejects.toMatchObject(refused);
        await expect(s.park(kind, 'store-1', { reason: 'r', by: 'b' })).rejects.toMatchObject(refused);
        await expect(s.recordFailure(kind, 'store-1', 't1', 'e', 'target')).rejects.toMatchObject(refused);
        expect((await s.listTasks()).total).toBe(0);
      },
    );

    it('keeps a task, a cooldown and a park of a kind it does not run: listed, counted, never claimed', async () => {
      // A newer master writes them through the same store code.
      const newer = await open();
      const task = (await newer.enqueue(NEWER_KIND, 'store-1')).task;
      await newer.recordFailure(NEWER_KIND, 'store-1', 'other-task', 'disk gone', 'target');
      await newer.park(NEWER_KIND, 'store-2', { reason: 'vendor ticket', by: 'ops' });

      await fx.h.clock.advance(1000);
      const s = await open();
      const own = (await s.enqueue('compact', 'store-1')).task;
      expect((await s.listTasks()).tasks.map((t) => t.id)).toEqual([own.id, task.id]);
      expect(await s.listTasks({ kind: NEWER_KIND })).toMatchObject({ total: 1, tasks: [{ id: task.id }] });
      expect(await s.queueDepth(NEWER_KIND)).toBe(1);
      expect(await s.queueDepth()).toBe(2);
      expect(await s.getTask(task.id)).toMatchObject({ kind: NEWER_KIND, state: 'queued' });
      expect(await s.listCooldowns({ all: true })).toMatchObject([
        { kind: NEWER_KIND, target: 'store-1', failures: 1 },
      ]);
      expect(await s.getCooldown(NEWER_KIND, 'store-1')).toMatchObject({ failures: 1 });
      expect(await s.listParks()).toMatchObject([{ kind: NEWER_KIND, target: 'store-2', reason: 'vendor ticket' }]);
      expect(await s.parkedTargets(NEWER_KIND)).toEqual(new Set(['store-2']));

      // The newer task is older, yet a master running only this release's kinds passes it over.
      const claim = await claimOrFail(s, RUNS);
      expect(claim.task.id).toBe(own.id);
      await s.finish(claim, { ok: true, detail: 'compacted' });
      expect(await s.claimNext(RUNS)).toBeUndefined();
      expect(await s.getTask(task.id)).toMatchObject({ state: 'queued', attempt: 0 });
      expect(await s.queueDepth(NEWER_KIND)).toBe(1);

      // The master that runs it still can.
      const theirs = await claimOrFail(newer, [...RUNS, NEWER_KIND]);
      expect(theirs.task.id).toBe(task.id);
    });

    it("lists each master's kinds from its registration, and none from one that predates them", async () => {
      const info = { host: 'test', pid: 1, version: '0.1.0', started_at: 0, pools: { general: 1 } };
      await open({ masterId: 'with-kinds', info: { ...info, kinds: [...RUNS, NEWER_KIND] } });
      const older = await open({ masterId: 'older', info });
      const listed = await older.listMasters();
      expect(listed.find((m) => m.id === 'with-kinds')).toMatchObject({
        version: '0.1.0',
        kinds: [...RUNS, NEWER_KIND],
      });
      expect(listed.find((m) => m.id === 'older')).not.toHaveProperty('kinds');
    });
  });
}
