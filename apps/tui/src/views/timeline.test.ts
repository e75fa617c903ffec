import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../api/types.js';
import { formatUntil } from '../format.js';
import { describeEvent, mergeTimeline } from './timeline.js';

const NOW = 1_700_000_000_000;

/** An event of merge_wal on store-a, `n` seconds before now. */
function event(n: number, over: Partial<TimelineEvent> & { type: string }): TimelineEvent {
  return {
    id: `01a23766-0000-7000-8000-${String(1000 - n).padStart(12, '0')}`,
    kind: 'merge_wal',
    target: 'store-a',
    at_ms: NOW - n * 1000,
    at: new Date(NOW - n * 1000).toISOString(),
    ...over,
  };
}

describe('describeEvent', () => {
  it('says of a failure its count, class and error, the cause first', () => {
    const e = event(5, {
      type: 'failure',
      failures: 3,
      error_class: 'target',
      error: 'executor failed: disk full',
      task_id: 't1',
    });
    expect(describeEvent(e, NOW)).toEqual({
      type: 'failure',
      text: '#3 · target · disk full (executor failed)',
      tone: 'bad',
    });
    expect(
      describeEvent(event(5, { type: 'failure', error: 'refused', error_class: 'infrastructure' }), NOW).text,
    ).toBe('not counted · infrastructure · refused');
  });

  it('says of a window its length, its end in local time and the failures that opened it', () => {
    const e = event(5, { type: 'window_opened', failures: 4, window_ms: 600_000, until_ms: NOW + 595_000 });
    expect(describeEvent(e, NOW).text).toBe(
      `10m00s window · until ${formatUntil(NOW + 595_000, NOW)} · after 4 failures`,
    );
  });

  it('names who reset, parked, released or ran it, and why', () => {
    expect(describeEvent(event(1, { type: 'reset', by: 'token@10.0.0.7', failures: 4 }), NOW).text).toBe(
      'by token@10.0.0.7 · 4 failures',
    );
    expect(
      describeEvent(event(1, { type: 'parked', by: 'token@10.0.0.7', reason: 'disk swap', until_ms: null }), NOW).text,
    ).toBe('by token@10.0.0.7 · disk swap · until released');
    expect(describeEvent(event(1, { type: 'released', by: '10.0.0.8' }), NOW).text).toBe('by 10.0.0.8');
    expect(describeEvent(event(1, { type: 'manual_run', by: '10.0.0.8', task_id: 't9' }), NOW).text).toBe(
      'by 10.0.0.8 · task t9',
    );
    expect(describeEvent(event(1, { type: 'held', task_id: 't2', by: 'ops', reason: 'disk swap' }), NOW).text).toBe(
      'task t2 held · by ops · disk swap',
    );
    expect(describeEvent(event(1, { type: 'cleared', failures: 2 }), NOW)).toMatchObject({
      text: 'a success cleared 2 failures',
      tone: 'ok',
    });
  });

  it('shows a type of a later release as it came, with what it carries', () => {
    expect(describeEvent(event(1, { type: 'quarantined', by: 'ops', reason: 'bad disk' }), NOW)).toEqual({
      type: 'quarantined',
      text: 'by ops · bad disk',
      tone: undefined,
    });
  });
});

describe('mergeTimeline', () => {
  it('adds the stream’s events of the pair to those read, newest first, each once', () => {
    const read = [event(10, { type: 'window_opened' }), event(20, { type: 'failure' })];
    const live = [
      event(20, { type: 'failure' }),
      event(5, { type: 'reset', by: 'ops' }),
      { ...event(3, { type: 'parked' }), target: 'store-b' },
      { ...event(2, { type: 'parked' }), kind: 'compact' },
    ];
    expect(mergeTimeline('merge_wal', 'store-a', read, live).map((e) => e.type)).toEqual([
      'reset',
      'window_opened',
      'failure',
    ]);
  });

  it('keeps a derived window_lapsed beside the window it shares its id with', () => {
    const opened = event(100, { type: 'window_opened', until_ms: NOW - 40_000 });
    const lapsed = { ...opened, type: 'window_lapsed', at_ms: NOW - 40_000 };
    expect(mergeTimeline('merge_wal', 'store-a', [lapsed, opened], [opened]).map((e) => e.type)).toEqual([
      'window_lapsed',
      'window_opened',
    ]);
  });
});
