import { describe, expect, it } from 'vitest';
import type { ActionKind } from '../common/action-items.js';
import type { ListViewId } from '../common/view-ids.js';
import {
  type KeyContext,
  type KeyPress,
  describeAction,
  handleKey,
  initialUi,
  selectedIndex,
  splitInput,
  submitReason,
} from './ui.js';
import type { UiState } from './ui-state.js';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];

/** The kinds a store's `r` offers here: the preferred one not first, to see it picked. */
const STORE_KINDS = ['compact', 'merge_wal', 'verify'];
const storeRun = (view: ListViewId, action: ActionKind): boolean => view === 'stores' && action === 'run';

function ctx(keys: readonly string[] = KEYS, over: Partial<KeyContext> = {}): KeyContext {
  return {
    keys,
    pageSize: 4,
    resolve: (view: ListViewId, ks: readonly string[], action: ActionKind) =>
      ks.flatMap((k) =>
        storeRun(view, action) ? STORE_KINDS.map((kind) => ({ kind, target: k })) : [{ kind: 'merge_wal', target: k }],
      ),
    pick: (view, action) => (storeRun(view, action) ? { preferred: 'merge_wal' } : undefined),
    exists: (_view, k) => keys.includes(k),
    ...over,
  };
}

/** Presses keys in order; returns the final state and every effect. */
function press(state: UiState, keys: (string | KeyPress)[], c: KeyContext = ctx()) {
  let s = state;
  const effects = [];
  for (const k of keys) {
    const r = handleKey(s, typeof k === 'string' ? { input: k } : k, c);
    s = r.state;
    effects.push(...r.effects);
  }
  return { state: s, effects };
}

const cooldowns = (): UiState => initialUi({ view: 'cooldowns' });
const sel = (s: UiState): string | undefined => s.lists.cooldowns.selected;

describe('view switching', () => {
  it('digits 1-5 select the five views', () => {
    const views = ['1', '2', '3', '4', '5'].map((k) => press(initialUi(), [k]).state.view);
    expect(views).toEqual(['overview', 'tasks', 'cooldowns', 'stores', 'workers']);
  });

  it('Tab moves to the next view and wraps; Shift+Tab moves back', () => {
    expect(press(initialUi(), [{ input: '', tab: true }]).state.view).toBe('tasks');
    expect(press(initialUi({ view: 'workers' }), [{ input: '', tab: true }]).state.view).toBe('overview');
    expect(press(initialUi(), [{ input: '', tab: true, shift: true }]).state.view).toBe('workers');
  });

  it('switching view closes the detail pane and the help', () => {
    const s = press(cooldowns(), [{ input: '', return: true }, '2']).state;
    expect(s.overlay).toBe('none');
    expect(s.detail).toBeUndefined();
    expect(press(cooldowns(), ['?', '1']).state.overlay).toBe('help');
  });
});

describe('moving the selection', () => {
  it('j and ↓ move down, k and ↑ move up, clamped at the ends', () => {
    expect(sel(press(cooldowns(), ['j', 'j']).state)).toBe('c');
    expect(
      sel(
        press(cooldowns(), [
          { input: '', downArrow: true },
          { input: '', upArrow: true },
        ]).state,
      ),
    ).toBe('a');
    expect(sel(press(cooldowns(), ['k']).state)).toBe('a');
    expect(sel(press(cooldowns(), ['G', 'j']).state)).toBe('j');
  });

  it('g and G (and Home/End) jump to the first and last row', () => {
    expect(sel(press(cooldowns(), ['G']).state)).toBe('j');
    expect(sel(press(cooldowns(), ['G', 'g']).state)).toBe('a');
    expect(sel(press(cooldowns(), [{ input: '', end: true }]).state)).toBe('j');
    expect(
      sel(
        press(cooldowns(), [
          { input: '', end: true },
          { input: '', home: true },
        ]).state,
      ),
    ).toBe('a');
  });

  it('PageDown and PageUp move by the visible page', () => {
    expect(sel(press(cooldowns(), [{ input: '', pageDown: true }]).state)).toBe('e');
    expect(sel(press(cooldowns(), ['G', { input: '', pageUp: true }]).state)).toBe('f');
  });

  it('the selection follows its item when rows move or others disappear', () => {
    const s = press(cooldowns(), ['j', 'j']).state; // on 'c'
    expect(selectedIndex(s.lists.cooldowns, ['x', 'c', 'a'])).toBe(1);
    expect(selectedIndex(s.lists.cooldowns, ['z', 'y', 'x', 'w', 'c'])).toBe(4);
  });

  it('when the selected item is gone, the row that took its place is selected', () => {
    const s = press(cooldowns(), ['j', 'j']).state; // 'c' at index 2
    expect(selectedIndex(s.lists.cooldowns, ['a', 'b', 'd', 'e'])).toBe(2);
    expect(selectedIndex(s.lists.cooldowns, ['a'])).toBe(0);
    expect(selectedIndex(s.lists.cooldowns, [])).toBe(-1);
  });

  it('each list view keeps its own selection', () => {
    const s = press(cooldowns(), ['j', '2', 'j', 'j', '3']).state;
    expect(s.lists.cooldowns.selected).toBe('b');
    expect(s.lists.tasks.selected).toBe('c');
  });
});

