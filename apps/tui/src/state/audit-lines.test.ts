import { describe, expect, it } from 'vitest';
import { auditEntry } from '../../test/fake-master.js';
import type { PendingAction } from './ui-state.js';
import { auditActivity, ownRefs } from './audit-lines.js';

const text = (over: Parameters<typeof auditEntry>[0]): string => auditActivity(auditEntry(over)).text;

describe('auditActivity', () => {
  it('says who, from where, and what they did to which store', () => {
    expect(auditActivity(auditEntry())).toEqual({
      at: 1_700_000_000_000,
      text: 'alice@10.0.0.5 reset merge_wal cooldown of store-12',
      tone: 'ok',
      subject: {
        source: 'audit',
        keys: ['delete merge_wal/store-12'],
        id: '01a23766-aaaa-7000-8000-000000000001',
        by: 'alice@10.0.0.5',
        action: 'cooldown.reset',
        reason: undefined,
        phrase: 'reset merge_wal cooldown of store-12',
      },
    });
    expect(text({ action: 'task.enqueue', outcome: 'queued', task_id: 't' })).toBe(
      'alice@10.0.0.5 enqueued merge_wal on store-12',
    );
    expect(text({ action: 'cooldown.release', outcome: 'released' })).toBe(
      'alice@10.0.0.5 released merge_wal on store-12',
    );
    expect(text({ action: 'cooldown.park', outcome: 'parked', reason: 'disk swap', until_ms: null })).toBe(
      'alice@10.0.0.5 parked merge_wal on store-12: disk swap',
    );
    expect(auditActivity(auditEntry({ action: 'cooldown.park', outcome: 'parked' })).tone).toBe('warn');
  });

  it('says how many stores a bulk action committed and which search it matched', () => {
    const bulkPark = { action: 'cooldowns.park', outcome: 'parked', kind: undefined, target: undefined };
    expect(text({ ...bulkPark, who: 'bob', filter: { q: 'quota', state: 'any' }, count: 14, reason: 'full' })).toBe(
      "bob@10.0.0.5 parked 14 stores matching 'quota': full",
    );
    expect(text({ ...bulkPark, filter: { q: 'quota' }, count: 1 })).toBe(
      "alice@10.0.0.5 parked 1 store matching 'quota'",
    );
    expect(
      text({
        action: 'cooldowns.reset',
        outcome: 'reset',
        kind: undefined,
        target: undefined,
        filter: { kind: 'compact', state: 'cooling' },
        count: 3,
      }),
    ).toBe('alice@10.0.0.5 reset 3 compact cooldowns (state cooling)');
  });

  it('adds an unusual outcome, and shows an action it does not know as it is', () => {
    expect(text({ action: 'task.enqueue', outcome: 'promoted' })).toBe(
      'alice@10.0.0.5 enqueued merge_wal on store-12 (promoted)',
    );
    expect(
      text({ action: 'cluster.update', outcome: 'preserve_downgrade_set', kind: undefined, target: undefined }),
    ).toBe('alice@10.0.0.5 updated the cluster settings (preserve downgrade set)');
    const unknown = auditActivity(
      auditEntry({ action: 'store.quarantine', outcome: 'quarantined', filter: { q: 'x' } }),
    );
    expect(unknown.text).toBe("alice@10.0.0.5 store.quarantine merge_wal store-12 'x' (quarantined)");
    expect(unknown.tone).toBe('info');
    expect(unknown.subject?.keys).toEqual([]);
    // A master that names no client: who alone.
    expect(text({ client: undefined, who: 'anonymous' })).toBe('anonymous reset merge_wal cooldown of store-12');
  });
});

describe('ownRefs', () => {
  const items = [
    { kind: 'merge_wal', target: 'a' },
    { kind: 'compact', target: 'b' },
  ];
  it('names every item of an action as its audit entries name them', () => {
    const pending = (action: PendingAction['action']): PendingAction => ({ action, items });
    expect(ownRefs(pending('run'))).toEqual(['enqueue merge_wal/a', 'enqueue compact/b']);
    // `c` and `u` are the same DELETE of the pair.
    for (const action of ['reset', 'release'] as const) {
      expect(ownRefs(pending(action))).toEqual(['delete merge_wal/a', 'delete compact/b']);
    }
    expect(ownRefs(pending('park'))).toEqual(['park merge_wal/a', 'park compact/b']);
    expect(ownRefs({ action: 'park', items, reason: 'r', bulk: { q: 'quota', count: 2 } })).toEqual([
      'cooldowns.park quota',
    ]);
    expect(ownRefs({ action: 'reset', items, bulk: { q: 'quota' } })).toEqual(['cooldowns.reset quota']);
  });
});
