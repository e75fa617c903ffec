import type { ActionItem, ActionKind, KindPick } from '../common/action-items.js';
import { type ListViewId, VIEW_IDS, type ViewId } from '../common/view-ids.js';
import { BULK_KEYS, describeBulk, requestBulk, startPreview } from './bulk.js';
import { overviewKey } from './overview-keys.js';
import type { KeyList } from './sorted-index.js';
import {
  type Effect,
  type KindChoice,
  type ListUi,
  type Notice,
  type PendingAction,
  READ_ONLY,
  type UiState,
} from './ui-state.js';

/** Longest park reason the master keeps. */
export const MAX_REASON = 512;

/** A key press as Ink reports it (only the flags the TUI uses). */
export interface KeyPress {
  readonly input: string;
  readonly upArrow?: boolean;
  readonly downArrow?: boolean;
  readonly pageUp?: boolean;
  readonly pageDown?: boolean;
  readonly home?: boolean;
  readonly end?: boolean;
  readonly return?: boolean;
  readonly escape?: boolean;
  readonly tab?: boolean;
  readonly shift?: boolean;
  readonly ctrl?: boolean;
  readonly meta?: boolean;
  readonly backspace?: boolean;
  readonly delete?: boolean;
}

/** What the reducer needs to know about the screen. */
export interface KeyContext {
  /** Keys of the current list view's rows, filtered and sorted, in display order (not copied out). */
  readonly keys: KeyList;
  /** Rows visible at once (for PageUp/PageDown). */
  readonly pageSize: number;
  /** The (kind, target) pairs an action on these rows applies to. */
  readonly resolve: (view: ListViewId, keys: readonly string[], action: ActionKind) => ActionItem[];
  /** Whether an action's items in this view are alternatives by kind, the operator to pick one. */
  readonly pick: (view: ListViewId, action: ActionKind) => KindPick | undefined;
  /** Every key that still exists in the view (filter aside), to drop marks of vanished rows. */
  readonly exists: (view: ListViewId, key: string) => boolean;
}

/** Result of {@link handleKey}. */
export interface KeyResult {
  readonly state: UiState;
  readonly effects: readonly Effect[];
}

const EMPTY_LIST: ListUi = { selected: undefined, index: 0, filter: '', sort: 0, marked: new Set() };

/** The state at startup. */
export function initialUi(options: { readonly readonly?: boolean; readonly view?: ViewId } = {}): UiState {
  return {
    view: options.view ?? 'overview',
    lists: { tasks: EMPTY_LIST, cooldowns: EMPTY_LIST, stores: EMPTY_LIST, workers: EMPTY_LIST },
    overview: { selected: undefined, index: 0 },
    overlay: 'none',
    editingFilter: false,
    reasonDraft: '',
    detail: undefined,
    confirm: undefined,
    notice: undefined,
    readonly: options.readonly ?? false,
  };
}

/** Whether a view is a list. */
export function isList(view: ViewId): view is ListViewId {
  return view !== 'overview';
}

/**
 * Index of the selected row in `keys`: where its item is now, or (when the item is gone) the
 * row that took its place. -1 for an empty list.
 */
export function selectedIndex(list: ListUi, keys: KeyList): number {
  if (keys.length === 0) return -1;
  if (list.selected !== undefined) {
    const i = keys.indexOf(list.selected);
    if (i >= 0) return i;
  }
  return Math.min(Math.max(list.index, 0), keys.length - 1);
}

/** What an action is called in the confirm dialog and the status line. */
export function describeAction(p: PendingAction): string {
  if (p.bulk) return describeBulk(p.action, p.bulk);
  const n = p.items.length;
  if (p.action === 'reset') return `reset ${n} cooldown${n === 1 ? '' : 's'}`;
  const what = n === 1 ? `${p.items[0]!.kind} ${p.items[0]!.target}` : `${n} targets`;
  if (p.action === 'park') return `park ${what}`;
  if (p.action === 'release') return `release ${what}`;
  const kinds = [...new Set(p.items.map((i) => i.kind))].join('/');
  return `run ${kinds} now on ${n === 1 ? p.items[0]!.target : `${n} targets`}`;
}

/** The keys a chunk of text may carry as plain characters (Enter after a typed reason). */
const CHUNK_KEYS: Readonly<Record<string, KeyPress>> = {
  '\r': { input: '', return: true },
  '\n': { input: '', return: true },
  '\t': { input: '', tab: true },
  '\u007f': { input: '', backspace: true },
  '\b': { input: '', backspace: true },
};

