import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SortedList, partitionPoint } from './sorted-list.js';

interface Item {
  readonly key: string;
  n: number;
}

/** By `n` descending, ties by key: a total order over distinct keys. */
const byN = (a: Item, b: Item): number => b.n - a.n || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
const keys = (list: SortedList<Item>): string[] => list.items.map((i) => i.key);

describe('partitionPoint', () => {
  it('finds the first position whose item is not before, within a range', () => {
    const xs = [1, 3, 3, 5, 8];
    expect(partitionPoint(xs, (x) => x < 3)).toBe(1);
    expect(partitionPoint(xs, (x) => x <= 3)).toBe(3);
    expect(partitionPoint(xs, (x) => x < 100)).toBe(5);
    expect(partitionPoint(xs, () => false)).toBe(0);
    expect(partitionPoint([], () => true)).toBe(0);
    expect(partitionPoint(xs, (x) => x < 8, 2, 4)).toBe(4);
    expect(partitionPoint(xs, (x) => x < 1, 2, 4)).toBe(2);
  });

  it('agrees with a linear scan on any sorted array', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -20, max: 20 })), fc.integer({ min: -25, max: 25 }), (xs, x) => {
        xs.sort((a, b) => a - b);
        const linear = xs.findIndex((y) => y >= x);
        expect(partitionPoint(xs, (y) => y < x)).toBe(linear < 0 ? xs.length : linear);
      }),
    );
  });
});

describe('SortedList', () => {
  it('sorts what it is built from, and reads by position', () => {
    const list = new SortedList(byN, [
      { key: 'a', n: 1 },
      { key: 'b', n: 3 },
      { key: 'c', n: 3 },
    ]);
    expect(keys(list)).toEqual(['b', 'c', 'a']);
    expect(list.length).toBe(3);
    expect(list.at(0)?.key).toBe('b');
    expect(list.at(-1)?.key).toBe('a');
    expect(list.at(3)).toBeUndefined();
    expect(list.slice(1).map((i) => i.key)).toEqual(['c', 'a']);
    expect([...list].map((i) => i.key)).toEqual(['b', 'c', 'a']);
  });

  it('inserts where an item sorts, finds and removes it by identity, in the same array', () => {
    const list = new SortedList(byN);
    const items = list.items;
    const a = { key: 'a', n: 2 };
    const b = { key: 'b', n: 5 };
    expect(list.insert(a)).toBe(0);
    expect(list.insert(b)).toBe(0);
    expect(list.indexOf(a)).toBe(1);
    // An equal item that is not the one in the list.
    expect(list.indexOf({ key: 'a', n: 2 })).toBe(-1);
    expect(list.lowerBound({ key: 'a', n: 2 })).toBe(1);
    expect(list.partitionPoint((x) => x.n > 2)).toBe(1);
    expect(list.delete({ key: 'a', n: 2 })).toBe(false);
    expect(list.delete(a)).toBe(true);
    expect(list.removeAt(5)).toBeUndefined();
    expect(list.removeAt(0)).toBe(b);
    expect(list.length).toBe(0);
    expect(list.items).toBe(items);
  });

  it('moves an item whose key changed, the item itself or a new one, never comparing it with its old self', () => {
    const list = new SortedList(
      byN,
      ['a', 'b', 'c', 'd'].map((key, i) => ({ key, n: i })),
    );
    expect(keys(list)).toEqual(['d', 'c', 'b', 'a']);
    const a = list.at(3)!;
    a.n = 10;
    expect(list.move(3, a)).toBe(0);
    expect(keys(list)).toEqual(['a', 'd', 'c', 'b']);
    expect(list.move(0, { key: 'a', n: 0 })).toBe(3);
    expect(keys(list)).toEqual(['d', 'c', 'b', 'a']);
    expect(list.move(1, { key: 'c', n: 2 })).toBe(1);
    expect(() => list.move(4, a)).toThrow(RangeError);
  });

  it('filters into a list of the same order', () => {
    const list = new SortedList(
      byN,
      ['a', 'b', 'c', 'd'].map((key, i) => ({ key, n: i })),
    );
    const odd = list.filter((i) => i.n % 2 === 1);
    expect(keys(odd)).toEqual(['d', 'b']);
    expect(odd.insert({ key: 'x', n: 2 })).toBe(1);
    expect(keys(list)).toEqual(['d', 'c', 'b', 'a']);
  });

  it('equals a full sort through any sequence of insertions, removals and moves', () => {
    const op = fc.oneof(
      fc.record({
        op: fc.constant('insert' as const),
        key: fc.integer({ min: 0, max: 30 }),
        n: fc.integer({ max: 9, min: 0 }),
      }),
      fc.record({ op: fc.constant('remove' as const), key: fc.integer({ min: 0, max: 30 }), n: fc.constant(0) }),
      fc.record({
        op: fc.constant('move' as const),
        key: fc.integer({ min: 0, max: 30 }),
        n: fc.integer({ max: 9, min: 0 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const list = new SortedList(byN);
        const model = new Map<string, Item>();
        for (const { op, key: k, n } of ops) {
          const key = `k${k}`;
          const present = model.get(key);
          if (op === 'insert' && !present) {
            const item = { key, n };
            model.set(key, item);
            list.insert(item);
          } else if (op === 'remove' && present) {
            model.delete(key);
            expect(list.removeAt(list.indexOf(present))).toBe(present);
          } else if (op === 'move' && present) {
            const i = list.indexOf(present);
            // Half the moves change the item in place, half replace it.
            const item = n % 2 === 0 ? Object.assign(present, { n }) : { key, n };
            model.set(key, item);
            expect(list.move(i, item)).toBe(list.indexOf(item));
          }
          expect(list.items).toEqual([...model.values()].sort(byN));
        }
      }),
    );
  });
});
