import { KIND_PATTERN, cooldownState, isParked } from '@maintd/core';
import type { MaintdEvent } from '../api/events.js';
import type { Cooldown, Task, TaskKind, TimelineEvent } from '../api/types.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { type Activity, appendActivity } from './activity.js';
import { auditActivity, pairRef } from './audit-lines.js';
import type { FleetData, KindCounts } from './fleet-data.js';
import { byKind, fleetKinds } from './kinds.js';
import { LiveMap } from './live-map.js';

/** Most timeline events kept from the stream (a detail pane reads its pair's whole timeline when opened). */
export const MAX_TIMELINE_TAIL = 200;

/** Most tasks kept; beyond it the oldest finished ones go (active tasks always stay). */
export const MAX_TASKS = 2000;

/** Cooldown records as a live map by {@link cooldownKey}. */
export function cooldownMap(list: readonly Cooldown[]): LiveMap<Cooldown> {
  return new LiveMap(list.map((c) => [cooldownKey(c.kind, c.target), c]));
}

/** A map as a {@link LiveMap}: itself when it is one, else a copy (once). */
function live<V>(m: ReadonlyMap<string, V>): LiveMap<V> {
  return m instanceof LiveMap ? (m as LiveMap<V>) : new LiveMap(m);
}

/** Whether two JSON values are the same (records from two reads of the master). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * Makes `target` hold exactly `entries`, changing only what differs: a re-read of 10,000
 * cooldowns of which 20 changed moves 20 rows (and redraws none that are unchanged), where
 * replacing the map would rebuild every view of it. `target` undefined: a new map.
 */
export function mergeInto<V>(
  target: ReadonlyMap<string, V> | undefined,
  entries: Iterable<readonly [string, V]>,
): LiveMap<V> {
  if (!target) return new LiveMap(entries);
  const m = live(target);
  const seen = new Set<string>();
  for (const [k, v] of entries) {
    seen.add(k);
    const old = m.get(k);
    if (old === undefined || !sameJson(old, v)) m.set(k, v);
  }
  for (const k of [...m.keys()]) if (!seen.has(k)) m.delete(k);
  return m;
}

/** A re-read list with the unchanged rows of the previous read kept (the whole list, when none changed). */
export function mergeRows<T>(
  prev: readonly T[] | undefined,
  next: readonly T[],
  key: (row: T) => string,
): readonly T[] {
  if (!prev) return next;
  const old = new Map(prev.map((r) => [key(r), r]));
  let same = prev.length === next.length;
  const out = next.map((r, i) => {
    const o = old.get(key(r));
    if (o !== undefined && sameJson(o, r)) {
      if (prev[i] !== o) same = false;
      return o;
    }
    same = false;
    return r;
  });
  return same ? prev : out;
}

/** What a change of an entry's park says in the activity log; undefined when its park did not change. */
export function parkActivity(
  kind: string,
  target: string,
  before: Cooldown | undefined,
  after: Cooldown | null | undefined,
  nowMs: number,
): Activity | undefined {
  const was = isParked(before?.parked, nowMs);
  const is = isParked(after?.parked, nowMs);
  const p = after?.parked;
  if (is && p && (!was || before?.parked?.parked_at_ms !== p.parked_at_ms || before.parked.reason !== p.reason)) {
    return {
      at: p.parked_at_ms,
      text: `parked ${kind} ${target} (${p.by}): ${p.reason}`,
      tone: 'warn',
      subject: { source: 'park', keys: [pairRef('park', kind, target)], by: p.by, reason: p.reason },
    };
  }
  if (was && !is) return releaseActivity(kind, target, nowMs);
  return undefined;
}

function releaseActivity(kind: string, target: string, nowMs: number): Activity {
  return {
    at: nowMs,
    text: `released ${kind} ${target}`,
    tone: 'ok',
    subject: { source: 'park', keys: [pairRef('delete', kind, target)] },
  };
}

/** The parks in force in a map, by key (each with its entry), for {@link parkNotes}. */
export function parksIn(map: ReadonlyMap<string, Cooldown> | undefined, nowMs: number): Map<string, Cooldown> {
  const out = new Map<string, Cooldown>();
  for (const [k, c] of map ?? []) if (isParked(c.parked, nowMs)) out.set(k, c);
  return out;
}

/**
 * What a re-read changed in the parks (a park or release the stream did not deliver, e.g. while
 * it was down): the activity lines between the parks before it and the map after it.
 */
export function parkNotes(
  before: ReadonlyMap<string, Cooldown>,
  after: ReadonlyMap<string, Cooldown> | undefined,
  nowMs: number,
): Activity[] {
  const notes: Activity[] = [];
  const now = parksIn(after, nowMs);
  for (const [k, c] of now) {
    const note = parkActivity(c.kind, c.target, before.get(k), c, nowMs);
    if (note) notes.push(note);
  }
  for (const [k, c] of before) {
    if (!now.has(k)) notes.push(releaseActivity(c.kind, c.target, nowMs));
  }
  return notes.sort((a, b) => a.at - b.at);
}

