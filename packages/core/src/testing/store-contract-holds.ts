import { describe, expect, it } from 'vitest';
import { interceptKv } from './harness.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

const HOLD = { holdParked: true } as const;

/**
 * The TaskStore contract's held tasks (docs/ARCHITECTURE.md §2.7): from the moment a park
 * commits, no automatic task of its pair starts — held until the park ends — while manual tasks
 * still run. On the stores of `fx`.
 */
export function holdsContract(fx: StoreContractFixture): void {
  const { open, claimOrFail, run } = fx;

  describe('held tasks', () => {
    it('holds an automatic task queued before its park, saying who parked it and why, and still runs a manual one', async () => {
      const s = await open();
      const { task: auto } = await s.enqueue('compact', 'x', { source: 'sweep' });
      await s.park('compact', 'x', { reason: 'disk swap', by: 'ops@10.0.0.7' });
      expect(await s.claimNext(['compact'], HOLD)).toBeUndefined();
      const held = await s.getTask(auto.id);
      expect(held).toMatchObject({
        state: 'held',
        held_at: fx.h.clock.now(),
        held_reason: 'parked by ops@10.0.0.7: disk swap',
      });
      expect(await s.queueDepth('compact')).toBe(0);
      // Its dedupe key stays: the sweeps do not queue a second one meanwhile.
      expect((await s.enqueue('compact', 'x', { source: 'sweep' })).created).toBe(false);
      expect((await s.listTasks({ state: 'held' })).tasks.map((t) => t.id)).toEqual([auto.id]);
      const timeline = await s.timelines.read('compact', 'x');
      expect(timeline.map((e) => e.type)).toEqual(['held', 'parked']);
      expect(timeline[0]).toMatchObject({ task_id: auto.id, by: 'ops@10.0.0.7', reason: 'disk swap' });
      const { task: manual } = await s.enqueue('merge_wal', 'x', { source: 'manual', by: 'ops' });
      const claim = await claimOrFail(s, ['compact', 'merge_wal']);
      expect(claim.task.id).toBe(manual.id);
      await run(s.finish(claim, { ok: true, detail: 'ok' }));
    });

    it('runs the held task of a pair as a manual one when an operator asks to run the pair', async () => {
      const s = await open();
      const { task: auto } = await s.enqueue('compact', 'x', { source: 'sweep' });
      await s.park('compact', 'x', { reason: 'r', by: 'ops' });
      expect(await s.claimNext(['compact'], HOLD)).toBeUndefined();
      const asked = await s.enqueue('compact', 'x', { source: 'manual', by: 'ops@10.0.0.8' });
      expect(asked).toMatchObject({ created: false, task: { id: auto.id, state: 'queued', source: 'manual' } });
      const claim = await s.claimNext(['compact'], HOLD);
      expect(claim?.task.id).toBe(auto.id);
      if (claim) await run(s.finish(claim, { ok: true, detail: 'ok' }));
      expect((await s.timelines.read('compact', 'x')).map((e) => e.type)).toEqual(['manual_run', 'held', 'parked']);
      expect(await s.resumeHeld()).toEqual([]);
    });

    it('holds a follow-up (a task with dependencies) of a parked pair', async () => {
      const s = await open();
      const { task: first } = await s.enqueue('merge_wal', 'x', { source: 'sweep' });
      const { task: follow } = await s.enqueue('compact', 'x', { source: 'sweep', dependsOn: [first.id] });
      await s.park('compact', 'x', { reason: 'r', by: 'a' });
      const claim = await claimOrFail(s, ['merge_wal', 'compact']);
      expect(claim.task.id).toBe(first.id);
      await run(s.finish(claim, { ok: true, detail: 'ok' }));
      expect(await s.claimNext(['merge_wal', 'compact'], HOLD)).toBeUndefined();
      expect((await s.getTask(follow.id))?.state).toBe('held');
    });

    it('puts held tasks back in their FIFO place when the park is released, in the release’s transaction', async () => {
      const s = await open();
      const { task: a } = await s.enqueue('compact', 'a', { source: 'sweep' });
      const { task: b } = await s.enqueue('compact', 'b', { source: 'sweep' });
      await s.park('compact', 'a', { reason: 'r', by: 'ops' });
      await s.park('compact', 'b', { reason: 'r', by: 'ops' });
      expect(await s.claimNext(['compact'], HOLD)).toBeUndefined();
      expect(await s.unpark('compact', 'a', { by: 'ops' })).toBe(true);
      const resumed = await s.getTask(a.id);
      expect(resumed).toMatchObject({ id: a.id, state: 'queued', enqueued_at: a.enqueued_at });
      expect(resumed).not.toHaveProperty('held_reason');
      expect(resumed).not.toHaveProperty('held_at');
      expect((await s.getTask(b.id))?.state).toBe('held');
      const claim = await claimOrFail(s, ['compact']);
      expect(claim.task.id).toBe(a.id);
      await run(s.finish(claim, { ok: true, detail: 'ok' }));
      expect((await s.timelines.read('compact', 'a')).map((e) => e.type)).toEqual(['released', 'held', 'parked']);
    });

    it('puts held tasks back once their park lapses, not before', async () => {
      const s = await open();
      const { task } = await s.enqueue('compact', 'x', { source: 'sweep' });
      await s.park('compact', 'x', { reason: 'r', by: 'ops', untilMs: fx.h.clock.now() + 60_000 });
      expect(await s.claimNext(['compact'], HOLD)).toBeUndefined();
      expect(await s.resumeHeld()).toEqual([]);
      await fx.h.clock.advance(60_000);
      expect(await s.resumeHeld()).toEqual([task.id]);
      expect((await s.getTask(task.id))?.state).toBe('queued');
      // The lapsed park's key stays until released, and gates nothing: the claim goes through.
      expect((await s.getPark('compact', 'x'))?.until_ms).not.toBeNull();
      const claim = await claimOrFail(s, ['compact']);
      expect(claim.task.id).toBe(task.id);
      await run(s.finish(claim, { ok: true, detail: 'ok' }));
      expect(await s.resumeHeld()).toEqual([]);
    });

    it('claims an automatic task whose pair has only a lapsed park', async () => {
      const s = await open();
      await s.park('compact', 'x', { reason: 'r', by: 'ops', untilMs: fx.h.clock.now() + 1000 });
      await fx.h.clock.advance(1000);
      const { task } = await s.enqueue('compact', 'x', { source: 'sweep' });
      const claim = await s.claimNext(['compact'], HOLD);
      expect(claim?.task.id).toBe(task.id);
      if (claim) await run(s.finish(claim, { ok: true, detail: 'ok' }));
    });

    it('runs a parked pair’s automatic task without holdParked, as releases before holds did', async () => {
      const s = await open();
      const { task } = await s.enqueue('compact', 'x', { source: 'sweep' });
      await s.park('compact', 'x', { reason: 'r', by: 'ops' });
      const claim = await claimOrFail(s, ['compact']);
      expect(claim.task.id).toBe(task.id);
      await run(s.finish(claim, { ok: true, detail: 'ok' }));
    });

    it('holds a task whose park commits between the claim’s read and its transaction', async () => {
      const kv = await fx.h.connect();
      let parkFirst = true;
      const s = await open({
        kv: interceptKv(kv, async (forward, compares, success, failure) => {
          // The claim transaction writes a running record: park the pair just before it lands.
          if (parkFirst && success.some((op) => op.type === 'put' && op.value.includes('"state":"running"'))) {
            parkFirst = false;
            await other.park('compact', 'x', { reason: 'raced', by: 'ops' });
          }
          return forward(compares, success, failure);
        }),
      });
      const other = await open();
      const { task } = await s.enqueue('compact', 'x', { source: 'sweep' });
      expect(await s.claimNext(['compact'], HOLD)).toBeUndefined();
      expect(parkFirst).toBe(false);
      expect(await s.getTask(task.id)).toMatchObject({ state: 'held', held_reason: 'parked by ops: raced' });
    });
  });
}
