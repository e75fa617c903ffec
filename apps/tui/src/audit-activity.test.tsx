import { describe, expect, it } from 'vitest';
import { KEY, NOW, mountedEach, sampleFleet } from '../test/app-harness.js';
import { auditEntry, cooldown, park } from '../test/fake-master.js';
import { applyEvents } from './state/fleet.js';

const mount = mountedEach();

describe('the audit trail in the activity log', () => {
  it('says who did what; this dashboard’s own action is marked (you) and shown once', async () => {
    const m = mount({ size: { columns: 110, rows: 40 } });
    await m.press('3', 'p', 'fragment lost', KEY.enter, 'y');
    await m.settle();
    expect(m.api.calls.at(-1)).toMatchObject({ op: 'park', target: 'broken-store' });
    // What the master's stream then brings: the park, its audit entry, and another operator's reset.
    const parked = cooldown('broken-store', {
      parked: park('fragment lost', { parked_at_ms: NOW, by: 'alice@10.0.0.5' }),
    });
    const events = [
      { type: 'cooldown' as const, revision: 5, kind: 'merge_wal', target: 'broken-store', cooldown: parked },
      {
        type: 'audit' as const,
        revision: 5,
        entry: auditEntry({
          action: 'cooldown.park',
          target: 'broken-store',
          outcome: 'parked',
          reason: 'fragment lost',
          at_ms: NOW,
        }),
      },
      {
        type: 'audit' as const,
        revision: 6,
        entry: auditEntry({
          id: '01a23766-aaaa-7000-8000-000000000002',
          who: 'bob',
          client: '10.0.0.7',
          kind: 'compact',
          target: 'orders-eu',
          at_ms: NOW,
        }),
      },
    ];
    m.source.set({ data: applyEvents(sampleFleet(), events, NOW) });
    await m.press('1');
    await m.settle();
    const frame = m.frame();
    const activity = frame.slice(frame.indexOf('Activity'));
    expect(activity).toMatch(/0s ago\s+alice@10\.0\.0\.5 \(you\) parked merge_wal on broken-store: fragment lost/);
    expect(activity).toMatch(/0s ago\s+bob@10\.0\.0\.7 reset compact cooldown of orders-eu/);
    // Neither the dashboard's own line nor the stream's park note repeats it.
    expect(activity).not.toContain('parked merge_wal broken-store');
  });
});
