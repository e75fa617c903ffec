/**
 * Cluster-wide aggregates of one maintd prefix, kept from etcd changes (DESIGN §5).
 *
 * The exporter holds one {@link ClusterAggregate} per sync: every key it reads or watches goes
 * through {@link applyChange}, which keeps exactly what a later put or delete of the same key
 * needs to undo its contribution, so counts stay exact under any sequence of changes (including
 * a replay of changes already reflected, see `watcher.ts`). {@link summarize} turns it into the
 * numbers a scrape exports, at a given time, without touching etcd.
 *
 * Memory is the constraint (100k tasks and 10k cooldowns within an exporter of 120 MB): a task
 * is one number in a Map keyed by the 16 bytes of its id, never a parsed record; 100k tasks take
 * about 7 MB of heap.
 */
import {
  type Keys,
  ParkRecordSchema,
  StoreStatsSchema,
  TASK_KINDS,
  TaskCooldownSchema,
  type TaskKind,
  TaskRecordSchema,
  type TaskState,
  TaskStateSchema,
  keysFor,
} from '@maintd/core';
import type { z } from 'zod';

/** Task states in schema order; their index is part of a packed task. */
export const TASK_STATES: readonly TaskState[] = TaskStateSchema.options;

const KINDS = TASK_KINDS.length;
const STATES = TASK_STATES.length;
/** Kind and state share the low "digits" of a packed task; enqueued_at is the rest. */
const SLOTS = KINDS * STATES;
const QUEUED = TASK_STATES.indexOf('queued');
const KIND_INDEX = new Map<string, number>(TASK_KINDS.map((k, i) => [k, i]));
const STATE_INDEX = new Map<string, number>(TASK_STATES.map((s, i) => [s, i]));
// enqueued_at (ms, ~2^41 today) times SLOTS must stay an exact double: fine up to ~4000 slots.
if (SLOTS > 4096) throw new Error('too many kinds × states to pack a task into one number');

// Only the fields a metric needs are parsed: the rest of a record is never materialised.
const TaskFields = TaskRecordSchema.pick({ kind: true, state: true, enqueued_at: true });
const CooldownFields = TaskCooldownSchema.pick({ failures: true, until_ms: true, first_failure_ms: true });
const StatsFields = StoreStatsSchema.pick({ pending_wal_generations: true });
const ParkFields = ParkRecordSchema.pick({ until_ms: true });

/** One cooldown record, as far as the metrics need it. */
interface CooldownEntry {
  readonly failures: number;
  readonly untilMs: number | null;
  readonly firstFailureMs: number;
}

/**
 * Queued tasks of one kind as a binary min-heap on `enqueued_at`, with lazy deletion: a claim
 * does not search the heap; entries whose task is no longer queued are dropped when they reach
 * the top (at scrape time) or when the heap is rebuilt. So an enqueue is O(log n), a claim O(1)
 * and the oldest-age query O(log n) amortised.
 */
interface QueueHeap {
  at: number[];
  keys: string[];
  /** Tasks of this kind currently queued (the live part of the heap). */
  queued: number;
}

/** The in-memory state of one prefix. Mutated by {@link applyChange}; read by {@link summarize}. */
export interface ClusterAggregate {
  readonly keys: Keys;
  /**
   * Task id (see `taskId`) → `kind * STATES + state`, plus `enqueued_at * SLOTS` while queued:
   * one number per task, never a parsed record.
   */
  readonly tasks: Map<string, number>;
  /** Task count per `kind * STATES + state`. */
  readonly taskCounts: number[];
  /** Per kind (TASK_KINDS order). */
  readonly queues: QueueHeap[];
  /** Per kind: cooldown key → entry. */
  readonly cooldowns: Map<string, CooldownEntry>[];
  /** Per kind: consecutive-failure count → records with that count (for an exact max under deletes). */
  readonly failureCounts: Map<number, number>[];
  /**
   * Per kind: an operator's park → its `until_ms` (null: until released), keyed by the cooldown
   * key of the same kind and target, so a scrape tells a parked cooling target without building
   * a key. Lapsed parks stay until released, as their records do.
   */
  readonly parks: Map<string, number | null>[];
  /** Stats key → pending WAL generations. */
  readonly stats: Map<string, number>;
  pendingWalGenerations: number;
  /** Registration keys of live masters. */
  readonly masters: Set<string>;
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
  return {
    keys: keysFor(prefix),
    tasks: new Map(),
    taskCounts: new Array<number>(SLOTS).fill(0),
    queues: TASK_KINDS.map(() => ({ at: [], keys: [], queued: 0 })),
    cooldowns: TASK_KINDS.map(() => new Map<string, CooldownEntry>()),
    failureCounts: TASK_KINDS.map(() => new Map<number, number>()),
    parks: TASK_KINDS.map(() => new Map<string, number | null>()),
    stats: new Map(),
    pendingWalGenerations: 0,
    masters: new Set(),
    invalid: new Set(),
    revision: 0,
  };
}

