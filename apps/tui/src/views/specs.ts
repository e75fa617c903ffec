import {
  type Cooldown,
  type Store,
  type Task,
  type TaskKind,
  type TaskState,
  type Worker,
  TASK_KINDS,
} from '../api/types.js';
import { formatAgo, formatCount, formatCountdown, formatDuration } from '../format.js';
import { type FleetData, cooldownKey, isCooling } from '../state/fleet.js';
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

/** The operator actions: run now (the row's kind, or merge_wal for a store), compact now, reset. */
export type ActionKind = 'run' | 'compact' | 'reset';

/** A sort order of a list. */
export interface SortSpec<T> {
  readonly label: string;
  /** Orders two rows; `data` is there for orders that join (a store's cooldowns). */
  readonly compare: (a: T, b: T, data: FleetData) => number;
}

/** Everything that makes a list view: its rows, identity, search text, sorts, columns and actions. */
export interface ListSpec<T> {
  readonly id: ListViewId;
  /** Plural noun for counts and dialogs ("cooldowns"). */
  readonly noun: string;
  readonly rows: (data: FleetData) => readonly T[] | undefined;
  /** A stable identity, so the selection stays on the same item across refreshes. */
  readonly key: (row: T) => string;
  /** Lowercase text the `/` filter matches. */
  readonly search: (row: T) => string;
  readonly sorts: readonly SortSpec<T>[];
  readonly columns: readonly Column<T, CellContext>[];
  readonly actions: Partial<Record<ActionKind, (row: T, data: FleetData) => ActionItem[]>>;
  /** Shown when there are no rows at all (not just none matching the filter). */
  readonly empty: string;
  /**
   * Whether cells read `CellContext.data` (a join, like a store's cooldowns). Rows of the other
   * views re-render only when their own item or the clock changes, not on every data change.
   */
  readonly cellsUseData?: boolean;
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The tone of a task state. */
export function stateTone(state: TaskState): Tone {
  return state === 'queued' ? 'info' : state === 'running' ? 'warn' : state === 'done' ? 'ok' : 'bad';
}

const STATE_ORDER: Record<TaskState, number> = { running: 0, queued: 1, failed: 2, done: 3 };

/** What a task says about its result: its error when failed, else its detail. */
export function taskOutcome(t: Task): string {
  return t.error ?? t.detail ?? '';
}

/** A task's age or run time: running for, took, or waiting for. */
export function taskTiming(t: Task, now: number): string {
  if (t.state === 'queued') return formatDuration(now - t.enqueued_at);
  if (t.state === 'running') return formatDuration(now - (t.started_at ?? t.enqueued_at));
  if (t.finished_at !== undefined && t.started_at !== undefined) return formatDuration(t.finished_at - t.started_at);
  return '–';
}

/** The Tasks view: the newest tasks and every active one, live. */
export const TASKS: ListSpec<Task> = {
  id: 'tasks',
  noun: 'tasks',
  rows: (d) => (d.tasks ? [...d.tasks.values()] : undefined),
  key: (t) => t.id,
  search: (t) => `${t.state} ${t.kind} ${t.target} ${t.source} ${t.owner ?? ''} ${taskOutcome(t)}`.toLowerCase(),
  sorts: [
    { label: 'newest', compare: (a, b) => byText(b.id, a.id) },
    { label: 'state', compare: (a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || byText(b.id, a.id) },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(b.id, a.id) },
    { label: 'kind', compare: (a, b) => byText(a.kind, b.kind) || byText(b.id, a.id) },
  ],
  columns: [
    { title: 'STATE', width: 7, cell: (t) => ({ text: t.state, tone: stateTone(t.state) }) },
    { title: 'KIND', width: 9, cell: (t) => ({ text: t.kind }) },
    { title: 'TARGET', width: 24, cell: (t) => ({ text: t.target, bold: true }) },
    { title: 'SOURCE', width: 6, drop: 2, cell: (t) => ({ text: t.source, tone: 'muted' }) },
    { title: 'TRY', width: 3, align: 'right', drop: 3, cell: (t) => ({ text: String(t.attempt) }) },
    { title: 'AGE', width: 11, align: 'right', drop: 1, cell: (t, c) => ({ text: formatAgo(t.enqueued_at, c.now) }) },
    { title: 'TIME', width: 7, align: 'right', cell: (t, c) => ({ text: taskTiming(t, c.now) }) },
    {
      title: 'OUTCOME',
      width: 12,
      flex: true,
      cell: (t) => ({ text: taskOutcome(t), tone: t.state === 'failed' ? 'bad' : 'muted' }),
    },
  ],
  actions: {
    run: (t) => [{ kind: t.kind, target: t.target }],
    reset: (t, d) => (d.cooldowns?.has(cooldownKey(t.kind, t.target)) ? [{ kind: t.kind, target: t.target }] : []),
  },
  empty: 'no tasks yet',
};

/** The state of a cooldown record at `now`. */
export function cooldownState(c: Cooldown, now: number): { text: string; tone: Tone } {
  if (isCooling(c, now)) return { text: 'cooling', tone: 'bad' };
  if (c.until_ms !== null) return { text: 'expired', tone: 'muted' };
  return { text: 'counting', tone: 'warn' };
}

/** Time left of a window as a live countdown; `–` below the threshold. */
export function timeLeft(c: Cooldown, now: number): string {
  return c.until_ms === null ? '–' : formatCountdown(c.until_ms, now);
}

/** The Cooldowns view: what the sweeps skip and why, with counters below the threshold. */
export const COOLDOWNS: ListSpec<Cooldown> = {
  id: 'cooldowns',
  noun: 'cooldowns',
  rows: (d) => (d.cooldowns ? [...d.cooldowns.values()] : undefined),
  key: (c) => cooldownKey(c.kind, c.target),
  search: (c) => `${c.kind} ${c.target} ${c.last_error_class} ${c.last_error}`.toLowerCase(),
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
      compare: (a, b) => b.last_failure_ms - a.last_failure_ms || byText(a.target, b.target),
    },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(a.kind, b.kind) },
  ],
  columns: [
    { title: 'KIND', width: 9, cell: (c) => ({ text: c.kind }) },
    { title: 'TARGET', width: 22, cell: (c) => ({ text: c.target, bold: true }) },
    { title: 'FAIL', width: 4, align: 'right', cell: (c) => ({ text: String(c.failures) }) },
    { title: 'STATE', width: 8, cell: (c, x) => cooldownState(c, x.now) },
    { title: 'LEFT', width: 7, align: 'right', cell: (c, x) => ({ text: timeLeft(c, x.now) }) },
    {
      title: 'CLASS',
      width: 6,
      drop: 2,
      cell: (c) => ({ text: c.last_error_class === 'infrastructure' ? 'infra' : c.last_error_class, tone: 'muted' }),
    },
    {
      title: 'LAST FAIL',
      width: 11,
      align: 'right',
      drop: 1,
      cell: (c, x) => ({ text: formatAgo(c.last_failure_ms, x.now) }),
    },
    { title: 'LAST ERROR', width: 12, flex: true, cell: (c) => ({ text: c.last_error, tone: 'bad' }) },
  ],
  actions: {
    run: (c) => [{ kind: c.kind, target: c.target }],
    reset: (c) => [{ kind: c.kind, target: c.target }],
  },
  empty: 'no cooldowns: no store is failing',
};

