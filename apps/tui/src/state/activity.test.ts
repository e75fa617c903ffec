import { describe, expect, it } from 'vitest';
import { auditEntry, cooldown, park } from '../../test/fake-master.js';
import {
  type Activity,
  MAX_ACTIVITY,
  SAME_ACTION_MS,
  appendActivity,
  inTimeOrder,
  withOwnActivity,
} from './activity.js';
import { auditActivity, pairRef } from './audit-lines.js';
import { parkActivity } from './fleet.js';

const T = 1_700_000_000_000;
const parkEntry = auditEntry({ action: 'cooldown.park', outcome: 'parked', reason: 'disk swap', at_ms: T });
const parkNote = parkActivity(
  'merge_wal',
  'store-12',
  undefined,
  cooldown('store-12', { parked: park('disk swap', { parked_at_ms: T, by: 'alice@10.0.0.5' }) }),
  T,
)!;
const own = (keys: string[], over: Partial<Activity> = {}): Activity => ({
  at: T + 1000,
  text: 'parked merge_wal store-12: disk swap',
  tone: 'ok',
  subject: { source: 'own', keys },
  ...over,
});

describe('appendActivity', () => {
  it('shows a park once: the audit line replaces the park note of the same pair, whichever came first', () => {
    const audit = auditActivity(parkEntry);
    expect(appendActivity([], [parkNote, audit])).toEqual([audit]);
    expect(appendActivity([parkNote], [audit])).toEqual([audit]);
    expect(appendActivity([audit], [parkNote])).toEqual([audit]);
    // Without an audit trail (a 0.1.0 master) the note is all there is.
    expect(appendActivity([], [parkNote])).toEqual([parkNote]);
    // The same pair much later is another park.
    const later = { ...parkNote, at: T + SAME_ACTION_MS + 1 };
    expect(appendActivity([audit], [later])).toEqual([audit, later]);
  });

  it('replaces a bulk action’s line as its count grows, and its parks’ notes are covered by it', () => {
    const bulk = (count: number): Activity =>
      auditActivity(
        auditEntry({
          id: 'bulk-1',
          action: 'cooldowns.park',
          outcome: 'parked',
          kind: undefined,
          target: undefined,
          filter: { q: 'quota' },
          reason: 'disk swap',
          count,
          at_ms: T,
        }),
      );
    const other = parkActivity(
      'merge_wal',
      'store-9',
      undefined,
      cooldown('store-9', { parked: park('other', { parked_at_ms: T }) }),
      T,
    )!;
    let log = appendActivity([], [bulk(1), parkNote]);
    log = appendActivity(log, [other, bulk(2)]);
    expect(log.map((l) => l.text)).toEqual([
      "alice@10.0.0.5 parked 2 stores matching 'quota': disk swap",
      'parked merge_wal store-9 (token@127.0.0.1): other',
    ]);
  });

  it('returns the log itself when a re-read brings only lines it has, and puts a late one in time order', () => {
    const a = auditActivity(auditEntry({ id: 'a', at_ms: T }));
    const b = auditActivity(auditEntry({ id: 'b', at_ms: T + 2 }));
    const log = appendActivity([], [a, b]);
    expect(appendActivity(log, [auditActivity(auditEntry({ id: 'a', at_ms: T }))])).toBe(log);
    expect(inTimeOrder(log)).toBe(log);
    const late = auditActivity(auditEntry({ id: 'c', at_ms: T + 1 }));
    expect(inTimeOrder(appendActivity(log, [late])).map((l) => l.subject?.id)).toEqual(['a', 'c', 'b']);
  });

  it('takes a park made without a token (by the address alone) for the anonymous bulk park’s', () => {
    const bulk = auditActivity(
      auditEntry({
        who: 'anonymous',
        client: '127.0.0.1',
        action: 'cooldowns.park',
        kind: undefined,
        target: undefined,
        filter: { q: 'x' },
        reason: 'r',
        count: 1,
        at_ms: T,
      }),
    );
    const note = parkActivity(
      'compact',
      'x1',
      undefined,
      cooldown('x1', { parked: park('r', { parked_at_ms: T, by: '127.0.0.1' }) }),
      T,
    )!;
    expect(appendActivity([bulk], [note])).toEqual([bulk]);
    const other = parkActivity(
      'compact',
      'x1',
      undefined,
      cooldown('x1', { parked: park('r', { parked_at_ms: T, by: '10.9.9.9' }) }),
      T,
    )!;
    expect(appendActivity([bulk], [other])).toEqual([bulk, other]);
  });

  it('keeps at most MAX_ACTIVITY lines, the newest', () => {
    const many = Array.from({ length: MAX_ACTIVITY + 5 }, (_, i) =>
      auditActivity(auditEntry({ id: `id-${i}`, at_ms: T + i })),
    );
    const log = appendActivity([], many);
    expect(log).toHaveLength(MAX_ACTIVITY);
    expect(log[0]!.subject?.id).toBe('id-5');
  });
});

