import { parseOverviewKey } from '../common/overview-rows.js';
import { requestCauseBulk } from './bulk.js';
import type { KeyList } from './sorted-index.js';
import { type Effect, type OverviewUi, READ_ONLY, type UiState } from './ui-state.js';

/** The flags of a key press the Overview reads (a `KeyPress` of state/ui.ts). */
interface OverviewPress {
  readonly input: string;
  readonly upArrow?: boolean;
  readonly downArrow?: boolean;
  readonly home?: boolean;
  readonly end?: boolean;
  readonly return?: boolean;
  readonly ctrl?: boolean;
  readonly meta?: boolean;
}

/** Index of the Overview's selected row in `keys`, as a list's selection: -1 when there is none. */
export function overviewSelected(sel: OverviewUi, keys: KeyList): number {
  if (keys.length === 0) return -1;
  if (sel.selected !== undefined) {
    const i = keys.indexOf(sel.selected);
    if (i >= 0) return i;
  }
  return Math.min(Math.max(sel.index, 0), keys.length - 1);
}

/**
 * Keys of the Overview, over its selectable rows (`keys`, common/overview-rows.ts): j/k, arrows,
 * g/G move; Enter on a top consumer opens that store's detail pane, as Enter in Stores does; `P`
 * on a cause parks every store failing with it, through the bulk park's reason, dry run and
 * confirmation. Pure, like the rest of the key handling.
 */
export function overviewKey(
  s: UiState,
  key: OverviewPress,
  keys: KeyList,
): { state: UiState; effects: readonly Effect[] } {
  const same = { state: s, effects: [] };
  if (key.ctrl || key.meta) return same;
  const at = overviewSelected(s.overview, keys);
  const move = (to: number): { state: UiState; effects: Effect[] } => {
    if (keys.length === 0) return { state: s, effects: [] };
    const i = Math.min(Math.max(to, 0), keys.length - 1);
    return { state: { ...s, overview: { selected: keys.at(i), index: i } }, effects: [] };
  };
  if (key.input === 'j' || key.downArrow) return move(at + 1);
  if (key.input === 'k' || key.upArrow) return move(at - 1);
  if (key.input === 'g' || key.home) return move(0);
  if (key.input === 'G' || key.end) return move(keys.length - 1);
  const row = at >= 0 ? parseOverviewKey(keys.at(at) ?? '') : undefined;
  if (key.return) {
    if (row?.type !== 'consumer') return same;
    const detail = { view: 'stores' as const, key: row.target };
    return { state: { ...s, overlay: 'detail', detail }, effects: [{ type: 'load-detail', ...detail }] };
  }
  if (key.input === 'P') {
    if (s.readonly) return { state: { ...s, notice: READ_ONLY }, effects: [] };
    if (row?.type !== 'cause') {
      const text = 'P in the Overview parks the stores of a cause: select one with j/k';
      return { state: { ...s, notice: { text, tone: 'info' } }, effects: [] };
    }
    return requestCauseBulk(s, row.cause);
  }
  return same;
}
