/**
 * The first position in `[from, to)` of `items` whose item is not `before`, or `to` when every
 * one is: a binary search, so `before` must hold for a prefix of the range and fail for the rest
 * (as "sorts before x" does on a sorted range). The one binary search of the workspace: every
 * ordered list, lookup and insertion point is found with it.
 */
export function partitionPoint<T>(
  items: ArrayLike<T>,
  before: (item: T) => boolean,
  from = 0,
  to = items.length,
): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(items[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A list kept sorted by a comparator, in one array: positional reads are O(1) (a screen's rows,
 * a page from a position), a lookup is a binary search, and an insertion, removal or move is a
 * binary search plus a shift of the items between (a copy of contiguous memory, which at the
 * tens of thousands of items a list here holds beats any tree's pointer chasing).
 *
 * `compare` must be a total order of the items (break ties, e.g. by key): {@link SortedList.indexOf}
 * finds an item by where it sorts. An item whose sort key changes must be taken out before the
 * change and put back after it ({@link SortedList.removeAt} and {@link SortedList.insert}), or
 * replaced by a new item ({@link SortedList.move}).
 *
 * @typeParam T - the items.
 */
export class SortedList<T> implements Iterable<T> {
  readonly #compare: (a: T, b: T) => number;
  #items: T[];

  /**
   * A list of `items` (copied, then sorted: items already in order cost one comparison each).
   *
   * @param compare - negative when `a` sorts before `b`, positive when after, 0 when equal.
   * @param items - the first items, in any order.
   */
  constructor(compare: (a: T, b: T) => number, items: Iterable<T> = []) {
    this.#compare = compare;
    this.#items = [...items].sort(compare);
  }

  /** Number of items. */
  get length(): number {
    return this.#items.length;
  }

  /**
   * The items in order. The same array for the list's life, changed in place by every insertion,
   * removal and move: a reader that must not see changes copies it ({@link SortedList.slice}).
   */
  get items(): readonly T[] {
    return this.#items;
  }

  /** The item at `index` (negative: from the end), or undefined past either end. */
  at(index: number): T | undefined {
    return this.#items.at(index);
  }

  /**
   * The first position whose item is not `before`, or {@link SortedList.length} when every one is.
   * `before` must hold for a prefix of the list: "sorts before x" (see
   * {@link SortedList.lowerBound}) or "sorts at or before x", where x need not be an item (a
   * position a cursor names).
   */
  partitionPoint(before: (item: T) => boolean): number {
    return partitionPoint(this.#items, before);
  }

  /** The first position whose item does not sort before `item`: where `item` would be inserted. */
  lowerBound(item: T): number {
    return partitionPoint(this.#items, (x) => this.#compare(x, item) < 0);
  }

  /** The position of `item` itself (by identity, found where it sorts), or -1 when it is not there. */
  indexOf(item: T): number {
    const i = this.lowerBound(item);
    return this.#items[i] === item ? i : -1;
  }

  /** Inserts `item` where it sorts (before any equal to it) and returns its position. */
  insert(item: T): number {
    const i = this.lowerBound(item);
    this.#items.splice(i, 0, item);
    return i;
  }

  /** Removes and returns the item at `index`; undefined (and nothing removed) past either end. */
  removeAt(index: number): T | undefined {
    if (index < 0 || index >= this.#items.length) return undefined;
    return this.#items.splice(index, 1)[0];
  }

  /** Removes `item` (found as {@link SortedList.indexOf} finds it); whether it was there. */
  delete(item: T): boolean {
    const i = this.indexOf(item);
    if (i >= 0) this.#items.splice(i, 1);
    return i >= 0;
  }

  /**
   * Replaces the item at `index` with `item`, moved to where it sorts among the others, and
   * returns its new position. One pass over the items between the two places, where a removal
   * and an insertion would each shift every item after its place. `item` is never compared with
   * the item it replaces, so both may be the same object, its sort key already changed.
   */
  move(index: number, item: T): number {
    const items = this.#items;
    if (index < 0 || index >= items.length) throw new RangeError(`no item at ${index} of ${items.length}`);
    const before = (x: T): boolean => this.#compare(x, item) < 0;
    let to = index;
    if (index > 0 && !before(items[index - 1]!)) {
      to = partitionPoint(items, before, 0, index);
      for (let k = index; k > to; k--) items[k] = items[k - 1]!;
    } else if (index + 1 < items.length && before(items[index + 1]!)) {
      // Past its old place: one position back, once that place is closed.
      to = partitionPoint(items, before, index + 1) - 1;
      for (let k = index; k < to; k++) items[k] = items[k + 1]!;
    }
    items[to] = item;
    return to;
  }

  /** A copy of the items in `[from, to)`, as `Array.prototype.slice` takes them. */
  slice(from?: number, to?: number): T[] {
    return this.#items.slice(from, to);
  }

  /** A new list (same order) of the items `predicate` keeps, without sorting again. */
  filter(predicate: (item: T) => boolean): SortedList<T> {
    const out = new SortedList(this.#compare);
    out.#items = this.#items.filter(predicate);
    return out;
  }

  /** The items in order. */
  [Symbol.iterator](): Iterator<T> {
    return this.#items[Symbol.iterator]();
  }
}
