import { describe, expect, it } from 'vitest';
import type { MaintenanceWindow } from '../api/types.js';
import { clockIn, percent, splitInsights, windowText } from './insights.js';

/** 2023-11-14T22:13:20Z, the App tests' fixed clock. */
const NOW = 1_700_000_000_000;

function window(over: Partial<MaintenanceWindow>): MaintenanceWindow {
  return { kind: 'compact', spec: '22:00-05:00', tz: 'UTC', open: false, next_change: null, ...over };
}

describe('windowText', () => {
  it('says when a kind outside its window opens, in the window’s zone, and how long until then', () => {
    const w = window({ next_change: '2023-11-15T01:25:20Z' });
    expect(windowText(w, NOW)).toBe('compact: outside its window, opens 01:25 (in 3h12m)');
  });

  it('says when a kind in its window closes, in the window’s own zone', () => {
    const w = window({ open: true, tz: 'Europe/Paris', next_change: '2023-11-15T04:00:00Z' });
    expect(windowText(w, NOW)).toBe('compact: in its window, closes 05:00 (in 5h46m)');
  });

  it('says a window that never changes is always open or never opens', () => {
    expect(windowText(window({ open: true }), NOW)).toBe('compact: in its window, always');
    expect(windowText(window({ open: false }), NOW)).toBe('compact: outside its window, never opens');
  });

  it('falls back to UTC, said, for a zone the runtime does not know', () => {
    expect(clockIn(Date.parse('2023-11-15T01:25:20Z'), 'Mars/Olympus')).toBe('01:25 UTC');
  });
});

describe('percent', () => {
  it('shows a share with one decimal, bounded to 0–100 %', () => {
    expect(percent(1200 / 4200)).toBe('28.6%');
    expect(percent(1.5)).toBe('100.0%');
    expect(percent(-1)).toBe('0.0%');
  });
});

describe('splitInsights', () => {
  it('gives each section its header and a line first, then the capacity all it wants, then the causes', () => {
    expect(splitInsights(20, { capacity: 4, causes: 3 })).toEqual({ capacity: 4, causes: 3 });
    expect(splitInsights(8, { capacity: 4, causes: 3 })).toEqual({ capacity: 3, causes: 1 });
    expect(splitInsights(4, { capacity: 4, causes: 3 })).toEqual({ capacity: 2, causes: -1 });
  });

  it('leaves off a section with nothing to say, and both without room', () => {
    expect(splitInsights(10, { capacity: 0, causes: 2 })).toEqual({ capacity: -1, causes: 2 });
    expect(splitInsights(2, { capacity: 4, causes: 3 })).toEqual({ capacity: -1, causes: -1 });
  });
});
