import { FakeClock } from '@maintd/core';
import { describe, expect, it, vi } from 'vitest';
import { KEY, NOW, fakeApi, type mountApp, mountedEach, sampleFleet, store, task } from '../test/app-harness.js';
import { cooldown, park, policy, startFakeMaster } from '../test/fake-master.js';
import { MaintdClient } from './api/client.js';
import type { Cooldown } from './api/types.js';
import { FleetFeed } from './data/feed.js';
import { applyEvents, cooldownMap } from './state/fleet.js';
import { EMPTY_FLEET, type FleetData } from './state/fleet-data.js';

type Mounted = ReturnType<typeof mountApp>;
const mount = mountedEach();

const ESC = '\u001b';

/** The selected row (the one with the › marker). */
const selectedLine = (m: Mounted): string | undefined => m.lines().find((l) => l.startsWith('>'));

/** `n` cooldowns `store-0000`…, the lowest number cooling longest (so first by time left). */
const numberedCooldowns = (n: number): Cooldown[] =>
  Array.from({ length: n }, (_, i) =>
    cooldown(`store-${String(i).padStart(4, '0')}`, { until_ms: NOW + 1000 * (10_000 - i) }),
  );

/** Waits past the clock's next turn of the second, the frame that draws the throttled counts. */
async function nextSecond(m: Mounted): Promise<void> {
  await new Promise((r) => setTimeout(r, 1100));
  await m.settle();
}

