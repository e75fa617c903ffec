import type { FleetData } from './fleet-data.js';
import { LiveMap } from './live-map.js';

/**
 * The task kinds the dashboard shows, in order: those the live masters register they run (in
 * their registry order), then the kinds the policy names, then every other kind a record is of
 * (by name). The dashboard names no kind of its own: a kind a newer master adds appears once a
 * master registers it or a record of it is read, and a master that predates `kinds` in its
 * registration is covered by its policy and its records (docs/ARCHITECTURE.md §2.1).
 *
 * Memoised per {@link FleetData} object (every change makes a new one) and kept identical while
 * the list does not change, so views that compare by identity redraw nothing for it. The kinds of
 * a live map's records are followed through its change log (a batch of events reads the entries
 * it changed, not 10,000 cooldowns); they only grow until the map is rebuilt, so a kind seen
 * once stays listed, at zero, for the session.
 */
export function fleetKinds(data: FleetData): readonly string[] {
  const known = memo.get(data);
  if (known) return known;
  const ordered = new Set<string>();
  for (const m of data.masters ?? []) for (const k of m.kinds ?? []) ordered.add(k);
  for (const k of policyThenRecordKinds(data, Object.keys(data.counts ?? {}))) ordered.add(k);
  const kinds = sameList(last, ordered) ? last : [...ordered];
  last = kinds;
  memo.set(data, kinds);
  return kinds;
}

/**
 * The kinds an operator may run by hand on a store: those the live masters register they run, in
 * the registry order of the first master that lists each. A master registers only while it is
 * live, and the master refuses to enqueue a kind it does not run, so a kind of a master that is
 * gone is not offered. Masters of 0.0.x register no `kinds`: a fleet of only those falls back to
 * the kinds its policy counts and then those its records are of (by name), which are the kinds of
 * their closed list (docs/ARCHITECTURE.md §2.1).
 */
export function runnableKinds(data: FleetData): readonly string[] {
  const registered = new Set<string>();
  let listed = false;
  for (const m of data.masters ?? []) {
    if (!m.kinds) continue;
    listed = true;
    for (const k of m.kinds) registered.add(k);
  }
  return listed ? [...registered] : [...policyThenRecordKinds(data)];
}

/** The kinds the policy names, then those of the records (and of `more`) by name. */
function policyThenRecordKinds(data: FleetData, more: Iterable<string> = []): Set<string> {
  const ordered = new Set<string>(data.policy?.kinds ?? []);
  const seen = new Set<string>(more);
  kindsIn(data.cooldowns, seen);
  kindsIn(data.tasks, seen);
  for (const k of [...seen].sort()) ordered.add(k);
  return ordered;
}

/** `kinds` followed by those of `more` not in it: the kinds to read per-kind totals of. */
export function withKinds(kinds: readonly string[], more: Iterable<string>): readonly string[] {
  const out = new Set(kinds);
  for (const k of more) out.add(k);
  return out.size === kinds.length ? kinds : [...out];
}

/**
 * An empty per-kind record with no prototype: a kind is any name the pattern allows, and
 * `constructor` or `toString` must read as absent, not as Object's.
 */
export function byKind<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

const memo = new WeakMap<FleetData, readonly string[]>();
let last: readonly string[] = [];

/** What a live map's records were last seen to hold: their kinds, through its revision. */
interface Seen {
  revision: number;
  readonly kinds: Set<string>;
}
const seenIn = new WeakMap<ReadonlyMap<string, unknown>, Seen>();

/** Adds the kinds of `map`'s records to `into`. */
function kindsIn<V extends { readonly kind: string }>(
  records: ReadonlyMap<string, V> | undefined,
  into: Set<string>,
): void {
  if (!records) return;
  if (!(records instanceof LiveMap)) {
    for (const v of records.values()) into.add(v.kind);
    return;
  }
  const map = records as LiveMap<V>;
  let seen = seenIn.get(map);
  const changed = seen ? map.changedSince(seen.revision) : undefined;
  if (!seen || !changed) {
    seen = { revision: map.revision, kinds: new Set() };
    for (const v of map.values()) seen.kinds.add(v.kind);
    seenIn.set(map, seen);
  } else {
    for (const key of changed) {
      const kind = map.get(key)?.kind;
      if (kind !== undefined) seen.kinds.add(kind);
    }
    seen.revision = map.revision;
  }
  for (const k of seen.kinds) into.add(k);
}

function sameList(a: readonly string[], b: ReadonlySet<string>): boolean {
  if (a.length !== b.size) return false;
  let i = 0;
  for (const k of b) if (a[i++] !== k) return false;
  return true;
}
