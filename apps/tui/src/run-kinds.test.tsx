import { afterEach, describe, expect, it } from 'vitest';
import { type ApiCall, KEY, mountApp, sampleFleet, store, task } from '../test/app-harness.js';
import { type FakeMaster, master, policy, startFakeMaster } from '../test/fake-master.js';
import { MaintdClient } from './api/client.js';
import type { Master } from './api/types.js';
import { FleetFeed } from './data/feed.js';
import { taskMap } from '../test/task-map.js';

// The kinds `r` offers on a store are the fleet's, from the live masters' registrations: a kind a
// newer master runs is offered without a dashboard of its release, and a kind no live master runs
// is not (docs/ARCHITECTURE.md §2.1).

type Mounted = ReturnType<typeof mountApp>;
const mounted: Mounted[] = [];
const feeds: FleetFeed[] = [];
const fakes: FakeMaster[] = [];
afterEach(async () => {
  for (const m of mounted.splice(0)) m.unmount();
  await Promise.all(feeds.splice(0).map((f) => f.stop()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

/** A master of a later release that runs one kind more than today's. */
const newer = (): Master => ({ ...master('master-b'), version: '0.2.0', kinds: [...master().kinds!, 'verify'] });

/** A master of 0.0.x: its registration names no kinds. */
function older(id: string): Master {
  const { kinds: _, ...m } = master(id);
  return m;
}

/**
 * The app on a real client (actions included) and feed against a fake master, on the wall clock,
 * in the Stores view once the stores are read.
 */
async function live(setup: (f: FakeMaster) => void): Promise<{ fake: FakeMaster; m: Mounted }> {
  const fake = await startFakeMaster();
  fakes.push(fake);
  fake.state.stores = [store('orders-eu', 40), store('orders-us', 12)];
  setup(fake);
  const client = new MaintdClient({ url: fake.url, timeoutMs: 1000 });
  const feed = new FleetFeed({ client, refreshMs: 60_000, flushMs: 10 });
  feeds.push(feed);
  feed.start();
  const api = Object.assign(client, { calls: [] as ApiCall[] });
  const m = mountApp({ feed, api, now: Date.now, theme: { color: false }, size: { columns: 120, rows: 30 } });
  mounted.push(m);
  await waitFor(() => feed.getSnapshot().data.masters !== undefined && feed.getSnapshot().data.tasks !== undefined);
  await m.press('4');
  await waitFor(() => m.frame().includes('orders-eu'));
  return { fake, m };
}

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The kinds the open dialog lists, in order, and the one picked (`›`). */
function offered(m: Mounted): { kinds: string[]; picked: string | undefined } {
  const lines = m.lines().map((l) => l.replaceAll('│', '').trim());
  const rows: RegExpExecArray[] = [];
  for (const line of lines.slice(lines.indexOf('Kind:') + 1)) {
    const row = /^(› )?(\S+)$/.exec(line);
    if (!row) break;
    rows.push(row);
  }
  return { kinds: rows.map((r) => r[2]!), picked: rows.find((r) => r[1])?.[2] };
}

describe('r on a store offers the kinds the live masters run', () => {
  it('offers a kind only a newer master runs, and enqueues it when picked', async () => {
    const { fake, m } = await live((f) => {
      f.state.masters = [master('master-a'), newer()];
    });
    await m.press('r');
    expect(m.frame()).toContain('Run merge_wal now on orders-eu?');
    // In the registry order of the first master that lists each; the kind `r` ran before it asked
    // is picked.
    expect(offered(m)).toEqual({ kinds: ['merge_wal', 'compact', 'index_id', 'verify'], picked: 'merge_wal' });
    expect(m.frame()).toContain('j/k kind · y/Enter confirm · n/Esc cancel');

    await m.press('j', 'j', KEY.down);
    expect(m.frame()).toContain('Run verify now on orders-eu?');
    expect(offered(m).picked).toBe('verify');
    expect(fake.state.tasks).toEqual([]);
    await m.press('y');
    await waitFor(() => fake.state.tasks.length > 0);
    expect(fake.state.tasks.map((t) => ({ kind: t.kind, target: t.target, source: t.source }))).toEqual([
      { kind: 'verify', target: 'orders-eu', source: 'manual' },
    ]);
    await waitFor(() => m.frame().includes('enqueued verify on orders-eu'));
  });

  it('does not offer a kind no live master runs, though records of it are listed', async () => {
    const { fake, m } = await live((f) => {
      // A newer master ran `verify` and is gone; `repair` no master ever registered.
      f.state.masters = [master('master-a')];
      f.state.tasks = [task(1, { kind: 'verify', target: 'orders-eu' }), task(2, { kind: 'repair' })];
    });
    await m.press('2');
    await waitFor(() => m.frame().includes('repair'));
    await m.press('4', 'r');
    expect(offered(m)).toEqual({ kinds: ['merge_wal', 'compact', 'index_id'], picked: 'merge_wal' });
    expect(m.frame()).not.toContain('verify');
    expect(m.frame()).not.toContain('repair');
    // Past the last kind offered, the pick stays on it.
    await m.press('j', 'j', 'j', 'j', KEY.enter);
    await waitFor(() => fake.state.tasks.length > 2);
    expect(fake.state.tasks.at(-1)).toMatchObject({ kind: 'index_id', target: 'orders-eu', source: 'manual' });
  });

  it('a marked set of stores gets the one kind picked, each', async () => {
    const { fake, m } = await live((f) => {
      f.state.masters = [newer()];
    });
    await m.press(KEY.space, KEY.space, 'r', 'k');
    // Before the first kind, the pick stays on it.
    expect(m.frame()).toContain('Run merge_wal now on 2 targets?');
    await m.press('G');
    expect(m.frame()).toContain('Run merge_wal now on 2 targets?');
    await m.press('j', 'j', 'j');
    expect(m.frame()).toContain('Run verify now on 2 targets?');
    await m.press('y');
    await waitFor(() => fake.state.tasks.length === 2);
    expect(fake.state.tasks.map((t) => `${t.kind} ${t.target}`).sort()).toEqual([
      'verify orders-eu',
      'verify orders-us',
    ]);
  });

  it('beside masters of 0.0.x, which register no kinds, offers the kinds of the policy, then of the records', async () => {
    const { m } = await live((f) => {
      f.state.masters = [older('old-a'), older('old-b')];
      f.state.policy = policy({ kinds: ['merge_wal', 'compact'] });
      f.state.tasks = [task(1, { kind: 'index_id' })];
    });
    await m.press('r');
    expect(offered(m)).toEqual({ kinds: ['merge_wal', 'compact', 'index_id'], picked: 'merge_wal' });
  });

  it('with no kind known yet, r says so instead of asking', async () => {
    const m = mountApp({
      data: { ...sampleFleet(), masters: [older('old-a')], policy: undefined, tasks: taskMap([]) },
    });
    mounted.push(m);
    // The fixture's cooldowns are of merge_wal: without them no record names a kind.
    await m.press('4', 'r');
    expect(m.frame()).toContain('Run merge_wal now on broken-store?');
    await m.press(KEY.escape);

    const bare = mountApp({
      data: {
        ...sampleFleet(),
        masters: [older('old-a')],
        policy: undefined,
        tasks: taskMap([]),
        cooldowns: new Map(),
      },
    });
    mounted.push(bare);
    await bare.press('4', 'r');
    expect(bare.frame()).toContain('no kind to offer yet: no live master has said which kinds it runs');
    expect(bare.api.calls).toEqual([]);
  });

  it('x, which ran one named kind, says r asks now, and the help names no kind', async () => {
    const m = mountApp({ size: { columns: 120, rows: 30 } });
    mounted.push(m);
    await m.press('4', 'x');
    expect(m.frame()).toContain('x is retired: r asks which kind to run');
    expect(m.frame()).not.toContain('Run ');
    await m.press('?');
    expect(m.frame()).toContain('in Stores, pick one the live masters run');
    expect(m.frame()).not.toMatch(/merge_wal|compact|index_id/);
    expect(m.api.calls).toEqual([]);
  });
});
