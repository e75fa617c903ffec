import { DEFAULT_COOLDOWN_POLICY, type ParkRecord, type TaskCooldown, type TaskKind } from '@maintd/core';
import { KIND_NAMES } from '@maintd/scheduler';
import type { CooldownView } from '@maintd/api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CooldownIndex } from './cooldown-index.js';
import type { CooldownPageQuery } from './cooldown-query.js';

const NOW = Date.UTC(2026, 0, 1);

function cooldown(
  kind: TaskKind,
  target: string,
  failures: number,
  untilMs: number | null,
  last: number,
): TaskCooldown {
  return {
    kind,
    target,
    failures,
    until_ms: untilMs,
    last_error: `e${failures}`,
    last_error_class: 'target',
    first_failure_ms: last - 1000,
    last_failure_ms: last,
    last_task_id: `t-${target}`,
  };
}

function park(kind: TaskKind, target: string, untilMs: number | null): ParkRecord {
  return { kind, target, reason: 'r', by: 'b', parked_at_ms: NOW - 5, until_ms: untilMs };
}

/** Every entry of a query, following the cursors page by page. */
function walk(index: CooldownIndex, query: Omit<CooldownPageQuery, 'cursor'>, now: number): CooldownView[] {
  const out: CooldownView[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const page = index.page({ ...query, cursor }, now);
    out.push(...(JSON.parse(new TextDecoder().decode(page.body)) as CooldownView[]));
    if (page.nextCursor === null) {
      expect(out).toHaveLength(page.total);
      return out;
    }
    cursor = page.nextCursor;
  }
  throw new Error('more than 1000 pages');
}

const kindArb = fc.constantFrom(...KIND_NAMES);
const targetArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const timeArb = fc.option(fc.integer({ min: NOW - 3, max: NOW + 3 }), { nil: null });
/** One change as a watch delivers it: a record or a park written or deleted. */
const changeArb = fc.oneof(
  fc.record({
    half: fc.constant('cooldown' as const),
    kind: kindArb,
    target: targetArb,
    put: fc.option(
      fc.record({ failures: fc.integer({ min: 1, max: 4 }), until: timeArb, last: fc.integer({ min: 0, max: 3 }) }),
      { nil: undefined },
    ),
  }),
  fc.record({
    half: fc.constant('park' as const),
    kind: kindArb,
    target: targetArb,
    put: fc.option(fc.record({ until: timeArb }), { nil: undefined }),
  }),
);

describe('CooldownIndex', () => {
  it('pages every order, state and kind like an index built afresh, through any sequence of changes', () => {
    fc.assert(
      fc.property(
        fc.array(changeArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: -2, max: 4 }),
        (changes, limit, later) => {
          const index = new CooldownIndex(DEFAULT_COOLDOWN_POLICY);
          const cooldowns = new Map<string, TaskCooldown>();
          const parks = new Map<string, ParkRecord>();
          const queries: Omit<CooldownPageQuery, 'cursor'>[] = [];
          for (const sort of ['until', 'failures', 'last_failure'] as const) {
            for (const state of [undefined, 'cooling', 'parked', 'below', 'lapsed', 'any'] as const) {
              queries.push({ limit, sort, state }, { limit, sort, state, kind: 'compact' });
            }
          }
          let revision = 10;
          for (const [i, c] of changes.entries()) {
            const key = `${c.kind}/${c.target}`;
            if (c.half === 'cooldown') {
              const record = c.put && cooldown(c.kind, c.target, c.put.failures, c.put.until, NOW - c.put.last);
              index.applyCooldown(c.kind, c.target, record, ++revision);
              if (record) cooldowns.set(key, record);
              else cooldowns.delete(key);
            } else {
              const record = c.put && park(c.kind, c.target, c.put.until);
              index.applyPark(c.kind, c.target, record, ++revision);
              if (record) parks.set(key, record);
              else parks.delete(key);
            }
            // Read now and then, so that kept orders and pages must follow the later changes.
            if (i % 7 === 0) walk(index, queries[i % queries.length]!, NOW);
          }
          // Time passes without a change: states that depend on it must follow. The reference is
          // built afresh for each time, so that it keeps nothing from an earlier one.
          for (const now of [NOW, NOW + later]) {
            const fresh = CooldownIndex.from([...cooldowns.values()], [...parks.values()], DEFAULT_COOLDOWN_POLICY);
            for (const q of queries) expect(walk(index, q, now)).toEqual(walk(fresh, q, now));
            expect(index.list(undefined, true, now)).toEqual(fresh.list(undefined, true, now));
            expect(index.parkedCounts(now)).toEqual(fresh.parkedCounts(now));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('ignores a watch event older than what it holds, and lets a later event replace a local write', () => {
    const index = new CooldownIndex(DEFAULT_COOLDOWN_POLICY);
    index.applyCooldown('compact', 'a', cooldown('compact', 'a', 2, NOW + 10, NOW), 20);
    expect(index.applyCooldown('compact', 'a', undefined, 19)).toBe(false);
    expect(index.view('compact', 'a', NOW)?.failures).toBe(2);
    index.wrotePark('compact', 'a', park('compact', 'a', null));
    expect(index.view('compact', 'a', NOW)?.state).toBe('parked');
    // The watch reports the park with its real revision, then its release.
    expect(index.applyPark('compact', 'a', park('compact', 'a', null), 21)).toBe(true);
    expect(index.applyPark('compact', 'a', undefined, 22)).toBe(true);
    expect(index.view('compact', 'a', NOW)?.state).toBe('cooling');
  });

  it('resumes a page after its cursor even when the entry it ended on is gone', () => {
    const index = CooldownIndex.from(
      ['a', 'b', 'c', 'd'].map((t, i) => cooldown('compact', t, 3, NOW + 100 + i, NOW)),
      [],
      DEFAULT_COOLDOWN_POLICY,
    );
    const first = index.page({ limit: 2 }, NOW);
    index.wroteCooldown('compact', 'b', undefined);
    const second = index.page({ limit: 2, cursor: first.nextCursor! }, NOW);
    expect((JSON.parse(new TextDecoder().decode(second.body)) as CooldownView[]).map((c) => c.target)).toEqual([
      'c',
      'd',
    ]);
    expect(second.total).toBe(3);
  });

  it('refuses a cursor of another order or one it did not hand out', () => {
    const index = CooldownIndex.from(
      ['a', 'b'].map((t) => cooldown('merge_wal', t, 3, NOW + 100, NOW)),
      [],
      DEFAULT_COOLDOWN_POLICY,
    );
    const { nextCursor } = index.page({ limit: 1, sort: 'failures' }, NOW);
    expect(() => index.page({ limit: 1, sort: 'until', cursor: nextCursor! }, NOW)).toThrow(/sorted by failures/);
    for (const bad of ['x', 'WzEsMl0', Buffer.from('["until",1,"No pe","a"]').toString('base64url')]) {
      expect(() => index.page({ limit: 1, cursor: bad }, NOW)).toThrow(expect.objectContaining({ field: 'cursor' }));
    }
  });
});
