import {
  type CooldownPolicy,
  type ParkRecord,
  SortedList,
  type TaskCooldown,
  type TaskKind,
  cooldownState,
} from '@maintd/core';
import { type CooldownSort, type CooldownView, cooldownView } from '@maintd/api';
import { decodeCursor, encodeCursor } from './cooldown-cursor.js';
import { matchesCause, matchesSearch, matchesState } from './cooldown-filter.js';
import { type CauseView, causesOf } from './cooldown-causes.js';
import { type Order, comparatorOf, comparePositions, position } from './cooldown-order.js';
import type {
  CooldownPage,
  CooldownPageQuery,
  CooldownPair,
  CooldownSelection,
  CooldownStateFilter,
  SelectedEntry,
} from './cooldown-query.js';
import { type JsonBytes, encodeJson } from './http/json-bytes.js';

/**
 * The revision this master's own write is recorded with before its watch event arrives: lower
 * than any real revision, so the event (and anything after it) always replaces it.
 */
const LOCAL_REVISION = 0;

/** Largest number of filtered lists, encoded pages and encoded whole lists kept, each, between two changes. */
const PAGE_CACHE_ENTRIES = 512;

/** One (kind, target) as the index holds it: its cooldown record and its park, with their revisions. */
interface Entry extends CooldownPair {
  cooldown: TaskCooldown | undefined;
  /** `mod_revision` of the cooldown half (or of its deletion); {@link LOCAL_REVISION} for a local write. */
  cooldownRevision: number;
  park: ParkRecord | undefined;
  parkRevision: number;
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
 * Bounds: one sorted list per order asked (four at most, each of every entry); the filtered
 * lists, pages and whole lists at most {@link PAGE_CACHE_ENTRIES} each (a full map is emptied).
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
  readonly #sorted = new Map<Order, SortedList<Entry>>();
  readonly #filtered = new Map<string, SortedList<Entry>>();
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
   * `revision`, as the watch reports it: an event older than what the entry holds is ignored,
   * while one after this master's own write ({@link CooldownIndex.wroteCooldown}) always applies.
   * Returns whether anything changed.
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

  /**
   * Records the cooldown half of (kind, target) as this master just wrote it (undefined: deleted),
   * so that its next read shows the write before its watch reports it; the watch's event replaces it.
   */
  wroteCooldown(kind: TaskKind, target: string, record: TaskCooldown | undefined): void {
    this.applyCooldown(kind, target, record, LOCAL_REVISION);
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

  /** Records the park of (kind, target) as this master just wrote it, as {@link CooldownIndex.wroteCooldown} does. */
  wrotePark(kind: TaskKind, target: string, record: ParkRecord | undefined): void {
    this.applyPark(kind, target, record, LOCAL_REVISION);
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
  list(kind: TaskKind | undefined, all: boolean, nowMs: number, q?: string, cause?: string): CooldownView[] {
    this.#refresh(nowMs);
    const needle = q?.toLowerCase();
    const out: CooldownView[] = [];
    for (const e of this.#sortedBy('key')) {
      if ((kind && e.kind !== kind) || !matchesSearch(e, needle) || !matchesCause(e, cause)) continue;
      const view = cooldownView(e.cooldown, e.park, nowMs, this.policy);
      if (!view) continue;
      if (view.state === 'cooling' || view.state === 'parked' || all) out.push(view);
    }
    return out;
  }

  /** {@link CooldownIndex.list}, encoded once and shared by every request until something changes. */
  listBody(
    kind: TaskKind | undefined,
    all: boolean,
    nowMs: number,
    q?: string,
    cause?: string,
  ): JsonBytes<CooldownView[]> {
    this.#refresh(nowMs);
    const key = `${kind ?? ''}|${all}|${cause ?? ''}|${q ?? ''}`;
    let body = this.#lists.get(key);
    if (!body) {
      body = encodeJson(this.list(kind, all, nowMs, q, cause));
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
    const pageKey = `${sort}|${query.kind ?? ''}|${query.state ?? ''}|${query.limit}|${query.cursor ?? ''}|${query.cause ?? ''}|${query.q ?? ''}`;
    const kept = this.#pages.get(pageKey);
    if (kept) return kept;
    const needle = query.q?.toLowerCase();
    // A search is filtered per request, not kept: its lists would be as many as the texts asked.
    const filtered = this.#matching(sort, query.kind, query.state, nowMs);
    const matching =
      needle === undefined && query.cause === undefined
        ? filtered
        : filtered.filter((e) => matchesSearch(e, needle) && matchesCause(e, query.cause));
    let from = 0;
    if (query.cursor !== undefined) {
      const after = decodeCursor(query.cursor, sort);
      // The first entry past the cursor's position: it need not exist any more.
      from = matching.partitionPoint((e) => comparePositions(sort, position(e, sort), after) <= 0);
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
      if (!matchesSearch(e, needle) || !matchesCause(e, selection.cause)) continue;
      const view = cooldownView(e.cooldown, e.park, nowMs, this.policy);
      if (view) out.push({ view, hasRecord: e.cooldown !== undefined });
    }
    return out;
  }

  /** Every failure record (any state) grouped by the cause of its latest error, the most stores first. */
  causes(kind: TaskKind | undefined): CauseView[] {
    return causesOf(this.#entries.values(), kind);
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
    if (existing) for (const sorted of this.#sorted.values()) sorted.delete(existing);
    const e = existing ?? this.#entry(kind, target);
    change(e);
    if (e.park) this.#parked.add(e);
    else this.#parked.delete(e);
    if (!e.cooldown && !e.park) this.#entries.delete(`${kind}/${target}`);
    else for (const sorted of this.#sorted.values()) sorted.insert(e);
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

  #sortedBy(order: Order): SortedList<Entry> {
    let sorted = this.#sorted.get(order);
    if (!sorted) {
      sorted = new SortedList(comparatorOf(order), this.#entries.values());
      this.#sorted.set(order, sorted);
    }
    return sorted;
  }

  #matching(
    sort: CooldownSort,
    kind: TaskKind | undefined,
    state: CooldownStateFilter | undefined,
    nowMs: number,
  ): SortedList<Entry> {
    const key = `${sort}|${kind ?? ''}|${state ?? ''}`;
    let out = this.#filtered.get(key);
    if (!out) {
      out = this.#sortedBy(sort).filter(
        (e) => (!kind || e.kind === kind) && matchesState(cooldownState(e.cooldown, e.park, nowMs), state),
      );
      if (this.#filtered.size >= PAGE_CACHE_ENTRIES) this.#filtered.clear();
      this.#filtered.set(key, out);
    }
    return out;
  }
}