describe('filter and sort', () => {
  it('/ starts the filter, typed text edits it, Enter keeps it', () => {
    const s = press(cooldowns(), [
      '/',
      'b',
      'r',
      { input: '', backspace: true },
      'o',
      { input: '', return: true },
    ]).state;
    expect(s.lists.cooldowns.filter).toBe('bo');
    expect(s.editingFilter).toBe(false);
  });

  it('while filtering, letters are text, not commands', () => {
    const s = press(cooldowns(), ['/', 'q', 'j', 'c', '1']).state;
    expect(s.lists.cooldowns.filter).toBe('qjc1');
    expect(s.view).toBe('cooldowns');
    expect(s.overlay).toBe('none');
  });

  it('Esc while filtering clears the filter; Esc afterwards clears a kept filter', () => {
    expect(press(cooldowns(), ['/', 'x', { input: '', escape: true }]).state.lists.cooldowns.filter).toBe('');
    const kept = press(cooldowns(), ['/', 'x', { input: '', return: true }]).state;
    expect(press(kept, [{ input: '', escape: true }]).state.lists.cooldowns.filter).toBe('');
  });

  it('changing the filter puts the selection on the first match', () => {
    const s = press(cooldowns(), ['G', '/', 'x']).state;
    expect(s.lists.cooldowns.selected).toBeUndefined();
    expect(selectedIndex(s.lists.cooldowns, ['p', 'q'])).toBe(0);
  });

  it('pasted text lands in the filter without control characters', () => {
    const s = press(cooldowns(), ['/', 'bro\u001b[31mken\u0007']).state;
    expect(s.lists.cooldowns.filter).toBe('bro[31mken');
  });

  it('s cycles the sort and keeps the selected item', () => {
    const s = press(cooldowns(), ['j', 's', 's']).state;
    expect(s.lists.cooldowns.sort).toBe(2);
    expect(s.lists.cooldowns.selected).toBe('b');
  });
});

describe('marks, detail, help, quit', () => {
  it('Space marks the row and moves on; Space again unmarks; Esc clears marks', () => {
    const s = press(cooldowns(), [' ', ' ']).state;
    expect([...s.lists.cooldowns.marked]).toEqual(['a', 'b']);
    expect(s.lists.cooldowns.selected).toBe('c');
    expect([...press(s, ['k', ' ']).state.lists.cooldowns.marked]).toEqual(['a']);
    expect(press(s, [{ input: '', escape: true }]).state.lists.cooldowns.marked.size).toBe(0);
  });

  it('Enter opens the detail pane of the selected row and asks for its history; Esc goes back', () => {
    const r = press(cooldowns(), ['j', { input: '', return: true }]);
    expect(r.state.overlay).toBe('detail');
    expect(r.state.detail).toEqual({ view: 'cooldowns', key: 'b' });
    expect(r.effects).toEqual([{ type: 'load-detail', view: 'cooldowns', key: 'b' }]);
    expect(press(r.state, [{ input: '', escape: true }]).state.overlay).toBe('none');
  });

  it('Enter on an empty list opens nothing', () => {
    expect(press(cooldowns(), [{ input: '', return: true }], ctx([])).state.overlay).toBe('none');
  });

  it('? toggles the help overlay; Esc closes it', () => {
    expect(press(initialUi(), ['?']).state.overlay).toBe('help');
    expect(press(initialUi(), ['?', '?']).state.overlay).toBe('none');
    expect(press(initialUi(), ['?', { input: '', escape: true }]).state.overlay).toBe('none');
  });

  it('q and Ctrl+C quit', () => {
    expect(press(initialUi(), ['q']).effects).toEqual([{ type: 'quit' }]);
    expect(press(initialUi(), [{ input: 'c', ctrl: true }]).effects).toEqual([{ type: 'quit' }]);
    expect(press(cooldowns(), ['/', { input: 'c', ctrl: true }]).effects).toEqual([{ type: 'quit' }]);
  });
});

