import { describe, expect, it } from 'vitest';
import { type TimelineEvent, timelineView } from './timeline.js';

let n = 0;
const ev = (type: string, at: number, extra: Partial<TimelineEvent> = {}): TimelineEvent => ({
  id: `${String(++n).padStart(8, '0')}-0000-7000-8000-000000000000`,
  kind: 'compact',
  target: 'x',
  type,
  at_ms: at,
  ...extra,
});

describe('timelineView', () => {
  it('adds the lapse of a window that ended by itself, in time order', () => {
    const window = ev('window_opened', 100, { failures: 3, until_ms: 200, window_ms: 100 });
    const park = ev('parked', 150, { by: 'a' });
    const later = ev('failure', 300, { failures: 4 });
    const view = timelineView([later, park, window], 250);
    expect(view.map((e) => `${e.type}@${e.at_ms}`)).toEqual([
      'failure@300',
      'window_lapsed@200',
      'parked@150',
      'window_opened@100',
    ]);
    expect(view[1]).toMatchObject({ id: window.id, failures: 3 });
  });

  it('adds no lapse for a window still open, or ended early by a success, a reset or a later window', () => {
    const open = ev('window_opened', 100, { until_ms: 500 });
    expect(timelineView([open], 400).map((e) => e.type)).toEqual(['window_opened']);
    for (const ender of ['cleared', 'reset', 'window_opened']) {
      const w = ev('window_opened', 100, { until_ms: 200 });
      const end = ev(ender, 150, ender === 'window_opened' ? { until_ms: 1000 } : {});
      expect(timelineView([end, w], 300).map((e) => e.type)).toEqual([ender, 'window_opened']);
    }
  });

  it('keeps event types it does not know, as they are', () => {
    const odd = ev('quarantined', 10);
    expect(timelineView([odd], 20)).toEqual([odd]);
  });
});
