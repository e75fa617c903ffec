import { type CooldownPolicy, cooldownState, cooldownWindowMs, isParked } from '@maintd/core';
import {
  type Cooldown,
  type CooldownState,
  type Policy,
  type Store,
  type Task,
  type TaskKind,
  type TaskState,
  type Worker,
} from '../api/types.js';
import { formatAgo, formatCount, formatCountdown, formatDuration, formatUntil } from '../format.js';
import { type FleetData, cooldownKey, isCooling } from '../state/fleet.js';
import { fleetKinds, runnableKinds } from '../state/kinds.js';
import { type JoinedSource, keyedRows } from '../state/sorted-index.js';
import type { Tone } from '../theme.js';
import type { Cell, Column } from './columns.js';

/** The five views, in key order (`1`–`5`). */
export const VIEW_IDS = ['overview', 'tasks', 'cooldowns', 'stores', 'workers'] as const;
/** A view. */
export type ViewId = (typeof VIEW_IDS)[number];
/** The views that are lists (all but the Overview). */
export type ListViewId = Exclude<ViewId, 'overview'>;
/** Tab titles. */
export const VIEW_TITLES: Record<ViewId, string> = {
  overview: 'Overview',
  tasks: 'Tasks',
  cooldowns: 'Cooldowns',
  stores: 'Stores',
  workers: 'Workers',
};

/** What a cell needs besides its row. */
export interface CellContext {
  readonly now: number;
  readonly data: FleetData;
}

/** One (kind, target) an action applies to. */
export interface ActionItem {
  readonly kind: TaskKind;
  readonly target: string;
}

/**
 * The operator actions: run now (the row's kind, or on a store a kind the operator picks), reset
 * the cooldown, park with a reason, release a park.
 */
export type ActionKind = 'run' | 'reset' | 'park' | 'release';

/**
 * An action whose items are alternatives by kind: per row, one item for each kind the operator
 * may pick, of which the confirm dialog takes one for every row.
 */
export interface KindPick {
  /** The kind selected when the dialog opens, when offered; else the first offered. */
  readonly preferred: TaskKind;
}

/** A sort order of a list. */
export interface SortSpec<T> {
  readonly label: string;
  /** Orders two rows by the rows alone: no clock, no other data (rows are placed by binary search). */
  readonly compare: (a: T, b: T) => number;
  /**
   * For orders that read other data (a store's cooldowns): a number per row, larger first,
   * before `compare`.
   */
  readonly rank?: (row: T, data: FleetData) => number;
}

