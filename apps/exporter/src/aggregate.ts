/**
 * Cluster-wide aggregates of one maintd prefix, kept from etcd changes (docs/ARCHITECTURE.md §5).
 *
 * The exporter holds one {@link ClusterAggregate} per sync: every key it reads or watches goes
 * through {@link applyChange}, which keeps exactly what a later put or delete of the same key
 * needs to undo its contribution, so counts stay exact under any sequence of changes (including
 * a replay of changes already reflected, see `watcher.ts`). `summarize` (`summary.ts`) turns it
 * into the numbers a scrape exports, at a given time, without touching etcd.
 *
 * Memory is the constraint: a task is one number in a Map keyed by the 16 bytes of its id, never
 * a parsed record, and only its kind and state are read from its value (`record-fields.ts`); a
 * queued task's age comes from its id, a UUIDv7 (`task-id.ts`).
 */
import { type Keys, type PairKey, keysFor, parsePairKey } from '@maintd/core';
import { MAX_KINDS, MAX_STATES, type NameTable, createKindTable, createStateTable, internName } from './name-table.js';
import { type IsLive, type QueueHeap, createQueueHeap, heapPush } from './queue-heap.js';
import {
  type CooldownFields,
  TASK_STATES,
  readCooldown,
  readMasterKinds,
  readParkUntil,
  readPendingWal,
  readTask,
} from './record-fields.js';
import { taskMapKey, uuidV7Ms } from './task-id.js';

/**
 * State slots per kind: a task's slot is `kind * STATES + state`. Room for every state a table
 * may hold, today's and a later release's, so a state first seen mid-sync changes no packed number.
 */
export const STATES = MAX_STATES;
/**
 * Kind and state share the low "digits" of a packed task; the enqueue time is the rest. Sized for
 * the most kinds a table holds, so a kind first seen mid-sync changes no packed number.
 */
const SLOTS = MAX_KINDS * STATES;
/** The index of `queued` in every state table: today's states come first, in schema order. */
const QUEUED = TASK_STATES.indexOf('queued');
// An enqueue time (ms, ~2^41 today) times SLOTS must stay an exact double: fine up to ~4000 slots.
if (SLOTS > 4096) throw new Error('too many kinds × states to pack a task into one number');

/** The key prefixes of the five sections an aggregate reads, built once. */
interface Sections {
  readonly tasks: string;
  readonly cooldowns: string;
  readonly parks: string;
  readonly stats: string;
  readonly masters: string;
}

/** The in-memory state of one prefix. Mutated by {@link applyChange}; read by `summarize`. */
export interface ClusterAggregate {
  readonly keys: Keys;
  /** Every kind met in a record or a registration; the per-kind arrays below are indexed by it. */
  readonly kinds: NameTable;
  /**
   * Every task state met: today's first, then a later release's as its records show them; the
   * state part of a task's slot indexes it.
   */
  readonly states: NameTable;
  /** Where each section starts: every watched change is matched against them. */
  readonly sections: Sections;
  /**
   * Task map key (see `taskMapKey`) → `kind * STATES + state`, plus `enqueue time * SLOTS` while
   * queued: one number per task, never a parsed record.
   */
  readonly tasks: Map<string, number>;
  /** Task count per `kind * STATES + state`. */
  readonly taskCounts: number[];
  /** Per kind (index in {@link ClusterAggregate.kinds}): its queued tasks by enqueue time. */
  readonly queues: QueueHeap[];
  /**
   * Per kind: whether a heap entry is still a queued task ({@link isQueued}), made once per kind
   * so that neither a queued task's push nor a scrape allocates a check.
   */
  readonly queuedChecks: IsLive[];
  /** Per kind: cooldown key → entry. */
  readonly cooldowns: Map<string, CooldownFields>[];
  /** Per kind: consecutive-failure count → records with that count (for an exact max under deletes). */
  readonly failureCounts: Map<number, number>[];
  /**
   * Per kind: an operator's park → its `until_ms` (null: until released), keyed by the cooldown
   * key of the same kind and target, so a scrape tells a parked cooling target without building
   * a key. Kept in the shape core's `isParked` reads, so a scrape builds no object per park.
   * Lapsed parks stay until released, as their records do.
   */
  readonly parks: Map<string, { readonly until_ms: number | null }>[];
  /** Stats key → pending WAL generations. */
  readonly stats: Map<string, number>;
  pendingWalGenerations: number;
  /**
   * Registration keys of live masters → the kinds each says it runs (none from a master that
   * predates `kinds`): a kind a live master runs is exported even while it has no record.
   */
  readonly masters: Map<string, readonly string[]>;
  /** Keys whose value could not be decoded; left out of every other number. */
  readonly invalid: Set<string>;
  /**
   * Revision through which every change is known to be applied: the sync's read revision, then
   * each watched change's.
   */
  revision: number;
}

