import { describe, expect, it } from 'vitest';
import { describeBulk, previewed, requestBulk } from './bulk.js';
import { initialUi } from './ui.js';
import type { UiState } from './ui-state.js';

const searching = (q: string): UiState => {
  const s = initialUi({ view: 'cooldowns' });
  return { ...s, lists: { ...s.lists, cooldowns: { ...s.lists.cooldowns, filter: q } } };
};

describe('bulk actions in the key reducer', () => {
  it('names the action with the master’s count, or "every store" before it answered', () => {
    expect(describeBulk('park', { q: 'lost fragment', count: 14 })).toBe("park 14 stores matching 'lost fragment'");
    expect(describeBulk('reset', { q: 'x', count: 1 })).toBe("reset 1 store matching 'x'");
    expect(describeBulk('park', { q: 'x' })).toBe("park every store matching 'x'");
  });

  it('C asks for the dry run of the search as typed (trimmed); P asks for the reason first', () => {
    const reset = requestBulk(searching(' disk '), 'reset');
    expect(reset.effects).toEqual([{ type: 'preview', action: { action: 'reset', items: [], bulk: { q: 'disk' } } }]);
    expect(reset.state.notice?.text).toBe("counting the matches of 'disk'…");
    const park = requestBulk(searching('disk'), 'park');
    expect(park.effects).toEqual([]);
    expect(park.state.overlay).toBe('reason');
  });

  it('acts only on a search in the Cooldowns list', () => {
    expect(requestBulk(searching(''), 'reset').effects).toEqual([]);
    expect(requestBulk({ ...searching('x'), view: 'tasks' }, 'reset').effects).toEqual([]);
    expect(requestBulk({ ...searching('x'), overlay: 'detail' }, 'park').state.overlay).toBe('detail');
  });

  it('opens the confirm dialog with the dry run’s count and first matches, unless the operator moved on', () => {
    const pending = { action: 'reset' as const, items: [], bulk: { q: 'disk' } };
    const entries = Array.from({ length: 8 }, (_, i) => ({ kind: 'merge_wal', target: `s${i}` }));
    const open = previewed(searching('disk'), pending, { count: 40, entries });
    expect(open.overlay).toBe('confirm');
    expect(open.confirm?.bulk).toEqual({ q: 'disk', count: 40 });
    expect(open.confirm?.items).toHaveLength(5);
    expect(previewed({ ...searching('disk'), view: 'stores' }, pending, { count: 40, entries }).overlay).toBe('none');
    expect(previewed(searching('disk'), pending, { count: 0, entries: [] }).notice?.text).toBe(
      "nothing matches 'disk' on the master",
    );
  });
});
