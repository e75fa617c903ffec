import { describe, expect, it } from 'vitest';
import type { Capacity } from '../api/types.js';
import { causeKey, consumerKey, overviewRowKeys, parseOverviewKey } from '../common/overview-rows.js';
import { describeBulk, previewed, startPreview } from './bulk.js';
import { overviewKey } from './overview-keys.js';
import { initialUi, submitReason } from './ui.js';

const KEYS = [
  consumerKey('merge_wal', 'broken-store'),
  consumerKey('merge_wal', 'orders-eu'),
  causeKey('3fa2b1c9d0e4'),
];

describe('the Overview’s selectable rows', () => {
  it('are each kind’s top three stores, then the top five causes; none from a master that serves neither', () => {
    const use = (target: string) => ({ target, busy_seconds: 1, failed_seconds: 0, tasks: 1, failed_tasks: 0 });
    const kind = (name: string, stores: string[]) => ({
      kind: name,
      slots: 4,
      busy_seconds: { success: 1, failed: 0 },
      failed_share: 0,
      tasks: 1,
      failed_tasks: 0,
      top: stores.map(use),
    });
    const capacity: Capacity = {
      window_secs: 3600,
      at: '2023-11-14T22:13:20Z',
      kinds: [kind('merge_wal', ['a', 'b', 'c', 'd']), kind('compact', ['e'])],
    };
    const cause = (id: string) => ({
      cause: id,
      example: 'x',
      kinds: [],
      targets: 1,
      failures: 1,
      first_failure: '',
      last_failure: '',
    });
    const keys = overviewRowKeys(capacity, ['1', '2', '3', '4', '5', '6'].map(cause));
    expect(keys).toEqual([
      'consumer:merge_wal/a',
      'consumer:merge_wal/b',
      'consumer:merge_wal/c',
      'consumer:compact/e',
      'cause:1',
      'cause:2',
      'cause:3',
      'cause:4',
      'cause:5',
    ]);
    expect(overviewRowKeys('unsupported', 'unsupported')).toEqual([]);
    expect(overviewRowKeys(undefined, undefined)).toEqual([]);
  });

  it('name what they are, a store with a slash in its name included', () => {
    expect(parseOverviewKey(consumerKey('compact', 'a/b'))).toEqual({
      type: 'consumer',
      kind: 'compact',
      target: 'a/b',
    });
    expect(parseOverviewKey(causeKey('3fa2b1c9d0e4'))).toEqual({ type: 'cause', cause: '3fa2b1c9d0e4' });
    expect(parseOverviewKey('other')).toBeUndefined();
  });
});

describe('overviewKey', () => {
  it('moves the selection over the rows with j/k and g/G, staying within them', () => {
    const s = initialUi();
    const down = overviewKey(s, { input: 'j' }, KEYS).state;
    expect(down.overview).toEqual({ selected: KEYS[1], index: 1 });
    expect(overviewKey(down, { input: 'G' }, KEYS).state.overview.selected).toBe(KEYS[2]);
    expect(overviewKey(down, { input: 'k' }, KEYS).state.overview.selected).toBe(KEYS[0]);
    expect(overviewKey(s, { input: 'k' }, KEYS).state.overview.selected).toBe(KEYS[0]);
    expect(overviewKey(s, { input: 'j' }, []).state).toBe(s);
  });

  it('opens the selected top store’s detail pane on Enter, as the Stores view does', () => {
    const { state, effects } = overviewKey(initialUi(), { input: '', return: true }, KEYS);
    expect(state.overlay).toBe('detail');
    expect(state.detail).toEqual({ view: 'stores', key: 'broken-store' });
    expect(effects).toEqual([{ type: 'load-detail', view: 'stores', key: 'broken-store' }]);
  });

  it('starts a bulk park of a selected cause’s stores with P: the reason, then the dry run of cause=', () => {
    const s = { ...initialUi(), overview: { selected: KEYS[2], index: 2 } };
    const asked = overviewKey(s, { input: 'P' }, KEYS).state;
    expect(asked.overlay).toBe('reason');
    expect(asked.confirm).toEqual({ action: 'park', items: [], bulk: { q: '', cause: '3fa2b1c9d0e4' } });
    const reasoned = submitReason(asked, 'restore planned');
    const { state, effects } = startPreview(reasoned, reasoned.confirm!);
    expect(state.notice?.text).toBe('counting the stores of cause 3fa2b1c9d0e4…');
    expect(effects).toEqual([{ type: 'preview', action: reasoned.confirm }]);
    const entries = [{ kind: 'merge_wal', target: 'broken-store' }];
    const confirming = previewed(state, reasoned.confirm!, { count: 2, entries });
    expect(confirming.overlay).toBe('confirm');
    expect(confirming.confirm?.bulk).toEqual({ q: '', cause: '3fa2b1c9d0e4', count: 2 });
    expect(previewed(state, reasoned.confirm!, { count: 0, entries: [] }).notice?.text).toBe(
      'nothing fails with cause 3fa2b1c9d0e4 on the master',
    );
  });

  it('refuses P under --readonly, and on a row that is not a cause says what P is for', () => {
    const ro = { ...initialUi({ readonly: true }), overview: { selected: KEYS[2], index: 2 } };
    expect(overviewKey(ro, { input: 'P' }, KEYS).state.notice?.text).toContain('read-only mode');
    expect(overviewKey(initialUi(), { input: 'P' }, KEYS).state.notice?.text).toContain('select one with j/k');
  });

  it('names a cause’s bulk park by the cause', () => {
    expect(describeBulk('park', { q: '', cause: '3fa2b1c9d0e4', count: 2 })).toBe(
      'park 2 stores failing with cause 3fa2b1c9d0e4',
    );
  });
});