describe('views', () => {
  it('the Overview shows masters, queue by kind, running tasks, recent outcomes and cooling against the guard', async () => {
    const m = mount({ guardPercent: 25, size: { columns: 100, rows: 34 } });
    await m.settle();
    const f = m.frame();
    expect(f).toContain('Masters 1');
    expect(f).toContain('master-a');
    expect(f).toContain('1 ok · 1 failing');
    expect(f).toMatch(/merge_wal\s+1\s+1\s+1\s+1/); // queued, running, done 5m, failed 5m
    expect(f).toContain('share vs guard 25%');
    expect(f).toMatch(/merge_wal\s+1\s+3\s+▮+▯*\s+33\.3% OVER/);
    expect(f).toContain('Running 1');
    expect(f).toMatch(/▶ running\s+merge_wal orders-eu/);
    expect(f).toMatch(/✗ failed\s+merge_wal broken-store .* http:\/\/w1:8080: HTTP 500: Not found/);
    expect(f).toMatch(/✓ done\s+merge_wal store-1/);
  });

  it('the Overview lists the worst offenders (longest cooling, then most failures) and the parked stores', async () => {
    const data = sampleFleet();
    const cds = [
      ...data.cooldowns!.values(),
      cooldown('long-one', {
        failures: 6,
        until_ms: NOW + 5 * 3600_000,
        last_error: 'http://w2:8080: HTTP 500: disk gone (merged 0 generations across 0/2 workers)',
      }),
      cooldown('parked-one', { parked: park('restore planned Monday') }),
    ];
    const m = mount({ data: { ...data, cooldowns: cooldownMap(cds) }, size: { columns: 100, rows: 40 } });
    await m.settle();
    const lines = m.lines();
    const top = lines.findIndex((l) => l.startsWith('Worst offenders'));
    expect(lines[top + 1]).toMatch(/merge_wal long-one\s+6\/3\s+5h00m\s+http:\/\/w2:8080: HTTP 500: disk gone/);
    expect(lines[top + 2]).toMatch(/merge_wal broken-store\s+4\/3\s+10m00s/);
    expect(lines[top + 3]).toMatch(/merge_wal flaky-store\s+1\/3\s+below/);
    expect(m.frame()).not.toMatch(/Worst offenders[\s\S]*parked-one[\s\S]*Parked/);
    expect(m.frame()).toMatch(
      /Parked 1\n\s+merge_wal parked-one\s+restore planned Monday\s+by token@127\.0\.0\.1 1m00s ago/,
    );
  });

  it('the Overview gauges cooling against the master’s guard from its policy; --guard-percent overrides it', async () => {
    const data = { ...sampleFleet(), policy: policy({ guard_percent: 50 }) };
    const fromPolicy = mount({ data });
    await fromPolicy.settle();
    expect(fromPolicy.frame()).toContain('share vs guard 50%');
    expect(fromPolicy.frame()).not.toContain('OVER');
    const overridden = mount({ data, guardPercent: 10 });
    await overridden.settle();
    expect(overridden.frame()).toContain('share vs guard 10%');
    expect(overridden.frame()).toContain('33.3% OVER');
  });

  it('the Tasks view lists state, kind, target, timing and outcome, newest first', async () => {
    const m = mount({ size: { columns: 140, rows: 24 } });
    await m.press('2');
    const lines = m.lines();
    expect(lines[2]).toMatch(/STATE\s+KIND\s+TARGET\s+SOURCE\s+TRY\s+AGE\s+TIME\s+OUTCOME/);
    expect(lines[3]).toMatch(/queued\s+merge_wal orders-us/);
    // A failure's outcome shows its cause first.
    expect(m.frame()).toMatch(
      /failed\s+merge_wal broken-store .* http:\/\/w1:8080: HTTP 500: Not found: \/srv\/stores/,
    );
    expect(m.frame()).toMatch(/done\s+merge_wal store-1 .*merged 12 generations/);
  });

  it('the Cooldowns view shows the state, the count against the threshold, time left, until when, the next window and the cause', async () => {
    const m = mount({ size: { columns: 120, rows: 24 } });
    await m.press('3');
    const f = m.frame();
    expect(f).toMatch(/KIND\s+TARGET\s+STATE\s+FAILS\s+LEFT\s+UNTIL\s+NEXT\s+LAST FAIL CAUSE/);
    // Until in local time; the next window by the policy: 600 s · 2^(5−3), jitter-shortened.
    expect(f).toMatch(
      /merge_wal broken-store\s+cooling\s+4\/3\s+10m00s\s+\d\d:\d\d:\d\d\s+39m58s\s+30s ago http:\/\/w1:8080: HTTP 500: Not fo/,
    );
    expect(f).toMatch(/merge_wal flaky-store\s+below\s+1\/3\s+-\s+-\s+-\s+0s ago HTTP 500: disk full/);
  });

  it('a cooldown that lapsed reads lapsed, with when it ended, not "expired expired"', async () => {
    const data = {
      ...sampleFleet(),
      cooldowns: cooldownMap([cooldown('old-one', { failures: 3, until_ms: NOW - 60_000 })]),
    };
    const m = mount({ data, size: { columns: 120, rows: 24 } });
    await m.press('3');
    expect(m.frame()).not.toContain('expired');
    // The window a failure now would open: 600 s · 2^(4−3), jitter-shortened.
    expect(m.frame()).toMatch(/merge_wal old-one\s+lapsed\s+3\/3\s+-\s+\d\d:\d\d:\d\d\s+18m13s/);
  });

  it('a window ending on another day shows its date', async () => {
    const data = {
      ...sampleFleet(),
      cooldowns: cooldownMap([cooldown('far', { failures: 9, until_ms: NOW + 30 * 3600_000 })]),
    };
    const m = mount({ data, size: { columns: 120, rows: 24 } });
    await m.press('3');
    // The next window is capped at max_secs (6 h), jitter-shortened.
    expect(m.frame()).toMatch(/merge_wal far\s+cooling\s+9\/3\s+30h00m\s+\d\d-\d\d \d\d:\d\d\s+5h28m/);
  });

  it('the cause column leads with the error, also for an executor that threw', async () => {
    const data = {
      ...sampleFleet(),
      cooldowns: cooldownMap([
        cooldown('threw', {
          last_error: 'executor failed: http://w2:8080: HTTP 500: Not found: /data/x.lance',
        }),
      ]),
    };
    const m = mount({ data, size: { columns: 80, rows: 24 } });
    await m.press('3');
    expect(m.frame()).toMatch(/CAUSE\n.*merge_wal threw\s+cooling\s+3\/3\s+10m00s http:\/\/w2:8080: HTTP 5~/);
  });

  it('a parked row reads parked, with its reason and who parked it', async () => {
    const data = {
      ...sampleFleet(),
      cooldowns: cooldownMap([
        cooldown('held', { failures: 0, until_ms: null, last_error: '', parked: park('disk replaced Monday') }),
      ]),
    };
    const m = mount({ data, size: { columns: 160, rows: 24 } });
    await m.press('3');
    expect(m.frame()).toMatch(
      /merge_wal held\s+parked\s+0\/3\s+-\s+-\s+-\s+\S+ ago disk replaced Monday \(parked by token@127\.0\.0\.1\)/,
    );
  });

  it('the Cooldowns view counts the time left down live', async () => {
    const clock = new FakeClock(NOW);
    const m = mount({ clock, now: () => clock.now(), tickMs: 1000 });
    await m.press('3');
    expect(m.frame()).toContain('10m00s');
    await clock.advance(61_000);
    await m.settle();
    expect(m.frame()).toContain('8m59s');
  });

  it('the Stores view lists the biggest backlog first with its cooling state', async () => {
    const m = mount();
    await m.press('4');
    const lines = m.lines();
    // CHANGED: when a scan last changed the row (the master rewrites a row only then).
    expect(lines[2]).toMatch(/STORE\s+PENDING\s+FRAGS\s+ROWS\s+OWNERS\s+CHANGED\s+COOLING/);
    expect(lines[3]).toMatch(/broken-store\s+7,985\s+41 .* merge_wal 10m00s/);
    expect(lines[4]).toMatch(/orders-eu\s+40/);
    expect(lines[5]).toMatch(/orders-us\s+12/);
  });

  it('the Workers view shows each endpoint’s health, stores and error, failing first', async () => {
    const m = mount();
    await m.press('5');
    const lines = m.lines();
    expect(lines[3]).toMatch(/http:\/\/w2:8080\s+failing\s+0\s+2s ago connection refused/);
    expect(lines[4]).toMatch(/http:\/\/w1:8080\s+ok\s+3/);
  });

  it('says "loading…" before the first read and what an empty list means after it', async () => {
    const m = mount({ data: EMPTY_FLEET });
    await m.press('3');
    expect(m.frame()).toContain('loading…');
    m.source.set({ data: { ...EMPTY_FLEET, cooldowns: new Map() } });
    await m.settle();
    expect(m.frame()).toContain('no cooldowns: no store is failing');
  });
});

