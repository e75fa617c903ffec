import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CandidateOrder } from './candidate-order.js';
import { rendezvousRank } from './rendezvous.js';

const ids = Array.from({ length: 60 }, (_, i) => `id-${i.toString().padStart(3, '0')}`);
const peers = ['m-a', 'm-b', 'm-c'];
const rankOf = (id: string): number => rendezvousRank(id, peers, 'm-b');

function all(order: CandidateOrder): string[] {
  const out: string[] = [];
  for (let i = 0; order.has(i); i++) out.push(order.at(i).id);
  return out;
}

describe('CandidateOrder', () => {
  it('keeps the page order when the master is alone', () => {
    expect(all(new CandidateOrder(ids, () => 'merge_wal', undefined))).toEqual(ids);
  });

  it('puts the own share first oldest first, then each further rank youngest first', () => {
    const got = all(new CandidateOrder(ids, () => 'merge_wal', rankOf));
    const byRank = (r: number): string[] => ids.filter((id) => rankOf(id) === r);
    expect(got).toEqual([...byRank(0), ...byRank(1).reverse(), ...byRank(2).reverse()]);
  });

  it('ranks only as far as the candidates asked for', () => {
    const ranked: string[] = [];
    const order = new CandidateOrder(
      ids,
      () => 'merge_wal',
      (id) => {
        ranked.push(id);
        return rankOf(id);
      },
    );
    expect(order.has(0)).toBe(true);
    const first = order.at(0).id;
    expect(ranked.at(-1)).toBe(first);
    expect(ranked.length).toBeLessThan(ids.length);
  });

  it('names the kind of each candidate by its index in the page', () => {
    const kinds = ['compact', 'index_id'] as const;
    const order = new CandidateOrder(ids, (i) => kinds[i % 2]!, undefined);
    expect(order.at(0).kind).toBe('compact');
    expect(order.has(1) && order.at(1).kind).toBe('index_id');
  });

  it('spreads a candidate from the window into place and loses or repeats none', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(70), fc.nat(40), fc.double({ min: 0, max: 0.999, noNaN: true }))),
        (swaps) => {
          const order = new CandidateOrder(ids, () => 'merge_wal', rankOf);
          for (const [at, width, draw] of swaps) order.spread(at, width, () => draw);
          expect([...all(order)].sort()).toEqual(ids);
        },
      ),
    );
  });

  it('draws within the window only', () => {
    const order = new CandidateOrder(ids, () => 'merge_wal', undefined);
    order.spread(2, 4, () => 0.99);
    expect(all(order).slice(0, 7)).toEqual([ids[0], ids[1], ids[5], ids[3], ids[4], ids[2], ids[6]]);
  });
});