/**
 * One key press per character: a terminal delivers keys typed faster than it is read (or sent by
 * `tmux send-keys`) as one chunk, and Ink passes such a chunk on whole, like a paste, its Enter
 * included as a plain `\r`.
 */
export function splitInput(press: KeyPress): KeyPress[] {
  const chars = [...press.input];
  const special =
    press.ctrl || press.meta || press.return || press.escape || press.tab || press.backspace || press.delete;
  if (chars.length <= 1 || special) return [press];
  return chars.map((input) => CHUNK_KEYS[input] ?? { input });
}

const ok = (state: UiState, ...effects: Effect[]): KeyResult => ({ state, effects });

const X_RETIRED: Notice = { text: 'x is retired: r asks which kind to run', tone: 'info' };

/** The action keys: r run, c reset, p park, u release (unpark). */
const ACTION_KEYS: Readonly<Record<string, ActionKind>> = {
  r: 'run',
  c: 'reset',
  p: 'park',
  u: 'release',
};

/** The view under an overlay that closes: the detail pane when one was open, else the list. */
function closeOverlay(s: UiState): UiState {
  return { ...s, overlay: s.detail ? 'detail' : 'none' };
}

/**
 * Keys of the reason prompt: the text is the reducer's own, like the filter's, so a pasted reason
 * followed at once by Enter (a fast typist, `tmux send-keys`) is submitted whole; a text field
 * that reports its value after it renders would submit what it held before the paste.
 */
function reasonKey(s: UiState, key: KeyPress): KeyResult {
  if (key.escape) {
    return ok({ ...closeOverlay(s), confirm: undefined, reasonDraft: '', notice: { text: 'cancelled', tone: 'info' } });
  }
  if (key.return) {
    const next = submitReason(s, s.reasonDraft);
    // A bulk park's reason goes to the master's dry run first: the dialog confirms its count.
    if (next.overlay === 'confirm' && next.confirm?.bulk && next.confirm.bulk.count === undefined) {
      const { state, effects } = startPreview(next, next.confirm);
      return ok(state, ...effects);
    }
    return ok(next);
  }
  if (key.backspace || key.delete) return ok({ ...s, reasonDraft: [...s.reasonDraft].slice(0, -1).join('') });
  if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow) return ok(s);
  // eslint-disable-next-line no-control-regex
  const text = key.input.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  if (!text) return ok(s);
  return ok({ ...s, reasonDraft: [...(s.reasonDraft + text)].slice(0, MAX_REASON).join('') });
}

/**
 * The reason typed for a park: on to the confirm dialog, or (empty) the prompt stays with a
 * notice. Control characters are dropped and the length bounded as the master would.
 */
export function submitReason(s: UiState, text: string): UiState {
  if (s.overlay !== 'reason' || !s.confirm) return s;
  // eslint-disable-next-line no-control-regex
  const reason = [...text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim()].slice(0, MAX_REASON).join('');
  if (!reason) return { ...s, notice: { text: 'a park needs a reason (Esc cancels)', tone: 'bad' } };
  return { ...s, overlay: 'confirm', confirm: { ...s.confirm, reason }, reasonDraft: '', notice: undefined };
}

/**
 * The TUI's key handling as a pure function: the state after a key and the effects to perform.
 * Rendering, I/O and timing stay outside, so every key is testable without a terminal.
 */
