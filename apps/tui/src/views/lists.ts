import type { ListViewId } from '../common/view-ids.js';
import { EMPTY_FLEET, type FleetData } from '../state/fleet-data.js';
import { type IndexOrder, SortedIndex } from '../state/sorted-index.js';
import { type ListSpec, matcher } from './list-spec.js';
import { LIST_SPECS } from './specs.js';

/**
 * First visible row of a scrolled list: it moves only as far as needed to keep the selection in
 * view (as in htop and k9s), and never leaves blank rows below the last one. Pure.
 */
export function windowStart(prev: number, index: number, height: number, total: number): number {
  if (height <= 0 || total <= height) return 0;
  let start = Math.min(Math.max(prev, 0), total - height);
  if (index >= 0 && index < start) start = index;
  else if (index >= start + height) start = index - height + 1;
  return start;
}

interface ListEntry {
  readonly index: SortedIndex<unknown>;
  filter: string;
  sort: number;
  order: IndexOrder<unknown> | undefined;
  /** First row on screen, as last drawn. */
  start: number;
}

/**
 * The list views' rows over the live data: one {@link SortedIndex} per view, synced lazily (a
 * view not on screen costs nothing while events arrive; it catches up from the maps' change logs
 * when shown, or rebuilds once), plus where each view's window stands.
 */
export class ListViews {
  readonly #entries = new Map<ListViewId, ListEntry>();
  /** The data the indexes were last synced to: what a joined order's ranks are read from. */
  #data: FleetData = EMPTY_FLEET;

  /** The rows of `view` under `filter` and `sort`, brought up to date with `data`. */
  sync(view: ListViewId, data: FleetData, filter: string, sort: number): SortedIndex<unknown> {
    const spec = LIST_SPECS[view] as ListSpec<unknown>;
    let e = this.#entries.get(view);
    if (!e) {
      e = { index: new SortedIndex(spec.key), filter, sort, order: undefined, start: 0 };
      this.#entries.set(view, e);
    }
    if (!e.order || e.filter !== filter || e.sort !== sort) {
      const s = spec.sorts[sort % spec.sorts.length]!;
      const rank = s.rank;
      e.order = {
        compare: s.compare,
        rank: rank ? (row) => rank(row, this.#data) : undefined,
        match: matcher(spec, filter),
      };
      e.filter = filter;
      e.sort = sort;
    }
    this.#data = data;
    e.index.sync(spec.source(data), e.order, spec.joined?.(data));
    return e.index;
  }

  /**
   * The first row on screen of `view` with row `selected` selected; `commit` keeps it (a frame
   * drawn) or not (a look at what a frame would show).
   */
  window(view: ListViewId, selected: number, height: number, total: number, commit: boolean): number {
    const e = this.#entries.get(view);
    const start = windowStart(e?.start ?? 0, selected, height, total);
    if (commit && e) e.start = start;
    return start;
  }
}