/** The key prefixes an aggregate reads: a sync range-reads each of them. */
export function aggregatePrefixes(keys: Keys): readonly string[] {
  return [keys.tasksPrefix, keys.cooldownPrefix(), keys.parkedPrefix(), keys.statsPrefix, keys.mastersPrefix];
}

/**
 * Applies one change. Keys outside the five sections the metrics need (queue, claims, locks,
 * dedupe, sweeps, …) are ignored, so the whole prefix can be watched with one watch.
 */
export function applyChange(agg: ClusterAggregate, change: Change): void {
  if (change.modRevision > agg.revision) agg.revision = change.modRevision;
  const { key } = change;
  const k = agg.keys;
  const value = change.type === 'put' ? change.value : undefined;
  if (value === undefined) agg.invalid.delete(key);
  if (key.startsWith(k.tasksPrefix)) applyTask(agg, key, value);
  else if (key.startsWith(k.cooldownPrefix())) applyCooldown(agg, key, value);
  else if (key.startsWith(k.parkedPrefix())) applyPark(agg, key, value);
  else if (key.startsWith(k.statsPrefix)) applyStats(agg, key, value);
  else if (key.startsWith(k.mastersPrefix)) {
    // A registration's value is not needed: the key exists exactly while the master's session does.
    if (value === undefined) agg.masters.delete(key);
    else agg.masters.add(key);
  }
}

function applyTask(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const id = taskId(key, agg.keys.tasksPrefix.length);
  const prev = agg.tasks.get(id);
  const fields = value === undefined ? undefined : decode(agg, key, TaskFields, value);
  if (prev !== undefined) {
    agg.taskCounts[prev % SLOTS]!--;
    if (prev % STATES === QUEUED) agg.queues[slotKind(prev)]!.queued--;
  }
  if (!fields) {
    agg.tasks.delete(id);
    return;
  }
  const kind = KIND_INDEX.get(fields.kind)!;
  const state = STATE_INDEX.get(fields.state)!;
  const slot = kind * STATES + state;
  // Only a queued task needs its enqueued_at (for the oldest age); the others stay small integers,
  // which V8 stores unboxed.
  const packed = state === QUEUED ? fields.enqueued_at * SLOTS + slot : slot;
  agg.tasks.set(id, packed);
  agg.taskCounts[slot]!++;
  if (state === QUEUED) {
    const q = agg.queues[kind]!;
    q.queued++;
    // A rewrite of an already-queued record needs no second heap entry.
    if (prev !== packed) heapPush(agg, q, fields.enqueued_at, id);
  }
}

/** Length of a task id in its key: a UUID in 8-4-4-4-12 lowercase hex. */
const UUID_LENGTH = 36;
/** Bytes of a UUID, and characters of the map key made from them. */
const ID_BYTES = 16;
/** Marks a map key made from a whole task key (one not ending in a UUID): no latin1 string has it. */
const WHOLE_KEY = '\u0100';

/**
 * The map key of a task: its UUID's 16 bytes as a latin1 string when the key ends in one (a
 * third of the key's text, and bytes sort like the hex they came from), else the whole key,
 * marked with a character no latin1 string has so the two forms never collide. Parsed by hand:
 * a sync runs this 100k times, and the result string is its only allocation.
 */
