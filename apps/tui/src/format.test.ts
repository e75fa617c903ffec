import { describe, expect, it } from 'vitest';
import { fit, formatAgo, formatCountdown, formatDuration, formatUntil, truncate, wrap } from './format.js';

describe('format', () => {
  it('formats durations compactly at every scale', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(59_999)).toBe('59s');
    expect(formatDuration(61_000)).toBe('1m01s');
    expect(formatDuration(3 * 3600_000 + 12 * 60_000)).toBe('3h12m');
    expect(formatDuration(50 * 3600_000)).toBe('2d02h');
    expect(formatDuration(-5)).toBe('0s');
  });

  it('rounds countdowns up, so a window never shows 0s while still open', () => {
    expect(formatCountdown(1500, 1000)).toBe('1s');
    expect(formatCountdown(1000, 1000)).toBe('expired');
  });

  it('says how long ago, to the minute past ten minutes, or a dash when unknown', () => {
    expect(formatAgo(1000, 4000)).toBe('3s ago');
    expect(formatAgo(0, 9 * 60_000 + 5000)).toBe('9m05s ago');
    expect(formatAgo(0, 12 * 60_000 + 5000)).toBe('12m ago');
    expect(formatAgo(0, 3 * 3600_000 + 12 * 60_000 + 5000)).toBe('3h12m ago');
    expect(formatAgo(0, 50 * 3600_000)).toBe('2d02h ago');
    expect(formatAgo(undefined, 4000)).toBe('-');
    expect(formatAgo(null, 4000)).toBe('-');
  });

  it('fits text into a fixed width, truncating with an ellipsis (or the marker given)', () => {
    expect(fit('abc', 5)).toBe('abc  ');
    expect(fit('abc', 5, 'right')).toBe('  abc');
    expect(fit('abcdef', 4)).toBe('abc…');
    expect(fit('abcdef', 4, 'left', '~')).toBe('abc~');
    expect(fit('héllo', 6)).toBe('héllo ');
    expect(truncate('abc', 0)).toBe('');
  });

  it('says until when in local time: the clock time today, month-day and time on another day', () => {
    const now = new Date(2026, 11, 3, 13, 0, 0).getTime();
    expect(formatUntil(new Date(2026, 11, 3, 14, 3, 7).getTime(), now)).toBe('14:03:07');
    expect(formatUntil(new Date(2026, 11, 4, 9, 12, 30).getTime(), now)).toBe('12-04 09:12');
  });

  it('wraps at spaces and hard-breaks words longer than a line', () => {
    expect(wrap('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrap('x /a/very/long/path', 6)).toEqual(['x', '/a/ver', 'y/long', '/path']);
  });
});