/** The cooldown records of one store, live. */
export function storeCooldowns(name: string, data: FleetData): Cooldown[] {
  const out: Cooldown[] = [];
  for (const kind of TASK_KINDS) {
    const c = data.cooldowns?.get(cooldownKey(kind, name));
    if (c) out.push(c);
  }
  return out;
}

/** A store's cooling summary: `merge_wal 9m59s` per open window, `merge_wal 2×` per counter. */
export function coolingSummary(name: string, x: CellContext): Cell {
  const parts = storeCooldowns(name, x.data).map((c) =>
    isCooling(c, x.now) ? `${c.kind} ${timeLeft(c, x.now)}` : `${c.kind} ${c.failures}×`,
  );
  const cooling = storeCooldowns(name, x.data).some((c) => isCooling(c, x.now));
  return { text: parts.join(', '), tone: cooling ? 'bad' : parts.length > 0 ? 'warn' : undefined };
}

const coolingRank = (s: Store, d: FleetData): number =>
  storeCooldowns(s.name, d).reduce((max, c) => Math.max(max, c.until_ms ?? c.failures), 0);

/** The Stores view: backlog per store, biggest first, with its cooldown state. */
export const STORES: ListSpec<Store> = {
  id: 'stores',
  noun: 'stores',
  rows: (d) => d.stores,
  key: (s) => s.name,
  search: (s) => s.name.toLowerCase(),
  sorts: [
    {
      label: 'backlog',
      compare: (a, b) => b.pending_wal_generations - a.pending_wal_generations || byText(a.name, b.name),
    },
    { label: 'fragments', compare: (a, b) => b.fragment_count - a.fragment_count || byText(a.name, b.name) },
    {
      label: 'cooling',
      compare: (a, b, d) => coolingRank(b, d) - coolingRank(a, d) || byText(a.name, b.name),
    },
    { label: 'name', compare: (a, b) => byText(a.name, b.name) },
  ],
  columns: [
    { title: 'STORE', width: 24, cell: (s) => ({ text: s.name, bold: true }) },
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
    {
      title: 'ROWS',
      width: 11,
      align: 'right',
      drop: 2,
      cell: (s) => ({ text: formatCount(s.row_count), tone: 'muted' }),
    },
    { title: 'OWNERS', width: 6, align: 'right', drop: 3, cell: (s) => ({ text: String(s.owners.length) }) },
    {
      title: 'SCANNED',
      width: 11,
      align: 'right',
      drop: 1,
      cell: (s, x) => ({ text: formatAgo(s.scanned_at, x.now) }),
    },
    { title: 'COOLING', width: 10, flex: true, cell: (s, x) => coolingSummary(s.name, x) },
  ],
  actions: {
    run: (s) => [{ kind: 'merge_wal', target: s.name }],
    compact: (s) => [{ kind: 'compact', target: s.name }],
    reset: (s, d) => storeCooldowns(s.name, d).map((c) => ({ kind: c.kind, target: c.target })),
  },
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
  rows: (d) => d.workers,
  key: (w) => w.endpoint,
  search: (w) => `${w.endpoint} ${workerHealth(w).text} ${w.error ?? ''}`.toLowerCase(),
  sorts: [
    { label: 'health', compare: (a, b) => HEALTH_ORDER(a) - HEALTH_ORDER(b) || byText(a.endpoint, b.endpoint) },
    { label: 'endpoint', compare: (a, b) => byText(a.endpoint, b.endpoint) },
    { label: 'stores', compare: (a, b) => b.stores - a.stores || byText(a.endpoint, b.endpoint) },
  ],
  columns: [
    { title: 'ENDPOINT', width: 28, cell: (w) => ({ text: w.endpoint, bold: true }) },
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

/**
 * Rows of a list after the filter (every word must match) and the sort. Pure; `rows` saves
 * re-reading them when the caller already has `spec.rows(data)`.
 */
export function deriveRows<T>(
  spec: ListSpec<T>,
  data: FleetData,
  filter: string,
  sort: number,
  rows: readonly T[] | undefined = spec.rows(data),
): readonly T[] {
  const all = rows ?? [];
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const matching = words.length === 0 ? [...all] : all.filter((r) => words.every((w) => spec.search(r).includes(w)));
  const order = spec.sorts[sort % spec.sorts.length];
  return order ? matching.sort((a, b) => order.compare(a, b, data)) : matching;
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
