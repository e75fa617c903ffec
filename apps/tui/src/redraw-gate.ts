import type { Clock } from '@maintd/core';
import { type RefObject, useCallback, useEffect, useReducer, useRef } from 'react';
import type { FleetSnapshot, FleetSource } from './data/source.js';
import { untilNextPeriod } from './hooks.js';
import type { FleetData } from './state/fleet-data.js';
import { cooldownKey } from './common/cooldown-key.js';
import type { ListViews } from './views/lists.js';
import { isList, selectedIndex } from './state/ui.js';
import type { UiState } from './state/ui-state.js';
import { type OverviewModel, overviewModel, sameOverview } from './views/Overview.js';
import type { ListSpec } from './views/list-spec.js';
import { LIST_SPECS } from './views/specs.js';
import type { ListViewId } from './common/view-ids.js';
import { storeCooldowns } from './views/stores.js';

/**
 * Longest a change of the tab counts alone waits to be drawn: the clock in the header redraws
 * every second anyway, and counts that move 20 times a second are not read any faster.
 */
const COUNTS_MS = 1000;

/**
 * What a frame shows of the data, for a list view: the App draws at once when `view` changes.
 * `size` is the list's length (the status line's `1/9,998`), which moves with every row added
 * or removed anywhere in the list: drawn as the tab counts are.
 */
function listSignature(
  ui: UiState,
  view: ListViewId,
  data: FleetData,
  lists: ListViews,
  bodyHeight: number,
): { view: unknown[]; size: unknown[] } {
  const list = ui.lists[view];
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  const index = lists.sync(view, data, list.filter, list.sort);
  const selected = selectedIndex(list, index);
  const start = lists.window(view, selected, bodyHeight, index.length, false);
  const sig: unknown[] = [index.loaded, selected, start, data.policy];
  const end = Math.min(index.length, start + bodyHeight);
  for (let i = start; i < end; i++) {
    const row = index.rows[i];
    sig.push(row);
    if (spec.rowDeps) sig.push(...spec.rowDeps(row, data));
  }
  return { view: sig, size: [index.length, index.total] };
}

