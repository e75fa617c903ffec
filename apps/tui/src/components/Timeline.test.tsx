import { describe, expect, it } from 'vitest';
import { KEY, NOW, fakeApi, mountedEach, sampleFleet } from '../../test/app-harness.js';
import { cooldown, policy } from '../../test/fake-master.js';
import type { CooldownDetail, TimelineEvent } from '../api/types.js';
import { formatUntil } from '../format.js';
import { applyEvents, cooldownMap } from '../state/fleet.js';

const mount = mountedEach();

let seq = 0;
/** An event of merge_wal on broken-store, `s` seconds before now. */
function event(s: number, over: Partial<TimelineEvent> & { type: string }): TimelineEvent {
  seq++;
  return {
    id: `01a23766-0000-7000-8000-${String(100_000 - s * 10 + (seq % 10)).padStart(12, '0')}`,
    kind: 'merge_wal',
    target: 'broken-store',
    at_ms: NOW - s * 1000,
    at: new Date(NOW - s * 1000).toISOString(),
    ...over,
  };
}

/** The detail route's answer for broken-store, with these events (newest first). */
function detail(timeline: TimelineEvent[]): CooldownDetail {
  const entry = sampleFleet().cooldowns!.get('merge_wal/broken-store')!;
  return { kind: 'merge_wal', target: 'broken-store', entry, policy: policy(), applies: true, timeline };
}

const at = (s: number): string => formatUntil(NOW - s * 1000, NOW);

describe('the timeline in the Cooldowns detail pane', () => {
  it('Enter shows the pair’s timeline from one request: newest first, local times, the type, and who, why or which error', async () => {
    const timeline = [
      event(30, {
        type: 'failure',
        failures: 4,
        error_class: 'target',
        error: 'http://w1:8080: HTTP 500: Not found: a.lance',
      }),
      event(60, { type: 'parked', by: 'token@10.0.0.7', reason: 'disk swap', until_ms: null }),
      event(120, { type: 'reset', by: 'token@10.0.0.8', failures: 3 }),
      event(180, { type: 'manual_run', by: '10.0.0.9', task_id: '01a2-task' }),
    ];
    const api = fakeApi({ detail: { status: 'ok', detail: detail(timeline) } });
    const m = mount({ api, size: { columns: 120, rows: 36 } });
    await m.press('3', KEY.enter);
    const lines = m.lines();
    const top = lines.findIndex((l) => l.includes('Timeline (4, newest first)'));
    expect(top).toBeGreaterThan(0);
    expect(lines[top + 1]).toMatch(
      new RegExp(`${at(30)}\\s+failure\\s+#4 · target · http://w1:8080: HTTP 500: Not found: a\\.lance`),
    );
    expect(lines[top + 2]).toMatch(
      new RegExp(`${at(60)}\\s+parked\\s+by token@10\\.0\\.0\\.7 · disk swap · until released`),
    );
    expect(lines[top + 3]).toMatch(new RegExp(`${at(120)}\\s+reset\\s+by token@10\\.0\\.0\\.8 · 3 failures`));
    expect(lines[top + 4]).toMatch(new RegExp(`${at(180)}\\s+manual_run\\s+by 10\\.0\\.0\\.9 · task 01a2-task`));
    // One request answers it all: no task history read besides.
    expect(m.api.calls).toEqual([{ op: 'detail', kind: 'merge_wal', target: 'broken-store' }]);
    expect(m.frame()).not.toContain('History of this target');
  });

  it('stays live: a timeline event of the pair from the stream appears on top, another pair’s does not', async () => {
    const api = fakeApi({ detail: { status: 'ok', detail: detail([event(60, { type: 'failure', failures: 3 })]) } });
    const m = mount({ api, size: { columns: 120, rows: 30 } });
    await m.press('3', KEY.enter);
    expect(m.frame()).toContain('Timeline (1, newest first)');
    const data = m.source.getSnapshot().data;
    const mine = event(1, { type: 'reset', by: 'token@10.0.0.7', failures: 3 });
    const other = { ...event(1, { type: 'reset', by: 'someone-else' }), target: 'flaky-store' };
    m.source.set({
      data: applyEvents(data, [
        { type: 'timeline', revision: 9, event: mine },
        { type: 'timeline', revision: 10, event: other },
      ]),
    });
    await m.settle();
    const lines = m.lines();
    const top = lines.findIndex((l) => l.includes('Timeline (2, newest first)'));
    expect(lines[top + 1]).toMatch(/reset\s+by token@10\.0\.0\.7 · 3 failures/);
    expect(m.frame()).not.toContain('someone-else');
  });

  it('says when the master knows nothing of the pair, and shows a type of a later release as it came', async () => {
    const none = mount({ api: fakeApi({ detail: { status: 'none' } }) });
    await none.press('3', KEY.enter);
    expect(none.frame()).toContain('nothing recorded for this pair');
    const later = fakeApi({
      detail: { status: 'ok', detail: detail([event(5, { type: 'quarantined', by: 'ops', reason: 'bad disk' })]) },
    });
    const m = mount({ api: later, size: { columns: 100, rows: 30 } });
    await m.press('3', KEY.enter);
    expect(m.frame()).toMatch(/quarantined\s+by ops · bad disk/);
  });

  it('marks an entry that gates nothing, in the list and in the pane', async () => {
    const off = cooldown('old-window', { until_ms: NOW + 300_000, gating: false, last_error: 'HTTP 500: disk' });
    const data = { ...sampleFleet(), cooldowns: cooldownMap([off]) };
    const m = mount({ data, size: { columns: 120, rows: 30 } });
    await m.press('3');
    expect(m.frame()).toMatch(/merge_wal old-window\s+cooling .* not gating · HTTP 500: disk/);
    await m.press(KEY.enter);
    expect(m.frame()).toMatch(/gating\s+not gating: the master's policy does not count merge_wal/);
  });
});
