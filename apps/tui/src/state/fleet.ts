import type { MaintdEvent } from '../api/events.js';
import {
  type Cooldown,
  type Master,
  type Store,
  type Task,
  type TaskKind,
  TASK_KINDS,
  type Worker,
} from '../api/types.js';

/** Queued and running task counts of one kind. */
export interface KindCounts {
  readonly queued: number;
  readonly running: number;
}

/**
 * Everything the dashboard knows about the fleet. Immutable: every change makes a new object
 * (and new maps where they changed), so views can memoise on identity. Parts stay `undefined`
 * until first read, so a view can tell "none" from "not loaded yet".
 */
export interface FleetData {
  readonly masters: readonly Master[] | undefined;
  readonly workers: readonly Worker[] | undefined;
  /** Stats rows, by name (their embedded cooldowns are ignored: {@link cooldowns} is live). */
  readonly stores: readonly Store[] | undefined;
  /** Stores the master knows (may exceed `stores.length` on a huge fleet). */
  readonly storesTotal: number;
  /** Cooldown records by {@link cooldownKey}; undefined until first read. */
  readonly cooldowns: ReadonlyMap<string, Cooldown> | undefined;
  /** Recent and active tasks by id (newest pages plus live changes), bounded. */
  readonly tasks: ReadonlyMap<string, Task> | undefined;
  /** Queue depth and running count per kind. */
  readonly counts: Readonly<Record<TaskKind, KindCounts>> | undefined;
  /** `master_cooldown_guard_overflow_total` per kind, from the master's /metrics. */
  readonly guardOverflow: Readonly<Partial<Record<TaskKind, number>>> | undefined;
}

/** Fleet data before anything was read. */
export const EMPTY_FLEET: FleetData = Object.freeze({
  masters: undefined,
  workers: undefined,
  stores: undefined,
  storesTotal: 0,
  cooldowns: undefined,
  tasks: undefined,
  counts: undefined,
  guardOverflow: undefined,
});

/** Most tasks kept; beyond it the oldest finished ones go (active tasks always stay). */
export const MAX_TASKS = 2000;

/** The map key of a cooldown record. */
export function cooldownKey(kind: string, target: string): string {
  return `${kind}/${target}`;
}

/** Cooldown records as a map by {@link cooldownKey}. */
export function cooldownMap(list: readonly Cooldown[]): Map<string, Cooldown> {
  return new Map(list.map((c) => [cooldownKey(c.kind, c.target), c]));
}

/** Tasks as a map by id, pruned to {@link MAX_TASKS}. */
export function taskMap(list: Iterable<Task>): Map<string, Task> {
  const m = new Map<string, Task>();
  for (const t of list) m.set(t.id, t);
  return pruneTasks(m);
}

/**
 * Applies a batch of live events: one copy of each map the batch touches, not one per event,
 * so a burst of a hundred events into ten thousand cooldowns costs one copy.
 */
export function applyEvents(data: FleetData, events: readonly MaintdEvent[]): FleetData {
  if (events.length === 0) return data;
  let tasks: Map<string, Task> | undefined;
  let cooldowns: Map<string, Cooldown> | undefined;
  for (const e of events) {
    if (e.type === 'cooldown') {
      // Before the first full read, a partial map would pass for the whole truth.
      if (!data.cooldowns) continue;
      cooldowns ??= new Map(data.cooldowns);
      const key = cooldownKey(e.kind, e.target);
      if (e.cooldown) cooldowns.set(key, e.cooldown);
      else cooldowns.delete(key);
    } else {
      if (!data.tasks) continue;
      tasks ??= new Map(data.tasks);
      if (e.type === 'task') tasks.set(e.task.id, e.task);
      else tasks.delete(e.id);
    }
  }
  if (!tasks && !cooldowns) return data;
  return {
    ...data,
    ...(tasks ? { tasks: pruneTasks(tasks) } : {}),
    ...(cooldowns ? { cooldowns } : {}),
  };
}

/** Drops the oldest finished tasks beyond {@link MAX_TASKS} (ids are UUIDv7: lexical = age). */
export function pruneTasks(tasks: Map<string, Task>): Map<string, Task> {
  if (tasks.size <= MAX_TASKS) return tasks;
  const finished = [...tasks.values()].filter((t) => t.state === 'done' || t.state === 'failed');
  finished.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const t of finished.slice(0, tasks.size - MAX_TASKS)) tasks.delete(t.id);
  return tasks;
}

/** Queued/running counts per kind from per-state pages (exact while a page holds all of them). */
export function countsFrom(
  queued: { readonly tasks: readonly Task[]; readonly total: number },
  running: { readonly tasks: readonly Task[]; readonly total: number },
  queuedTotals?: Partial<Record<TaskKind, number>>,
): Record<TaskKind, KindCounts> {
  const out = {} as Record<TaskKind, KindCounts>;
  for (const kind of TASK_KINDS) {
    out[kind] = {
      queued: queuedTotals?.[kind] ?? queued.tasks.filter((t) => t.kind === kind).length,
      running: running.tasks.filter((t) => t.kind === kind).length,
    };
  }
  return out;
}

/** `master_cooldown_guard_overflow_total` per kind from Prometheus text. */
export function parseGuardOverflow(metrics: string): Partial<Record<TaskKind, number>> {
  const out: Partial<Record<TaskKind, number>> = {};
  for (const line of metrics.split('\n')) {
    const m = /^master_cooldown_guard_overflow_total\{[^}]*kind="([^"]+)"[^}]*\}\s+([0-9.eE+-]+)/.exec(line);
    if (!m) continue;
    const kind = m[1] as TaskKind;
    if (TASK_KINDS.includes(kind)) out[kind] = Number(m[2]);
  }
  return out;
}

/** Whether a cooldown record currently gates the sweeps (an open window). */
export function isCooling(c: Cooldown, nowMs: number): boolean {
  return c.until_ms !== null && c.until_ms > nowMs;
}

/** Per kind: cooling targets, known stores and the share cooling, for the fleet-guard gauge. */
export function coolingByKind(
  data: FleetData,
  nowMs: number,
): Record<TaskKind, { cooling: number; stores: number; percent: number }> {
  const cooling = Object.fromEntries(TASK_KINDS.map((k) => [k, 0])) as Record<TaskKind, number>;
  for (const c of data.cooldowns?.values() ?? []) if (isCooling(c, nowMs)) cooling[c.kind]++;
  const stores = data.storesTotal;
  const out = {} as Record<TaskKind, { cooling: number; stores: number; percent: number }>;
  for (const kind of TASK_KINDS) {
    out[kind] = { cooling: cooling[kind], stores, percent: stores > 0 ? (cooling[kind] * 100) / stores : 0 };
  }
  return out;
}
