import { SortedList } from '@maintd/core';
import { LiveMap } from './live-map.js';

/** How an index orders and filters its rows. A new order object means a full rebuild. */
export interface IndexOrder<T> {
  /** Orders two rows by the rows alone (no clock, no other data): ties are broken by key. */
  readonly compare: (a: T, b: T) => number;
  /**
   * For orders that read other data (a store's cooldowns): a number per row, taken when the row
   * is placed, larger first, before `compare`. Kept with the row, so the row can still be found
   * (and moved) after the data it was read from changed.
   */
  readonly rank?: ((row: T) => number) | undefined;
  /** Whether a row is shown (the `/` filter). */
  readonly match: (row: T) => boolean;
}

/** Other live data the order reads, and the row each of its keys touches (a cooldown → its store). */
export interface JoinedSource {
  readonly map: ReadonlyMap<string, unknown>;
  readonly rowKey: (key: string) => string;
}

/** The keys of a list in display order, as the key handling reads them. Arrays qualify. */
export interface KeyList {
  readonly length: number;
  at(index: number): string | undefined;
  indexOf(key: string): number;
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The rows of a list view, filtered and sorted, kept up to date incrementally: a change to one
 * row of a {@link LiveMap} moves that row (binary search out, binary search in), so a burst of
 * 25 changes to a 10,000-row list costs 50 binary searches, not a copy and a re-sort. Anything it
 * cannot follow incrementally (another map, another order, a log that no longer reaches back) is
 * rebuilt in full.
 */
export class SortedIndex<T> implements KeyList {
  readonly #key: (row: T) => string;
  /** The rows shown, in display order under {@link SortedIndex.#comparator}. */
  #rows: SortedList<T>;
  /** Rows in the index by key, with the rank they were placed with (to find them again). */
  #placed = new Map<string, { readonly row: T; readonly rank: number }>();
  #source: ReadonlyMap<string, T> | undefined;
  #sourceRevision = 0;
  #order: IndexOrder<T> | undefined;
  #joined: ReadonlyMap<string, unknown> | undefined;
  #joinedRevision = 0;
  #version = 0;
  #loaded = false;

  constructor(key: (row: T) => string) {
    this.#key = key;
    this.#rows = new SortedList(this.#comparator(undefined));
  }

  /** Rows shown (the index is its own {@link KeyList}: keys in display order, not copied out). */
  get length(): number {
    return this.#rows.length;
  }

  /** Key of the row at a position. */
  at(index: number): string | undefined {
    const row = this.#rows.at(index);
    return row === undefined ? undefined : this.#key(row);
  }

  /** Same as {@link indexOfKey}. */
  indexOf(key: string): number {
    return this.indexOfKey(key);
  }

  /** Rows in display order. The array changes in place: {@link version} tells when. */
  get rows(): readonly T[] {
    return this.#rows.items;
  }

  /** Bumped whenever the rows (or their order) changed. */
  get version(): number {
    return this.#version;
  }

  /** Whether a source was ever synced (undefined sources leave it unloaded: "loading…"). */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** Rows the source holds (before the filter). */
  get total(): number {
    return this.#source?.size ?? 0;
  }

  /** Position of the row with this key in display order, -1 when it is not shown. */
  indexOfKey(key: string): number {
    const placed = this.#placed.get(key);
    if (!placed) return -1;
    const i = this.#rows.indexOf(placed.row);
    if (i >= 0) return i;
    // An order that broke its promise (compare changed for a placed row): look, then heal.
    const j = this.#rows.items.indexOf(placed.row);
    if (j >= 0) this.#order = undefined;
    return j;
  }

