import { describe, expect, it } from 'vitest';
import { KEY, NOW, mountedEach, sampleFleet, task } from '../test/app-harness.js';
import { taskMap } from '../test/task-map.js';

const mount = mountedEach();

const held = task(9, {
  target: 'parked-store',
  state: 'held',
  started_at: undefined,
  finished_at: undefined,
  detail: undefined,
  held_at: NOW - 120_000,
  held_reason: 'parked by token@10.0.0.7: disk swap',
});

describe('the Tasks view', () => {
  it('shows a held task’s state and why it is held, in the list and the detail pane', async () => {
    const data = { ...sampleFleet(), tasks: taskMap([held]) };
    const m = mount({ data, size: { columns: 120, rows: 30 }, theme: { color: true } });
    await m.press('2');
    expect(m.frame()).toMatch(/held\s+merge_wal parked-store .* parked by token@10\.0\.0\.7: disk swap/);
    // In a colour of its own (magenta), unlike queued (cyan).
    expect(m.raw()).toContain('\u001b[35mheld');
    await m.press(KEY.enter);
    expect(m.frame()).toMatch(/state\s+held/);
    expect(m.frame()).toMatch(/held\s+2m00s ago/);
    expect(m.frame()).toMatch(/held because\s+parked by token@10\.0\.0\.7: disk swap/);
  });

  it('/ searches the store name or error text, and tells the data source (the master’s q=); Esc clears it', async () => {
    const m = mount({ size: { columns: 120, rows: 24 } });
    await m.press('2', '/', 'NOT FOUND');
    expect(m.frame()).toMatch(/failed\s+merge_wal broken-store/);
    expect(m.frame()).not.toContain('orders-us');
    await m.press(KEY.enter);
    expect(m.frame()).toMatch(/\/NOT FOUND\s+sort: newest\s+1\/1 of 4/);
    expect(m.source.searches.at(-1)).toBe('tasks:NOT FOUND');
    await m.press(KEY.escape);
    expect(m.frame()).toContain('orders-us');
    expect(m.source.searches.at(-1)).toBe('tasks:');
  });
});
