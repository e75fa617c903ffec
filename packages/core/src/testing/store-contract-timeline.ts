import { describe, expect, it, vi } from 'vitest';
import { ClaimLostError } from '../errors.js';
import type { TimelineEvent } from '../timeline.js';
import type { TaskStore } from '../task-store.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The events' types and the fields a test cares about, newest first. */
function brief(events: readonly TimelineEvent[]): string[] {
  return events.map((e) => [e.type, e.failures ?? '', e.by ?? '', e.reason ?? '', e.error ?? ''].join('|'));
}

/** The TaskStore contract's per-store timeline (docs/ARCHITECTURE.md §2.7), on the stores of `fx`. */
export function timelineContract(fx: StoreContractFixture): void {
  const { open, claimOrFail, run } = fx;

  /** Enqueues (kind, target) as a sweep would, claims it and finishes it with `ok` or an error. */
  const runOnce = async (s: TaskStore, target: string, ok: boolean, error = 'lost fragment f-17'): Promise<string> => {
    const { task } = await s.enqueue('compact', target, { source: 'sweep' });
    const claim = await claimOrFail(s, ['compact']);
    expect(claim.task.id).toBe(task.id);
    await run(s.finish(claim, ok ? { ok: true, detail: 'done' } : { ok: false, error, errorClass: 'target' }));
    return task.id;
  };

  describe('timeline', () => {
    it('records each failure with its error and class, the window it opened and the success that cleared the count', async () => {
      const s = await open({ cooldown: { afterFailures: 2, baseSecs: 60, jitter: 0, maxPercent: 100 } });
      const first = await runOnce(s, 'store-17', false, 'manifest names a lost fragment');
      await fx.h.clock.advance(1000);
      const second = await runOnce(s, 'store-17', false, 'still lost');
      await fx.h.clock.advance(1000);
      const third = await runOnce(s, 'store-17', true);
      const events = await s.timelines.read('compact', 'store-17');
      expect(brief(events)).toEqual([
        'cleared|2|||',
        'window_opened|2|||',
        'failure|2|||still lost',
        'failure|1|||manifest names a lost fragment',
      ]);
      expect(events.map((e) => e.task_id)).toEqual([third, undefined, second, first]);
      const window = events[1]!;
      expect(window.window_ms).toBe(60_000);
      expect(window.until_ms).toBe(window.at_ms + 60_000);
      expect(events[2]!.error_class).toBe('target');
      // Newest first, and each event's id sorts as its time.
      expect([...events].reverse().map((e) => e.id)).toEqual(events.map((e) => e.id).sort());
    });

    it('records a failure that does not count, without a count', async () => {
      const s = await open({ cooldown: { afterFailures: 0 } });
      await runOnce(s, 'x', false, 'worker said no');
      const events = await s.timelines.read('compact', 'x');
      expect(brief(events)).toEqual(['failure||||worker said no']);
      expect(await s.getCooldown('compact', 'x')).toBeUndefined();
    });

    it('records resets, parks and releases with who and why, and manual runs with who', async () => {
      const s = await open({ cooldown: { afterFailures: 1, maxPercent: 100 } });
      await runOnce(s, 'x', false);
      await fx.h.clock.advance(10);
      expect(await s.clearCooldown('compact', 'x', { by: 'ops@10.0.0.7' })).toBe(true);
      await fx.h.clock.advance(10);
      await s.park('compact', 'x', { reason: 'disk swap', by: 'ops@10.0.0.7', untilMs: fx.h.clock.now() + 5000 });
      await fx.h.clock.advance(10);
      const { task } = await s.enqueue('compact', 'x', { source: 'manual', by: 'ops@10.0.0.8' });
      await fx.h.clock.advance(10);
      expect(await s.unpark('compact', 'x', { by: '127.0.0.1' })).toBe(true);
      const events = await s.timelines.read('compact', 'x');
      expect(brief(events)).toEqual([
        'released||127.0.0.1||',
        'manual_run||ops@10.0.0.8||',
        'parked||ops@10.0.0.7|disk swap|',
        'reset|1|ops@10.0.0.7||',
        'window_opened|1|||',
        'failure|1|||lost fragment f-17',
      ]);
      expect(events[1]!.task_id).toBe(task.id);
      expect(events[2]!.until_ms).toBe(events[2]!.at_ms + 5000);
    });

    it('writes nothing for a reset or release of a pair that has neither, nor for a deduped manual run', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv });
      expect(await s.clearCooldown('compact', 'nothing', { by: 'a' })).toBe(false);
      expect(await s.unpark('compact', 'nothing', { by: 'a' })).toBe(false);
      await s.enqueue('compact', 'y', { source: 'sweep' });
      expect((await s.enqueue('compact', 'y', { source: 'manual', by: 'a' })).created).toBe(false);
      expect(await s.timelines.read('compact', 'nothing')).toEqual([]);
      expect(await s.timelines.read('compact', 'y')).toEqual([]);
      const keys = await kv.range(s.keys.timelinePrefix(), { countOnly: true });
      expect(keys.count).toBe(0);
    });

    it('records nothing for a finish whose claim was lost', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, cooldown: { afterFailures: 1, maxPercent: 100 } });
      await s.enqueue('compact', 'x', { source: 'sweep' });
      const claim = await claimOrFail(s, ['compact']);
      await kv.delete(s.keys.claim(claim.task.id));
      await expect(s.finish(claim, { ok: false, error: 'boom', errorClass: 'target' })).rejects.toBeInstanceOf(
        ClaimLostError,
      );
      expect(await s.timelines.read('compact', 'x')).toEqual([]);
      expect(await s.getCooldown('compact', 'x')).toBeUndefined();
    });

    it('keeps a store’s failures after 1,000 other tasks ran and were pruned from the history', async () => {
      const s = await open({ historyLimit: 20, pruneEvery: 10, cooldown: { afterFailures: 3, maxPercent: 100 } });
      await runOnce(s, 'store-17', false, 'lost fragment f-1');
      await runOnce(s, 'store-17', false, 'lost fragment f-2');
      const others = 1000;
      for (let i = 0; i < others; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => s.enqueue('merge_wal', `other-${i + j}`, { source: 'sweep' })),
        );
      }
      // Eight claimers: one after another, a thousand claims and finishes on etcd take long.
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let claim = await s.claimNext(['merge_wal']); claim; claim = await s.claimNext(['merge_wal'])) {
            await s.finish(claim, { ok: true, detail: 'ok' });
          }
        }),
      );
      expect(await s.queueDepth('merge_wal')).toBe(0);
      await s.pruneHistory();
      expect((await s.listTasks({ limit: 200 })).total).toBeLessThanOrEqual(22);
      expect(brief(await s.timelines.read('compact', 'store-17'))).toEqual([
        'failure|2|||lost fragment f-2',
        'failure|1|||lost fragment f-1',
      ]);
    });

    it('keeps the newest timelineLimit events of a pair', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, timelineLimit: 3, cooldown: { afterFailures: 0 } });
      for (let i = 1; i <= 6; i++) {
        await runOnce(s, 'x', false, `error ${i}`);
        await fx.h.clock.advance(1);
      }
      await vi.waitFor(async () => {
        const all = await kv.range(s.keys.timelinePrefix('compact', 'x'), { countOnly: true });
        expect(all.count).toBe(3);
      });
      expect(brief(await s.timelines.read('compact', 'x'))).toEqual([
        'failure||||error 6',
        'failure||||error 5',
        'failure||||error 4',
      ]);
    });

    it('prunes events past the timeline TTL fleet-wide, leaving nothing of a pair that stopped failing', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, timelineTtlSecs: 3600 });
      // Parks and releases: events without a claim, so no session has to outlive the jumps.
      await s.park('compact', 'old', { reason: 'r', by: 'a' });
      await s.unpark('compact', 'old', { by: 'a' });
      await fx.h.clock.advance(3_000_000);
      await s.park('compact', 'recent', { reason: 'r', by: 'a' });
      expect(await s.timelines.prune()).toBe(0);
      await fx.h.clock.advance(700_000);
      expect(await s.timelines.prune()).toBe(2);
      expect(await s.timelines.read('compact', 'old')).toEqual([]);
      expect(brief(await s.timelines.read('compact', 'recent'))).toEqual(['parked||a|r|']);
      const left = await kv.range(s.keys.timelinePrefix('compact', 'old'), { countOnly: true });
      expect(left.count).toBe(0);
    });

    it('trims each pair to its newest timelineLimit events in the fleet-wide prune, however they were written', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, timelineLimit: 5, timelineTtlSecs: 0 });
      // Written as another master's sparse writes would leave them: never trimmed at write time.
      const ids = Array.from({ length: 8 }, (_, i) => `0190000${i}-0000-7000-8000-000000000000`);
      for (const id of ids) {
        await kv.put(
          s.keys.timeline('compact', 'x', id),
          JSON.stringify({ id, kind: 'compact', target: 'x', type: 'failure', at_ms: 1 }),
        );
      }
      await s.park('compact', 'y', { reason: 'r', by: 'a' });
      expect(await s.timelines.prune()).toBe(3);
      expect((await s.timelines.read('compact', 'x', 50)).map((e) => e.id)).toEqual(ids.slice(3).reverse());
      expect(await s.timelines.read('compact', 'y')).toHaveLength(1);
    });

    it('keeps a newer release’s event type and fields readable', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv });
      const id = '01890a5d-ac96-774b-bcce-b302099a8057';
      await kv.put(
        s.keys.timeline('compact', 'x', id),
        JSON.stringify({ id, kind: 'compact', target: 'x', type: 'quarantined', at_ms: 5, zone: 'b' }),
      );
      const [event] = await s.timelines.read('compact', 'x');
      expect(event).toMatchObject({ id, type: 'quarantined', at_ms: 5 });
    });
  });
}
