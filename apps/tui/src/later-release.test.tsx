import { afterEach, describe, expect, it } from 'vitest';
import { KEY, mountApp, task } from '../test/app-harness.js';
import { type FakeMaster, cooldown, startFakeMaster } from '../test/fake-master.js';
import { MaintdClient } from './api/client.js';
import { parseMaintdEvent } from './api/events.js';
import type { Cooldown, MaintdEvent, Task } from './api/types.js';
import { FleetFeed } from './data/feed.js';
import { overviewModel } from './views/Overview.js';
import { EMPTY_FLEET } from './state/fleet-data.js';

// A master of a later release serves enum values this dashboard does not know (a task state
// `held`, a cooldown state `ungated`, an error class, a source): they are shown as they come,
// never dropped and never a crash (docs/ARCHITECTURE.md §2.8).

type Mounted = ReturnType<typeof mountApp>;
const mounted: Mounted[] = [];
const feeds: FleetFeed[] = [];
const fakes: FakeMaster[] = [];
afterEach(async () => {
  for (const m of mounted.splice(0)) m.unmount();
  await Promise.all(feeds.splice(0).map((f) => f.stop()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

/** A task in a state of a later release: the document's type names today's states only. */
function laterTask(n: number, over: Record<string, unknown>): Task {
  return { ...task(n, { finished_at: undefined }), ...over };
}

/** A cooling entry served with a state of a later release. */
function laterCooldown(target: string, state: string): Cooldown {
  return {
    ...cooldown(target, { until_ms: Date.now() + 600_000 }),
    state,
    last_error_class: 'quota',
  } as unknown as Cooldown;
}

/** The app on a real client and feed against a fake master, on the wall clock. */
async function live(setup: (f: FakeMaster) => void): Promise<{ fake: FakeMaster; m: Mounted }> {
  const fake = await startFakeMaster();
  fakes.push(fake);
  setup(fake);
  const feed = new FleetFeed({
    client: new MaintdClient({ url: fake.url, timeoutMs: 1000 }),
    refreshMs: 60_000,
    flushMs: 10,
  });
  feeds.push(feed);
  feed.start();
  const m = mountApp({ feed, now: Date.now, theme: { color: false }, size: { columns: 140, rows: 24 } });
  mounted.push(m);
  await waitFor(() => fake.clients === 1 && feed.getSnapshot().data.cooldowns !== undefined);
  return { fake, m };
}

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('values of a later release', () => {
  it('an event with a task state, source and cooldown state this dashboard does not know is kept, not dropped', () => {
    const e = parseMaintdEvent(
      JSON.stringify({
        type: 'task',
        revision: 3,
        task: { ...task(1), state: 'held', source: 'schedule' },
      }),
    );
    expect(e).toMatchObject({ type: 'task', task: { state: 'held', source: 'schedule' } });
    const c = parseMaintdEvent(
      JSON.stringify({
        type: 'cooldown',
        revision: 4,
        kind: 'merge_wal',
        target: 'a',
        cooldown: { ...cooldown('a'), state: 'ungated', last_error_class: 'quota' },
      }),
    );
    expect(c).toMatchObject({ type: 'cooldown', cooldown: { state: 'ungated', last_error_class: 'quota' } });
    // The shape is still checked: a state that is no string is malformed.
    expect(parseMaintdEvent(JSON.stringify({ type: 'task', revision: 5, task: { ...task(1), state: 7 } }))).toBe(
      undefined,
    );
  });

  it('the Tasks view shows a held task read over REST and one turned held by an event, in every sort and in its detail', async () => {
    const { fake, m } = await live((f) => {
      f.state.tasks.push(laterTask(1, { state: 'held', target: 'rest-held' }));
      f.state.tasks.push(task(2, { state: 'queued', target: 'soon-held', finished_at: undefined }));
    });
    await m.press('2');
    await waitFor(() => m.frame().includes('rest-held') && m.frame().includes('soon-held'));
    expect(m.frame()).toMatch(/held\s+merge_wal rest-held/);

    const event: MaintdEvent = {
      type: 'task',
      revision: 10,
      task: laterTask(2, { state: 'held', source: 'schedule', target: 'soon-held' }),
    };
    fake.emit(event);
    await waitFor(() => /held\s+merge_wal soon-held\s+sched/.test(m.frame()));

    // Every sort (the `state` one ranks a state it does not know after today's).
    for (let i = 0; i < 4; i++) {
      await m.press('s');
      expect(m.frame()).toMatch(/held\s+merge_wal rest-held/);
      expect(m.frame()).not.toContain('undefined');
      expect(m.frame()).not.toContain('NaN');
    }
    await m.press(KEY.enter);
    expect(m.frame()).toMatch(/state\s+held/);
    expect(m.frame()).not.toContain('undefined');
  });

  it('the Cooldowns view shows a served cooldown state it does not know verbatim, over REST and by event', async () => {
    const { fake, m } = await live((f) => {
      f.state.cooldowns.set('merge_wal/rest-store', laterCooldown('rest-store', 'ungated'));
    });
    await m.press('3');
    await waitFor(() => m.frame().includes('rest-store'));
    expect(m.frame()).toMatch(/merge_wal rest-store\s+ungated\s/);

    fake.emit({
      type: 'cooldown',
      revision: 11,
      kind: 'merge_wal',
      target: 'event-store',
      cooldown: laterCooldown('event-store', 'ungated'),
    });
    await waitFor(() => m.frame().includes('event-store'));
    expect(m.frame()).toMatch(/merge_wal event-store\s+ungated\s/);
    for (let i = 0; i < 4; i++) {
      await m.press('s');
      expect(m.frame()).toContain('ungated');
      expect(m.frame()).not.toContain('undefined');
    }
    await m.press(KEY.enter);
    expect(m.frame()).toContain('ungated');
    expect(m.frame()).toContain('quota');
    expect(m.frame()).not.toContain('undefined');
    await m.press(KEY.escape, '1');
    expect(m.frame()).not.toContain('undefined');
  });

  it('the Overview counts a held task neither as running nor as an outcome', () => {
    const tasks = new Map([[task(1).id, laterTask(1, { state: 'held' })]]);
    const model = overviewModel({ ...EMPTY_FLEET, tasks }, Date.now());
    expect(model.running).toEqual([]);
    expect(model.finished).toEqual([]);
  });
});