function taskId(key: string, prefixLength: number): string {
  if (key.length - prefixLength !== UUID_LENGTH) return `${WHOLE_KEY}${key}`;
  const b = ID_BYTE_SCRATCH;
  let at = prefixLength;
  for (let i = 0; i < ID_BYTES; i++) {
    // Dashes sit after bytes 4, 6, 8 and 10.
    if (i === 4 || i === 6 || i === 8 || i === 10) {
      if (key.charCodeAt(at) !== 45) return `${WHOLE_KEY}${key}`;
      at++;
    }
    const hi = hexDigit(key.charCodeAt(at));
    const lo = hexDigit(key.charCodeAt(at + 1));
    if (hi < 0 || lo < 0) return `${WHOLE_KEY}${key}`;
    b[i] = hi * 16 + lo;
    at += 2;
  }
  return latin1(b, 0);
}

/** Reused by {@link taskId}: the aggregate is only touched from one thread. */
const ID_BYTE_SCRATCH = new Uint8Array(ID_BYTES);

/** The value of a lowercase hex digit's char code, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** The 16 bytes at `offset` as a 16-character latin1 string, without an intermediate array. */
function latin1(b: Uint8Array, o: number): string {
  return String.fromCharCode(
    b[o]!,
    b[o + 1]!,
    b[o + 2]!,
    b[o + 3]!,
    b[o + 4]!,
    b[o + 5]!,
    b[o + 6]!,
    b[o + 7]!,
    b[o + 8]!,
    b[o + 9]!,
    b[o + 10]!,
    b[o + 11]!,
    b[o + 12]!,
    b[o + 13]!,
    b[o + 14]!,
    b[o + 15]!,
  );
}

/**
 * The kind index of a `<prefix><kind>/<hex>` key and the part after the prefix, or undefined for
 * a kind this exporter does not know (a newer master): not countable, but not silently lost.
 */
function keyKind(
  agg: ClusterAggregate,
  prefix: string,
  key: string,
  value: string | undefined,
): { readonly kind: number; readonly rest: string } | undefined {
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  const kind = slash > 0 ? KIND_INDEX.get(rest.slice(0, slash)) : undefined;
  if (kind === undefined) {
    if (value !== undefined) agg.invalid.add(key);
    return undefined;
  }
  return { kind, rest };
}

function applyCooldown(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const at = keyKind(agg, agg.keys.cooldownPrefix(), key, value);
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
  const fields = value === undefined ? undefined : decode(agg, key, CooldownFields, value);
  if (!fields) {
    records.delete(key);
    return;
  }
  records.set(key, { failures: fields.failures, untilMs: fields.until_ms, firstFailureMs: fields.first_failure_ms });
  counts.set(fields.failures, (counts.get(fields.failures) ?? 0) + 1);
}

function applyPark(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const at = keyKind(agg, agg.keys.parkedPrefix(), key, value);
  if (!at) return;
  const { kind, rest } = at;
  const parks = agg.parks[kind]!;
  const cooldownKey = `${agg.keys.cooldownPrefix()}${rest}`;
  const fields = value === undefined ? undefined : decode(agg, key, ParkFields, value);
  if (fields) parks.set(cooldownKey, fields.until_ms);
  else parks.delete(cooldownKey);
}

function applyStats(agg: ClusterAggregate, key: string, value: string | undefined): void {
  const prev = agg.stats.get(key);
  if (prev !== undefined) agg.pendingWalGenerations -= prev;
  const fields = value === undefined ? undefined : decode(agg, key, StatsFields, value);
  if (!fields) {
    agg.stats.delete(key);
    return;
  }
  agg.stats.set(key, fields.pending_wal_generations);
  agg.pendingWalGenerations += fields.pending_wal_generations;
}

/** Parses `value` with `schema`; records the key as invalid (or no longer invalid) either way. */
function decode<S extends z.ZodType>(
  agg: ClusterAggregate,
  key: string,
  schema: S,
  value: string,
): z.infer<S> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    agg.invalid.add(key);
    return undefined;
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    agg.invalid.add(key);
    return undefined;
  }
  agg.invalid.delete(key);
  return r.data;
}

function slotKind(packed: number): number {
  return Math.floor((packed % SLOTS) / STATES);
}

// ---- the queue heap ----------------------------------------------------------------------------

/** True if the heap entry (`at`, `id`) still describes a queued task of the heap's kind. */
function live(agg: ClusterAggregate, kind: number, at: number, id: string): boolean {
  return agg.tasks.get(id) === at * SLOTS + kind * STATES + QUEUED;
}

