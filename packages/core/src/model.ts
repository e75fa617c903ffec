import { z } from 'zod';

/** The pattern every task kind's name must match: it is a key segment and a metric label value. */
export const KIND_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Schema of a task kind's name: 1–63 characters, `[a-z][a-z0-9_]*`. Core checks the name, not
 * membership in a list: which kinds a master runs is its scheduler's registry, and a kind another
 * release runs is stored data here like any other (docs/ARCHITECTURE.md §2.1).
 */
export const TaskKindSchema = z.string().regex(KIND_PATTERN, 'a kind must match ^[a-z][a-z0-9_]{0,62}$');
/** A maintenance kind's name, e.g. `merge_wal`; see {@link TaskKindSchema}. */
export type TaskKind = string;

/**
 * Schema of a task state. `queued → running → done | failed`; there is no cancel or retry state.
 * `held`: an automatic task whose (kind, target) an operator parked before it started; it goes
 * back to `queued` when the park is released or lapses (docs/ARCHITECTURE.md §2.7). Written only
 * once the `held_tasks` cluster feature is on (§2.8), since releases before it cannot read it.
 */
export const TaskStateSchema = z.enum(['queued', 'running', 'done', 'failed', 'held']);
/** A task's lifecycle state. */
export type TaskState = z.infer<typeof TaskStateSchema>;

/** Who asked for a task: an automatic sweep, or an operator (API, dashboard). */
export const TaskSourceSchema = z.enum(['sweep', 'manual']);
/** Origin of a task. */
export type TaskSource = z.infer<typeof TaskSourceSchema>;

/**
 * Why a task failed. `target`: a worker answered with an error about this store (counts toward
 * the cooldown). `infrastructure`: nobody answered (refused, timed out, no endpoints).
 */
export const ErrorClassSchema = z.enum(['target', 'infrastructure']);
/** Failure class of a failed task. */
export type ErrorClass = z.infer<typeof ErrorClassSchema>;

/** The pattern every store name must match. */
export const TARGET_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;

/** Schema of a store name: 1–255 characters, `[A-Za-z0-9_][A-Za-z0-9._-]*`. */
export const TargetSchema = z.string().regex(TARGET_PATTERN, 'must match ^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$');

const TaskIdSchema = z.uuid({ version: 'v7' });

/** Schema of the authoritative task record stored at `P/tasks/<id>`. Optional fields are omitted, never null. */
export const TaskRecordSchema = z
  .object({
    id: TaskIdSchema.describe('Task id: a UUIDv7, so that lexical order is enqueue order'),
    kind: TaskKindSchema.describe('What the task does to its store'),
    target: TargetSchema.describe('The store the task maintains'),
    state: TaskStateSchema.describe(
      'Lifecycle state: queued → running → done | failed; `held`: an automatic task of a parked (kind, store), queued again when the park ends',
    ),
    source: TaskSourceSchema.describe('Who asked for it: `sweep` (an automatic sweep) or `manual` (API, dashboard)'),
    enqueued_at: z.number().int().nonnegative().describe('When it was enqueued, in milliseconds since the Unix epoch'),
    started_at: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('When its latest claim started it, in milliseconds since the Unix epoch; absent until first claimed'),
    finished_at: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('When it became done or failed, in milliseconds since the Unix epoch; absent while queued or running'),
    attempt: z
      .number()
      .int()
      .nonnegative()
      .describe('How many times a master has claimed it (a count; a recovered orphan is claimed again)'),
    owner: z.string().optional().describe('Id of the master running it; present only while running'),
    detail: z
      .string()
      .optional()
      .describe('What a done task achieved, e.g. `merged 12 generations across 3/3 workers`; absent otherwise'),
    error: z.string().optional().describe('Why a failed task failed; absent otherwise'),
    error_class: ErrorClassSchema.optional().describe(
      'Failure class of a failed task: `target` (a worker answered with an error about this store) or `infrastructure` (no worker answered); absent otherwise',
    ),
    depends_on: z
      .array(TaskIdSchema)
      .optional()
      .describe('Ids of tasks that must be done before this one runs; absent when there are none'),
    held_at: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('When a park held it back (state `held`), in milliseconds since the Unix epoch; absent otherwise'),
    held_reason: z
      .string()
      .max(1100)
      .optional()
      .describe(
        'Why it is held (state `held`): who parked its kind on its store and why, e.g. `parked by ops@10.0.0.7: disk swap`; absent otherwise',
      ),
  })
  .describe('A maintenance task. Optional fields are omitted, never null.');