/**
 * Applies a batch of live events to the live maps of `data`, in place: a burst of a hundred
 * events into ten thousand cooldowns changes a hundred entries, copying nothing. Returns a new
 * {@link FleetData} (so views see a change) when any applied, else `data` itself. A plain map (a
 * test's, or the first read) is copied into a live one once.
 */
export function applyEvents(data: FleetData, events: readonly MaintdEvent[], nowMs = Date.now()): FleetData {
  if (events.length === 0) return data;
  let tasks: LiveMap<Task> | undefined;
  let cooldowns: LiveMap<Cooldown> | undefined;
  const activity: Activity[] = [];
  const timeline: TimelineEvent[] = [];
  for (const e of events) {
    if (e.type === 'timeline') timeline.push(e.event);
    else if (e.type === 'audit') activity.push(auditActivity(e.entry));
    else if (e.type === 'cooldown') {
      // Before the first full read, a partial map would pass for the whole truth.
      if (!data.cooldowns) continue;
      cooldowns ??= live(data.cooldowns);
      const key = cooldownKey(e.kind, e.target);
      const before = cooldowns.get(key);
      const note = parkActivity(e.kind, e.target, before, e.cooldown, nowMs);
      if (note) activity.push(note);
      if (e.cooldown) cooldowns.set(key, e.cooldown);
      else cooldowns.delete(key);
    } else {
      if (!data.tasks) continue;
      tasks ??= live(data.tasks);
      if (e.type === 'task') tasks.set(e.task.id, e.task);
      else tasks.delete(e.id);
    }
  }
  if (!tasks && !cooldowns && timeline.length === 0 && activity.length === 0) return data;
  return {
    ...data,
    ...(tasks ? { tasks: pruneTasks(tasks) } : {}),
    ...(cooldowns ? { cooldowns } : {}),
    ...(timeline.length > 0 ? { timeline: [...data.timeline, ...timeline].slice(-MAX_TIMELINE_TAIL) } : {}),
    activity: appendActivity(data.activity, activity),
  };
}

/** Drops the oldest finished tasks beyond {@link MAX_TASKS} (ids are UUIDv7: lexical = age). */
export function pruneTasks<M extends Map<string, Task>>(tasks: M): M {
  if (tasks.size <= MAX_TASKS) return tasks;
  const finished = [...tasks.values()].filter((t) => t.state === 'done' || t.state === 'failed');
  finished.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const t of finished.slice(0, tasks.size - MAX_TASKS)) tasks.delete(t.id);
  return tasks;
}

/**
 * Queued/running counts per kind from per-state pages (exact while a page holds all of them):
 * for each of `kinds`, and for any other kind a page or a total shows.
 */
export function countsFrom(
  kinds: readonly TaskKind[],
  queued: { readonly tasks: readonly Task[]; readonly total: number },
  running: { readonly tasks: readonly Task[]; readonly total: number },
  queuedTotals?: Readonly<Record<TaskKind, number>>,
): Record<TaskKind, KindCounts> {
  const all = new Set(kinds);
  for (const t of [...queued.tasks, ...running.tasks]) all.add(t.kind);
  for (const k of Object.keys(queuedTotals ?? {})) all.add(k);
  const out = byKind<KindCounts>();
  for (const kind of all) {
    out[kind] = {
      queued: queuedTotals?.[kind] ?? queued.tasks.filter((t) => t.kind === kind).length,
      running: running.tasks.filter((t) => t.kind === kind).length,
    };
  }
  return out;
}

/** `master_cooldown_guard_overflow_total` per kind from Prometheus text (any well-formed kind). */
export function parseGuardOverflow(metrics: string): Record<TaskKind, number> {
  const out = byKind<number>();
  for (const line of metrics.split('\n')) {
    const m = /^master_cooldown_guard_overflow_total\{[^}]*kind="([^"]+)"[^}]*\}\s+([0-9.eE+-]+)/.exec(line);
    if (m && KIND_PATTERN.test(m[1]!)) out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** Whether a cooldown record's window is open at `nowMs` (its park aside). */
export function isCooling(c: Cooldown, nowMs: number): boolean {
  return cooldownState(c, undefined, nowMs) === 'cooling';
}

/** Per kind: cooling targets, known stores and the share cooling, for the fleet-guard gauge. */
export function coolingByKind(
  data: FleetData,
  nowMs: number,
): Record<TaskKind, { cooling: number; stores: number; percent: number }> {
  const cooling = new Map<TaskKind, number>(fleetKinds(data).map((k) => [k, 0]));
  // Parked targets are not the scheduler giving up: the master's guard leaves them out too.
  for (const c of data.cooldowns?.values() ?? [])
    if (cooldownState(c, c.parked, nowMs) === 'cooling') cooling.set(c.kind, (cooling.get(c.kind) ?? 0) + 1);
  const stores = data.storesTotal;
  const out = byKind<{ cooling: number; stores: number; percent: number }>();
  for (const [kind, n] of cooling) out[kind] = { cooling: n, stores, percent: stores > 0 ? (n * 100) / stores : 0 };
  return out;
}
