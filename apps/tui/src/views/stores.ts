import { isParked } from '@maintd/core';
import type { Cooldown, Store } from '../api/types.js';
import { formatAgo, formatCount } from '../format.js';
import { isCooling } from '../state/fleet.js';
import type { FleetData } from '../state/fleet-data.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { fleetKinds, runnableKinds } from '../state/kinds.js';
import { keyedRows } from '../state/sorted-index.js';
import type { Tone } from '../theme.js';
import type { Cell } from './columns.js';
import { parkedItems } from '../common/action-items.js';
import { timeLeft } from '../common/cooldown-text.js';
import { type CellContext, type ListSpec, byText } from './list-spec.js';

/** The cooldown entries of one store, live. */
export function storeCooldowns(name: string, data: FleetData): Cooldown[] {
  const out: Cooldown[] = [];
  for (const kind of fleetKinds(data)) {
    const c = data.cooldowns?.get(cooldownKey(kind, name));
    if (c) out.push(c);
  }
  return out;
}

/** A store's cooling summary: `merge_wal parked`, `merge_wal 9m59s` per open window, `merge_wal 2x` per counter. */
export function coolingSummary(name: string, x: CellContext): Cell {
  const entries = storeCooldowns(name, x.data);
  const parts = entries.map((c) =>
    isParked(c.parked, x.now)
      ? `${c.kind} parked`
      : isCooling(c, x.now)
        ? `${c.kind} ${timeLeft(c, x.now)}`
        : `${c.kind} ${c.failures}x`,
  );
  const tone: Tone | undefined = entries.some((c) => isParked(c.parked, x.now))
    ? 'info'
    : entries.some((c) => isCooling(c, x.now))
      ? 'bad'
      : parts.length > 0
        ? 'warn'
        : undefined;
  return { text: parts.join(', '), tone };
}

/** How much a store is held back, for the `cooling` sort: parked first, then the latest window end. */
export function coolingRank(name: string, d: FleetData): number {
  let rank = 0;
  for (const c of storeCooldowns(name, d)) {
    // Not `now`-dependent (a rank is kept with its row): parks first, then windows by their end.
    rank = Math.max(rank, c.parked ? Number.MAX_SAFE_INTEGER : (c.until_ms ?? c.failures));
  }
  return rank;
}

/** The Stores view: backlog per store, biggest first, with its cooldown state. */
export const STORES: ListSpec<Store> = {
  id: 'stores',
  noun: 'stores',
  source: (d) => keyedRows(d.stores, (s) => s.name),
  // A store's COOLING column and `cooling` sort read its cooldown entries.
  joined: (d) => (d.cooldowns ? { map: d.cooldowns, rowKey: (k) => k.slice(k.indexOf('/') + 1) } : undefined),
  rowDeps: (s, d) => storeCooldowns(s.name, d),
  key: (s) => s.name,
  search: (s) => s.name.toLowerCase(),
  sorts: [
    {
      label: 'backlog',
      compare: (a, b) => b.pending_wal_generations - a.pending_wal_generations || byText(a.name, b.name),
    },
    { label: 'fragments', compare: (a, b) => b.fragment_count - a.fragment_count || byText(a.name, b.name) },
    { label: 'cooling', rank: (s, d) => coolingRank(s.name, d), compare: (a, b) => byText(a.name, b.name) },
    { label: 'name', compare: (a, b) => byText(a.name, b.name) },
  ],
  columns: [
    { title: 'STORE', width: 24, cell: (s) => ({ text: s.name }) },
    {
      title: 'PENDING',
      width: 8,
      align: 'right',
      cell: (s) => ({
        text: formatCount(s.pending_wal_generations),
        tone: s.pending_wal_generations > 0 ? 'warn' : undefined,
      }),
    },
    { title: 'FRAGS', width: 6, align: 'right', cell: (s) => ({ text: formatCount(s.fragment_count) }) },
    { title: 'ROWS', width: 11, align: 'right', drop: 2, cell: (s) => ({ text: formatCount(s.row_count) }) },
    { title: 'OWNERS', width: 6, align: 'right', drop: 3, cell: (s) => ({ text: String(s.owners.length) }) },
    // `scanned_at` is when a scan last *changed* the row: the master rewrites a row only when its
    // numbers moved, so a quiet store shows the age of its last change, not of the last scan
    // (that is each worker's, in the Workers view and the detail pane).
    {
      title: 'CHANGED',
      width: 11,
      align: 'right',
      drop: 1,
      cell: (s, x) => ({ text: formatAgo(s.scanned_at, x.now) }),
    },
    { title: 'COOLING', width: 10, flex: true, cell: (s, x) => coolingSummary(s.name, x) },
  ],
  actions: {
    // Every kind the live masters run, for the operator to pick one of: a kind a newer master
    // adds is offered without a dashboard of its own release.
    run: (s, d) => runnableKinds(d).map((kind) => ({ kind, target: s.name })),
    reset: (s, d) => storeCooldowns(s.name, d).map((c) => ({ kind: c.kind, target: c.target })),
    // A store is parked for every kind the master counts (every kind the fleet shows, without a
    // policy): what an operator parks is the store, whatever would be run on it.
    park: (s, d) => (d.policy?.kinds ?? fleetKinds(d)).map((kind) => ({ kind, target: s.name })),
    release: (s, d, now) => parkedItems(storeCooldowns(s.name, d), now),
  },
  // What `r` ran before it asked, so `r` then `y` still runs it.
  picks: { run: { preferred: 'merge_wal' } },
  empty: 'no stores: no worker has reported any (yet)',
};