/** A task as stored and served. */
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** Schema of a failure-cooldown record stored at `P/cooldown/<kind>/<hex>`. */
export const TaskCooldownSchema = z
  .object({
    kind: TaskKindSchema.describe('The kind whose failures are counted'),
    target: TargetSchema.describe('The store whose failures are counted'),
    failures: z
      .number()
      .int()
      .positive()
      .describe('Consecutive failures of this kind on this store (a count); a success deletes the record'),
    until_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        'End of the cooldown window, in milliseconds since the Unix epoch; null below the failure threshold (counted, no window)',
      ),
    last_error: z
      .string()
      .max(512)
      .describe('Error message of the latest counted failure: at most 512 characters, control characters stripped'),
    last_error_class: ErrorClassSchema.describe(
      'Failure class of the latest counted failure: `target` (a worker answered with an error about this store) or `infrastructure` (no worker answered)',
    ),
    first_failure_ms: z
      .number()
      .int()
      .nonnegative()
      .describe('When the first of these consecutive failures happened, in milliseconds since the Unix epoch'),
    last_failure_ms: z
      .number()
      .int()
      .nonnegative()
      .describe('When the latest counted failure happened, in milliseconds since the Unix epoch'),
    last_task_id: z.string().describe('Id of the task whose failure was counted last'),
  })
  .describe('Consecutive-failure bookkeeping of one kind on one store: what the sweeps consult before enqueueing.');
/** Consecutive-failure bookkeeping for one (kind, target). `until_ms` is null below the threshold. */
export type TaskCooldown = z.infer<typeof TaskCooldownSchema>;

/**
 * Schema of an operator's park at `P/parked/<kind>/<hex>`: the sweeps leave this kind on this store
 * alone until the park is released (or until `until_ms`). Stored without a lease: a park is a
 * decision, it must not age out like a failure count does.
 */
export const ParkRecordSchema = z
  .object({
    kind: TaskKindSchema.describe('The kind the sweeps no longer enqueue on this store'),
    target: TargetSchema.describe('The parked store'),
    reason: z
      .string()
      .min(1)
      .max(512)
      .describe('Why the operator parked it: 1–512 characters, control characters stripped'),
    by: z
      .string()
      .min(1)
      .max(512)
      .describe(
        'Who parked it: `<token name>@<client address>` when a token authenticated the request (`default` is MASTER_API_TOKEN; 0.1.0 masters wrote `token@<client address>`), else the client address',
      ),
    parked_at_ms: z.number().int().nonnegative().describe('When it was parked, in milliseconds since the Unix epoch'),
    until_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        'When the park lapses by itself, in milliseconds since the Unix epoch; null: it lasts until released. A lapsed park counts as not parked',
      ),
  })
  .describe(
    "An operator's decision to keep the automatic sweeps off one kind on one store, with who made it, when and why. Manual tasks still run.",
  );
/** An operator's park of one (kind, target): who, when, why and until when (null: until released). */
export type ParkRecord = z.infer<typeof ParkRecordSchema>;

/** Schema of one store's aggregated stats row at `P/stats/<hex>`. */
export const StoreStatsSchema = z
  .object({
    name: TargetSchema.describe('The store name'),
    pending_wal_generations: z
      .number()
      .int()
      .nonnegative()
      .describe('WAL generations waiting to be merged, summed over the workers that hold a shard (a count)'),
    fragment_count: z
      .number()
      .int()
      .nonnegative()
      .describe('Data fragments of the shared base table: the largest count any worker reports'),
    row_count: z.number().int().nonnegative().describe('Rows, summed over the workers that hold a shard (a count)'),
    owners: z.array(z.string()).describe('Base URLs of the workers that reported a shard of this store'),
    scanned_at: z
      .number()
      .int()
      .nonnegative()
      .describe('When a stats scan last wrote this row, in milliseconds since the Unix epoch'),
  })
  .describe("A store's backlog as the latest stats scan aggregated it from the workers.");
/** A store's backlog as last scanned from the workers. */
export type StoreStats = z.infer<typeof StoreStatsSchema>;

/** Schema of one worker's latest stats-scan result at `P/workers/<hex of endpoint>`. */
export const WorkerScanSchema = z
  .object({
    endpoint: z.string().min(1).describe('Base URL of the worker, as configured in `WORKER_ENDPOINTS`'),
    ok: z.boolean().describe('Whether the worker answered the latest scan'),
    error: z.string().nullable().describe('Why the latest scan of this worker failed; null when it answered'),
    last_scan_at: z
      .number()
      .int()
      .nonnegative()
      .describe('When the latest scan asked the worker, in milliseconds since the Unix epoch'),
    stores: z
      .number()
      .int()
      .nonnegative()
      .describe('Stores the worker reported in its latest successful scan (a count)'),
  })
  .describe("A worker's latest stats-scan result, as the master that ran the scan recorded it for every master.");