/** What the detail pane shows of the data. */
function detailSignature(view: ListViewId, key: string, data: FleetData): unknown[] {
  // The stream's timeline events (of any pair: the pane picks its own) keep its timeline live.
  if (view === 'cooldowns') return [data.cooldowns?.get(key), data.policy, data.timeline];
  if (view === 'tasks') {
    const t = data.tasks?.get(key);
    return [t, t ? data.cooldowns?.get(cooldownKey(t.kind, t.target)) : undefined];
  }
  if (view === 'stores') return [data.stores, data.workers, ...storeCooldowns(key, data), data.policy];
  return [data.workers];
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** What a frame shows: the chrome's data, plus the view's (rows on screen, or the Overview's model). */
interface Shown {
  readonly snapshot?: FleetSnapshot;
  /** The connection as the header shows it. */
  readonly chrome: readonly unknown[];
  /**
   * The tabs' counts and the list's length (drawn at most every {@link COUNTS_MS} when nothing
   * else changed).
   */
  readonly counts: readonly unknown[];
  readonly view: readonly unknown[];
  readonly overview: OverviewModel | undefined;
  /** Frames drawn so far (this one included). */
  readonly frames?: number;
}

/** Settings of {@link useRedrawGate}. */
export interface RedrawGateOptions {
  readonly source: FleetSource;
  readonly clock: Clock;
  /** The UI state as the latest key left it (ahead of the render). */
  readonly ui: RefObject<UiState>;
  readonly lists: ListViews;
  /** Rows of a list on screen. */
  readonly bodyHeight: number;
  readonly guardPercent: number | undefined;
}

/**
 * Renders the component for a snapshot of the source only when the screen would change: a data
 * change that changes nothing on screen (25 of 10,000 cooldowns, all below the window) draws no
 * frame, since Ink redraws the whole screen on every commit. Returns what the component calls
 * after each frame (in a layout effect) with what it drew.
 *
 * Not useSyncExternalStore: React re-renders for every snapshot it has not drawn (a tearing check
 * after each commit), which is what this gate is for. The render reads the latest snapshot; the
 * subscription only decides when to render.
 */
export function useRedrawGate(
  options: RedrawGateOptions,
): (snapshot: FleetSnapshot, ui: UiState, nowMs: number, overview: OverviewModel | undefined) => void {
  const { source, clock, ui, lists, bodyHeight, guardPercent } = options;
  const shown = useRef<Shown | undefined>(undefined);
  const measure = useCallback(
    (snap: FleetSnapshot, u: UiState, nowMs: number, withOverview: boolean): Shown => {
      const { data, connection } = snap;
      const chrome: unknown[] = [
        connection.state,
        connection.error,
        connection.state === 'live' ? undefined : connection.lastUpdateMs,
      ];
      const counts: unknown[] = [data.tasks?.size, data.cooldowns?.size, data.storesTotal, data.workers?.length];
      if (u.overlay === 'detail' && u.detail) {
        return { chrome, counts, view: detailSignature(u.detail.view, u.detail.key, data), overview: undefined };
      }
      if (u.overlay !== 'none') return { chrome, counts, view: [], overview: undefined };
      if (isList(u.view)) {
        const { view, size } = listSignature(u, u.view, data, lists, bodyHeight);
        return { chrome, counts: [...counts, ...size], view, overview: undefined };
      }
      return {
        chrome,
        counts,
        view: [],
        overview: withOverview ? overviewModel(data, nowMs, guardPercent) : undefined,
      };
    },
    [lists, bodyHeight, guardPercent],
  );
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const gate = useRef({ measure, clock });
  gate.current = { measure, clock };
  useEffect(() => {
    // A change of the tab counts alone waits for the next frame, at most until the clock's next
    // COUNTS_MS turns: with 100 changes a second they would otherwise move (and cost a frame) 20
    // times a second. At the turn the header's clock redraws too (useNow wakes then): one frame.
    let countsTimer: AbortController | undefined;
    const check = (): void => {
      const last = shown.current;
      if (!last) return redraw();
      const next = gate.current.measure(source.getSnapshot(), ui.current, gate.current.clock.now(), true);
      const changed =
        !sameItems(next.chrome, last.chrome) ||
        !sameItems(next.view, last.view) ||
        (next.overview !== undefined && (last.overview === undefined || !sameOverview(next.overview, last.overview)));
      if (changed) return redraw();
      if (sameItems(next.counts, last.counts) || countsTimer) return;
      const timer = new AbortController();
      countsTimer = timer;
      const { clock } = gate.current;
      const armed = clock.now();
      const turn = armed + untilNextPeriod(armed, COUNTS_MS);
      const frames = last.frames;
      void (async () => {
        await clock.sleep(turn - armed, timer.signal);
        // A timer can fire a little before its time (Node counts from the loop's cached time):
        // drawn before the turn, the counts would cost a frame of their own. (A frozen clock, in
        // tests, did not move: it is not waited for.)
        const early = turn - clock.now();
        if (early > 0 && clock.now() !== armed) await clock.sleep(early, timer.signal);
        countsTimer = undefined;
        // A frame drawn meanwhile (the clock's, at the turn) showed them; a change since arms
        // this again. Back as they were: nothing to do either.
        if (!shown.current || shown.current.frames !== frames) return;
        const now = gate.current.measure(source.getSnapshot(), ui.current, clock.now(), false);
        if (!sameItems(now.counts, shown.current.counts)) redraw();
      })().catch(() => undefined); // unmounted: the sleep was aborted
    };
    const unsubscribe = source.subscribe(check);
    // A change between the first render and this subscription.
    if (source.getSnapshot() !== shown.current?.snapshot) check();
    return () => {
      countsTimer?.abort();
      unsubscribe();
    };
  }, [source, ui]);
  return useCallback(
    (snapshot, u, nowMs, overview) => {
      shown.current = {
        ...measure(snapshot, u, nowMs, false),
        overview,
        snapshot,
        frames: (shown.current?.frames ?? 0) + 1,
      };
    },
    [measure],
  );
}