  /**
   * Brings the index up to date with `source` under `order`, incrementally when it can. Returns
   * whether the rows changed.
   */
  sync(source: ReadonlyMap<string, T> | undefined, order: IndexOrder<T>, joined?: JoinedSource): boolean {
    if (!source) {
      if (!this.#loaded && this.#source === undefined) return false;
      this.#reset();
      return true;
    }
    const joinedChanges = this.#joinedChanges(joined);
    let changed: readonly string[] | undefined;
    if (source === this.#source && order === this.#order && joinedChanges !== undefined) {
      changed = source instanceof LiveMap ? source.changedSince(this.#sourceRevision) : [];
    }
    this.#source = source;
    this.#sourceRevision = source instanceof LiveMap ? source.revision : 0;
    this.#joined = joined?.map;
    this.#joinedRevision = joined?.map instanceof LiveMap ? joined.map.revision : 0;
    if (changed === undefined || joinedChanges === undefined || !this.#loaded || order !== this.#order) {
      this.#order = order;
      this.#rebuild(source, order);
      return true;
    }
    if (changed.length === 0 && joinedChanges.length === 0) return false;
    let moved = false;
    const seen = new Set<string>();
    for (const k of [...changed, ...joinedChanges]) {
      if (seen.has(k)) continue;
      seen.add(k);
      moved = this.#update(k, source.get(k), order) || moved;
    }
    if (moved) this.#version++;
    return moved;
  }

  /** Changed row keys of the joined map since the last sync; undefined when it must rebuild. */
  #joinedChanges(joined: JoinedSource | undefined): readonly string[] | undefined {
    if (!joined) return this.#joined === undefined ? [] : undefined;
    if (joined.map !== this.#joined || !(joined.map instanceof LiveMap)) {
      return joined.map === this.#joined ? [] : undefined;
    }
    const keys = joined.map.changedSince(this.#joinedRevision);
    return keys?.map(joined.rowKey);
  }

  #reset(): void {
    this.#rows = new SortedList(this.#comparator(undefined));
    this.#placed.clear();
    this.#source = undefined;
    this.#order = undefined;
    this.#loaded = false;
    this.#version++;
  }

  #rebuild(source: ReadonlyMap<string, T>, order: IndexOrder<T>): void {
    const entries: { row: T; rank: number; key: string }[] = [];
    for (const row of source.values()) {
      if (order.match(row)) entries.push({ row, rank: order.rank ? order.rank(row) : 0, key: this.#key(row) });
    }
    entries.sort((a, b) => b.rank - a.rank || order.compare(a.row, b.row) || byText(a.key, b.key));
    this.#placed = new Map(entries.map((e) => [e.key, { row: e.row, rank: e.rank }]));
    // Already in order: the list's own sort only checks it, once per row.
    this.#rows = new SortedList(
      this.#comparator(order),
      entries.map((e) => e.row),
    );
    this.#loaded = true;
    this.#version++;
  }

  /** Moves, adds or removes one row; true when the rows changed. */
  #update(key: string, row: T | undefined, order: IndexOrder<T>): boolean {
    const placed = this.#placed.get(key);
    const shown = row !== undefined && order.match(row);
    const rank = shown && order.rank ? order.rank(row) : 0;
    if (placed && shown && placed.row === row && placed.rank === rank) return false;
    if (!placed && !shown) return false;
    if (placed && shown) {
      const i = this.indexOfKey(key);
      if (i >= 0) {
        // Placed with its new rank first: the move compares the row by it (never with its old self).
        this.#placed.set(key, { row, rank });
        this.#rows.move(i, row);
        return true;
      }
    }
    if (placed) {
      const i = this.indexOfKey(key);
      if (i >= 0) this.#rows.removeAt(i);
      this.#placed.delete(key);
    }
    if (shown) {
      this.#placed.set(key, { row, rank });
      this.#rows.insert(row);
    }
    return true;
  }

  /**
   * Display order under `order`: rank (larger first), then the order's compare, then key. A row's
   * rank is the one it was placed with, kept in {@link SortedIndex.#placed}, so a row is found
   * (and moved) by it after the data it was read from changed.
   */
  #comparator(order: IndexOrder<T> | undefined): (a: T, b: T) => number {
    if (!order) return () => 0;
    const key = this.#key;
    const { compare } = order;
    if (!order.rank) return (a, b) => compare(a, b) || byText(key(a), key(b));
    const rankOf = (row: T): number => this.#placed.get(key(row))?.rank ?? 0;
    return (a, b) => rankOf(b) - rankOf(a) || compare(a, b) || byText(key(a), key(b));
  }
}

const keyed = new WeakMap<readonly unknown[], ReadonlyMap<string, unknown>>();

/** A list as a map by key, built once per list (lists that arrive whole: stores, workers). */
export function keyedRows<T>(
  rows: readonly T[] | undefined,
  key: (row: T) => string,
): ReadonlyMap<string, T> | undefined {
  if (!rows) return undefined;
  let m = keyed.get(rows) as ReadonlyMap<string, T> | undefined;
  if (!m) {
    m = new Map(rows.map((r) => [key(r), r]));
    keyed.set(rows, m);
  }
  return m;
}