/** One worker's latest stats-scan result, shared by every master. */
export type WorkerScan = z.infer<typeof WorkerScanSchema>;

/** Schema of a live master's registration at `P/masters/<id>`. */
export const MasterInfoSchema = z
  .object({
    id: z.string().describe('The master id (`MASTER_ID`), unique per prefix'),
    host: z.string().describe('Host name of the machine the master runs on'),
    pid: z.number().int().describe('Operating-system process id of the master'),
    version: z.string().describe('maintd version the master runs'),
    started_at: z
      .number()
      .int()
      .nonnegative()
      .describe('When the master process started, in milliseconds since the Unix epoch'),
    pools: z
      .record(z.string(), z.number().int().nonnegative())
      .describe('Task slots per pool name (`general`, `merge`): how many tasks each pool runs at once'),
    kinds: z
      .array(TaskKindSchema)
      .optional()
      .describe('The task kinds the master runs, in its registry order; absent from a master that predates it'),
    features: z
      .array(z.string())
      .optional()
      .describe(
        'The cluster features the master understands (docs/ARCHITECTURE.md §2.8): none switches on before every live master lists it; absent from a master that predates them',
      ),
    windows: z
      .array(z.string())
      .optional()
      .describe(
        'The maintenance windows the master keeps (`TASK_WINDOWS` in `TASK_WINDOWS_TZ`), each `<kind>=<ranges>@<zone>`, sorted; absent when it keeps none, as from a master that predates them',
      ),
  })
  .describe("A live master's registration: it exists while the master's session lease is alive.");
/** What a master says about itself while its session is alive. */
export type MasterInfo = z.infer<typeof MasterInfoSchema>;

/** Schema of the last-run marker of a periodic job at `P/sweeps/<name>`. */
export const SweepMarkSchema = z.object({
  slot: z.number().int(),
  ran_at: z.number().int().nonnegative(),
  master_id: z.string(),
});
/** Which interval slot a periodic job last ran in, when and where. */
export type SweepMark = z.infer<typeof SweepMarkSchema>;

/**
 * Where a decoded record keeps the top-level fields its schema does not know (a newer release's),
 * so that this release writes them back when it rewrites the record (docs/ARCHITECTURE.md §2.1).
 *
 * Why a module-private symbol key: object spread, with which every rewrite in the store derives
 * its next record from the one it read, copies it along with no code of its own; JSON.stringify
 * (API responses, events, logs) and the record types never see it; and nothing outside this
 * file can set or read it by accident. Only the encoders below write what it holds.
 */
const UNKNOWN_FIELDS = Symbol('maintd.unknownFields');

/** Kept fields in their stored order: entries, not an object, so `__proto__` or `0` stay plain data in place. */
type UnknownFields = readonly (readonly [name: string, value: unknown])[];

/** A decoded record that may carry the fields its schema did not know. */
interface Carrier {
  [UNKNOWN_FIELDS]?: UnknownFields;
}

/**
 * `record`, which `schema` parsed out of `raw`, with the top-level fields of `raw` that `schema`
 * does not know kept on it for the encoders of this file. Returns `record` itself, untouched
 * when there are none (so that it still equals a record built from its known fields).
 */
export function keepUnknownFields<T extends object>(schema: z.ZodObject, raw: unknown, record: T): T {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return record;
  // Every record is decoded through here and almost none has such fields: no array unless one does.
  let unknown: [string, unknown][] | undefined;
  for (const name in raw) {
    if (Object.hasOwn(raw, name) && !Object.hasOwn(schema.shape, name)) {
      (unknown ??= []).push([name, (raw as Record<string, unknown>)[name]]);
    }
  }
  if (unknown) (record as Carrier)[UNKNOWN_FIELDS] = Object.freeze(unknown);
  return record;
}

/**
 * `next` carrying the fields `prev` kept from a newer release: for a next record built from its
 * known fields rather than spread from the one read (the cooldown policy's, a replaced park).
 */
export function carryUnknownFields<T extends object>(prev: object | undefined, next: T): T {
  const unknown = (prev as Carrier | undefined)?.[UNKNOWN_FIELDS];
  return unknown ? { ...next, [UNKNOWN_FIELDS]: unknown } : next;
}

/**
 * The JSON of `known` (every field this release knows, in its fixed order, absent ones as
 * undefined) followed by the fields `record` kept from a newer release. A kept field that
 * `known` names, present or not, is dropped: this release owns the fields it knows, and a field
 * it removed (a run's `owner`, a requeue's `error`) must stay removed.
 */