describe('keys', () => {
  it('1–5, Tab and Shift+Tab switch views, and the tab bar shows the counts', async () => {
    const m = mount();
    await m.settle();
    expect(m.lines()[1]).toMatch(/1 Overview\s+2 Tasks 4\s+3 Cooldowns 2\s+4 Stores 3\s+5 Workers 2/);
    await m.press(KEY.tab);
    expect(m.frame()).toContain('OUTCOME');
    await m.press(KEY.tab);
    expect(m.frame()).toContain('CAUSE');
    await m.press(KEY.shiftTab, KEY.shiftTab);
    expect(m.frame()).toContain('Worst offenders');
    await m.press('5');
    expect(m.frame()).toContain('ENDPOINT');
  });

  it('j/k and the arrows move the selection; g and G jump to the ends', async () => {
    const m = mount();
    await m.press('4');
    expect(selectedLine(m)).toMatch(/broken-store/);
    await m.press('j');
    expect(selectedLine(m)).toMatch(/orders-eu/);
    await m.press(KEY.down);
    expect(selectedLine(m)).toMatch(/orders-us/);
    await m.press('k', KEY.up);
    expect(selectedLine(m)).toMatch(/broken-store/);
    await m.press('G');
    expect(selectedLine(m)).toMatch(/orders-us/);
    await m.press('g');
    expect(selectedLine(m)).toMatch(/broken-store/);
    expect(m.frame()).toMatch(/1\/3\s*$/m);
  });

  it('/ filters the list as you type; Enter keeps the filter; Esc clears it', async () => {
    const m = mount();
    await m.press('4', '/', 'o', 'r', 'd');
    expect(m.frame()).toContain('/ord');
    expect(m.frame()).not.toContain('broken-store');
    expect(m.frame()).toMatch(/1\/2 of 3/);
    await m.press(KEY.enter);
    expect(m.frame()).toMatch(/\/ord\s+sort: backlog\s+1\/2 of 3/);
    await m.press('/', 'zz');
    expect(m.frame()).toContain('nothing matches “ordzz”');
    await m.press(KEY.escape);
    expect(m.frame()).toContain('broken-store');
  });

  it('s cycles the sort and the status line names it', async () => {
    const m = mount();
    await m.press('4');
    expect(m.frame()).toContain('sort: backlog');
    await m.press('s', 's', 's');
    expect(m.frame()).toContain('sort: name');
    const rows = m
      .lines()
      .slice(3, 6)
      .map((l) => l.slice(2).split(/\s+/)[0]);
    expect(rows).toEqual(['broken-store', 'orders-eu', 'orders-us']);
    await m.press('s');
    expect(m.frame()).toContain('sort: backlog');
  });

  it('Enter opens the detail pane with the full last error, and from a master without timelines the target’s task history; Esc goes back', async () => {
    const history = [task(7, { target: 'broken-store', state: 'failed', error: 'HTTP 500: Not found' })];
    const api = fakeApi({ history, detail: { status: 'unsupported' } });
    const m = mount({ api, size: { columns: 100, rows: 30 } });
    await m.press('3', KEY.enter);
    const f = m.frame();
    expect(f).toContain('Cooldown merge_wal broken-store');
    expect(f).toContain('time left      10m00s');
    expect(f).toMatch(/until\s+2023-11-1\d \d\d:\d\d:\d\d [+-]\d\d:\d\d/);
    expect(f).toMatch(/failures\s+4\/3 \(a window opens at 3\)/);
    expect(f).toContain('next window    39m58s if it fails again');
    // The whole error, wrapped over lines: nothing cut off.
    expect(f.replace(/[\s│]+/g, ' ')).toContain(
      'http://w1:8080: HTTP 500: Not found: /srv/stores/broken-store/data/4b1d2c9e.lance (merged 0 generations across 0/2 workers)',
    );
    expect(f).toContain('timeline needs a newer master');
    expect(f).toContain('History of this target');
    expect(f).toMatch(/failed\s+merge_wal .* HTTP 500: Not found/);
    expect(m.api.calls).toEqual([
      { op: 'detail', kind: 'merge_wal', target: 'broken-store' },
      { op: 'history', target: 'broken-store' },
    ]);
    await m.press(KEY.escape);
    expect(m.frame()).toContain('CAUSE');
  });

  it('? shows the help overlay and Esc closes it', async () => {
    const m = mount();
    await m.press('?');
    expect(m.frame()).toContain('Keys');
    expect(m.frame()).toMatch(/Space\s+mark \/ unmark a row/);
    await m.press(KEY.escape);
    expect(m.frame()).toContain('Worst offenders');
  });

  it('q quits', async () => {
    const onQuit = vi.fn();
    const m = mount({ onQuit });
    await m.press('q');
    expect(onQuit).toHaveBeenCalledOnce();
  });
});

