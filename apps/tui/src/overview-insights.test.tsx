import { afterEach, describe, expect, it } from 'vitest';
import { KEY, NOW, mountApp } from '../test/app-harness.js';
import { type FakeMaster, cooldown, policy, startFakeMaster } from '../test/fake-master.js';
import { MaintdClient } from './api/client.js';
import type { Capacity, FailureCause } from './api/types.js';
import { FleetFeed } from './data/feed.js';

type Mounted = ReturnType<typeof mountApp>;
const mounted: Mounted[] = [];
const feeds: FleetFeed[] = [];
const fakes: FakeMaster[] = [];
afterEach(async () => {
  for (const m of mounted.splice(0)) m.unmount();
  await Promise.all(feeds.splice(0).map((f) => f.stop()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

const CAUSE = '3fa2b1c9d0e4';

const capacity: Capacity = {
  window_secs: 3600,
  at: new Date(NOW).toISOString(),
  kinds: [
    {
      kind: 'merge_wal',
      slots: 4,
      busy_seconds: { success: 3000, failed: 1200 },
      failed_share: 1200 / 4200,
      tasks: 40,
      failed_tasks: 6,
      top: [
        { target: 'broken-store', busy_seconds: 1200, failed_seconds: 1200, tasks: 4, failed_tasks: 4 },
        { target: 'orders-eu', busy_seconds: 900, failed_seconds: 0, tasks: 10, failed_tasks: 0 },
      ],
    },
  ],
};

const causes: FailureCause[] = [
  {
    cause: CAUSE,
    example: 'http://w1:8080: HTTP 500: Not found: .../data/broken-store.lance\u001b]0;pwned\u0007',
    kinds: ['merge_wal', 'compact'],
    targets: 2,
    failures: 7,
    first_failure: new Date(NOW - 3_600_000).toISOString(),
    last_failure: new Date(NOW - 60_000).toISOString(),
  },
];

/**
 * The app on a real client and feed against a fake master, its clock fixed at NOW; its history
 * and bulk park go to the fake master too, which records the requests.
 */
async function live(setup: (f: FakeMaster) => void, readonly = false): Promise<{ fake: FakeMaster; m: Mounted }> {
  const fake = await startFakeMaster();
  fakes.push(fake);
  setup(fake);
  const client = new MaintdClient({ url: fake.url, timeoutMs: 5000 });
  const feed = new FleetFeed({ client, refreshMs: 60_000, flushMs: 10 });
  feeds.push(feed);
  feed.start();
  const m = mountApp({ feed, readonly, theme: { color: false }, size: { columns: 140, rows: 48 } });
  Object.assign(m.api, { bulkPark: client.bulkPark.bind(client), history: client.history.bind(client) });
  mounted.push(m);
  await waitFor(() => feed.getSnapshot().data.causes !== undefined && feed.getSnapshot().data.cooldowns !== undefined);
  await m.settle();
  return { fake, m };
}

async function waitFor(ok: () => boolean, ms = 15_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function withFleet(f: FakeMaster): void {
  f.state.capacity = capacity;
  f.state.causes = causes;
  f.state.cooldowns.set('merge_wal/broken-store', cooldown('broken-store', { cause: CAUSE }));
  f.state.cooldowns.set('compact/broken-store', cooldown('broken-store', { kind: 'compact', cause: CAUSE }));
  f.state.cooldowns.set('merge_wal/orders-us', cooldown('orders-us', { cause: 'aaaaaaaaaaaa' }));
  f.state.policy = policy({
    windows: [
      { kind: 'compact', spec: '22:00-05:00', tz: 'Europe/Paris', open: true, next_change: '2023-11-15T04:00:00Z' },
      { kind: 'index_id', spec: '01:00-03:00', tz: 'UTC', open: false, next_change: '2023-11-15T01:00:00Z' },
    ],
  });
}

describe('the Overview’s capacity, causes and windows', () => {
  it('shows each kind’s failed share of the last hour with its top stores, the top causes sanitised, and where each window stands at the dashboard’s clock', async () => {
    const { m } = await live(withFleet);
    const frame = m.frame();
    expect(frame).toMatch(/merge_wal\s+1h10m\s+20m00s\s+28\.6% failed\s+40 tasks, 6 failed/);
    expect(frame).toMatch(/>\s+broken-store\s+20m00s\s+20m00s\s+4 tasks, 4 failed/);
    expect(frame).toMatch(/orders-eu\s+15m00s\s+0s\s+10 tasks/);
    expect(frame).toMatch(
      new RegExp(`${CAUSE}\\s+2\\s+7\\s+http://w1:8080: HTTP 500: Not found: .../data/broken-store.lance`),
    );
    expect(frame).not.toContain('pwned');
    expect(frame).toContain('compact: in its window, closes 05:00 (in 5h46m)');
    expect(frame).toContain('index_id: outside its window, opens 01:00 (in 2h46m)');
  });

  it('opens a top store’s detail on Enter, as the Stores view does', async () => {
    const { fake, m } = await live(withFleet);
    await m.press('j');
    expect(m.frame()).toMatch(/>\s+orders-eu/);
    await m.press('k', KEY.enter);
    await waitFor(() => fake.state.requests.some((r) => r.startsWith('GET /api/v1/tasks?target=broken-store')));
    expect(m.frame()).toContain('broken-store');
    expect(m.frame()).not.toContain('Slot time, last hour');
    await m.press(KEY.escape);
    expect(m.frame()).toContain('Slot time, last hour');
  });

  it('parks the stores of a selected cause with P: a dry run counts them on the master, then the park sends cause=', async () => {
    const { fake, m } = await live(withFleet);
    await m.press('G', 'P');
    expect(m.frame()).toContain(`Park every store failing with cause ${CAUSE}?`);
    await m.press('restore planned', KEY.enter);
    await waitFor(() => m.frame().includes(`Park 2 stores failing with cause ${CAUSE}?`));
    expect(fake.state.requests).toContain(`PUT /api/v1/scheduler/cooldowns?cause=${CAUSE}&dry_run=true`);
    expect([...fake.state.cooldowns.values()].some((c) => c.parked)).toBe(false);
    await m.press('y');
    await waitFor(() => m.frame().includes(`parked 2 failing with cause ${CAUSE}`));
    expect(fake.state.requests).toContain(`PUT /api/v1/scheduler/cooldowns?cause=${CAUSE}&dry_run=false`);
    const parked = [...fake.state.cooldowns.values()].filter((c) => c.parked).map((c) => `${c.kind}/${c.target}`);
    expect(parked.sort()).toEqual(['compact/broken-store', 'merge_wal/broken-store']);
  });

  it('refuses P under --readonly and asks for a cause on another row', async () => {
    const { m } = await live(withFleet, true);
    await m.press('P');
    expect(m.frame()).toContain('read-only mode');
    const rw = await live(withFleet);
    await rw.m.press('P');
    expect(rw.m.frame()).toContain('P in the Overview parks the stores of a cause');
  });

  it('says once that a 0.1.0 master serves neither, and shows the rest without an error', async () => {
    const { m } = await live((f) => {
      f.state.legacy = true;
    });
    expect(m.frame()).toContain('not served by this master');
    expect(m.frame().match(/not served by this master/g)).toHaveLength(1);
    expect(m.frame()).not.toContain('read failed');
    expect(m.frame()).toContain('Masters 1');
    expect(m.frame()).toContain('● live');
  });
});
