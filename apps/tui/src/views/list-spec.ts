import type { ActionItem, ActionKind, KindPick } from '../common/action-items.js';
import type { ListViewId } from '../common/view-ids.js';
import type { FleetData } from '../state/fleet-data.js';
import type { JoinedSource } from '../state/sorted-index.js';
import type { Column } from './columns.js';

/** What a cell needs besides its row. */
export interface CellContext {
  readonly now: number;
  readonly data: FleetData;
}

/** A sort order of a list. */
export interface SortSpec<T> {
  readonly label: string;
  /** Orders two rows by the rows alone: no clock, no other data (rows are placed by binary search). */
  readonly compare: (a: T, b: T) => number;
  /**
   * For orders that read other data (a store's cooldowns): a number per row, larger first,
   * before `compare`.
   */
  readonly rank?: (row: T, data: FleetData) => number;
}

/** Everything that makes a list view: its rows, identity, search text, sorts, columns and actions. */
export interface ListSpec<T> {
  readonly id: ListViewId;
  /** Plural noun for counts and dialogs ("cooldowns"). */
  readonly noun: string;
  /** The rows by key; undefined until first read. */
  readonly source: (data: FleetData) => ReadonlyMap<string, T> | undefined;
  /** Other live data its sorts or cells read, and which row each of its keys touches. */
  readonly joined?: (data: FleetData) => JoinedSource | undefined;
  /** A stable identity, so the selection stays on the same item across refreshes. */
  readonly key: (row: T) => string;
  /** Lowercase text the `/` filter matches. */
  readonly search: (row: T) => string;
  /**
   * The texts the master's `q=` matches in this list (store name, error text): the `/` search is
   * then theirs, a case-insensitive substring of one of them, sent to the master as `q=` too, so
   * the rows shown are the rows a bulk action over the search acts on, whichever master answers.
   */
  readonly query?: (row: T) => readonly string[];
  readonly sorts: readonly SortSpec<T>[];
  readonly columns: readonly Column<T, CellContext>[];
  readonly actions: Partial<Record<ActionKind, (row: T, data: FleetData, now: number) => ActionItem[]>>;
  /** The actions whose items are alternatives the operator picks a kind of. */
  readonly picks?: Partial<Record<ActionKind, KindPick>>;
  /** Shown when there are no rows at all (not just none matching the filter). */
  readonly empty: string;
  /**
   * What besides the row its cells read (a store's cooldown entries): a row is redrawn when its
   * item, these, its selection, or the clock and policy change; nothing else.
   */
  readonly rowDeps?: (row: T, data: FleetData) => readonly unknown[];
}

/** Orders two texts by code unit (the tie-breaker of every sort). */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Whether one of `texts` holds `q`, case-insensitively: the master's `q=` predicate
 * (docs/ARCHITECTURE.md §3.4). An empty `q` matches everything.
 */
export function matchesQuery(texts: readonly string[], q: string): boolean {
  const needle = q.toLowerCase();
  return texts.some((t) => t.toLowerCase().includes(needle));
}

/**
 * Whether a row matches a filter: for a list the master searches (`query`), its `q=` predicate
 * over the filter as typed; else every word of it, case-insensitively, in any column.
 */
export function matcher<T>(spec: ListSpec<T>, filter: string): (row: T) => boolean {
  const { query } = spec;
  const q = filter.trim();
  if (query) return q ? (row) => matchesQuery(query(row), q) : () => true;
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return () => true;
  return (row) => {
    const text = spec.search(row);
    return words.every((w) => text.includes(w));
  };
}
