import { describe, expect, it } from 'vitest';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The TaskStore contract's stats rows, worker scans and coordination, on the stores of `fx`. */
export function fleetContract(fx: StoreContractFixture): void {
  const { open, claimOrFail } = fx;

  describe('stats', () => {
    it('writes, reads, lists and deletes stats rows in batches past the transaction limit', async () => {
      const s = await open();
      expect(await s.hasStats()).toBe(false);
      const rows = Array.from({ length: 250 }, (_, i) => ({
        name: `store-${String(i).padStart(3, '0')}`,
        pending_wal_generations: i,
        fragment_count: 1,
        row_count: 10,
        owners: ['http://w1'],
        scanned_at: 1,
      }));
      await s.putStats(rows);
      expect(await s.hasStats()).toBe(true);
      expect(await s.getStats('store-007')).toEqual(rows[7]);
      expect((await s.listStats()).map((r) => r.name)).toEqual(rows.map((r) => r.name).sort());
      expect(
        await s.deleteStats(
          rows
            .slice(0, 200)
            .map((r) => r.name)
            .concat('nope'),
        ),
      ).toBe(200);
      expect(await s.listStats()).toHaveLength(50);
      await s.deleteStats(rows.slice(200).map((r) => r.name));
      expect(await s.hasStats()).toBe(false);
      await expect(s.putStats([{ ...rows[0]!, name: '../etc' }])).rejects.toMatchObject({ field: 'stats[0].name' });
    });

    it('lists the targets with an active task of a kind', async () => {
      const s = await open();
      await s.enqueue('merge_wal', 'a');
      await s.enqueue('merge_wal', 'b');
      await s.enqueue('compact', 'c');
      await s.finish(await claimOrFail(s, ['merge_wal']), { ok: true, detail: 'ok' });
      expect(await s.activeTargets('merge_wal')).toEqual(new Set(['b']));
      expect(await s.activeTargets('compact')).toEqual(new Set(['c']));
    });
  });

  describe('workers', () => {
    const scanOf = (endpoint: string, at: number, stores: number) => ({
      endpoint,
      ok: true,
      error: null,
      last_scan_at: at,
      stores,
    });

    it('keeps the last scan of each worker for every master to read', async () => {
      const scanner = await open();
      const peer = await open();
      expect(await peer.listWorkerScans()).toEqual([]);
      await scanner.putWorkerScans([scanOf('http://w1:7000', 1, 3), scanOf('http://w2:7000/', 1, 2)]);
      const down = {
        endpoint: 'http://w2:7000/',
        ok: false,
        error: 'http://w2:7000/: refused',
        last_scan_at: 2,
        stores: 2,
      };
      await scanner.putWorkerScans([down]);
      expect(await peer.listWorkerScans()).toEqual([scanOf('http://w1:7000', 1, 3), down]);
    });

    it('writes a scan of more workers than one transaction holds, and none of a scan with an invalid record', async () => {
      const s = await open();
      const scans = Array.from({ length: 250 }, (_, i) => scanOf(`http://w${String(i).padStart(3, '0')}`, 5, i));
      await s.putWorkerScans(scans);
      expect(await s.listWorkerScans()).toEqual(scans);
      await expect(
        s.putWorkerScans([scanOf('http://fresh', 6, 1), { ...scanOf('http://bad', 6, 1), stores: -1 }]),
      ).rejects.toMatchObject({ field: 'workers[1].stores' });
      expect((await s.listWorkerScans()).map((w) => w.endpoint)).not.toContain('http://fresh');
    });

    it('deletes the scans of the workers named, counting those that existed', async () => {
      const s = await open();
      await s.putWorkerScans([scanOf('http://w1', 1, 1), scanOf('http://w2', 1, 2), scanOf('http://w3', 1, 3)]);
      expect(await s.deleteWorkerScans(['http://w1', 'http://w3', 'http://w3', 'http://never'])).toBe(2);
      expect(await s.listWorkerScans()).toEqual([scanOf('http://w2', 1, 2)]);
      expect(await s.deleteWorkerScans([])).toBe(0);
    });

    it('keeps the later of two records of one worker given in one write', async () => {
      const s = await open();
      await s.putWorkerScans([scanOf('http://w1', 1, 1), scanOf('http://w1', 2, 7)]);
      expect(await s.listWorkerScans()).toEqual([scanOf('http://w1', 2, 7)]);
    });
  });

  describe('coordination', () => {
    it('runs a periodic job exactly once per interval among 6 contending instances', async () => {
      const six = await Promise.all(Array.from({ length: 6 }, () => open()));
      const intervalMs = 60_000;
      const runsPerSlot = new Map<number, number>();
      for (let tick = 0; tick < 20; tick++) {
        const wins = await Promise.all(six.map((s) => s.runEvery('merge-wal-sweep', intervalMs)));
        const slot = Math.floor(fx.h.clock.now() / intervalMs);
        runsPerSlot.set(slot, (runsPerSlot.get(slot) ?? 0) + wins.filter(Boolean).length);
        await fx.h.clock.advance(17_000);
      }
      expect(runsPerSlot.size).toBeGreaterThanOrEqual(5);
      expect([...runsPerSlot.values()].every((v) => v === 1)).toBe(true);
    });

    it('gives a named lock to one holder until released', async () => {
      const [a, b] = [await open(), await open()];
      const lock = await a.tryLock('stats-writer');
      expect(lock).toBeDefined();
      expect(await b.tryLock('stats-writer')).toBeUndefined();
      await lock!.release();
      expect(await b.tryLock('stats-writer')).toBeDefined();
    });
  });
}
