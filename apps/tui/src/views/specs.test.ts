import { describe, expect, it } from 'vitest';
import { deriveRows } from '../../test/derive-rows.js';
import { cooldown, park, policy } from '../../test/fake-master.js';
import { cooldownMap } from '../state/fleet.js';
import { EMPTY_FLEET } from '../state/fleet-data.js';
import { layoutColumns } from './columns.js';
import { COOLDOWNS, nextWindowMs, stateCell, untilText } from './cooldowns.js';
import { causeOf, countText, timeLeft } from '../common/cooldown-text.js';
import { STORES } from './stores.js';

const data = {
  ...EMPTY_FLEET,
  cooldowns: cooldownMap([
    cooldown('alpha', { failures: 3, until_ms: 5_000, last_failure_ms: 10, last_error: 'Not found: a.lance' }),
    cooldown('beta', { failures: 7, until_ms: 9_000, last_failure_ms: 30, last_error: 'timeout' }),
    cooldown('gamma', { failures: 1, until_ms: null, last_failure_ms: 20, last_error: 'Not found: g.lance' }),
    cooldown('delta', { kind: 'compact', failures: 4, until_ms: 1_000, last_failure_ms: 40, last_error: 'boom' }),
  ]),
};
const targets = (rows: readonly { target: string }[]): string[] => rows.map((r) => r.target);

describe('deriveRows', () => {
  it('sorts cooldowns by the end of their window, counters below the threshold last', () => {
    expect(targets(deriveRows(COOLDOWNS, data, '', 0))).toEqual(['beta', 'alpha', 'delta', 'gamma']);
  });

  it('cycles through failures, last failure and target orders', () => {
    expect(targets(deriveRows(COOLDOWNS, data, '', 1))).toEqual(['beta', 'delta', 'alpha', 'gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, '', 2))).toEqual(['delta', 'beta', 'gamma', 'alpha']);
    expect(targets(deriveRows(COOLDOWNS, data, '', 3))).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, '', 4))).toEqual(targets(deriveRows(COOLDOWNS, data, '', 0)));
  });

  it('searches cooldowns as the master’s q= does: a case-insensitive substring of the store name or the error', () => {
    expect(targets(deriveRows(COOLDOWNS, data, 'NOT FOUND', 3))).toEqual(['alpha', 'gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, 'found: g.lance', 3))).toEqual(['gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, 'ALPH', 3))).toEqual(['alpha']);
    // Words in another order, or the kind, are not the master's search: the rows shown are what a
    // bulk action over the search acts on.
    expect(deriveRows(COOLDOWNS, data, 'g.lance not', 0)).toEqual([]);
    expect(deriveRows(COOLDOWNS, data, 'compact', 0)).toEqual([]);
  });

  it('filters stores by every word of the filter', () => {
    const stores = {
      ...data,
      stores: ['orders-eu', 'orders-us', 'events'].map((name) => ({
        name,
        pending_wal_generations: 1,
        fragment_count: 1,
        row_count: 1,
        owners: [],
        scanned_at: 0,
        cooldowns: [],
      })),
    };
    expect(deriveRows(STORES, stores, 'ORD eu', 3).map((s) => s.name)).toEqual(['orders-eu']);
  });

  it('sorts stores by backlog, and by cooling using the live cooldowns', () => {
    const stores = {
      ...data,
      stores: ['alpha', 'zeta', 'beta'].map((name, i) => ({
        name,
        pending_wal_generations: [10, 500, 3][i]!,
        fragment_count: 1,
        row_count: 1,
        owners: [],
        scanned_at: 0,
        cooldowns: [],
      })),
    };
    expect(deriveRows(STORES, stores, '', 0).map((s) => s.name)).toEqual(['zeta', 'alpha', 'beta']);
    expect(deriveRows(STORES, stores, '', 2).map((s) => s.name)).toEqual(['beta', 'alpha', 'zeta']);
  });
});

describe('cooldown cells', () => {
  it('names the state at the time shown: parked, cooling, below the threshold, or lapsed', () => {
    expect(stateCell(cooldown('a', { until_ms: 2000 }), 1000).text).toBe('cooling');
    expect(stateCell(cooldown('a', { until_ms: 500 }), 1000).text).toBe('lapsed');
    expect(stateCell(cooldown('a', { until_ms: null }), 1000).text).toBe('below');
    expect(stateCell(cooldown('a', { until_ms: 2000, parked: park('why') }), 1000).text).toBe('parked');
    // A park that lapsed counts as not parked.
    expect(stateCell(cooldown('a', { until_ms: null, parked: park('why', { until_ms: 900 }) }), 1000).text).toBe(
      'below',
    );
  });

  it('counts the time left down each second, and shows a dash once the window lapsed', () => {
    const c = cooldown('a', { until_ms: 600_000 });
    expect(timeLeft(c, 0)).toBe('10m00s');
    expect(timeLeft(c, 1000)).toBe('9m59s');
    expect(timeLeft(c, 599_500)).toBe('1s');
    expect(timeLeft(c, 600_000)).toBe('-');
    expect(timeLeft(cooldown('a', { until_ms: null }), 0)).toBe('-');
    expect(untilText(cooldown('a', { until_ms: null }), 0)).toBe('-');
  });

  it('counts failures against the threshold, and says which window a next failure would open', () => {
    const p = policy({ threshold: 3, base_secs: 600, max_secs: 3600, jitter: 0 });
    expect(countText(cooldown('a', { failures: 4 }), p)).toBe('4/3');
    expect(countText(cooldown('a', { failures: 4 }), undefined)).toBe('4');
    expect(countText(cooldown('a', { kind: 'compact', failures: 4 }), { ...p, kinds: ['merge_wal'] })).toBe('4');
    // base · 2^(failures + 1 − threshold), capped at max; none below the threshold.
    expect(nextWindowMs(cooldown('a', { failures: 1 }), p)).toBeUndefined();
    expect(nextWindowMs(cooldown('a', { failures: 2 }), p)).toBe(600_000);
    expect(nextWindowMs(cooldown('a', { failures: 3 }), p)).toBe(1_200_000);
    expect(nextWindowMs(cooldown('a', { failures: 9 }), p)).toBe(3_600_000);
    expect(nextWindowMs(cooldown('a', { failures: 3 }), undefined)).toBeUndefined();
  });

  it('puts the cause first, also for an executor that threw', () => {
    const cause = 'http://w1:8080: HTTP 500: Not found: /data/x.lance (merged 0 generations across 1/2 workers)';
    expect(causeOf(cause)).toBe(cause);
    expect(causeOf('executor failed: Error: boom')).toBe('Error: boom (executor failed)');
  });
});

describe('layoutColumns', () => {
  it('fits the cooldown table into 80 columns by dropping the least important columns', () => {
    const cols = layoutColumns(COOLDOWNS.columns, 78);
    expect(cols.map((c) => c.title)).toEqual(['KIND', 'TARGET', 'STATE', 'FAILS', 'LEFT', 'CAUSE']);
    expect(cols.reduce((n, c) => n + c.size, 0) + cols.length - 1).toBe(78);
  });

  it('shows every column on a wide terminal and gives the rest to the cause', () => {
    const cols = layoutColumns(COOLDOWNS.columns, 200);
    expect(cols).toHaveLength(COOLDOWNS.columns.length);
    expect(cols.at(-1)!.size).toBeGreaterThan(100);
  });
});