describe('actions', () => {
  it('c asks to reset the selected cooldown, y resets it through the API and says so', async () => {
    const m = mount();
    await m.press('3', 'c');
    expect(m.frame()).toContain('Reset 1 cooldown?');
    expect(m.frame()).toContain('merge_wal broken-store');
    expect(m.api.calls).toEqual([]);
    await m.press('y');
    await m.settle();
    expect(m.api.calls).toEqual([{ op: 'reset', kind: 'merge_wal', target: 'broken-store' }]);
    expect(m.frame()).toContain('reset the cooldown of merge_wal broken-store');
    expect(m.source.refreshes).toBe(1);
  });

  it('Space marks rows, and the confirm dialog counts them: "Reset 2 cooldowns?"', async () => {
    const m = mount();
    await m.press('3', KEY.space, KEY.space);
    expect(m.frame()).toContain('2 marked');
    expect(m.lines().filter((l) => l.startsWith(' *') || l.startsWith('>*'))).toHaveLength(2);
    await m.press('c');
    expect(m.frame()).toContain('Reset 2 cooldowns?');
    await m.press(KEY.enter);
    await m.settle();
    expect(m.api.calls.map((c) => c.target).sort()).toEqual(['broken-store', 'flaky-store']);
    expect(m.frame()).toContain('reset 2 of 2 cooldowns');
    expect(m.frame()).not.toContain('marked');
  });

  it('n or Esc cancels the dialog without calling the API', async () => {
    const m = mount();
    await m.press('3', 'c', 'n');
    expect(m.frame()).toContain('cancelled');
    await m.press('c', KEY.escape);
    expect(m.frame()).not.toContain('Reset 1 cooldown?');
    expect(m.api.calls).toEqual([]);
  });

  it('r runs the selected target now (manual enqueue) after confirming', async () => {
    const m = mount();
    await m.press('4', 'j', 'r');
    expect(m.frame()).toContain('Run merge_wal now on orders-eu?');
    expect(m.frame()).toContain('never cooldown-gated');
    await m.press('y');
    await m.settle();
    expect(m.api.calls).toEqual([{ op: 'enqueue', kind: 'merge_wal', target: 'orders-eu' }]);
    expect(m.frame()).toContain('enqueued merge_wal on orders-eu');
  });

  it('a failed action shows the master’s error in the status line', async () => {
    const m = mount({
      api: fakeApi({ fail: 'HTTP 401: missing or invalid bearer token' }),
      size: { columns: 140, rows: 24 },
    });
    await m.press('3', 'c', 'y');
    await m.settle();
    expect(m.frame()).toContain(
      'reset 0 of 1 cooldowns; failed: broken-store: HTTP 401: missing or invalid bearer token',
    );
  });

  it('--readonly disables actions, says so, and the header shows READ-ONLY', async () => {
    const m = mount({ readonly: true });
    await m.press('3');
    expect(m.lines()[0]).toContain('READ-ONLY');
    expect(m.frame()).not.toContain('c reset');
    for (const k of ['c', 'r', 'x']) {
      await m.press(k);
      expect(m.frame()).toContain('read-only mode (--readonly): actions are disabled');
      expect(m.frame()).not.toMatch(/Reset|Run .* now/);
    }
    await m.press(KEY.space, 'c');
    expect(m.api.calls).toEqual([]);
  });
});