/** One put or delete under the prefix, from a range read (a put) or the watch. */
export interface Change {
  readonly type: 'put' | 'delete';
  readonly key: string;
  /** The new value; ignored for deletes. */
  readonly value: string;
  /** Revision of the change; 0 when unknown. */
  readonly modRevision: number;
}

/** An empty aggregate for `prefix` (default `/maintd`). */
export function createAggregate(prefix?: string): ClusterAggregate {
  const keys = keysFor(prefix);
  return {
    keys,
    kinds: createKindTable(),
    states: createStateTable(),
    sections: sectionsOf(keys),
    tasks: new Map(),
    taskCounts: [],
    queues: [],
    queuedChecks: [],
    cooldowns: [],
    failureCounts: [],
    parks: [],
    stats: new Map(),
    pendingWalGenerations: 0,
    masters: new Map(),
    invalid: new Set(),
    revision: 0,
  };
}

/** The key prefixes an aggregate reads: a sync range-reads each of them. */
export function aggregatePrefixes(keys: Keys): readonly string[] {
  const s = sectionsOf(keys);
  return [s.tasks, s.cooldowns, s.parks, s.stats, s.masters];
}

function sectionsOf(keys: Keys): Sections {
  return {
    tasks: keys.tasksPrefix,
    cooldowns: keys.cooldownPrefix(),
    parks: keys.parkedPrefix(),
    stats: keys.statsPrefix,
    masters: keys.mastersPrefix,
  };
}

/**
 * Applies one change. Keys outside the five sections the metrics need (queue, claims, locks,
 * dedupe, sweeps, …) are ignored, so the whole prefix can be watched with one watch.
 */
export function applyChange(agg: ClusterAggregate, change: Change): void {
  if (change.modRevision > agg.revision) agg.revision = change.modRevision;
  const { key } = change;
  const s = agg.sections;
  const value = change.type === 'put' ? change.value : undefined;
  if (value === undefined) agg.invalid.delete(key);
  if (key.startsWith(s.tasks)) applyTask(agg, key, value);
  else if (key.startsWith(s.cooldowns)) applyCooldown(agg, key, value);
  else if (key.startsWith(s.parks)) applyPark(agg, key, value);
  else if (key.startsWith(s.stats)) applyStats(agg, key, value);
  else if (key.startsWith(s.masters)) applyMaster(agg, key, value);
}

/**
 * A master counts while its key exists (exactly while its session does), whatever its value; the
 * kinds it names join the table so that they are exported before any record of them exists.
 */
function applyMaster(agg: ClusterAggregate, key: string, value: string | undefined): void {
  if (value === undefined) {
    agg.masters.delete(key);
    return;
  }
  const kinds = readMasterKinds(value).filter((k) => internName(agg.kinds, k) >= 0);
  agg.masters.set(key, kinds);
  growKinds(agg);
}

/** Gives every kind in the table its per-kind counters: the table grows as records show kinds. */
function growKinds(agg: ClusterAggregate): void {
  while (agg.queues.length < agg.kinds.names.length) {
    const kind = agg.queues.length;
    agg.queues.push(createQueueHeap());
    agg.queuedChecks.push((at, id) => isQueued(agg, kind, at, id));
    agg.cooldowns.push(new Map());
    agg.failureCounts.push(new Map());
    agg.parks.push(new Map());
    for (let i = 0; i < STATES; i++) agg.taskCounts.push(0);
  }
}

/**
 * Whether the heap entry (`at`, `id`) of kind `kind` still describes a queued task: the task's
 * packed number holds the enqueue time it was pushed with.
 */
