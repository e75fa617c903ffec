import {
  type CooldownPolicy,
  KIND_PATTERN,
  cooldownState,
  type ParkRecord,
  type TaskCooldown,
  type TaskKind,
  ValidationError,
} from '@maintd/core';
import { type CooldownSort, type CooldownState, type CooldownView, cooldownView } from '@maintd/api';
import { type JsonBytes, encodeJson } from './http/json-bytes.js';

/**
 * The revision a master's own write is recorded with before its watch event arrives: lower than
 * any real revision, so the event (and anything after it) always replaces it.
 */
export const LOCAL_REVISION = 0;

/** Largest number of encoded pages kept between two changes. */
const PAGE_CACHE_ENTRIES = 512;

/** The `state` filter of a page: one state, or `any`; absent = `cooling` and `parked` (what the sweeps skip). */
export type CooldownStateFilter = CooldownState | 'any';

/** What one page of the cooldown list asks for. */
export interface CooldownPageQuery {
  /** Entries per page. */
  readonly limit: number;
  /** The opaque cursor of the previous page, if any. */
  readonly cursor?: string | undefined;
  /** Only this kind. */
  readonly kind?: TaskKind | undefined;
  /** Only this state (`any`: every state); absent: cooling and parked. */
  readonly state?: CooldownStateFilter | undefined;
  /** The order (default `until`). */
  readonly sort?: CooldownSort | undefined;
  /** Only entries whose store name or last error contains this text, ignoring case. */
  readonly q?: string | undefined;
}

/** What a bulk action selects: the list's filter, where an absent state is every state. */
export interface CooldownSelection {
  readonly kind?: TaskKind | undefined;
  /** Absent: every state (`any`), unlike a page. */
  readonly state?: CooldownStateFilter | undefined;
  readonly q?: string | undefined;
}

/** One entry a bulk action selected: its view, and whether it has a failure record to reset. */
export interface SelectedEntry {
  readonly view: CooldownView;
  readonly hasRecord: boolean;
}

/** One page, encoded once and shared by every request that asks for it until something changes. */
export interface CooldownPage {
  /** The page as a JSON array of {@link CooldownView}. */
  readonly body: JsonBytes<CooldownView[]>;
  /** Entries in this page. */
  readonly count: number;
  /** Entries matching the filters, over all pages. */
  readonly total: number;
  /** Cursor of the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/** One (kind, target) as the index holds it: its cooldown record and its park, with their revisions. */
interface Entry {
  readonly kind: TaskKind;
  readonly target: string;
  cooldown: TaskCooldown | undefined;
  /** `mod_revision` of the cooldown half (or of its deletion); {@link LOCAL_REVISION} for a local write. */
  cooldownRevision: number;
  park: ParkRecord | undefined;
  parkRevision: number;
}

/** A position in one order: the sort value (±Infinity when the entry has none), then kind, then target. */
interface Position {
  readonly value: number;
  readonly kind: string;
  readonly target: string;
}

const SORTS: readonly CooldownSort[] = ['until', 'failures', 'last_failure'];

/** The value an entry is ordered by: what the served entry shows (a missing one sorts last). */
function sortValue(e: Entry, sort: CooldownSort): number {
  switch (sort) {
    case 'until':
      return e.cooldown?.until_ms ?? Infinity;
    case 'failures':
      return e.cooldown?.failures ?? 0;
    case 'last_failure':
      return e.cooldown?.last_failure_ms ?? -Infinity;
  }
}

/** `until` runs soonest first; `failures` and `last_failure` worst and latest first. Ties: kind, target. */
function comparePositions(sort: CooldownSort, a: Position, b: Position): number {
  if (a.value !== b.value) {
    const ascending = sort === 'until';
    return a.value < b.value === ascending ? -1 : 1;
  }
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.target !== b.target) return a.target < b.target ? -1 : 1;
  return 0;
}

function position(e: Entry, sort: CooldownSort): Position {
  return { value: sortValue(e, sort), kind: e.kind, target: e.target };
}

/** The key order of the stored records: kind, then target (targets are ASCII: their hex sorts alike). */
function byKey(a: Entry, b: Entry): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.target < b.target ? -1 : a.target > b.target ? 1 : 0;
}

/** An order the index keeps its entries in: one of the API's sorts, or the key order of the unpaged list. */
type Order = CooldownSort | 'key';

function compareIn(order: Order, a: Entry, b: Entry): number {
  return order === 'key' ? byKey(a, b) : comparePositions(order, position(a, order), position(b, order));
}

/** Index of the first entry of `sorted` not before `e` in `order` (binary search). */
function lowerBound(sorted: readonly Entry[], order: Order, e: Entry): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIn(order, sorted[mid]!, e) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The cursor of the entry a page ended on: base64url of `[sort, value, kind, target]`. Opaque to
 * clients; it names a position, not an offset, so a page boundary survives inserts and deletes.
 */