describe('actions and the confirm dialog', () => {
  it('c asks to reset the selected cooldown, and y performs it', () => {
    const asked = press(cooldowns(), ['j', 'c']).state;
    expect(asked.overlay).toBe('confirm');
    expect(asked.confirm).toEqual({ action: 'reset', items: [{ kind: 'merge_wal', target: 'b' }] });
    const done = press(asked, ['y']);
    expect(done.effects).toEqual([{ type: 'execute', action: asked.confirm }]);
    expect(done.state.overlay).toBe('none');
  });

  it('with marked rows, the action covers all of them and the dialog counts them', () => {
    const s = press(cooldowns(), [' ', ' ', ' ', 'c']).state;
    expect(s.confirm?.items.map((i) => i.target)).toEqual(['a', 'b', 'c']);
    expect(describeAction(s.confirm!)).toBe('reset 3 cooldowns');
    const done = press(s, [{ input: '', return: true }]);
    expect(done.effects).toHaveLength(1);
    expect(done.state.lists.cooldowns.marked.size).toBe(0);
  });

  it('marks of rows that no longer exist are left out', () => {
    const s = press(cooldowns(), [' ', ' ']).state;
    const gone = ctx(['b', 'c'], { exists: (_v, k) => k !== 'a' });
    expect(press(s, ['c'], gone).state.confirm?.items.map((i) => i.target)).toEqual(['b']);
  });

  it('n, Esc and q cancel the dialog without an effect', () => {
    for (const k of ['n', { input: '', escape: true }, 'q'] as const) {
      const r = press(cooldowns(), ['c', k]);
      expect(r.state.overlay).toBe('none');
      expect(r.effects).toEqual([]);
    }
  });

  it('other keys leave the dialog open', () => {
    const r = press(cooldowns(), ['c', 'j', '2']);
    expect(r.state.overlay).toBe('confirm');
    expect(r.state.view).toBe('cooldowns');
  });

  it('r on a store asks which kind to run with the preferred one picked; j/k pick another; y runs it', () => {
    const stores = initialUi({ view: 'stores' });
    const run = press(stores, ['r']).state.confirm;
    expect(run).toEqual({
      action: 'run',
      items: [{ kind: 'merge_wal', target: 'a' }],
      choice: { kinds: STORE_KINDS, at: 1, targets: ['a'] },
    });
    expect(describeAction(run!)).toBe('run merge_wal now on a');
    // Moves stop at the ends of the list.
    expect(press(stores, ['r', 'j', 'j', { input: '', downArrow: true }]).state.confirm?.items).toEqual([
      { kind: 'verify', target: 'a' },
    ]);
    const first = press(stores, ['r', 'k', { input: '', upArrow: true }]);
    expect(first.state.overlay).toBe('confirm');
    expect(describeAction(first.state.confirm!)).toBe('run compact now on a');
    expect(press(first.state, ['y']).effects).toEqual([{ type: 'execute', action: first.state.confirm }]);
    expect(first.state.confirm?.items).toEqual([{ kind: 'compact', target: 'a' }]);
    // `r` then `y` (or Enter) runs the preferred kind, as before there was a choice.
    expect(press(stores, ['r', { input: '', return: true }]).effects).toEqual([{ type: 'execute', action: run }]);
  });

  it('the kind picked applies to every marked store', () => {
    const s = press(initialUi({ view: 'stores' }), [' ', ' ', 'r', 'j']).state;
    expect(s.confirm?.items).toEqual([
      { kind: 'verify', target: 'a' },
      { kind: 'verify', target: 'b' },
    ]);
    expect(describeAction(s.confirm!)).toBe('run verify now on 2 targets');
  });

  it('without the preferred kind the first offered is picked, and with none offered r says so', () => {
    const only = (kinds: string[]): KeyContext =>
      ctx(KEYS, { resolve: (_v, ks) => ks.flatMap((target) => kinds.map((kind) => ({ kind, target }))) });
    const s = press(initialUi({ view: 'stores' }), ['r'], only(['verify', 'compact'])).state;
    expect(s.confirm?.items).toEqual([{ kind: 'verify', target: 'a' }]);
    const none = press(initialUi({ view: 'stores' }), ['r'], only([])).state;
    expect(none.overlay).toBe('none');
    expect(none.notice?.text).toBe('no kind to offer yet: no live master has said which kinds it runs');
  });

  it('x, which ran one named kind, is retired and says where to go instead', () => {
    const r = press(initialUi({ view: 'stores' }), ['x']);
    expect(r.state.overlay).toBe('none');
    expect(r.effects).toEqual([]);
    expect(r.state.notice).toEqual({ text: 'x is retired: r asks which kind to run', tone: 'info' });
  });

  it('an action with nothing to act on says so instead of asking', () => {
    const none = ctx(KEYS, { resolve: () => [] });
    const s = press(initialUi({ view: 'workers' }), ['c'], none).state;
    expect(s.overlay).toBe('none');
    expect(s.notice?.text).toMatch(/no cooldown/);
  });

  it('in the detail pane, an action applies to the item shown', () => {
    const s = press(cooldowns(), ['j', ' ', { input: '', return: true }, 'c']).state;
    expect(s.confirm?.items).toEqual([{ kind: 'merge_wal', target: 'c' }]);
    expect(press(s, ['n']).state.overlay).toBe('detail');
  });

  it('read-only mode refuses every action and says so', () => {
    for (const k of ['r', 'c', 'x']) {
      const s = press(initialUi({ view: 'cooldowns', readonly: true }), [k]).state;
      expect(s.overlay).toBe('none');
      expect(s.notice).toEqual({ text: 'read-only mode (--readonly): actions are disabled', tone: 'bad' });
    }
  });

  it('the next key clears a notice', () => {
    const s = press(initialUi({ view: 'cooldowns', readonly: true }), ['c', 'j']).state;
    expect(s.notice).toBeUndefined();
  });
});

