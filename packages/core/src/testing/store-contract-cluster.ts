import { describe, expect, it } from 'vitest';
import { clusterView } from '../cluster.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** A registration's fields, as a master of some release writes them. */
const info = (version: string, features?: readonly string[]) => ({
  host: 'h',
  pid: 1,
  version,
  started_at: 0,
  pools: {},
  ...(features ? { features: [...features] } : {}),
});

/**
 * The cluster record's contract (docs/ARCHITECTURE.md §2.8): features are switched on by swaps
 * that keep what others wrote, never while `preserve_downgrade` holds them, and the live
 * registrations say which a fleet of mixed releases may switch on.
 */
export function clusterContract(fx: StoreContractFixture): void {
  const { open } = fx;

  describe('the cluster record', () => {
    it('is absent until a master writes it, and then switches a feature on once, keeping its first stamp', async () => {
      const a = await open({ info: info('0.2.0', ['held_tasks']) });
      expect(await a.cluster.read()).toBeUndefined();
      const first = await a.cluster.enable(['held_tasks']);
      expect(first.features).toEqual([{ name: 'held_tasks', enabled_at: fx.h.clock.now(), enabled_by: a.masterId }]);
      await fx.h.clock.advance(1000);
      const b = await open({ info: info('0.2.0', ['held_tasks']) });
      const again = await b.cluster.enable(['held_tasks']);
      expect(again.features).toEqual(first.features);
      expect(await b.cluster.read()).toEqual(first);
    });

    it('switches nothing on while an operator preserves the downgrade, and switches on once it is cleared', async () => {
      const a = await open({ info: info('0.2.0', ['held_tasks']) });
      const held = await a.cluster.setPreserveDowngrade(true, 'token@10.0.0.7');
      expect(held).toMatchObject({ preserve_downgrade: true, updated_by: 'token@10.0.0.7', features: [] });
      expect((await a.cluster.enable(['held_tasks'])).features).toEqual([]);
      await a.cluster.setPreserveDowngrade(false, 'token@10.0.0.7');
      expect((await a.cluster.enable(['held_tasks'])).features.map((f) => f.name)).toEqual(['held_tasks']);
    });

    it('keeps the fields a newer release wrote in the record and in its features when it switches another on', async () => {
      const kv = await fx.h.connect();
      const a = await open({ info: info('0.2.0', ['held_tasks', 'timeline']) });
      await a.cluster.enable(['held_tasks']);
      const stored = JSON.parse((await kv.get(a.keys.cluster))!.value) as { features: object[] };
      await kv.put(
        a.keys.cluster,
        JSON.stringify({ ...stored, finalized_by: 'ops', features: [{ ...stored.features[0], note: 'newer' }] }),
      );
      await a.cluster.enable(['timeline']);
      const after = JSON.parse((await kv.get(a.keys.cluster))!.value) as Record<string, unknown>;
      expect(after).toMatchObject({
        finalized_by: 'ops',
        features: [{ name: 'held_tasks', note: 'newer' }, { name: 'timeline' }],
      });
    });

    it('loses no feature when two masters switch different ones on at once', async () => {
      const a = await open({ info: info('0.2.0', ['held_tasks', 'timeline']) });
      const b = await open({ info: info('0.2.0', ['held_tasks', 'timeline']) });
      await fx.run(Promise.all([a.cluster.enable(['held_tasks']), b.cluster.enable(['timeline'])]));
      expect((await a.cluster.read())?.features.map((f) => f.name).sort()).toEqual(['held_tasks', 'timeline']);
    });

    it('reads which features a fleet of two releases may switch on from the live registrations', async () => {
      const older = await open({ info: info('0.1.0', []) });
      const newer = await open({ info: info('0.2.0', ['held_tasks']) });
      const waiting = clusterView(['held_tasks'], await newer.listMasters(), await newer.cluster.read());
      expect(waiting).toMatchObject({ versions: ['0.1.0', '0.2.0'], ready: [], unknownEnabled: [] });
      expect(waiting.features).toEqual([
        {
          name: 'held_tasks',
          state: 'waiting',
          understoodBy: [newer.masterId],
          waitingFor: [older.masterId],
          enabledAt: null,
        },
      ]);
      // The older master leaves (its session ends with it): nothing is left to wait for.
      await older.close();
      const ready = clusterView(['held_tasks'], await newer.listMasters(), await newer.cluster.read());
      expect(ready.ready).toEqual(['held_tasks']);
      await newer.cluster.enable(ready.ready);
      // A master of the older release that comes back sees a feature it does not understand.
      const back = await open({ info: info('0.1.0', []) });
      expect(clusterView([], await back.listMasters(), await back.cluster.read()).unknownEnabled).toEqual([
        'held_tasks',
      ]);
    });
  });
}