export function handleKey(state: UiState, key: KeyPress, ctx: KeyContext): KeyResult {
  if (key.ctrl && key.input === 'c') return ok(state, { type: 'quit' });
  const s = state.notice && !state.editingFilter ? { ...state, notice: undefined } : state;

  if (s.overlay === 'confirm') return confirmKey(s, key);
  if (s.overlay === 'reason') return reasonKey(s, key);
  if (s.editingFilter) return filterKey(s, key, ctx);
  if (s.overlay === 'help') {
    if (key.escape || key.input === '?' || key.return) return ok({ ...s, overlay: 'none' });
    if (key.input === 'q') return ok(s, { type: 'quit' });
    return ok(s);
  }

  if (key.input === 'q') return ok(s, { type: 'quit' });
  if (key.input === '?') return ok({ ...s, overlay: 'help' });

  const digit = /^[1-5]$/.test(key.input) ? Number(key.input) - 1 : -1;
  if (digit >= 0) return ok(switchView(s, VIEW_IDS[digit]!));
  if (key.tab) {
    const i = VIEW_IDS.indexOf(s.view);
    const next = (i + (key.shift ? VIEW_IDS.length - 1 : 1)) % VIEW_IDS.length;
    return ok(switchView(s, VIEW_IDS[next]!));
  }

  if (key.escape) {
    if (s.overlay === 'detail') return ok({ ...s, overlay: 'none', detail: undefined });
    if (!isList(s.view)) return ok(s);
    const list = s.lists[s.view];
    if (list.marked.size > 0) return ok(withList(s, s.view, { ...list, marked: new Set() }));
    if (list.filter) return ok(withList(s, s.view, { ...list, filter: '' }));
    return ok(s);
  }

  const view = s.overlay === 'detail' && s.detail ? s.detail.view : s.view;
  // The Overview's keys: its capacity consumers and causes (`ctx.keys` are their keys).
  if (!isList(view)) return overviewKey(s, key, ctx.keys);

  const bulk = BULK_KEYS[key.input];
  if (bulk && !key.ctrl && !key.meta) {
    if (s.readonly) return ok({ ...s, notice: READ_ONLY });
    const { state, effects } = requestBulk(s, bulk);
    return ok(state, ...effects);
  }

  const action = ACTION_KEYS[key.input];
  if (action && !key.ctrl && !key.meta) return ok(requestAction(s, view, action, ctx));
  // `x` ran one named kind; the kinds are the fleet's now, picked after `r`. Said, not ignored,
  // for the hands that still reach for it.
  if (key.input === 'x' && !key.ctrl && !key.meta) return ok({ ...s, notice: s.readonly ? READ_ONLY : X_RETIRED });

  // The detail pane shows one item: list keys below do not apply to it.
  if (s.overlay === 'detail') return ok(s);

  const list = s.lists[view];
  const at = selectedIndex(list, ctx.keys);
  const move = (to: number): KeyResult => {
    if (ctx.keys.length === 0) return ok(s);
    const i = Math.min(Math.max(to, 0), ctx.keys.length - 1);
    return ok(withList(s, view, { ...list, selected: ctx.keys.at(i), index: i }));
  };

  if (key.input === 'j' || key.downArrow) return move(at + 1);
  if (key.input === 'k' || key.upArrow) return move(at - 1);
  if (key.pageDown || (key.ctrl && key.input === 'f')) return move(at + Math.max(1, ctx.pageSize));
  if (key.pageUp || (key.ctrl && key.input === 'b')) return move(at - Math.max(1, ctx.pageSize));
  if (key.input === 'g' || key.home) return move(0);
  if (key.input === 'G' || key.end) return move(ctx.keys.length - 1);
  if (key.input === '/') return ok({ ...s, editingFilter: true });
  if (key.input === 's') return ok(withList(s, view, { ...list, sort: list.sort + 1 }));
  if (key.input === ' ') {
    const k = ctx.keys.at(at);
    if (k === undefined) return ok(s);
    const marked = new Set(list.marked);
    if (marked.has(k)) marked.delete(k);
    else marked.add(k);
    const next = Math.min(at + 1, ctx.keys.length - 1);
    return ok(withList(s, view, { ...list, marked, selected: ctx.keys.at(next), index: next }));
  }
  if (key.return) {
    const k = ctx.keys.at(at);
    if (k === undefined) return ok(s);
    return ok({ ...s, overlay: 'detail', detail: { view, key: k } }, { type: 'load-detail', view, key: k });
  }
  return ok(s);
}

function switchView(s: UiState, view: ViewId): UiState {
  return { ...s, view, overlay: 'none', detail: undefined };
}

function withList(s: UiState, view: ListViewId, list: ListUi): UiState {
  return { ...s, lists: { ...s.lists, [view]: list } };
}

