// The shape of the UI state, apart from the reducer (state/ui.ts) and the bulk actions (state/bulk.ts)
// that both work on it, so neither imports the other.
import type { TaskKind } from '../api/types.js';
import type { ActionItem, ActionKind } from '../common/action-items.js';
import type { ListViewId, ViewId } from '../common/view-ids.js';

/** Selection, filter, sort and marks of one list view. */
export interface ListUi {
  /** Key of the selected row: the selection follows the item, not the position. */
  readonly selected: string | undefined;
  /** Where the selection was, for when its item disappears. */
  readonly index: number;
  readonly filter: string;
  /** Index into the view's sorts; `s` cycles it. */
  readonly sort: number;
  /** Rows marked with Space; actions apply to them when there are any. */
  readonly marked: ReadonlySet<string>;
}

/** The kinds a confirm dialog offers to pick from, for its targets. */
export interface KindChoice {
  readonly kinds: readonly TaskKind[];
  /** Index in `kinds` of the kind picked: the items are of it. */
  readonly at: number;
  readonly targets: readonly string[];
}

/** An action waiting for the operator's confirmation (a park also for its reason). */
export interface PendingAction {
  readonly action: ActionKind;
  /** What confirming performs: with a choice, its targets with the kind picked. */
  readonly items: readonly ActionItem[];
  /** Why (a park's reason, 1–512 characters). */
  readonly reason?: string;
  /** The kinds to pick from (`r` on a store); j/k moves through them. */
  readonly choice?: KindChoice;
  /** A bulk action (`P`, `C`): over every match of the search, `items` only the first of them. */
  readonly bulk?: BulkScope;
}

/**
 * What a bulk action runs over: every cooldown entry the Cooldowns view's search matches, as the
 * master matches them (`q=`, every state; docs/ARCHITECTURE.md §3.4). The master decides, so
 * the count confirmed is its dry run's, and the action sends the same filter again.
 */
export interface BulkScope {
  /** The search, as typed (empty for a cause's stores). */
  readonly q: string;
  /**
   * Instead of the search: the stores whose latest failure has this cause (`P` on a cause in the
   * Overview), sent as `cause=`.
   */
  readonly cause?: string;
  /** How many entries the master's dry run matched; undefined until it answered. */
  readonly count?: number;
}

/** A one-line message in the status bar. */
export interface Notice {
  readonly text: string;
  readonly tone: 'info' | 'ok' | 'bad';
}

/** The selection among the Overview's selectable rows (common/overview-rows.ts). */
export interface OverviewUi {
  /** Key of the selected row; undefined before one was picked (the first row is shown selected). */
  readonly selected: string | undefined;
  /** Where the selection was, for when its row disappears. */
  readonly index: number;
}

/** The whole UI state besides the fleet data. */
export interface UiState {
  readonly view: ViewId;
  readonly lists: { readonly [K in ListViewId]: ListUi };
  readonly overview: OverviewUi;
  /** What covers the view: the help, a detail pane, the reason prompt of a park, or the confirm dialog. */
  readonly overlay: 'none' | 'help' | 'detail' | 'reason' | 'confirm';
  /** `/` was pressed: printable keys edit the filter. */
  readonly editingFilter: boolean;
  /** The park reason being typed in the reason prompt. */
  readonly reasonDraft: string;
  /** The item the detail pane shows. */
  readonly detail: { readonly view: ListViewId; readonly key: string } | undefined;
  readonly confirm: PendingAction | undefined;
  readonly notice: Notice | undefined;
  readonly readonly: boolean;
}

/** What an action key says under `--readonly`. */
export const READ_ONLY: Notice = { text: 'read-only mode (--readonly): actions are disabled', tone: 'bad' };

/** Side effects the App performs after a key. */
export type Effect =
  | { readonly type: 'quit' }
  | { readonly type: 'execute'; readonly action: PendingAction }
  /** Ask the master for a bulk action's dry run, then confirm with its count. */
  | { readonly type: 'preview'; readonly action: PendingAction }
  | { readonly type: 'load-detail'; readonly view: ListViewId; readonly key: string };