/** Everything that makes a list view: its rows, identity, search text, sorts, columns and actions. */
export interface ListSpec<T> {
  readonly id: ListViewId;
  /** Plural noun for counts and dialogs ("cooldowns"). */
  readonly noun: string;
  /** The rows by key; undefined until first read. */
  readonly source: (data: FleetData) => ReadonlyMap<string, T> | undefined;
  /** Other live data its sorts or cells read, and which row each of its keys touches. */
  readonly joined?: (data: FleetData) => JoinedSource | undefined;
  /** A stable identity, so the selection stays on the same item across refreshes. */
  readonly key: (row: T) => string;
  /** Lowercase text the `/` filter matches. */
  readonly search: (row: T) => string;
  readonly sorts: readonly SortSpec<T>[];
  readonly columns: readonly Column<T, CellContext>[];
  readonly actions: Partial<Record<ActionKind, (row: T, data: FleetData, now: number) => ActionItem[]>>;
  /** The actions whose items are alternatives the operator picks a kind of. */
  readonly picks?: Partial<Record<ActionKind, KindPick>>;
  /** Shown when there are no rows at all (not just none matching the filter). */
  readonly empty: string;
  /**
   * What besides the row its cells read (a store's cooldown entries): a row is redrawn when its
   * item, these, its selection, or the clock and policy change; nothing else.
   */
  readonly rowDeps?: (row: T, data: FleetData) => readonly unknown[];
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const TASK_TONES: Readonly<Record<TaskState, Tone>> = { queued: 'info', running: 'warn', done: 'ok', failed: 'bad' };

/**
 * The tone of a task state; none for a state of a later release (a string, whatever the
 * document's enum says), which is shown as it comes.
 */
export function stateTone(state: string): Tone | undefined {
  return Object.hasOwn(TASK_TONES, state) ? TASK_TONES[state as TaskState] : undefined;
}

const STATE_ORDER: Readonly<Record<TaskState, number>> = { running: 0, queued: 1, failed: 2, done: 3 };

/** A state's place in the `state` sort: a later release's states after today's, by name. */
function stateRank(state: string): number {
  return Object.hasOwn(STATE_ORDER, state) ? STATE_ORDER[state as TaskState] : 4;
}

/** What a task says about its result: its error when failed, else its detail. */
export function taskOutcome(t: Task): string {
  return t.error ?? t.detail ?? '';
}

/** A task's age or run time: running for, took, or waiting for. */
export function taskTiming(t: Task, now: number): string {
  if (t.state === 'queued') return formatDuration(now - t.enqueued_at);
  if (t.state === 'running') return formatDuration(now - (t.started_at ?? t.enqueued_at));
  if (t.finished_at !== undefined && t.started_at !== undefined) return formatDuration(t.finished_at - t.started_at);
  return '-';
}

/** The Tasks view: the newest tasks and every active one, live. */
export const TASKS: ListSpec<Task> = {
  id: 'tasks',
  noun: 'tasks',
  source: (d) => d.tasks,
  key: (t) => t.id,
  search: (t) => `${t.state} ${t.kind} ${t.target} ${t.source} ${t.owner ?? ''} ${taskOutcome(t)}`.toLowerCase(),
  sorts: [
    { label: 'newest', compare: (a, b) => byText(b.id, a.id) },
    {
      label: 'state',
      compare: (a, b) => stateRank(a.state) - stateRank(b.state) || byText(a.state, b.state) || byText(b.id, a.id),
    },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(b.id, a.id) },
    { label: 'kind', compare: (a, b) => byText(a.kind, b.kind) || byText(b.id, a.id) },
  ],
  columns: [
    { title: 'STATE', width: 7, cell: (t) => ({ text: t.state, tone: stateTone(t.state) }) },
    { title: 'KIND', width: 9, cell: (t) => ({ text: t.kind }) },
    { title: 'TARGET', width: 24, cell: (t) => ({ text: t.target }) },
    { title: 'SOURCE', width: 6, drop: 2, cell: (t) => ({ text: t.source }) },
    { title: 'TRY', width: 3, align: 'right', drop: 3, cell: (t) => ({ text: String(t.attempt) }) },
    { title: 'AGE', width: 11, align: 'right', drop: 1, cell: (t, c) => ({ text: formatAgo(t.enqueued_at, c.now) }) },
    { title: 'TIME', width: 7, align: 'right', cell: (t, c) => ({ text: taskTiming(t, c.now) }) },
    {
      title: 'OUTCOME',
      width: 12,
      flex: true,
      cell: (t) => ({
        text: t.state === 'failed' ? causeOf(taskOutcome(t)) : taskOutcome(t),
        tone: t.state === 'failed' ? 'bad' : undefined,
      }),
    },
  ],
  actions: {
    run: (t) => [{ kind: t.kind, target: t.target }],
    reset: (t, d) => (d.cooldowns?.has(cooldownKey(t.kind, t.target)) ? [{ kind: t.kind, target: t.target }] : []),
    park: (t) => [{ kind: t.kind, target: t.target }],
    release: (t, d, now) => parkedItems([d.cooldowns?.get(cooldownKey(t.kind, t.target))], now),
  },
  empty: 'no tasks yet',
};

/** The policy in the shape of core's cooldown functions. */
export function corePolicy(p: Policy): CooldownPolicy {
  return {
    afterFailures: p.threshold,
    baseSecs: p.base_secs,
    maxSecs: p.max_secs,
    jitter: p.jitter,
    kinds: p.kinds,
    maxPercent: p.guard_percent,
    countInfrastructure: p.count_infrastructure_failures,
  };
}

const STATE_TONES: Readonly<Record<CooldownState, Tone>> = {
  parked: 'info',
  cooling: 'bad',
  below: 'warn',
  lapsed: 'muted',
};

/**
 * The state of an entry at `now`, as a cell: parked, cooling, below (the threshold) or lapsed; or,
 * when the master served a state of a later release, that state as it came, with no tone.
 */
export function stateCell(c: Cooldown, now: number): { text: string; tone: Tone | undefined } {
  // The served `state` is a string whatever the document's enum says: one this dashboard does not
  // know says something its own reading of the record cannot, so it is shown as it is.
  const served: string = c.state;
  if (!Object.hasOwn(STATE_TONES, served)) return { text: served, tone: undefined };
  // Never undefined: there is a record. Worked out at `now`, not taken from the served `state`:
  // a window ends and a park lapses without an event.
  const state = cooldownState(c, c.parked, now)!;
  return { text: state, tone: STATE_TONES[state] };
}

