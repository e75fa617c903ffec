import { describe, expect, it } from 'vitest';
import { judge, windowBounds, windowMedians } from './windows.js';

describe('windowBounds', () => {
  it('puts warm-up first, then windows of the asked length up to the end of the run', () => {
    expect(windowBounds(30, 3, 9)).toEqual([
      { fromMin: 0, toMin: 3 },
      { fromMin: 3, toMin: 12 },
      { fromMin: 12, toMin: 21 },
      { fromMin: 21, toMin: 30 },
    ]);
  });

  it('joins a remainder shorter than half a window to the window before it', () => {
    expect(windowBounds(64, 4, 10).at(-1)).toEqual({ fromMin: 54, toMin: 64 });
    expect(windowBounds(64, 4, 10)).toHaveLength(7);
  });
});

describe('windowMedians', () => {
  it('takes the median of the samples that fall in each window, the run’s last sample in the last one', () => {
    const samples = [0.5, 1, 2, 3, 4, 6].map((atMin, i) => ({ atMin, value: [9, 1, 5, 3, 7, 8][i]! }));
    const windows = windowMedians(samples, [
      { fromMin: 0, toMin: 1 },
      { fromMin: 1, toMin: 4 },
      { fromMin: 4, toMin: 6 },
    ]);
    expect(windows.map((w) => [w.median, w.samples])).toEqual([
      [9, 1],
      [3, 3],
      [7.5, 2],
    ]);
  });

  it('has no median for a window without samples', () => {
    expect(windowMedians([], [{ fromMin: 0, toMin: 1 }])[0]?.median).toBeUndefined();
  });
});

describe('judge', () => {
  const w = (...medians: (number | undefined)[]) =>
    medians.map((median, i) => ({ fromMin: i, toMin: i + 1, median, samples: median === undefined ? 0 : 1 }));

  it('compares the last window with the first after warm-up, ignoring warm-up', () => {
    expect(judge(w(1, 100, 120, 114))).toEqual({ first: 100, last: 114, ratio: 1.14, pass: true });
    expect(judge(w(1000, 100, 100, 116)).pass).toBe(false);
  });

  it('passes a series that stays at 0 and fails one that leaves 0 or lacks a window', () => {
    expect(judge(w(5, 0, 0, 0)).pass).toBe(true);
    expect(judge(w(5, 0, 0, 3)).pass).toBe(false);
    expect(judge(w(5, 10, 10, undefined)).pass).toBe(false);
  });
});