function heapPush(agg: ClusterAggregate, q: QueueHeap, at: number, key: string): void {
  // Entries of claimed tasks wait for the top; rebuild before they outnumber the live ones, so
  // the heap stays O(queued) however tasks leave it.
  if (q.keys.length >= 2 * q.queued + 1024) heapRebuild(agg, q);
  let i = q.at.length;
  q.at.push(at);
  q.keys.push(key);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!less(q, i, parent)) break;
    swap(q, i, parent);
    i = parent;
  }
}

function heapRebuild(agg: ClusterAggregate, q: QueueHeap): void {
  const kind = agg.queues.indexOf(q);
  const seen = new Set<string>();
  const at: number[] = [];
  const keys: string[] = [];
  for (let i = 0; i < q.keys.length; i++) {
    const key = q.keys[i]!;
    if (seen.has(key) || !live(agg, kind, q.at[i]!, key)) continue;
    seen.add(key);
    at.push(q.at[i]!);
    keys.push(key);
  }
  q.at = at;
  q.keys = keys;
  for (let i = (q.at.length >> 1) - 1; i >= 0; i--) siftDown(q, i);
}

/** enqueued_at, then key: UUIDv7 ids order tasks enqueued within one millisecond. */
function less(q: QueueHeap, a: number, b: number): boolean {
  const x = q.at[a]!;
  const y = q.at[b]!;
  return x < y || (x === y && q.keys[a]! < q.keys[b]!);
}

function swap(q: QueueHeap, a: number, b: number): void {
  [q.at[a], q.at[b]] = [q.at[b]!, q.at[a]!];
  [q.keys[a], q.keys[b]] = [q.keys[b]!, q.keys[a]!];
}

function siftDown(q: QueueHeap, start: number): void {
  const n = q.at.length;
  let i = start;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && less(q, l, m)) m = l;
    if (r < n && less(q, r, m)) m = r;
    if (m === i) return;
    swap(q, i, m);
    i = m;
  }
}

function heapPop(q: QueueHeap): void {
  const lastAt = q.at.pop()!;
  const lastKey = q.keys.pop()!;
  if (q.at.length === 0) return;
  q.at[0] = lastAt;
  q.keys[0] = lastKey;
  siftDown(q, 0);
}

/** `enqueued_at` of the oldest queued task of `kind`, dropping stale heap entries on the way. */
function oldestQueuedAt(agg: ClusterAggregate, kind: number): number | undefined {
  const q = agg.queues[kind]!;
  while (q.at.length > 0) {
    if (live(agg, kind, q.at[0]!, q.keys[0]!)) return q.at[0];
    heapPop(q);
  }
  return undefined;
}

// ---- moving an aggregate between threads -------------------------------------------------------

/**
 * An aggregate as a message between processes (a sync reads in a child, see `sync-child.ts`):
 * the tasks as two typed arrays (24 bytes a task on the wire, no per-task object), the smaller
 * sections as plain arrays. Counts, maxima and queue heaps are not sent: {@link unpackAggregate}
 * rebuilds them.
 */
export interface PackedAggregate {
  /** The aggregate's key prefix (`keys.prefix`). */
  readonly prefix: string;
  readonly revision: number;
  /** 16 bytes per task keyed by its UUID, in the order of {@link PackedAggregate.taskValues}. */
  readonly taskIds: Uint8Array;
  /** Each task's packed kind, state and (while queued) enqueued_at, as the aggregate holds it. */
  readonly taskValues: Float64Array;
  /** Tasks whose key does not end in a UUID: map key and packed value. */
  readonly otherTasks: readonly (readonly [string, number])[];
  /**
   * Per kind (TASK_KINDS order): cooldown keys, and in `numbers` three per key: failures,
   * until_ms (NaN for null), first_failure_ms.
   */
  readonly cooldowns: readonly PackedSection[];
  /** Per kind (TASK_KINDS order): parks, keyed as the aggregate keys them, and their until_ms (NaN for null). */
  readonly parks: readonly PackedSection[];
  /** Stats keys and their pending WAL generations. */
  readonly stats: PackedSection;
  readonly masters: readonly string[];
  readonly invalid: readonly string[];
}

/**
 * Keys and the numbers kept for each, flat: no pair or entry object per key crosses, so the
 * receiving heap builds each entry once.
 */
