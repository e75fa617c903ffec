import { describe, expect, it } from 'vitest';
import { cooldown } from '../../test/fake-master.js';
import { applyEvents, cooldownMap } from '../state/fleet.js';
import { EMPTY_FLEET } from '../state/fleet-data.js';
import { ListViews, windowStart } from './lists.js';

describe('windowStart', () => {
  it('shows from the top while the selection fits on screen', () => {
    expect(windowStart(0, 0, 10, 100)).toBe(0);
    expect(windowStart(0, 9, 10, 100)).toBe(0);
  });

  it('scrolls only as far as the selection needs, down and up', () => {
    expect(windowStart(0, 10, 10, 100)).toBe(1);
    expect(windowStart(1, 25, 10, 100)).toBe(16);
    expect(windowStart(16, 20, 10, 100)).toBe(16);
    expect(windowStart(16, 3, 10, 100)).toBe(3);
  });

  it('never leaves blank rows below the last one, and shows a short list whole', () => {
    expect(windowStart(95, 97, 10, 100)).toBe(90);
    expect(windowStart(40, 2, 10, 8)).toBe(0);
    expect(windowStart(5, -1, 0, 100)).toBe(0);
  });
});

describe('ListViews', () => {
  const data = {
    ...EMPTY_FLEET,
    cooldowns: cooldownMap(
      Array.from({ length: 100 }, (_, i) => cooldown(`s${String(i).padStart(3, '0')}`, { until_ms: 1000 + i })),
    ),
  };

  it('keeps each view’s window where it was drawn, and looks ahead without moving it', () => {
    const lists = new ListViews();
    const index = lists.sync('cooldowns', data, '', 0);
    expect(lists.window('cooldowns', 30, 10, index.length, true)).toBe(21);
    // A look at what a frame would show does not move the window drawn.
    expect(lists.window('cooldowns', 50, 10, index.length, false)).toBe(41);
    expect(lists.window('cooldowns', 25, 10, index.length, true)).toBe(21);
  });

  it('filters and sorts per view, and follows live changes without a rebuild', () => {
    const lists = new ListViews();
    const all = lists.sync('cooldowns', data, '', 0);
    expect(all.at(0)).toBe('merge_wal/s099');
    const filtered = lists.sync('cooldowns', data, 's00', 0);
    expect(filtered.length).toBe(10);
    const rows = filtered.rows;
    const next = applyEvents(
      data,
      [{ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 's005', cooldown: null }],
      0,
    );
    expect(lists.sync('cooldowns', next, 's00', 0).length).toBe(9);
    expect(filtered.rows).toBe(rows);
  });
});
