import { describe, expect, it } from 'vitest';
import { LiveMap } from './live-map.js';
import { type IndexOrder, SortedIndex, keyedRows } from './sorted-index.js';

interface Row {
  readonly id: string;
  readonly n: number;
}

const byN: IndexOrder<Row> = { compare: (a, b) => b.n - a.n, match: () => true };
const ids = (index: SortedIndex<Row>): string[] => index.rows.map((r) => r.id);
const row = (id: string, n: number): Row => ({ id, n });

/** The order a full sort gives: what the index must always equal. */
function fullSort(map: ReadonlyMap<string, Row>, order: IndexOrder<Row>): string[] {
  return [...map.values()]
    .filter(order.match)
    .sort(
      (a, b) =>
        (order.rank ? order.rank(b) - order.rank(a) : 0) ||
        order.compare(a, b) ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
    .map((r) => r.id);
}

describe('LiveMap', () => {
  it('logs the keys each change touched, so a reader can catch up from its revision', () => {
    const m = new LiveMap<number>([['a', 1]]);
    const r0 = m.revision;
    m.set('b', 2);
    m.delete('a');
    m.delete('missing');
    expect(m.changedSince(r0)).toEqual(['b', 'a']);
    expect(m.changedSince(m.revision)).toEqual([]);
    expect([...m.keys()]).toEqual(['b']);
  });

  it('answers undefined (rebuild) once its log no longer reaches back, or after a clear', () => {
    const m = new LiveMap<number>(undefined, 8);
    for (let i = 0; i < 20; i++) m.set(`k${i}`, i);
    expect(m.changedSince(0)).toBeUndefined();
    expect(m.changedSince(m.revision - 2)).toEqual(['k18', 'k19']);
    const before = m.revision;
    m.clear();
    expect(m.changedSince(before)).toBeUndefined();
  });
});

describe('SortedIndex', () => {
  it('moves one changed row into place without a rebuild, matching a full sort', () => {
    const m = new LiveMap<Row>(['a', 'b', 'c', 'd'].map((id, i) => [id, row(id, i)]));
    const index = new SortedIndex<Row>((r) => r.id);
    index.sync(m, byN);
    expect(ids(index)).toEqual(['d', 'c', 'b', 'a']);
    const rows = index.rows;
    m.set('a', row('a', 10));
    m.delete('c');
    m.set('e', row('e', 2));
    expect(index.sync(m, byN)).toBe(true);
    expect(ids(index)).toEqual(['a', 'd', 'e', 'b']);
    // The same array, changed in place: no rebuild happened.
    expect(index.rows).toBe(rows);
    expect(index.indexOfKey('e')).toBe(2);
    expect(index.indexOfKey('c')).toBe(-1);
  });

  it('stays equal to a full sort through thousands of random upserts and deletions', () => {
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const m = new LiveMap<Row>();
    for (let i = 0; i < 500; i++) m.set(`r${i}`, row(`r${i}`, random(50)));
    const even: IndexOrder<Row> = { compare: byN.compare, match: (r) => r.n % 2 === 0 };
    // Rows moved up and down within the list, ranks moved with them.
    const ranked: IndexOrder<Row> = { compare: byN.compare, rank: (r) => r.n % 3, match: () => true };
    const index = new SortedIndex<Row>((r) => r.id);
    const withRanks = new SortedIndex<Row>((r) => r.id);
    index.sync(m, even);
    withRanks.sync(m, ranked);
    for (let step = 0; step < 200; step++) {
      for (let j = 0; j < 25; j++) {
        const id = `r${random(600)}`;
        if (random(10) === 0) m.delete(id);
        else m.set(id, row(id, random(50)));
      }
      index.sync(m, even);
      withRanks.sync(m, ranked);
      expect(ids(index)).toEqual(fullSort(m, even));
      expect(ids(withRanks)).toEqual(fullSort(m, ranked));
      for (const [i, id] of ids(withRanks).entries()) expect(withRanks.indexOfKey(id)).toBe(i);
      // Each found by binary search, with the rank it was placed with: none by the lookup that
      // heals a broken order (which would make this sync a rebuild).
      expect(withRanks.sync(m, ranked)).toBe(false);
    }
  });

  it('reports no change (and keeps its version) when a batch touched nothing it shows', () => {
    const m = new LiveMap<Row>([['a', row('a', 1)]]);
    const positives: IndexOrder<Row> = { compare: byN.compare, match: (r) => r.n > 0 };
    const index = new SortedIndex<Row>((r) => r.id);
    index.sync(m, positives);
    const version = index.version;
    m.set('z', row('z', -5));
    expect(index.sync(m, positives)).toBe(false);
    expect(index.version).toBe(version);
  });

  it('rebuilds for a new order or filter, a new map, or a log that no longer reaches back', () => {
    const m = new LiveMap<Row>(
      ['a', 'b'].map((id, i) => [id, row(id, i)]),
      4,
    );
    const index = new SortedIndex<Row>((r) => r.id);
    index.sync(m, byN);
    const ascending: IndexOrder<Row> = { compare: (a, b) => a.n - b.n, match: () => true };
    index.sync(m, ascending);
    expect(ids(index)).toEqual(['a', 'b']);
    for (let i = 0; i < 10; i++) m.set(`x${i}`, row(`x${i}`, 100 + i));
    index.sync(m, ascending);
    expect(ids(index)).toEqual(fullSort(m, ascending));
    const other = new Map([['q', row('q', 1)]]);
    index.sync(other, ascending);
    expect(ids(index)).toEqual(['q']);
  });

  it('re-ranks rows when joined data changes, finding each by the rank it was placed with', () => {
    const stores = new Map(['s1', 's2', 's3'].map((id) => [id, row(id, 0)]));
    const cooling = new LiveMap<number>([['merge_wal/s2', 5]]);
    const order: IndexOrder<Row> = {
      compare: (a, b) => (a.id < b.id ? -1 : 1),
      rank: (r) => cooling.get(`merge_wal/${r.id}`) ?? 0,
      match: () => true,
    };
    const joined = { map: cooling, rowKey: (k: string) => k.slice(k.indexOf('/') + 1) };
    const index = new SortedIndex<Row>((r) => r.id);
    index.sync(stores, order, joined);
    expect(ids(index)).toEqual(['s2', 's1', 's3']);
    cooling.set('merge_wal/s3', 9);
    cooling.delete('merge_wal/s2');
    expect(index.sync(stores, order, joined)).toBe(true);
    expect(ids(index)).toEqual(['s3', 's1', 's2']);
  });

  it('is its own key list: length, at and indexOf in display order', () => {
    const m = new LiveMap<Row>(['a', 'b', 'c'].map((id, i) => [id, row(id, i)]));
    const index = new SortedIndex<Row>((r) => r.id);
    index.sync(m, byN);
    expect(index.length).toBe(3);
    expect(index.at(0)).toBe('c');
    expect(index.at(5)).toBeUndefined();
    expect(index.indexOf('a')).toBe(2);
    expect(index.total).toBe(3);
  });

  it('keys a whole list once per list', () => {
    const list = [row('a', 1), row('b', 2)];
    expect(keyedRows(list, (r) => r.id)).toBe(keyedRows(list, (r) => r.id));
    expect(keyedRows(list, (r) => r.id)?.get('b')?.n).toBe(2);
  });
});