function filterKey(s: UiState, key: KeyPress, ctx: KeyContext): KeyResult {
  if (!isList(s.view)) return ok({ ...s, editingFilter: false });
  const view = s.view;
  const list = s.lists[view];
  const setFilter = (filter: string): KeyResult =>
    ok(withList(s, view, { ...list, filter, selected: undefined, index: 0 }));
  if (key.escape)
    return ok({ ...withList(s, view, { ...list, filter: '', selected: undefined, index: 0 }), editingFilter: false });
  if (key.return) return ok({ ...s, editingFilter: false });
  if (key.backspace || key.delete) return setFilter([...list.filter].slice(0, -1).join(''));
  // Arrows still move through the (filtered) rows while typing.
  if (key.upArrow || key.downArrow) {
    const at = selectedIndex(list, ctx.keys);
    const i = Math.min(Math.max(at + (key.downArrow ? 1 : -1), 0), Math.max(0, ctx.keys.length - 1));
    return ok(withList(s, view, { ...list, selected: ctx.keys.at(i), index: i }));
  }
  if (key.ctrl || key.meta || key.tab) return ok(s);
  // Pasted text arrives as one input; keep only what can be typed in a filter.
  // eslint-disable-next-line no-control-regex
  const text = key.input.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  if (!text) return ok(s);
  return setFilter((list.filter + text).slice(0, 200));
}

function confirmKey(s: UiState, key: KeyPress): KeyResult {
  const pending = s.confirm;
  const closed: UiState = { ...s, overlay: s.detail ? 'detail' : 'none', confirm: undefined };
  if (!pending) return ok(closed);
  const { choice } = pending;
  if (choice) {
    const step = key.input === 'j' || key.downArrow ? 1 : key.input === 'k' || key.upArrow ? -1 : 0;
    if (step !== 0) return ok({ ...s, confirm: pick(pending, choice, choice.at + step) });
  }
  if (key.input === 'y' || key.input === 'Y' || key.return) {
    const view = s.detail?.view ?? s.view;
    const cleared = isList(view) ? withList(closed, view, { ...closed.lists[view], marked: new Set() }) : closed;
    return ok(
      { ...cleared, notice: { text: `${describeAction(pending)}…`, tone: 'info' } },
      { type: 'execute', action: pending },
    );
  }
  if (key.input === 'n' || key.input === 'N' || key.escape || key.input === 'q') {
    return ok({ ...closed, notice: { text: 'cancelled', tone: 'info' } });
  }
  return ok(s);
}

/** Opens the confirm dialog for an action on the marked rows (or the selected one). */
function requestAction(s: UiState, view: ListViewId, action: ActionKind, ctx: KeyContext): UiState {
  if (s.readonly) return { ...s, notice: READ_ONLY };
  const list = s.lists[view];
  let keys: string[];
  if (s.overlay === 'detail' && s.detail) keys = [s.detail.key];
  else {
    const marked = [...list.marked].filter((k) => ctx.exists(view, k));
    const at = selectedIndex(list, ctx.keys);
    keys = marked.length > 0 ? marked : at >= 0 ? [ctx.keys.at(at)!] : [];
  }
  const items = dedupe(ctx.resolve(view, keys, action));
  const choose = ctx.pick(view, action);
  if (items.length === 0) {
    const text =
      keys.length === 0
        ? 'nothing selected'
        : choose
          ? 'no kind to offer yet: no live master has said which kinds it runs'
          : action === 'reset'
            ? 'no cooldown to reset here'
            : action === 'release'
              ? 'not parked: nothing to release'
              : action === 'park'
                ? 'nothing to park here'
                : 'nothing to run here';
    return { ...s, notice: { text, tone: 'info' } };
  }
  // A park asks why first; the confirm dialog follows the reason.
  if (action === 'park') return { ...s, overlay: 'reason', reasonDraft: '', confirm: { action, items } };
  if (choose) {
    const choice: KindChoice = {
      kinds: [...new Set(items.map((i) => i.kind))],
      at: 0,
      targets: [...new Set(items.map((i) => i.target))],
    };
    const at = Math.max(0, choice.kinds.indexOf(choose.preferred));
    return { ...s, overlay: 'confirm', confirm: pick({ action, items }, choice, at) };
  }
  return { ...s, overlay: 'confirm', confirm: { action, items } };
}

/** The action with the kind at `at` (clamped) picked: its items are the targets with that kind. */
function pick(pending: PendingAction, choice: KindChoice, at: number): PendingAction {
  const i = Math.min(Math.max(at, 0), choice.kinds.length - 1);
  const kind = choice.kinds[i]!;
  return { ...pending, items: choice.targets.map((target) => ({ kind, target })), choice: { ...choice, at: i } };
}

function dedupe(items: readonly ActionItem[]): ActionItem[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    const k = `${i.kind}/${i.target}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
