import type { AuditEntry } from '../api/audit.js';
import { formatUntil } from '../format.js';
import type { Activity } from './activity.js';
import type { PendingAction } from './ui-state.js';

/**
 * What an action did to what, as the activity log matches an audit entry with a park note and
 * with this dashboard's own action: `park <kind>/<store>`, `delete <kind>/<store>` (the
 * `DELETE` of one pair, which resets its count and releases its park: the dashboard's `c` and `u`
 * alike, recorded as `cooldown.reset` and `cooldown.release`), `enqueue <kind>/<store>`, and
 * `<action> <q>` for a bulk action over a search.
 */
export function pairRef(verb: 'park' | 'delete' | 'enqueue', kind: string, target: string): string {
  return `${verb} ${kind}/${target}`;
}

/** The actions on one pair, by what they did to it (see {@link pairRef}). */
const PAIR_VERBS: Readonly<Record<string, 'park' | 'delete' | 'enqueue'>> = {
  'task.enqueue': 'enqueue',
  'cooldown.park': 'park',
  'cooldown.reset': 'delete',
  'cooldown.release': 'delete',
};

function bulkRef(action: 'cooldowns.park' | 'cooldowns.reset', q: string): string {
  return `${action} ${q}`;
}

/** What the actions this release knows did, by their usual outcome, with the entry's own words. */
const PHRASES: Readonly<Record<string, { outcome: string; phrase: (e: AuditEntry) => string }>> = {
  'task.enqueue': { outcome: 'queued', phrase: (e) => `enqueued ${e.kind ?? '?'} on ${e.target ?? '?'}` },
  'cooldown.reset': { outcome: 'reset', phrase: (e) => `reset ${e.kind ?? '?'} cooldown of ${e.target ?? '?'}` },
  'cooldown.release': { outcome: 'released', phrase: (e) => `released ${e.kind ?? '?'} on ${e.target ?? '?'}` },
  'cooldown.park': {
    outcome: 'parked',
    phrase: (e) => `parked ${e.kind ?? '?'} on ${e.target ?? '?'}${until(e)}${e.reason ? `: ${e.reason}` : ''}`,
  },
  'cooldowns.park': {
    outcome: 'parked',
    phrase: (e) => `parked ${bulk(e)}${until(e)}${e.reason ? `: ${e.reason}` : ''}`,
  },
  'cooldowns.reset': { outcome: 'reset', phrase: (e) => `reset ${bulk(e, 'cooldown')}` },
  'cluster.update': { outcome: '', phrase: () => 'updated the cluster settings' },
};

function until(e: AuditEntry): string {
  return typeof e.until_ms === 'number' ? ` until ${formatUntil(e.until_ms, e.at_ms)}` : '';
}

/** "14 stores matching 'quota'", "3 merge_wal cooldowns (state cooling)". */
function bulk(e: AuditEntry, noun = 'store'): string {
  const n = e.count;
  const f = e.filter ?? {};
  const what = `${n === undefined ? '' : `${n} `}${f.kind ? `${f.kind} ` : ''}${noun}${n === 1 ? '' : 's'}`;
  const state = f.state && f.state !== 'any' ? ` (state ${f.state})` : '';
  return `${what}${f.q ? ` matching '${f.q}'` : ''}${state}`;
}

function tone(action: string): Activity['tone'] {
  if (action.endsWith('.park')) return 'warn';
  if (action.endsWith('.reset') || action.endsWith('.release')) return 'ok';
  return 'info';
}

/**
 * An audit entry as a line of the activity log: `alice@10.0.0.5 reset merge_wal cooldown of
 * store-12`, `bob@10.0.0.7 parked 14 stores matching 'quota': disk swap`. An outcome other than
 * the action's usual one is added in parentheses; an action this release does not know is shown
 * as it is, with what it named and its outcome.
 */
export function auditActivity(e: AuditEntry): Activity {
  const by = e.client ? `${e.who}@${e.client}` : e.who;
  const known = PHRASES[e.action];
  let phrase: string;
  if (known) {
    phrase = known.phrase(e);
    if (e.outcome && e.outcome !== known.outcome) phrase += ` (${e.outcome.replaceAll('_', ' ')})`;
  } else {
    const named = [e.kind, e.target, e.filter?.q === undefined ? undefined : `'${e.filter.q}'`].filter(Boolean);
    phrase = [e.action, ...named].join(' ') + (e.outcome ? ` (${e.outcome})` : '');
  }
  const keys: string[] = [];
  const verb = PAIR_VERBS[e.action];
  if (verb && e.kind && e.target) keys.push(pairRef(verb, e.kind, e.target));
  else if (e.action === 'cooldowns.park' || e.action === 'cooldowns.reset')
    keys.push(bulkRef(e.action, e.filter?.q ?? ''));
  return {
    at: e.at_ms,
    text: `${by} ${phrase}`,
    tone: tone(e.action),
    subject: { source: 'audit', keys, id: e.id, by, action: e.action, reason: e.reason, phrase },
  };
}

/** What one of this dashboard's actions did to what, for telling its audit lines (see {@link pairRef}). */
export function ownRefs(pending: PendingAction): string[] {
  if (pending.bulk) return [bulkRef(pending.action === 'park' ? 'cooldowns.park' : 'cooldowns.reset', pending.bulk.q)];
  const verb = pending.action === 'run' ? 'enqueue' : pending.action === 'park' ? 'park' : 'delete';
  return pending.items.map((i) => pairRef(verb, i.kind, i.target));
}
