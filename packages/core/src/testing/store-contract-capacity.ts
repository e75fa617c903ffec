import { describe, expect, it } from 'vitest';
import { CAPACITY_HOUR_MS, CapacityLedger } from '../capacity.js';
import { CapacityStore } from '../store/capacity-store.js';
import type { TaskStore } from '../task-store.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/**
 * The slot-time records' contract (docs/ARCHITECTURE.md §3.5): each master's record is its own
 * key, outlives the master that wrote it, and is removed once older than any answer uses.
 */
export function capacityContract(fx: StoreContractFixture): void {
  const { open } = fx;
  const capacityOf = async (s: TaskStore): Promise<CapacityStore> =>
    new CapacityStore({ kv: await fx.h.connect(), keys: s.keys, masterId: s.masterId, clock: fx.h.clock });

  describe('the capacity records', () => {
    it("reads every master's record, a closed master's too", async () => {
      const a = await open();
      const b = await open();
      const now = fx.h.clock.now();
      const la = new CapacityLedger();
      la.record('merge_wal', 's1', 30, true, now);
      const lb = new CapacityLedger();
      lb.record('merge_wal', 's2', 10, false, now);
      await (await capacityOf(a)).write(la.snapshot(a.masterId, now));
      await (await capacityOf(b)).write(lb.snapshot(b.masterId, now));
      await a.close();
      const records = await (await capacityOf(b)).read();
      expect(records.map((r) => r.master_id).sort()).toEqual([a.masterId, b.masterId].sort());
      expect(records.find((r) => r.master_id === a.masterId)?.kinds.merge_wal?.top[0]?.target).toBe('s1');
    });

    it('rewrites one key per master, and deletes a record once it is two hours old', async () => {
      const a = await open();
      const b = await open();
      const l = new CapacityLedger();
      const old = fx.h.clock.now() - 2 * CAPACITY_HOUR_MS - 1000;
      l.record('compact', 'x', 5, false, old);
      await (await capacityOf(a)).write(l.snapshot(a.masterId, old - 1000));
      await (await capacityOf(a)).write(l.snapshot(a.masterId, old));
      const kv = await fx.h.connect();
      expect((await kv.range(a.keys.capacityPrefix)).kvs).toHaveLength(1);
      expect(await (await capacityOf(b)).read()).toEqual([]);
      expect((await kv.range(a.keys.capacityPrefix)).kvs).toHaveLength(0);
    });

    it('leaves out a record it cannot read, answering the others', async () => {
      const a = await open();
      const l = new CapacityLedger();
      l.record('compact', 'x', 5, false, fx.h.clock.now());
      await (await capacityOf(a)).write(l.snapshot(a.masterId, fx.h.clock.now()));
      const kv = await fx.h.connect();
      await kv.put(a.keys.capacity('garbled'), '{"master_id": 3');
      expect((await (await capacityOf(a)).read()).map((r) => r.master_id)).toEqual([a.masterId]);
    });
  });
}