/**
 * Time left of what holds the sweeps back: the park's end when parked (`-` when it lasts until
 * released), else the window's; `-` below the threshold and once the window lapsed (the UNTIL
 * column says when it ended).
 */
export function timeLeft(c: Cooldown, now: number): string {
  if (isParked(c.parked, now)) return c.parked?.until_ms == null ? '-' : formatCountdown(c.parked.until_ms, now);
  return c.until_ms === null || c.until_ms <= now ? '-' : formatCountdown(c.until_ms, now);
}

/** When the park or window ends, in local time (`14:03:07`, or `11-16 09:12` on another day). */
export function untilText(c: Cooldown, now: number): string {
  const end = isParked(c.parked, now) ? c.parked?.until_ms : c.until_ms;
  return end == null ? '-' : formatUntil(end, now);
}

/** The count against the threshold: `4/3`, or just `4` without a policy (or for a kind not counted). */
export function countText(c: Cooldown, policy: Policy | undefined): string {
  if (!policy || policy.threshold <= 0 || !policy.kinds.includes(c.kind)) return String(c.failures);
  return `${c.failures}/${policy.threshold}`;
}

/**
 * The window a next failure would open, by core's own formula (jitter included, so the same
 * length the master will pick); undefined when it would open none (below the threshold, a kind
 * not counted, no policy known).
 */
export function nextWindowMs(c: Cooldown, policy: Policy | undefined): number | undefined {
  if (!policy || !policy.kinds.includes(c.kind)) return undefined;
  const ms = cooldownWindowMs(corePolicy(policy), c.kind, c.target, c.failures + 1);
  return ms > 0 ? ms : undefined;
}

// A failure the master words `<verb> failed: <error>` (an executor that threw).
const VERB_FAILED_FIRST = /^([a-z_ ]+ failed): (.+)$/s;

/**
 * The cause of a failure, first: the master leads with the first worker's own error, except when
 * the executor itself threw (`executor failed: …`), which is turned around here, so the column
 * always starts with why.
 */
export function causeOf(error: string): string {
  const m = VERB_FAILED_FIRST.exec(error);
  return m ? `${m[2]} (${m[1]})` : error;
}

/** What the CAUSE column shows: the park's reason when parked, else the failure's cause. */
export function causeCell(c: Cooldown, now: number): Cell {
  if (isParked(c.parked, now) && c.parked)
    return { text: `${c.parked.reason} (parked by ${c.parked.by})`, tone: 'info' };
  return { text: causeOf(c.last_error), tone: 'bad' };
}

/** The parked entries among these, as action items (what `u` releases). */
function parkedItems(entries: readonly (Cooldown | undefined)[], now: number): ActionItem[] {
  return entries.flatMap((c) => (c && isParked(c.parked, now) ? [{ kind: c.kind, target: c.target }] : []));
}