describe('park and release', () => {
  it('p asks why, then confirms, then parks the selected cooldown through the API and logs it', async () => {
    const m = mount({ size: { columns: 100, rows: 30 } });
    await m.press('3', 'p');
    expect(m.frame()).toContain('Park merge_wal broken-store?');
    expect(m.frame()).toContain('Why?');
    await m.press('fragment lost, restore Monday');
    expect(m.frame()).toContain('fragment lost, restore Monday');
    await m.press(KEY.enter);
    // Enter took the reason: the confirm dialog, nothing sent yet.
    expect(m.frame()).toContain('Park merge_wal broken-store?');
    expect(m.frame()).toContain('Reason: fragment lost, restore Monday');
    expect(m.frame()).toContain('The sweeps skip them until released (u)');
    expect(m.api.calls).toEqual([]);
    await m.press('y');
    await m.settle();
    expect(m.api.calls).toEqual([
      { op: 'park', kind: 'merge_wal', target: 'broken-store', reason: 'fragment lost, restore Monday' },
    ]);
    expect(m.frame()).toContain('parked merge_wal broken-store: fragment lost, restore Monday');
    expect(m.source.refreshes).toBe(1);
    // The activity log on the Overview has it.
    await m.press('1');
    expect(m.frame()).toMatch(/Activity\n\s+0s ago\s+parked merge_wal broken-store: fragment lost, restore Monday/);
  });

  it('p on a store parks every kind the master counts', async () => {
    const m = mount({ size: { columns: 100, rows: 30 } });
    await m.press('4', 'p');
    expect(m.frame()).toContain('Park 3 targets?');
    await m.press('broken disk', KEY.enter, 'y');
    await m.settle();
    expect(m.api.calls.map((c) => `${c.op} ${c.kind} ${c.target} ${c.reason}`).sort()).toEqual([
      'park compact broken-store broken disk',
      'park index_id broken-store broken disk',
      'park merge_wal broken-store broken disk',
    ]);
  });

  it('a kind only a newer master runs gets its Overview lines, and a store is parked for it too', async () => {
    const data = sampleFleet();
    const older = data.masters![0]!;
    const newer = { ...older, id: 'master-b', version: '9.9.9', kinds: [...(older.kinds ?? []), 'repair'] };
    // No policy read yet: a store is parked for every kind the fleet shows.
    const m = mount({
      data: { ...data, masters: [older, newer], policy: undefined },
      size: { columns: 100, rows: 40 },
    });
    await m.settle();
    expect(m.frame()).toMatch(/ {2}repair\s+–\s+–\s+0\s+0\n/); // queue line: no count read for it yet
    expect(m.frame()).toMatch(/ {2}repair\s+0\s+3\s+▯+\s+0\.0%/); // cooling line
    await m.press('4', 'p', 'broken disk', KEY.enter, 'y');
    await m.settle();
    expect(m.api.calls.map((c) => `${c.op} ${c.kind}`).sort()).toEqual([
      'park compact',
      'park index_id',
      'park merge_wal',
      'park repair',
    ]);
  });

  it('an empty reason is refused, and Esc cancels the park without calling the API', async () => {
    const m = mount();
    await m.press('3', 'p', KEY.enter);
    expect(m.frame()).toContain('a park needs a reason (Esc cancels)');
    expect(m.frame()).toContain('Why?');
    await m.press(KEY.escape);
    expect(m.frame()).toContain('cancelled');
    expect(m.frame()).not.toContain('Why?');
    expect(m.api.calls).toEqual([]);
  });

  it('u releases a parked row after confirming; on a row that is not parked it says so', async () => {
    const data = {
      ...sampleFleet(),
      cooldowns: cooldownMap([
        cooldown('held', { until_ms: NOW + 1_200_000, parked: park('disk replaced Monday') }),
        cooldown('free', { until_ms: NOW + 600_000 }),
      ]),
    };
    const m = mount({ data });
    await m.press('3', 'u');
    expect(m.frame()).toContain('Release merge_wal held?');
    expect(m.frame()).toContain('their failure counts start over');
    await m.press('y');
    await m.settle();
    expect(m.api.calls).toEqual([{ op: 'release', kind: 'merge_wal', target: 'held' }]);
    expect(m.frame()).toContain('released merge_wal held');
    await m.press('j', 'u');
    expect(m.frame()).toContain('not parked: nothing to release');
    expect(m.api.calls).toHaveLength(1);
  });

  it('shows the master’s error when a park fails, without throwing', async () => {
    const m = mount({
      api: fakeApi({ fail: 'HTTP 401: missing or invalid bearer token' }),
      size: { columns: 140, rows: 24 },
    });
    await m.press('3', 'p', 'why', KEY.enter, 'y');
    await m.settle();
    expect(m.frame()).toContain(
      'park merge_wal broken-store failed for 1: broken-store: HTTP 401: missing or invalid bearer token',
    );
  });

  it('parks and releases seen on the event stream show in the activity log', async () => {
    const m = mount({ size: { columns: 100, rows: 40 } });
    await m.settle();
    const data = sampleFleet();
    const parkedEntry = cooldown('orders-eu', {
      failures: 0,
      until_ms: null,
      last_error: '',
      parked: park('noisy neighbour'),
    });
    const next = applyEvents(
      data,
      [{ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'orders-eu', cooldown: parkedEntry }],
      NOW,
    );
    m.source.set({ data: next });
    await m.settle();
    expect(m.frame()).toMatch(/Parked 1\n\s+merge_wal orders-eu\s+noisy neighbour/);
    expect(m.frame()).toMatch(/1m00s ago\s+parked merge_wal orders-eu \(token@127\.0\.0\.1\): noisy neighbour/);
    m.source.set({
      data: applyEvents(
        next,
        [{ type: 'cooldown', revision: 2, kind: 'merge_wal', target: 'orders-eu', cooldown: null }],
        NOW,
      ),
    });
    await m.settle();
    expect(m.frame()).toMatch(/0s ago\s+released merge_wal orders-eu/);
  });

  it('--readonly refuses p and u too', async () => {
    const m = mount({ readonly: true });
    for (const k of ['p', 'u']) {
      await m.press('3', k);
      expect(m.frame()).toContain('read-only mode (--readonly): actions are disabled');
    }
    expect(m.api.calls).toEqual([]);
  });
});