describe('withOwnActivity', () => {
  const audit = auditActivity(parkEntry);

  it('marks the audit line of this dashboard’s action as its own, and leaves its own line out', () => {
    const mine = own([pairRef('park', 'merge_wal', 'store-12')]);
    expect(withOwnActivity([audit], [mine]).map((l) => l.text)).toEqual([
      'alice@10.0.0.5 (you) parked merge_wal on store-12: disk swap',
    ]);
  });

  it('keeps an own line some of whose items the trail has not recorded, and a failed one', () => {
    const two = own([pairRef('park', 'merge_wal', 'store-12'), pairRef('park', 'merge_wal', 'store-13')], {
      text: 'parked 2 of 2',
    });
    expect(withOwnActivity([audit], [two]).map((l) => l.text)).toEqual([
      'alice@10.0.0.5 (you) parked merge_wal on store-12: disk swap',
      'parked 2 of 2',
    ]);
    const failed = own([pairRef('park', 'merge_wal', 'store-12')], { tone: 'bad', text: 'park failed for 1: …' });
    expect(withOwnActivity([audit], [failed]).map((l) => l.text)).toEqual([
      'alice@10.0.0.5 (you) parked merge_wal on store-12: disk swap',
      'park failed for 1: …',
    ]);
  });

  it('marks only the entry nearest in time to its own action, not an earlier one of the same pair, nor another verb', () => {
    const earlier = auditActivity({ ...parkEntry, id: 'earlier', who: 'bob', at_ms: T - 60_000 });
    const mine = own([pairRef('park', 'merge_wal', 'store-12')]);
    expect(withOwnActivity([earlier, audit], [mine]).map((l) => l.text)).toEqual([
      'bob@10.0.0.5 parked merge_wal on store-12: disk swap',
      'alice@10.0.0.5 (you) parked merge_wal on store-12: disk swap',
    ]);
    // The dashboard released it (a DELETE: its reset and release entries, both its own); the park
    // before it was someone else's.
    const reset = auditActivity(auditEntry({ id: 'r', at_ms: T + 5000, action: 'cooldown.reset', outcome: 'reset' }));
    const release = auditActivity(
      auditEntry({ id: 'l', at_ms: T + 5003, action: 'cooldown.release', outcome: 'released' }),
    );
    const released = own([pairRef('delete', 'merge_wal', 'store-12')], { at: T + 5100, text: 'released' });
    expect(withOwnActivity([audit, reset, release], [released]).map((l) => l.text)).toEqual([
      'alice@10.0.0.5 parked merge_wal on store-12: disk swap',
      'alice@10.0.0.5 (you) reset merge_wal cooldown of store-12',
      'alice@10.0.0.5 (you) released merge_wal on store-12',
    ]);
  });

  it('leaves others’ lines alone, and everything as it was without an audit trail', () => {
    const elsewhere = own([pairRef('park', 'compact', 'store-1')], { text: 'reset the cooldown of compact store-1' });
    expect(withOwnActivity([audit], [elsewhere]).map((l) => l.text)).toEqual([
      'alice@10.0.0.5 parked merge_wal on store-12: disk swap',
      'reset the cooldown of compact store-1',
    ]);
    const mine = own([pairRef('park', 'merge_wal', 'store-12')]);
    expect(withOwnActivity([parkNote], [mine])).toEqual([parkNote, mine]);
    expect(withOwnActivity([audit], [])).toEqual([audit]);
    // Long after: another action on the same pair.
    const old = own([pairRef('park', 'merge_wal', 'store-12')], { at: T - SAME_ACTION_MS - 1 });
    expect(withOwnActivity([audit], [old]).map((l) => l.text)).toEqual([old.text, audit.text]);
  });
});