export function isQueued(agg: ClusterAggregate, kind: number, at: number, id: string): boolean {
  return agg.tasks.get(id) === at * SLOTS + kind * STATES + QUEUED;
}

function applyTask(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const id = taskMapKey(key, agg.sections.tasks.length);
  const prev = agg.tasks.get(id);
  if (prev !== undefined) {
    agg.taskCounts[prev % SLOTS]!--;
    if (prev % STATES === QUEUED) agg.queues[Math.floor((prev % SLOTS) / STATES)]!.queued--;
  }
  const idMs = uuidV7Ms(id);
  const fields =
    value === undefined ? undefined : noteDecoded(agg, key, readTask(value, idMs === undefined, agg.kinds, agg.states));
  // Reading the record may have added its kind, even when another field made it undecodable.
  growKinds(agg);
  if (!fields) {
    agg.tasks.delete(id);
    return;
  }
  const { kind, state } = fields;
  const slot = kind * STATES + state;
  // Only a queued task needs its enqueue time (for the oldest age); the others stay small
  // integers, which V8 stores unboxed.
  const at = idMs ?? fields.enqueuedAt;
  const packed = state === QUEUED ? at * SLOTS + slot : slot;
  agg.tasks.set(id, packed);
  agg.taskCounts[slot]!++;
  if (state === QUEUED) {
    const q = agg.queues[kind]!;
    q.queued++;
    // A rewrite of an already-queued record needs no second heap entry.
    if (prev !== packed) heapPush(q, at, id, agg.queuedChecks[kind]!);
  }
}

/**
 * The kind index of a `<section><kind>/<hex>` key and the pair it names; a kind first seen joins
 * the table. Undefined for a key that names no pair, or whose kind the table refuses: not
 * countable, but not silently lost either.
 */
function keyKind(
  agg: ClusterAggregate,
  section: string,
  key: string,
  value: string | undefined,
): { readonly kind: number; readonly pair: PairKey } | undefined {
  const pair = parsePairKey(section, key);
  // A delete adds no kind: its key held a record only if its kind is already known.
  const kind =
    pair === undefined
      ? -1
      : value === undefined
        ? (agg.kinds.index.get(pair.kind) ?? -1)
        : internName(agg.kinds, pair.kind);
  if (pair === undefined || kind < 0) {
    if (value !== undefined) agg.invalid.add(key);
    return undefined;
  }
  growKinds(agg);
  return { kind, pair };
}

function applyCooldown(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const at = keyKind(agg, agg.sections.cooldowns, key, value);
  if (!at) return;
  const { kind } = at;
  const records = agg.cooldowns[kind]!;
  const counts = agg.failureCounts[kind]!;
  const prev = records.get(key);
  if (prev) {
    const n = counts.get(prev.failures)! - 1;
    if (n === 0) counts.delete(prev.failures);
    else counts.set(prev.failures, n);
  }
  const fields = value === undefined ? undefined : noteDecoded(agg, key, readCooldown(value));
  if (!fields) {
    records.delete(key);
    return;
  }
  records.set(key, fields);
  counts.set(fields.failures, (counts.get(fields.failures) ?? 0) + 1);
}

function applyPark(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const at = keyKind(agg, agg.sections.parks, key, value);
  if (!at) return;
  const parks = agg.parks[at.kind]!;
  const cooldownKey = agg.keys.cooldown(at.pair.kind, at.pair.target);
  const until = value === undefined ? undefined : noteDecoded(agg, key, readParkUntil(value));
  if (until !== undefined) parks.set(cooldownKey, { until_ms: until });
  else parks.delete(cooldownKey);
}

function applyStats(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const prev = agg.stats.get(key);
  if (prev !== undefined) agg.pendingWalGenerations -= prev;
  const pending = value === undefined ? undefined : noteDecoded(agg, key, readPendingWal(value));
  if (pending === undefined) {
    agg.stats.delete(key);
    return;
  }
  agg.stats.set(key, pending);
  agg.pendingWalGenerations += pending;
}

/** Records `key` as invalid when its value could not be decoded, and as valid again when it could. */
function noteDecoded<T>(agg: ClusterAggregate, key: string, decoded: T | undefined): T | undefined {
  if (decoded === undefined) agg.invalid.add(key);
  else agg.invalid.delete(key);
  return decoded;
}