function encodeCursor(sort: CooldownSort, p: Position): string {
  const value = Number.isFinite(p.value) ? p.value : null;
  return Buffer.from(JSON.stringify([sort, value, p.kind, p.target]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, sort: CooldownSort): Position {
  const bad = (why: string): ValidationError => new ValidationError(`invalid cursor: ${why}`, { field: 'cursor' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad('not a cursor from a previous page');
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw bad('not a cursor from a previous page');
  const [s, value, kind, target] = parsed as unknown[];
  if (typeof s !== 'string' || !SORTS.includes(s as CooldownSort)) throw bad('not a cursor from a previous page');
  if (s !== sort) throw bad(`it continues a page sorted by ${s}, not ${sort}`);
  if (
    (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) ||
    typeof kind !== 'string' ||
    !KIND_PATTERN.test(kind) ||
    typeof target !== 'string'
  ) {
    throw bad('not a cursor from a previous page');
  }
  // A missing value sorts last: +Infinity for `until`, -Infinity for the descending orders.
  const missing = sort === 'until' ? Infinity : -Infinity;
  return { value: value ?? missing, kind, target };
}

/**
 * Whether `e` matches a search (`q`, lowercased): its store name or its last error contains it,
 * ignoring case. A park's reason is not searched: the list's `q` is about failures and names.
 */
function found(e: Entry, needle: string | undefined): boolean {
  if (needle === undefined) return true;
  return e.target.toLowerCase().includes(needle) || (e.cooldown?.last_error.toLowerCase().includes(needle) ?? false);
}

function matches(state: CooldownState | undefined, filter: CooldownStateFilter | undefined): boolean {
  if (state === undefined) return false;
  if (filter === 'any') return true;
  return filter === undefined ? state === 'cooling' || state === 'parked' : state === filter;
}

/**
 * The master's in-memory index of every cooldown record and park (docs/ARCHITECTURE.md §3.4: pages "served from
 * the watch-maintained cache without building a 3 MB body per request"). The event hub loads it
 * from one read of each prefix and keeps it current from their watches; the API serves the
 * paged cooldown list, the unpaged one and each entry's merged view from it.
 *
 * Costs: a change is O(1) and invalidates the derived data; the first request after a change
 * sorts the entries once per order (O(n log n)) and filters them once per (order, kind, state)
 * (O(n)); any further request is a binary search for its cursor plus its slice, and a page
 * already asked for is its encoded bytes. A state depends on the time (a window ends, a park
 * lapses), so the filtered lists are also dropped at the next such moment, never served stale.
 */
export class CooldownIndex {
  /** The policy of the master serving the index: each view's `gating` is computed against it. */
  readonly policy: CooldownPolicy;
  readonly #entries = new Map<string, Entry>();
  /** Entries with a park (in force or lapsed): the parked gauge walks only these. */
  readonly #parked = new Set<Entry>();
  #version = 0;
  // Derived data. The sorted orders are kept up to date entry by entry (a change costs a binary
  // search and a splice, not a sort); the rest is dropped on any change and at the next moment a
  // state changes by itself.
  #derivedVersion = -1;
  /** The derived data holds for times in [derivedAt, validUntil): a wall clock may also step back. */
  #derivedAt = Infinity;
  #validUntil = -Infinity;
  readonly #sorted = new Map<Order, Entry[]>();
  readonly #filtered = new Map<string, Entry[]>();
  readonly #pages = new Map<string, CooldownPage>();
  /** The unpaged lists asked for, encoded. */
  readonly #lists = new Map<string, JsonBytes<CooldownView[]>>();

  /** An empty index whose views say whether they gate the automatic work of a master running `policy`. */
  constructor(policy: CooldownPolicy) {
    this.policy = policy;
  }

  /** An index of these records, e.g. read from the store when no watch keeps one current. */
  static from(cooldowns: readonly TaskCooldown[], parks: readonly ParkRecord[], policy: CooldownPolicy): CooldownIndex {
    const index = new CooldownIndex(policy);
    index.load(
      cooldowns.map((record) => ({ kind: record.kind, target: record.target, record, revision: LOCAL_REVISION })),
      parks.map((record) => ({ kind: record.kind, target: record.target, record, revision: LOCAL_REVISION })),
    );
    return index;
  }

  /** Replaces everything with a snapshot (records with the revisions they were read at). */
  load(
    cooldowns: readonly { kind: TaskKind; target: string; record: TaskCooldown; revision: number }[],
    parks: readonly { kind: TaskKind; target: string; record: ParkRecord; revision: number }[],
  ): void {
    this.#entries.clear();
    this.#parked.clear();
    this.#sorted.clear();
    for (const c of cooldowns) {
      const e = this.#entry(c.kind, c.target);
      e.cooldown = c.record;
      e.cooldownRevision = c.revision;
    }
    for (const p of parks) {
      const e = this.#entry(p.kind, p.target);
      e.park = p.record;
      e.parkRevision = p.revision;
      this.#parked.add(e);
    }
    this.#version++;
  }

  /**
   * Sets (or with `record` undefined, deletes) the cooldown half of (kind, target) as of
   * `revision`. A watch event older than what the entry holds is ignored; a local write
   * ({@link LOCAL_REVISION}) always applies. Returns whether anything changed.
   */
  applyCooldown(kind: TaskKind, target: string, record: TaskCooldown | undefined, revision: number): boolean {
    const e = this.#entries.get(`${kind}/${target}`);
    if (e && revision !== LOCAL_REVISION && revision <= e.cooldownRevision) return false;
    if (!e && !record) return false;
    this.#update(kind, target, e, (x) => {
      x.cooldown = record;
      x.cooldownRevision = revision;
    });
    return true;
  }

  /** Sets or deletes the park half of (kind, target), as {@link CooldownIndex.applyCooldown} does the record. */
  applyPark(kind: TaskKind, target: string, record: ParkRecord | undefined, revision: number): boolean {
    const e = this.#entries.get(`${kind}/${target}`);
    if (e && revision !== LOCAL_REVISION && revision <= e.parkRevision) return false;
    if (!e && !record) return false;
    this.#update(kind, target, e, (x) => {
      x.park = record;
      x.parkRevision = revision;
    });
    return true;
  }

  /** The served view of (kind, target) at `nowMs`, or null when it has neither a record nor a park in force. */
  view(kind: TaskKind, target: string, nowMs: number): CooldownView | null {
    const e = this.#entries.get(`${kind}/${target}`);
    return e ? cooldownView(e.cooldown, e.park, nowMs, this.policy) : null;
  }

  /**
   * The unpaged list, in key order (kind, then target): windows open and parks in force, and with
   * `all` every other record too (below the threshold, lapsed).
   */
  list(kind: TaskKind | undefined, all: boolean, nowMs: number, q?: string): CooldownView[] {
    this.#refresh(nowMs);
    const needle = q?.toLowerCase();
    const out: CooldownView[] = [];
    for (const e of this.#sortedBy('key')) {
      if ((kind && e.kind !== kind) || !found(e, needle)) continue;
      const view = cooldownView(e.cooldown, e.park, nowMs, this.policy);
      if (!view) continue;
      if (view.state === 'cooling' || view.state === 'parked' || all) out.push(view);
    }
    return out;
  }

  /** {@link CooldownIndex.list}, encoded once and shared by every request until something changes. */
  listBody(kind: TaskKind | undefined, all: boolean, nowMs: number, q?: string): JsonBytes<CooldownView[]> {
    this.#refresh(nowMs);
    const key = `${kind ?? ''}|${all}|${q ?? ''}`;
    let body = this.#lists.get(key);
    if (!body) {
      body = encodeJson(this.list(kind, all, nowMs, q));
      // Keyed by any well-formed kind a reader names: bounded as the pages are.
      if (this.#lists.size >= PAGE_CACHE_ENTRIES) this.#lists.clear();
      this.#lists.set(key, body);
    }
    return body;
  }

  /** One page of the list at `nowMs`. A cursor that is not one of ours is a {@link ValidationError}. */
  page(query: CooldownPageQuery, nowMs: number): CooldownPage {
    this.#refresh(nowMs);
    const sort = query.sort ?? 'until';
    // `q` last: every field before it is free of `|`, so the key is unambiguous whatever `q` holds.
    const pageKey = `${sort}|${query.kind ?? ''}|${query.state ?? ''}|${query.limit}|${query.cursor ?? ''}|${query.q ?? ''}`;
    const kept = this.#pages.get(pageKey);
    if (kept) return kept;
    const needle = query.q?.toLowerCase();
    // A search is filtered per request, not kept: its lists would be as many as the texts asked.
    const filtered = this.#matching(sort, query.kind, query.state, nowMs);
    const matching = needle === undefined ? filtered : filtered.filter((e) => found(e, needle));
    let from = 0;
    if (query.cursor !== undefined) {
      const after = decodeCursor(query.cursor, sort);
      // The first entry past the cursor's position: it need not exist any more.
      let lo = 0;
      let hi = matching.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (comparePositions(sort, position(matching[mid]!, sort), after) <= 0) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
    }
    const slice = matching.slice(from, from + query.limit);
    const last = slice.at(-1);
    const page: CooldownPage = {
      body: encodeJson(
        // Every matching entry has a state, so a view.
        slice.flatMap((e) => cooldownView(e.cooldown, e.park, nowMs, this.policy) ?? []),
      ),
      count: slice.length,
      total: matching.length,
      nextCursor: last && from + slice.length < matching.length ? encodeCursor(sort, position(last, sort)) : null,
    };
    if (this.#pages.size >= PAGE_CACHE_ENTRIES) this.#pages.clear();
    this.#pages.set(pageKey, page);
    return page;
  }

  /**
   * Every entry matching a bulk action's selection at `nowMs`, in the paged list's default order
   * (`until`): absent `state` selects every state.
   */
  select(selection: CooldownSelection, nowMs: number): SelectedEntry[] {
    this.#refresh(nowMs);
    const needle = selection.q?.toLowerCase();
    const out: SelectedEntry[] = [];
    for (const e of this.#matching('until', selection.kind, selection.state ?? 'any', nowMs)) {
      if (!found(e, needle)) continue;
      const view = cooldownView(e.cooldown, e.park, nowMs, this.policy);
      if (view) out.push({ view, hasRecord: e.cooldown !== undefined });
    }
    return out;
  }

  /** Parks in force per kind at `nowMs`: the `master_task_parked` gauge. */
  parkedCounts(nowMs: number): Record<TaskKind, number> {
    // Every kind with a record, parked or not, whichever release runs it.
    const counts: Record<TaskKind, number> = {};
    for (const e of this.#entries.values()) counts[e.kind] = 0;
    for (const e of this.#parked) {
      if (cooldownState(undefined, e.park, nowMs) === 'parked') counts[e.kind] = (counts[e.kind] ?? 0) + 1;
    }
    return counts;
  }

  #entry(kind: TaskKind, target: string): Entry {
    const key = `${kind}/${target}`;
    let e = this.#entries.get(key);
    if (!e) {
      e = { kind, target, cooldown: undefined, cooldownRevision: -1, park: undefined, parkRevision: -1 };
      this.#entries.set(key, e);
    }
    return e;
  }

  /**
   * Changes one entry: out of every kept order at its old position, `change` applied, back in at
   * its new one (or dropped, left with neither a record nor a park).
   */
  #update(kind: TaskKind, target: string, existing: Entry | undefined, change: (e: Entry) => void): void {
    if (existing) {
      for (const [order, sorted] of this.#sorted) {
        const at = lowerBound(sorted, order, existing);
        if (sorted[at] === existing) sorted.splice(at, 1);
      }
    }
    const e = existing ?? this.#entry(kind, target);
    change(e);
    if (e.park) this.#parked.add(e);
    else this.#parked.delete(e);
    if (!e.cooldown && !e.park) this.#entries.delete(`${kind}/${target}`);
    else for (const [order, sorted] of this.#sorted) sorted.splice(lowerBound(sorted, order, e), 0, e);
    this.#version++;
  }

  /** Drops derived data older than the entries, or older than the next change of any entry's state. */
  #refresh(nowMs: number): void {
    if (this.#derivedVersion === this.#version && this.#derivedAt <= nowMs && nowMs < this.#validUntil) return;
    this.#filtered.clear();
    this.#pages.clear();
    this.#lists.clear();
    this.#derivedVersion = this.#version;
    this.#derivedAt = nowMs;
    // The next moment a state changes by itself: a window ends (cooling → lapsed), a park lapses.
    let next = Infinity;
    for (const e of this.#entries.values()) {
      const until = e.cooldown?.until_ms;
      if (until != null && until > nowMs && until < next) next = until;
      const parkUntil = e.park?.until_ms;
      if (parkUntil != null && parkUntil > nowMs && parkUntil < next) next = parkUntil;
    }
    this.#validUntil = next;
  }

  #sortedBy(sort: Order): Entry[] {
    let sorted = this.#sorted.get(sort);
    if (!sorted) {
      const all = [...this.#entries.values()];
      if (sort === 'key') sorted = all.sort(byKey);
      else {
        // Each entry's sort value once, not once per comparison.
        const keyed = all.map((e) => ({ e, p: position(e, sort) }));
        keyed.sort((a, b) => comparePositions(sort, a.p, b.p));
        sorted = keyed.map((x) => x.e);
      }
      this.#sorted.set(sort, sorted);
    }
    return sorted;
  }

  #matching(
    sort: CooldownSort,
    kind: TaskKind | undefined,
    state: CooldownStateFilter | undefined,
    nowMs: number,
  ): Entry[] {
    const key = `${sort}|${kind ?? ''}|${state ?? ''}`;
    let out = this.#filtered.get(key);
    if (!out) {
      out = this.#sortedBy(sort).filter(
        (e) => (!kind || e.kind === kind) && matches(cooldownState(e.cooldown, e.park, nowMs), state),
      );
      if (this.#filtered.size >= PAGE_CACHE_ENTRIES) this.#filtered.clear();
      this.#filtered.set(key, out);
    }
    return out;
  }
}