/** The Cooldowns view: what the sweeps skip and why, with counters below the threshold. */
export const COOLDOWNS: ListSpec<Cooldown> = {
  id: 'cooldowns',
  noun: 'cooldowns',
  source: (d) => d.cooldowns,
  key: (c) => cooldownKey(c.kind, c.target),
  search: (c) =>
    `${c.kind} ${c.target} ${c.state} ${c.last_error_class ?? ''} ${c.last_error} ${c.parked?.reason ?? ''}`.toLowerCase(),
  sorts: [
    // By the end of the window, not the time left: the order then holds while the clock ticks.
    {
      label: 'time left',
      compare: (a, b) =>
        (b.until_ms ?? -1) - (a.until_ms ?? -1) || b.failures - a.failures || byText(a.target, b.target),
    },
    { label: 'failures', compare: (a, b) => b.failures - a.failures || byText(a.target, b.target) },
    {
      label: 'last failure',
      compare: (a, b) => (b.last_failure_ms ?? 0) - (a.last_failure_ms ?? 0) || byText(a.target, b.target),
    },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(a.kind, b.kind) },
  ],
  columns: [
    { title: 'KIND', width: 9, cell: (c) => ({ text: c.kind }) },
    { title: 'TARGET', width: 22, cell: (c) => ({ text: c.target }) },
    { title: 'STATE', width: 7, cell: (c, x) => stateCell(c, x.now) },
    // The count against the threshold: `4/3`.
    {
      title: 'FAILS',
      width: 5,
      align: 'right',
      cell: (c, x) => ({ text: countText(c, x.data.policy) }),
    },
    { title: 'LEFT', width: 7, align: 'right', cell: (c, x) => ({ text: timeLeft(c, x.now) }) },
    { title: 'UNTIL', width: 11, align: 'right', drop: 2, cell: (c, x) => ({ text: untilText(c, x.now) }) },
    {
      title: 'NEXT',
      width: 6,
      align: 'right',
      drop: 3,
      cell: (c, x) => {
        const next = nextWindowMs(c, x.data.policy);
        return { text: next === undefined ? '-' : formatDuration(next) };
      },
    },
    // Narrow terminals drop the age of the last failure first: until when and the next window
    // say more about what the sweeps will do.
    {
      title: 'LAST FAIL',
      width: 10,
      align: 'right',
      drop: 4,
      cell: (c, x) => ({ text: c.last_failure_ms === undefined ? '-' : formatAgo(c.last_failure_ms, x.now) }),
    },
    // The column the view is for: at least 20 wide, the rest of the terminal on wider ones.
    { title: 'CAUSE', width: 20, flex: true, cell: (c, x) => causeCell(c, x.now) },
  ],
  actions: {
    run: (c) => [{ kind: c.kind, target: c.target }],
    reset: (c) => [{ kind: c.kind, target: c.target }],
    park: (c) => [{ kind: c.kind, target: c.target }],
    release: (c, _d, now) => parkedItems([c], now),
  },
  empty: 'no cooldowns: no store is failing',
};

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

/** A worker's health: ok, failing or unknown (not scanned yet). */
export function workerHealth(w: Worker): { text: string; tone: Tone } {
  if (w.ok === null) return { text: 'unknown', tone: 'muted' };
  return w.ok ? { text: 'ok', tone: 'ok' } : { text: 'failing', tone: 'bad' };
}

const HEALTH_ORDER = (w: Worker): number => (w.ok === false ? 0 : w.ok === null ? 1 : 2);

/** The Workers view: each endpoint's last scan. */
export const WORKERS: ListSpec<Worker> = {
  id: 'workers',
  noun: 'workers',
  source: (d) => keyedRows(d.workers, (w) => w.endpoint),
  key: (w) => w.endpoint,
  search: (w) => `${w.endpoint} ${workerHealth(w).text} ${w.error ?? ''}`.toLowerCase(),
  sorts: [
    { label: 'health', compare: (a, b) => HEALTH_ORDER(a) - HEALTH_ORDER(b) || byText(a.endpoint, b.endpoint) },
    { label: 'endpoint', compare: (a, b) => byText(a.endpoint, b.endpoint) },
    { label: 'stores', compare: (a, b) => b.stores - a.stores || byText(a.endpoint, b.endpoint) },
  ],
  columns: [
    { title: 'ENDPOINT', width: 28, cell: (w) => ({ text: w.endpoint }) },
    { title: 'HEALTH', width: 7, cell: (w) => workerHealth(w) },
    { title: 'STORES', width: 6, align: 'right', cell: (w) => ({ text: formatCount(w.stores) }) },
    {
      title: 'SCANNED',
      width: 11,
      align: 'right',
      drop: 1,
      cell: (w, x) => ({ text: formatAgo(w.last_scan_at, x.now) }),
    },
    { title: 'ERROR', width: 12, flex: true, cell: (w) => ({ text: w.error ?? '', tone: 'bad' }) },
  ],
  actions: {},
  empty: 'no worker endpoints configured on this master',
};

/** Whether a row matches a filter: every word of it, case-insensitively. */
export function matcher<T>(spec: ListSpec<T>, filter: string): (row: T) => boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return () => true;
  return (row) => {
    const text = spec.search(row);
    return words.every((w) => text.includes(w));
  };
}

/** Every list view's spec, by id. */
export const LIST_SPECS: { readonly [K in ListViewId]: ListSpec<RowOf<K>> } = {
  tasks: TASKS,
  cooldowns: COOLDOWNS,
  stores: STORES,
  workers: WORKERS,
};

/** The row type of a list view. */
export type RowOf<K extends ListViewId> = K extends 'tasks'
  ? Task
  : K extends 'cooldowns'
    ? Cooldown
    : K extends 'stores'
      ? Store
      : Worker;