describe('data and screen', () => {
  it('keeps the selection on the same item when a refresh reorders the rows', async () => {
    const m = mount();
    await m.press('4', 'j');
    expect(selectedLine(m)).toMatch(/orders-eu/);
    const data = sampleFleet();
    m.source.set({
      data: {
        ...data,
        stores: [store('new-big', 90_000), store('broken-store', 7985), store('orders-us', 12), store('orders-eu', 40)],
      },
    });
    await m.settle();
    expect(m.lines()[3]).toMatch(/new-big/);
    expect(selectedLine(m)).toMatch(/orders-eu/);
  });

  it('renders only the visible rows of 10,000 cooldowns, and G reaches the last one', async () => {
    const many: Cooldown[] = Array.from({ length: 10_000 }, (_, i) =>
      cooldown(`store-${String(i).padStart(5, '0')}`, { until_ms: NOW + 1000 * (10_000 - i) }),
    );
    const m = mount({
      data: { ...EMPTY_FLEET, cooldowns: cooldownMap(many), storesTotal: 10_000 },
      size: { columns: 120, rows: 24 },
    });
    await m.press('3');
    const rows = m.lines().filter((l) => / store-\d{5} /.test(l));
    expect(rows).toHaveLength(24 - 5); // the screen minus header, tabs, column titles, status, spare line
    expect(rows[0]).toContain('store-00000');
    expect(m.frame()).toContain('1/10,000');
    await m.press('G');
    expect(selectedLine(m)).toContain('store-09999');
    expect(m.frame()).not.toContain('store-00000');
    await m.press(KEY.pageUp);
    expect(m.frame()).toContain(`${10_000 - 19}/10,000`);
    expect(m.lines().length).toBeLessThanOrEqual(23);
  });

  it('draws no frame for live changes that leave the screen alike, and one for a change on screen', async () => {
    const many: Cooldown[] = numberedCooldowns(1000);
    let data: FleetData = { ...EMPTY_FLEET, cooldowns: cooldownMap(many), storesTotal: 1000 };
    const m = mount({ data, size: { columns: 120, rows: 24 } });
    await m.press('3');
    const drawn = m.frameCount();
    // 25 changes far below the window (and the count unchanged): nothing on screen moves.
    const below = Array.from({ length: 25 }, (_, i) => {
      const target = `store-${String(900 + i).padStart(4, '0')}`;
      return {
        type: 'cooldown' as const,
        revision: i,
        kind: 'merge_wal' as const,
        target,
        cooldown: cooldown(target, { until_ms: NOW + 500 + i, failures: 5 }),
      };
    });
    data = applyEvents(data, below, NOW);
    m.source.set({ data });
    await m.settle();
    expect(m.frameCount()).toBe(drawn);
    // A change to the second row is on screen: one frame, with it.
    const target = 'store-0001';
    data = applyEvents(
      data,
      [
        {
          type: 'cooldown',
          revision: 99,
          kind: 'merge_wal',
          target,
          cooldown: cooldown(target, { until_ms: NOW + 9_999_000, failures: 8 }),
        },
      ],
      NOW,
    );
    m.source.set({ data });
    await m.settle();
    expect(m.frameCount()).toBe(drawn + 1);
    expect(m.lines()[4]).toMatch(/store-0001\s+cooling\s+8\s/);
  });

  it('draws a change of the tab counts alone at most once a second', async () => {
    const many: Cooldown[] = numberedCooldowns(100);
    let data: FleetData = { ...EMPTY_FLEET, cooldowns: cooldownMap(many), storesTotal: 100, tasks: new Map() };
    const m = mount({ data, size: { columns: 120, rows: 24 } });
    await m.press('3');
    const drawn = m.frameCount();
    // New tasks: only the Tasks tab's count moves.
    for (let i = 0; i < 5; i++) {
      data = applyEvents(data, [{ type: 'task', revision: i, task: task(500 + i) }], NOW);
      m.source.set({ data });
      await m.settle();
    }
    expect(m.frameCount()).toBe(drawn);
    await nextSecond(m);
    expect(m.frameCount()).toBe(drawn + 1);
    expect(m.lines()[1]).toContain('2 Tasks 5');
  });

  it('draws a change of the list’s length alone (a row gone far below the window) with the counts, not at once', async () => {
    const many: Cooldown[] = numberedCooldowns(100);
    let data: FleetData = { ...EMPTY_FLEET, cooldowns: cooldownMap(many), storesTotal: 100 };
    const m = mount({ data, size: { columns: 120, rows: 24 } });
    await m.press('3');
    expect(m.frame()).toContain('1/100');
    const drawn = m.frameCount();
    data = applyEvents(
      data,
      [{ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'store-0090', cooldown: null }],
      NOW,
    );
    m.source.set({ data });
    await m.settle();
    expect(m.frameCount()).toBe(drawn);
    await nextSecond(m);
    expect(m.frameCount()).toBe(drawn + 1);
    expect(m.frame()).toContain('1/99');
  });

  it('moves a changed row into its sorted place without rebuilding the list', async () => {
    const data: FleetData = {
      ...sampleFleet(),
      cooldowns: cooldownMap(['a', 'b', 'c'].map((t, i) => cooldown(t, { until_ms: NOW + 60_000 * (i + 1) }))),
    };
    const m = mount({ data });
    await m.press('3');
    expect(
      m
        .lines()
        .slice(3, 6)
        .map((l) => l.split(/\s+/)[2]),
    ).toEqual(['c', 'b', 'a']);
    const next = applyEvents(
      data,
      [
        {
          type: 'cooldown',
          revision: 1,
          kind: 'merge_wal',
          target: 'a',
          cooldown: cooldown('a', { until_ms: NOW + 600_000 }),
        },
      ],
      NOW,
    );
    expect(next.cooldowns).toBe(data.cooldowns); // changed in place, not copied
    m.source.set({ data: next });
    await m.settle();
    expect(
      m
        .lines()
        .slice(3, 6)
        .map((l) => l.split(/\s+/)[2]),
    ).toEqual(['a', 'c', 'b']);
  });

  it('shows the connection state: connecting, live, polling, and disconnected with the error', async () => {
    const m = mount({ size: { columns: 140, rows: 24 } });
    m.source.set({ connection: { state: 'connecting', error: undefined } });
    await m.settle();
    expect(m.lines()[0]).toContain('connecting…');
    m.source.set({ connection: { state: 'live' } });
    await m.settle();
    expect(m.lines()[0]).toContain('● live');
    m.source.set({ connection: { state: 'polling', error: 'events: HTTP 503' } });
    await m.settle();
    expect(m.lines()[0]).toContain('◐ polling  events down (events: HTTP 503)');
    m.source.set({ connection: { state: 'disconnected', error: 'connection refused', lastUpdateMs: NOW - 12_000 } });
    await m.settle();
    expect(m.lines()[0]).toContain('○ disconnected  connection refused; retrying; data from 12s ago');
  });

  it('colours by state, and under NO_COLOR uses no colour at all', async () => {
    const colour = mount({ theme: { color: true } });
    await colour.press('3');
    expect(colour.raw()).toContain(`${ESC}[31mcooling`); // red
    expect(colour.raw()).toContain(`${ESC}[33mbelow`); // yellow
    const plain = mount({ theme: { color: false } });
    await plain.press('3');
    expect(plain.frame()).toContain('cooling');
    // Foreground/background colour codes: 30–37, 39–47, 49, 90–97, 100–107, 38;… and 48;…
    expect(plain.raw()).not.toMatch(new RegExp(`${ESC}\\[(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m`));
  });

  it('fits 80×24 by dropping columns, and shows them all on a wide terminal', async () => {
    const small = mount({ size: { columns: 80, rows: 24 } });
    await small.press('3');
    const lines = small.lines();
    expect(lines.length).toBeLessThanOrEqual(23);
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(80);
    expect(small.frame()).not.toContain('LAST FAIL');
    expect(small.frame()).toMatch(/KIND\s+TARGET\s+STATE\s+FAILS\s+LEFT CAUSE/);
    const wide = mount({ size: { columns: 200, rows: 50 } });
    await wide.press('3');
    expect(wide.frame()).toMatch(/UNTIL\s+NEXT\s+LAST FAIL CAUSE/);
    expect(wide.frame()).toContain('/srv/stores/broken-store/data/4b1d2c9e.lance');
  });

  it('asks for a larger terminal below 80×24 instead of drawing a wrapped mess', async () => {
    const m = mount({ size: { columns: 70, rows: 20 } });
    await m.settle();
    expect(m.frame().replace(/\s+/g, ' ')).toBe(
      'maintd-top needs at least 80×24; this terminal is 70×20. Enlarge it, or press q to quit.',
    );
  });

  it('fills an 80×30 Overview exactly, giving the spare lines to recent outcomes', async () => {
    const data = sampleFleet();
    const many = [...data.tasks!.values(), ...Array.from({ length: 30 }, (_, i) => task(100 + i))];
    const m = mount({ data: { ...data, tasks: new Map(many.map((t) => [t.id, t])) }, size: { columns: 80, rows: 30 } });
    await m.settle();
    const lines = m.lines();
    expect(lines).toHaveLength(29);
    expect(lines.at(-1)).toContain('? help');
    expect(lines.at(-2)).toMatch(/✓ done/);
  });

  it('keeps the worst offenders and running tasks on an 80×24 Overview, dropping what does not fit', async () => {
    const m = mount({ size: { columns: 80, rows: 24 } });
    await m.settle();
    const lines = m.lines();
    expect(lines).toHaveLength(23);
    expect(m.frame()).toContain('Worst offenders');
    expect(m.frame()).toContain('Running 1');
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(80);
  });

  it('never lets terminal escapes from workers reach the screen (real client against a fake master)', async () => {
    const fake = await startFakeMaster();
    fake.state.cooldowns.set(
      'merge_wal/evil',
      cooldown('evil', {
        until_ms: Date.now() + 600_000,
        last_error: 'boom\u001b[2J\u001b]0;pwned\u0007\u001b[31m red\r\nnext',
      }),
    );
    const client = new MaintdClient({ url: fake.url, timeoutMs: 1000 });
    const feed = new FleetFeed({ client, refreshMs: 100 });
    feed.start();
    try {
      const m = mount({ feed, now: Date.now, theme: { color: false } });
      await m.press('3');
      for (let i = 0; i < 100 && !m.frame().includes('evil'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(m.frame()).toContain('boom red next');
      expect(m.raw()).not.toContain('\u001b[2J');
      expect(m.raw()).not.toContain('\u001b]');
      expect(m.raw()).not.toContain('pwned');
      expect(m.raw()).not.toContain('\r');
    } finally {
      await feed.stop();
      await fake.close();
    }
  });
});
