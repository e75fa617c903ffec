import type { FleetData } from './fleet.js';

/**
 * The task kinds the dashboard shows, in order: those the live masters register they run (in
 * their registry order), then the kinds the policy names, then every other kind a record is of
 * (by name). The dashboard names no kind of its own: a kind a newer master adds appears once a
 * master registers it or a record of it is read, and a master that predates `kinds` in its
 * registration is covered by its policy and its records (docs/ARCHITECTURE.md §2.1).
 *
 * Memoised per {@link FleetData} object (every change makes a new one) and kept identical while
 * the list does not change, so views that compare by identity redraw nothing for it.
 */
export function fleetKinds(data: FleetData): readonly string[] {
  const known = memo.get(data);
  if (known) return known;
  const ordered = new Set<string>();
  for (const m of data.masters ?? []) for (const k of m.kinds ?? []) ordered.add(k);
  for (const k of data.policy?.kinds ?? []) ordered.add(k);
  const seen = new Set<string>();
  for (const k of Object.keys(data.counts ?? {})) seen.add(k);
  for (const c of data.cooldowns?.values() ?? []) seen.add(c.kind);
  for (const t of data.tasks?.values() ?? []) seen.add(t.kind);
  for (const k of [...seen].sort()) ordered.add(k);
  const kinds = sameList(last, ordered) ? last : [...ordered];
  last = kinds;
  memo.set(data, kinds);
  return kinds;
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

function sameList(a: readonly string[], b: ReadonlySet<string>): boolean {
  if (a.length !== b.size) return false;
  let i = 0;
  for (const k of b) if (a[i++] !== k) return false;
  return true;
}