export interface PackedSection {
  readonly keys: readonly string[];
  readonly numbers: Float64Array;
}

/** `agg` as a {@link PackedAggregate}; `agg` itself is left as it was. */
export function packAggregate(agg: ClusterAggregate): PackedAggregate {
  let uuids = 0;
  for (const id of agg.tasks.keys()) if (!id.startsWith(WHOLE_KEY)) uuids++;
  const taskIds = new Uint8Array(uuids * ID_BYTES);
  const taskValues = new Float64Array(uuids);
  const otherTasks: [string, number][] = [];
  let i = 0;
  for (const [id, packed] of agg.tasks) {
    if (id.startsWith(WHOLE_KEY)) {
      otherTasks.push([id, packed]);
      continue;
    }
    for (let j = 0; j < ID_BYTES; j++) taskIds[i * ID_BYTES + j] = id.charCodeAt(j);
    taskValues[i++] = packed;
  }
  return {
    prefix: agg.keys.prefix,
    revision: agg.revision,
    taskIds,
    taskValues,
    otherTasks,
    cooldowns: agg.cooldowns.map((records) =>
      packSection(records, 3, (e, out, at) => {
        out[at] = e.failures;
        out[at + 1] = e.untilMs ?? NaN;
        out[at + 2] = e.firstFailureMs;
      }),
    ),
    parks: agg.parks.map((parks) =>
      packSection(parks, 1, (until, out, at) => {
        out[at] = until ?? NaN;
      }),
    ),
    stats: packSection(agg.stats, 1, (pending, out, at) => {
      out[at] = pending;
    }),
    masters: [...agg.masters],
    invalid: [...agg.invalid],
  };
}

/** The aggregate `packed` describes, with its counts, maxima and queue heaps rebuilt. */
export function unpackAggregate(packed: PackedAggregate): ClusterAggregate {
  const agg = createAggregate(packed.prefix);
  agg.revision = packed.revision;
  for (let i = 0; i < packed.taskValues.length; i++) {
    addTask(agg, latin1(packed.taskIds, i * ID_BYTES), packed.taskValues[i]!);
  }
  for (const [id, value] of packed.otherTasks) addTask(agg, id, value);
  packed.cooldowns.forEach(({ keys, numbers }, kind) => {
    const records = agg.cooldowns[kind];
    const counts = agg.failureCounts[kind];
    if (!records || !counts) return;
    keys.forEach((key, i) => {
      const failures = numbers[3 * i]!;
      const until = numbers[3 * i + 1]!;
      records.set(key, { failures, untilMs: Number.isNaN(until) ? null : until, firstFailureMs: numbers[3 * i + 2]! });
      counts.set(failures, (counts.get(failures) ?? 0) + 1);
    });
  });
  packed.parks.forEach(({ keys, numbers }, kind) => {
    keys.forEach((key, i) => agg.parks[kind]?.set(key, Number.isNaN(numbers[i]) ? null : numbers[i]!));
  });
  packed.stats.keys.forEach((key, i) => {
    const pending = packed.stats.numbers[i]!;
    agg.stats.set(key, pending);
    agg.pendingWalGenerations += pending;
  });
  for (const key of packed.masters) agg.masters.add(key);
  for (const key of packed.invalid) agg.invalid.add(key);
  return agg;
}

/** `map` as a {@link PackedSection} of `width` numbers per key, written by `write`. */
function packSection<V>(
  map: ReadonlyMap<string, V>,
  width: number,
  write: (value: V, out: Float64Array, at: number) => void,
): PackedSection {
  const keys: string[] = [];
  const numbers = new Float64Array(map.size * width);
  for (const [key, value] of map) {
    write(value, numbers, keys.length * width);
    keys.push(key);
  }
  return { keys, numbers };
}

/** Adds a task the aggregate does not hold yet, by its map key and packed value. */
function addTask(agg: ClusterAggregate, id: string, packed: number): void {
  const slot = packed % SLOTS;
  agg.tasks.set(id, packed);
  agg.taskCounts[slot]!++;
  if (slot % STATES === QUEUED) {
    const q = agg.queues[slotKind(packed)]!;
    q.queued++;
    heapPush(agg, q, (packed - slot) / SLOTS, id);
  }
}