export function encodeRecord(record: object, known: Record<string, unknown>): string {
  const json = JSON.stringify(known);
  const extra: string[] = [];
  for (const [name, value] of (record as Carrier)[UNKNOWN_FIELDS] ?? []) {
    const text = Object.hasOwn(known, name) ? undefined : JSON.stringify(value);
    if (text !== undefined) extra.push(`${JSON.stringify(name)}:${text}`);
  }
  if (extra.length === 0) return json;
  // Spliced as text: assigned to an object, an index-like name would sort before the known fields.
  return json === '{}' ? `{${extra.join(',')}}` : `${json.slice(0, -1)},${extra.join(',')}}`;
}

/**
 * Encodes a task with a fixed field order and optional fields omitted, so that the same
 * record always yields the same bytes. Fields a newer release wrote, kept on a record the store
 * decoded, follow the known ones, so that rewriting that release's record keeps them.
 */
export function encodeTask(t: TaskRecord): string {
  return encodeRecord(t, {
    id: t.id,
    kind: t.kind,
    target: t.target,
    state: t.state,
    source: t.source,
    enqueued_at: t.enqueued_at,
    started_at: t.started_at,
    finished_at: t.finished_at,
    attempt: t.attempt,
    owner: t.owner,
    detail: t.detail,
    error: t.error,
    error_class: t.error_class,
    depends_on: t.depends_on && t.depends_on.length > 0 ? t.depends_on : undefined,
    held_at: t.held_at,
    held_reason: t.held_reason,
  });
}

/**
 * Encodes a cooldown record with a fixed field order, followed by the fields a newer release
 * wrote that the decoded record kept (as {@link encodeTask}).
 */
export function encodeCooldown(c: TaskCooldown): string {
  return encodeRecord(c, {
    kind: c.kind,
    target: c.target,
    failures: c.failures,
    until_ms: c.until_ms,
    last_error: c.last_error,
    last_error_class: c.last_error_class,
    first_failure_ms: c.first_failure_ms,
    last_failure_ms: c.last_failure_ms,
    last_task_id: c.last_task_id,
  });
}

/**
 * Encodes a park record with a fixed field order, followed by the fields a newer release wrote
 * that the decoded record kept (as {@link encodeTask}).
 */
export function encodePark(p: ParkRecord): string {
  return encodeRecord(p, {
    kind: p.kind,
    target: p.target,
    reason: p.reason,
    by: p.by,
    parked_at_ms: p.parked_at_ms,
    until_ms: p.until_ms,
  });
}

/**
 * Whether a park keeps the sweeps off its target at `nowMs`: present, and either open-ended or
 * not yet past its `until_ms`. A lapsed park's key stays until released, but gates nothing.
 *
 * @remarks
 * Takes only `until_ms` so that every holder of a park (a full {@link ParkRecord}, the exporter's
 * decoded fields, the dashboard's API types) asks the same question the same way.
 */
export function isParked(park: { readonly until_ms: number | null } | undefined, nowMs: number): boolean {
  return park !== undefined && (park.until_ms === null || nowMs < park.until_ms);
}

/**
 * Where a (kind, store) stands at a given time: `parked` (an operator's park is in force; it wins
 * over the rest), `cooling` (a cooldown window is open), `below` (failures counted, none opened a
 * window) or `lapsed` (the window ended; the count stays until a success or the record's lease ends).
 */
export type CooldownState = (typeof COOLDOWN_STATES)[number];

/** Every {@link CooldownState}, in the order the API documents them. */
export const COOLDOWN_STATES = ['cooling', 'below', 'lapsed', 'parked'] as const;

/**
 * The {@link CooldownState} of a (kind, store) with this cooldown record and park at `nowMs`;
 * undefined when it has neither a record nor a park in force (a lapsed park alone gates nothing).
 *
 * @remarks
 * Structural parameters, as {@link isParked}: the API, the exporter and the dashboard each hold
 * their own shape of the same two records and must agree on the state.
 */
export function cooldownState(
  cooldown: { readonly until_ms: number | null } | undefined,
  park: { readonly until_ms: number | null } | undefined,
  nowMs: number,
): CooldownState | undefined {
  if (isParked(park, nowMs)) return 'parked';
  if (!cooldown) return undefined;
  if (cooldown.until_ms === null) return 'below';
  return cooldown.until_ms > nowMs ? 'cooling' : 'lapsed';
}

/** True for `done` and `failed`. */
export function isTerminal(state: TaskState): boolean {
  return state === 'done' || state === 'failed';
}
