import { describe, expect, it } from 'vitest';
import { rendezvousOwner } from '../testing/rendezvous-owner.js';
import { rendezvousRank } from './rendezvous.js';

const ids = Array.from(
  { length: 6000 },
  (_, i) => `0190f${i.toString(16).padStart(3, '0')}-7a00-7000-8000-${'0'.repeat(12)}`,
);
const masters = ['m-a', 'm-b', 'm-c', 'm-d', 'm-e', 'm-f'];

describe('rendezvousOwner', () => {
  it('names the same owner whatever the order of the member list', () => {
    for (const id of ids.slice(0, 200)) {
      expect(rendezvousOwner(id, [...masters].reverse())).toBe(rendezvousOwner(id, masters));
    }
  });

  it('gives each of six masters about a sixth of ids that differ only in their last characters', () => {
    const share = new Map<string, number>();
    for (const id of ids) {
      const owner = rendezvousOwner(id, masters)!;
      share.set(owner, (share.get(owner) ?? 0) + 1);
    }
    for (const m of masters) {
      expect(share.get(m) ?? 0).toBeGreaterThan(ids.length / 6 / 1.3);
      expect(share.get(m) ?? 0).toBeLessThan((ids.length / 6) * 1.3);
    }
  });

  it('moves only the leaving master’s ids when a master leaves', () => {
    const rest = masters.filter((m) => m !== 'm-c');
    for (const id of ids) {
      const before = rendezvousOwner(id, masters);
      if (before !== 'm-c') expect(rendezvousOwner(id, rest)).toBe(before);
    }
  });

  it('has no owner without members', () => {
    expect(rendezvousOwner(ids[0]!, [])).toBeUndefined();
  });
});

describe('rendezvousRank', () => {
  it('ranks every member of the list once for an id', () => {
    for (const id of ids.slice(0, 200)) {
      const ranks = masters.map((m) => rendezvousRank(id, masters, m));
      expect([...ranks].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it('ranks members for an id as every release does: masters of two releases must share a queue out alike', () => {
    // Pinned values: a change of the weight function makes masters of N and N-1 disagree on
    // whose share a task is (docs/COMPATIBILITY.md), so it must fail here first.
    const members = ['master-a', 'master-b', 'master-c'];
    const ranks = (suffix: string): number[] =>
      members.map((m) => rendezvousRank(`019b76da-a800-7000-8000-00000000000${suffix}`, members, m));
    expect(['1', '2', '3', '4', '5', '6'].map(ranks)).toEqual([
      [0, 2, 1],
      [1, 2, 0],
      [2, 0, 1],
      [2, 0, 1],
      [2, 1, 0],
      [2, 1, 0],
    ]);
  });

  it('ranks first for an id the member that owns it once its owner leaves', () => {
    for (const id of ids.slice(0, 200)) {
      const next = masters.find((m) => rendezvousRank(id, masters, m) === 1)!;
      const rest = masters.filter((m) => m !== rendezvousOwner(id, masters));
      expect(rendezvousOwner(id, rest)).toBe(next);
    }
  });
});
