import type { ParkRecord, TaskCooldown, TaskKind } from '@maintd/core';
import type { CooldownSort, CooldownState, CooldownView } from '@maintd/api';
import type { JsonBytes } from './http/json-bytes.js';

/** One (kind, target) the cooldown lists are made of: its cooldown record and its park, either absent. */
export interface CooldownPair {
  readonly kind: TaskKind;
  readonly target: string;
  readonly cooldown: TaskCooldown | undefined;
  readonly park: ParkRecord | undefined;
}

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
  /** Only entries whose latest failure has this cause. */
  readonly cause?: string | undefined;
}

/** What a bulk action selects: the list's filter, where an absent state is every state. */
export interface CooldownSelection {
  readonly kind?: TaskKind | undefined;
  /** Absent: every state (`any`), unlike a page. */
  readonly state?: CooldownStateFilter | undefined;
  readonly q?: string | undefined;
  readonly cause?: string | undefined;
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
