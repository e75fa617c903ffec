import { FakeClock, MemoryKv, type TaskRecord, parseTaskWindows } from '@maintd/core';
import { eventually } from '@maintd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type FleetStub, type TestScheduler, openScheduler, startFleetStub } from './testing/index.js';

/** The windows of a `TASK_WINDOWS` text in UTC. */
function windows(text: string): { tz: string; list: ReturnType<typeof parse> } {
  return { tz: 'UTC', list: parse(text) };
}
function parse(text: string) {
  const r = parseTaskWindows(text, 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.windows;
}

describe('maintenance windows', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function setup(startIso: string): Promise<{ fleet: FleetStub; s: TestScheduler; clock: FakeClock }> {
    const fleet = await startFleetStub({ big: { fragments: 40 }, other: { fragments: 40 }, urgent: { fragments: 40 } });
    cleanup.push(() => fleet.close());
    const clock = new FakeClock(Date.parse(startIso));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const s = await openScheduler(kv, clock, {
      workers: { endpoints: [fleet.url] },
      windows: windows('compact=22:00-05:00'),
    });
    cleanup.push(() => s.close());
    return { fleet, s, clock };
  }

  const state = async (s: TestScheduler, target: string): Promise<TaskRecord['state'] | undefined> =>
    (await s.store.listTasks({ kind: 'compact', target })).tasks[0]?.state;

  it("enqueues nothing outside a kind's window and counts its due stores as skipped for the window", async () => {
    const { s } = await setup('2026-12-06T12:00:00Z');
    await s.scheduler.scanOnce();
    expect(await s.scheduler.sweepOnce('compact')).toMatchObject({
      candidates: 3,
      enqueued: 0,
      skipped: { window: 3 },
    });
    expect(await s.store.queueDepth('compact')).toBe(0);
    const text = await s.metrics.registry.metrics();
    expect(text).toContain('master_sweep_skipped_total{kind="compact",reason="window"} 3');
    // Another kind has no window: it sweeps at any hour.
    expect(s.scheduler.windows()).toEqual([
      {
        kind: 'compact',
        spec: '22:00-05:00',
        tz: 'UTC',
        open: false,
        next_change_ms: Date.parse('2026-12-06T22:00:00Z'),
      },
    ]);
  });

  it('holds queued automatic work outside the window, runs a manual task at once, and the rest once the window opens', async () => {
    const { s, clock } = await setup('2026-12-06T21:59:30Z');
    await s.store.enqueue('compact', 'big', { source: 'sweep' });
    await s.store.enqueue('compact', 'other', { source: 'sweep' });
    await s.store.enqueue('compact', 'urgent', { source: 'manual' });
    s.scheduler.start();
    await eventually(async () => expect(await state(s, 'urgent')).toBe('done'));
    expect(await state(s, 'big')).toBe('queued');
    expect(await state(s, 'other')).toBe('queued');
    expect(await s.metrics.registry.metrics()).toContain('master_task_window_open{kind="compact"} 0');
    await clock.advance(31_000);
    await eventually(async () => {
      expect(await state(s, 'big')).toBe('done');
      expect(await state(s, 'other')).toBe('done');
    });
    expect(await s.metrics.registry.metrics()).toContain('master_task_window_open{kind="compact"} 1');
    expect((await s.scheduler.sweepOnce('compact')).skipped.window).toBe(0);
  });

  it('lets a running task finish when the window closes', async () => {
    const { s, clock } = await setup('2026-12-07T04:59:50Z');
    const { task } = await s.store.enqueue('compact', 'big', { source: 'sweep' });
    const claim = await s.store.claimNext(['compact'], {});
    expect(claim?.task.id).toBe(task.id);
    await clock.advance(20_000);
    // Past 05:00: the claim still finishes as done.
    await s.store.finish(claim!, { ok: true, detail: 'removed 40 / added 1 fragments' });
    expect(await state(s, 'big')).toBe('done');
  });
});