// ---- summary -----------------------------------------------------------------------------------

/** What the exporter reports for one kind. */
export interface KindSummary {
  readonly kind: TaskKind;
  /** Tasks by state (terminal ones until history pruning removes them). */
  readonly tasks: Readonly<Record<TaskState, number>>;
  /** Seconds since the oldest queued task was enqueued; 0 when none is queued. */
  readonly queueOldestAgeSeconds: number;
  /** Targets whose cooldown window is open at the summary's time, parked or not. */
  readonly cooldownsActive: number;
  /** Highest consecutive-failure count of any cooldown record (below-threshold ones too); 0 if none. */
  readonly cooldownFailuresMax: number;
  /**
   * Seconds since the first of the consecutive failures of the longest-failing target whose
   * window is open and which is not parked; 0 when there is none. "A store has been given up on
   * for this long": a parked one was set aside by an operator, which is no cause for an alert.
   */
  readonly cooldownOldestAgeSeconds: number;
  /** Targets with a park in force at the summary's time (open-ended, or before its `until_ms`). */
  readonly parked: number;
}

/** Everything a scrape exports about the cluster, at one instant. */
export interface ClusterSummary {
  readonly kinds: readonly KindSummary[];
  /** Live masters (registrations bound to their session leases). */
  readonly masters: number;
  /** Stores in the stats rows of the last scan. */
  readonly stores: number;
  /** Pending WAL generations summed over the stats rows. */
  readonly pendingWalGenerations: number;
  /** Keys left out because their value could not be decoded. */
  readonly invalidRecords: number;
}

/**
 * The exported numbers at `nowMs`. Windows are compared with `nowMs` here, not when their record
 * was written, because a window (or a park) lapses without any etcd change. Costs
 * O(kinds · log queued) plus one pass over the cooldown records and one over the parks.
 */
export function summarize(agg: ClusterAggregate, nowMs: number): ClusterSummary {
  const kinds = TASK_KINDS.map((kind, k): KindSummary => {
    const tasks = Object.fromEntries(TASK_STATES.map((s, i) => [s, agg.taskCounts[k * STATES + i]!])) as Record<
      TaskState,
      number
    >;
    const oldest = oldestQueuedAt(agg, k);
    const parks = agg.parks[k]!;
    let parked = 0;
    for (const until of parks.values()) if (parkInForce(until, nowMs)) parked++;
    let active = 0;
    let firstFailure = Infinity;
    for (const [key, c] of agg.cooldowns[k]!) {
      if (c.untilMs === null || c.untilMs <= nowMs) continue;
      active++;
      if (c.firstFailureMs >= firstFailure) continue;
      const park = parked > 0 ? parks.get(key) : undefined;
      if (park !== undefined && parkInForce(park, nowMs)) continue;
      firstFailure = c.firstFailureMs;
    }
    let failuresMax = 0;
    for (const f of agg.failureCounts[k]!.keys()) if (f > failuresMax) failuresMax = f;
    return {
      kind,
      tasks,
      queueOldestAgeSeconds: oldest === undefined ? 0 : ageSeconds(nowMs, oldest),
      cooldownsActive: active,
      cooldownFailuresMax: failuresMax,
      cooldownOldestAgeSeconds: firstFailure === Infinity ? 0 : ageSeconds(nowMs, firstFailure),
      parked,
    };
  });
  return {
    kinds,
    masters: agg.masters.size,
    stores: agg.stats.size,
    pendingWalGenerations: agg.pendingWalGenerations,
    invalidRecords: agg.invalid.size,
  };
}

/** As core's `isParked`: open-ended, or `nowMs` before the park's end. */
function parkInForce(untilMs: number | null, nowMs: number): boolean {
  return untilMs === null || nowMs < untilMs;
}

/** Whole-millisecond age in seconds; a timestamp from a master whose clock runs ahead reads as 0. */
function ageSeconds(nowMs: number, thenMs: number): number {
  return Math.max(0, nowMs - thenMs) / 1000;
}

/** Heap entries held for `kind`, live or stale (for tests of the heap's bound). */
export function queueHeapSize(agg: ClusterAggregate, kind: TaskKind): number {
  return agg.queues[KIND_INDEX.get(kind)!]!.keys.length;
}
