import type { ActionItem } from '../common/action-items.js';
import type { BulkScope, Effect, Notice, PendingAction, UiState } from './ui-state.js';

/** The bulk keys (shifted, as they act on more than the row): P parks, C resets every match. */
export const BULK_KEYS: Readonly<Record<string, 'park' | 'reset'>> = { P: 'park', C: 'reset' };

/** What a bulk action runs over, in words: "matching 'disk'", or "failing with cause 3fa2b1c9d0e4". */
export function scopeText(scope: BulkScope): string {
  return scope.cause !== undefined ? `failing with cause ${scope.cause}` : `matching '${scope.q}'`;
}

/** A bulk action's name in the dialogs and the status line: "park 14 stores matching 'disk'". */
export function describeBulk(action: string, scope: BulkScope): string {
  const n = scope.count;
  const what = n === undefined ? 'every store' : `${n} store${n === 1 ? '' : 's'}`;
  return `${action} ${what} ${scopeText(scope)}`;
}

/**
 * `P` on a cause in the Overview: the bulk park's reason prompt, over the stores whose latest
 * failure has that cause (the same dry run, count and confirmation as a search's).
 */
export function requestCauseBulk(s: UiState, cause: string): { state: UiState; effects: Effect[] } {
  const pending: PendingAction = { action: 'park', items: [], bulk: { q: '', cause } };
  return { state: { ...s, overlay: 'reason', reasonDraft: '', confirm: pending }, effects: [] };
}

/**
 * `P` or `C` in the Cooldowns view: a park asks for its reason first; then (a reset at once) the
 * master is asked for a dry run, whose count the confirm dialog shows.
 */
export function requestBulk(s: UiState, action: 'park' | 'reset'): { state: UiState; effects: Effect[] } {
  if (s.view !== 'cooldowns' || s.overlay !== 'none') {
    return {
      state: { ...s, notice: { text: 'P and C act on the Cooldowns view’s search', tone: 'info' } },
      effects: [],
    };
  }
  const q = s.lists.cooldowns.filter.trim();
  if (!q) {
    return {
      state: { ...s, notice: { text: 'P and C act on every row a search matches: search with / first', tone: 'info' } },
      effects: [],
    };
  }
  const pending: PendingAction = { action, items: [], bulk: { q } };
  if (action === 'park') return { state: { ...s, overlay: 'reason', reasonDraft: '', confirm: pending }, effects: [] };
  return startPreview(s, pending);
}

/** Closes the dialogs and asks the master for the dry run of `pending`. */
export function startPreview(s: UiState, pending: PendingAction): { state: UiState; effects: Effect[] } {
  const bulk = pending.bulk ?? { q: '' };
  const what = bulk.cause !== undefined ? `the stores of cause ${bulk.cause}` : `the matches of '${bulk.q}'`;
  const notice: Notice = { text: `counting ${what}…`, tone: 'info' };
  return {
    state: { ...s, overlay: 'none', confirm: undefined, reasonDraft: '', notice },
    effects: [{ type: 'preview', action: pending }],
  };
}

/** Most entries of a dry run kept to list in the confirm dialog. */
const SAMPLE = 5;

/**
 * The state once the master's dry run answered: the confirm dialog with its count and its first
 * matches, or a notice when nothing matches. Unchanged when the operator moved on meanwhile.
 */
export function previewed(
  s: UiState,
  pending: PendingAction,
  answer: { readonly count: number; readonly entries: readonly ActionItem[] },
): UiState {
  // A cause's park starts in the Overview, a search's in the Cooldowns view.
  const from = pending.bulk?.cause !== undefined ? 'overview' : 'cooldowns';
  if (s.view !== from || s.overlay !== 'none' || !pending.bulk) return s;
  if (answer.count === 0) {
    const text =
      pending.bulk.cause !== undefined
        ? `nothing fails with cause ${pending.bulk.cause} on the master`
        : `nothing matches '${pending.bulk.q}' on the master`;
    return { ...s, notice: { text, tone: 'info' } };
  }
  const items = answer.entries.slice(0, SAMPLE).map((e) => ({ kind: e.kind, target: e.target }));
  return {
    ...s,
    overlay: 'confirm',
    notice: undefined,
    confirm: { ...pending, items, bulk: { ...pending.bulk, count: answer.count } },
  };
}
