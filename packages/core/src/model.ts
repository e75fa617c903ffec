import { z } from 'zod';

/**
 * Every maintenance kind the store and the API accept: schemas, key layout and validation derive
 * from this list. What a kind does (its pool, sweep and worker call) is its plug-in in
 * `@maintd/scheduler`, whose registry must cover exactly these kinds.
 */
export const TASK_KINDS = ['merge_wal', 'compact', 'index_id'] as const;

/** Schema of a task kind (`merge_wal` | `compact` | `index_id`). */
export const TaskKindSchema = z.enum(TASK_KINDS);
/** A maintenance kind. */
export type TaskKind = z.infer<typeof TaskKindSchema>;

/** Schema of a task state. `queued → running → done | failed`; there is no cancel or retry state. */
export const TaskStateSchema = z.enum(['queued', 'running', 'done', 'failed']);
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
export const TaskRecordSchema = z.object({
  id: TaskIdSchema,
  kind: TaskKindSchema,
  target: TargetSchema,
  state: TaskStateSchema,
  source: TaskSourceSchema,
  enqueued_at: z.number().int().nonnegative(),
  started_at: z.number().int().nonnegative().optional(),
  finished_at: z.number().int().nonnegative().optional(),
  attempt: z.number().int().nonnegative(),
  owner: z.string().optional(),
  detail: z.string().optional(),
  error: z.string().optional(),
  error_class: ErrorClassSchema.optional(),
  depends_on: z.array(TaskIdSchema).optional(),
});
/** A task as stored and served. */
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** Schema of a failure-cooldown record stored at `P/cooldown/<kind>/<hex>`. */
export const TaskCooldownSchema = z.object({
  kind: TaskKindSchema,
  target: TargetSchema,
  failures: z.number().int().positive(),
  until_ms: z.number().int().nonnegative().nullable(),
  last_error: z.string().max(512),
  last_error_class: ErrorClassSchema,
  first_failure_ms: z.number().int().nonnegative(),
  last_failure_ms: z.number().int().nonnegative(),
  last_task_id: z.string(),
});
/** Consecutive-failure bookkeeping for one (kind, target). `until_ms` is null below the threshold. */
export type TaskCooldown = z.infer<typeof TaskCooldownSchema>;

/** Schema of one store's aggregated stats row at `P/stats/<hex>`. */
export const StoreStatsSchema = z.object({
  name: TargetSchema,
  pending_wal_generations: z.number().int().nonnegative(),
  fragment_count: z.number().int().nonnegative(),
  row_count: z.number().int().nonnegative(),
  owners: z.array(z.string()),
  scanned_at: z.number().int().nonnegative(),
});
/** A store's backlog as last scanned from the workers. */
export type StoreStats = z.infer<typeof StoreStatsSchema>;

/** Schema of a live master's registration at `P/masters/<id>`. */
export const MasterInfoSchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number().int(),
  version: z.string(),
  started_at: z.number().int().nonnegative(),
  pools: z.record(z.string(), z.number().int().nonnegative()),
});
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
 * Encodes a task with a fixed field order and optional fields omitted, so that the same
 * record always yields the same bytes.
 */
export function encodeTask(t: TaskRecord): string {
  return JSON.stringify({
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
  });
}

/** Encodes a cooldown record with a fixed field order. */
export function encodeCooldown(c: TaskCooldown): string {
  return JSON.stringify({
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

/** True for `done` and `failed`. */
export function isTerminal(state: TaskState): boolean {
  return state === 'done' || state === 'failed';
}
