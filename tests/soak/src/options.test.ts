import { describe, expect, it } from 'vitest';
import { parseOptions } from './options.js';

describe('parseOptions', () => {
  it('runs 30 minutes by default, with a tenth of it as warm-up and three windows after it', () => {
    expect(parseOptions([], {})).toEqual({
      minutes: 30,
      sampleSecs: 15,
      warmupMinutes: 3,
      windowMinutes: 9,
      heapSnapshots: false,
      outDir: expect.stringMatching(/tests\/soak\/test-results$/) as string,
    });
  });

  it('keeps windows at 10 minutes in long runs', () => {
    expect(parseOptions(['--minutes', '120'], {}).windowMinutes).toBe(10);
  });

  it('takes a flag over SOAK_MINUTES, and SOAK_MINUTES over the default', () => {
    expect(parseOptions([], { SOAK_MINUTES: '12' }).minutes).toBe(12);
    expect(parseOptions(['--minutes=6'], { SOAK_MINUTES: '12' }).minutes).toBe(6);
    expect(parseOptions(['--heap-snapshots'], {}).heapSnapshots).toBe(true);
  });

  it('refuses a length that is not a positive number, and a warm-up as long as the run', () => {
    expect(() => parseOptions(['--minutes', 'soon'], {})).toThrow(/minutes must be a positive number/);
    expect(() => parseOptions(['--minutes', '5', '--warmup-minutes', '5'], {})).toThrow(/warm-up/);
  });
});
