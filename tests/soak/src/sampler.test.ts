import { describe, expect, it } from 'vitest';
import { fullestTimeline, keysBySection } from './sampler.js';

const P = '/soak/x';

describe('keysBySection', () => {
  it('counts keys by the first segment under the prefix', () => {
    const keys = [`${P}/tasks/1`, `${P}/tasks/2`, `${P}/queue/merge_wal/1`, `${P}/cluster`];
    expect(Object.fromEntries(keysBySection(P, keys))).toEqual({ tasks: 2, queue: 1, cluster: 1 });
  });
});

describe('fullestTimeline', () => {
  it('finds the (kind, store) with the most timeline events', () => {
    const keys = [
      `${P}/timeline/compact/6161/1`,
      `${P}/timeline/compact/6161/2`,
      `${P}/timeline/merge_wal/6161/3`,
      `${P}/tasks/6161`,
    ];
    expect(fullestTimeline(P, keys)).toBe(2);
    expect(fullestTimeline(P, [])).toBe(0);
  });
});