describe('park and release', () => {
  it('p opens the reason prompt; Enter with a reason goes on to the confirm dialog; y parks', () => {
    const opened = press(cooldowns(), ['p']).state;
    expect(opened.overlay).toBe('reason');
    expect(opened.confirm).toEqual({ action: 'park', items: [{ kind: 'merge_wal', target: 'a' }] });
    // Keys while typing belong to the text field: q does not quit, j does not move.
    const typing = press(opened, ['q', 'j']);
    expect(typing.effects).toEqual([]);
    expect(typing.state.overlay).toBe('reason');
    expect(typing.state.reasonDraft).toBe('qj');
    // A pasted reason arrives as one input; backspace edits it; Enter takes it at once.
    const confirmed = press(opened, [
      '  fragment\u0007 lostt',
      { input: '', backspace: true },
      { input: '', return: true },
    ]).state;
    expect(confirmed.overlay).toBe('confirm');
    expect(confirmed.confirm?.reason).toBe('fragment lost');
    expect(confirmed.reasonDraft).toBe('');
    expect(describeAction(confirmed.confirm!)).toBe('park merge_wal a');
    const done = press(confirmed, ['y']);
    expect(done.effects).toEqual([
      {
        type: 'execute',
        action: { action: 'park', items: [{ kind: 'merge_wal', target: 'a' }], reason: 'fragment lost' },
      },
    ]);
  });

  it('refuses an empty reason (the prompt stays) and bounds a long one to 512 characters', () => {
    const opened = press(cooldowns(), ['p']).state;
    const empty = submitReason(opened, '   ');
    expect(empty.overlay).toBe('reason');
    expect(empty.notice?.text).toBe('a park needs a reason (Esc cancels)');
    expect(submitReason(opened, 'x'.repeat(600)).confirm?.reason).toHaveLength(512);
  });

  it('Esc in the prompt cancels the park', () => {
    const s = press(cooldowns(), ['p', { input: '', escape: true }]).state;
    expect(s.overlay).toBe('none');
    expect(s.confirm).toBeUndefined();
    expect(s.notice?.text).toBe('cancelled');
  });

  it('u asks to release, and says so when nothing selected is parked', () => {
    const s = press(cooldowns(), ['u']).state;
    expect(s.overlay).toBe('confirm');
    expect(s.confirm?.action).toBe('release');
    const none = press(cooldowns(), ['u'], ctx(KEYS, { resolve: () => [] })).state;
    expect(none.overlay).toBe('none');
    expect(none.notice?.text).toBe('not parked: nothing to release');
  });
});

describe('splitInput', () => {
  it('turns an Enter or a backspace inside a chunk into that key (a reason typed, then Enter)', () => {
    expect(splitInput({ input: 'ab\r' })).toEqual([{ input: 'a' }, { input: 'b' }, { input: '', return: true }]);
    expect(splitInput({ input: 'a\u007f' })).toEqual([{ input: 'a' }, { input: '', backspace: true }]);
  });

  it('splits a chunk of typed keys into one press per key', () => {
    expect(splitInput({ input: '  c' })).toEqual([{ input: ' ' }, { input: ' ' }, { input: 'c' }]);
  });

  it('leaves single keys and special keys alone', () => {
    expect(splitInput({ input: 'j' })).toEqual([{ input: 'j' }]);
    expect(splitInput({ input: '', return: true })).toEqual([{ input: '', return: true }]);
  });
});
