import { describe, expect, it } from 'vitest';
import { cooldown } from '../../test/fake-master.js';
import { EMPTY_FLEET, cooldownMap } from '../state/fleet.js';
import { layoutColumns } from './columns.js';
import { COOLDOWNS, STORES, cooldownState, deriveRows, timeLeft } from './specs.js';

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

  it('filters case-insensitively on kind, target and error; every word must match', () => {
    expect(targets(deriveRows(COOLDOWNS, data, 'NOT FOUND', 3))).toEqual(['alpha', 'gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, 'not g.lance', 3))).toEqual(['gamma']);
    expect(targets(deriveRows(COOLDOWNS, data, 'compact', 3))).toEqual(['delta']);
    expect(deriveRows(COOLDOWNS, data, 'nothing-like-this', 0)).toEqual([]);
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
  it('names the state: cooling, expired, or counting below the threshold', () => {
    expect(cooldownState(cooldown('a', { until_ms: 2000 }), 1000).text).toBe('cooling');
    expect(cooldownState(cooldown('a', { until_ms: 500 }), 1000).text).toBe('expired');
    expect(cooldownState(cooldown('a', { until_ms: null }), 1000).text).toBe('counting');
  });

  it('counts the time left down each second', () => {
    const c = cooldown('a', { until_ms: 600_000 });
    expect(timeLeft(c, 0)).toBe('10m00s');
    expect(timeLeft(c, 1000)).toBe('9m59s');
    expect(timeLeft(c, 599_500)).toBe('1s');
    expect(timeLeft(c, 600_000)).toBe('expired');
    expect(timeLeft(cooldown('a', { until_ms: null }), 0)).toBe('–');
  });
});

describe('layoutColumns', () => {
  it('fits the cooldown table into 80 columns by dropping the least important columns', () => {
    const cols = layoutColumns(COOLDOWNS.columns, 78);
    expect(cols.map((c) => c.title)).toEqual(['KIND', 'TARGET', 'FAIL', 'STATE', 'LEFT', 'LAST ERROR']);
    expect(cols.reduce((n, c) => n + c.size, 0) + cols.length - 1).toBe(78);
  });

  it('shows every column on a wide terminal and gives the rest to the error', () => {
    const cols = layoutColumns(COOLDOWNS.columns, 200);
    expect(cols).toHaveLength(COOLDOWNS.columns.length);
    expect(cols.at(-1)!.size).toBeGreaterThan(100);
  });
});
