/**
 * A (kind, store) as the API serves it (docs/ARCHITECTURE.md §2.7, §3.4): its cooldown record
 * merged with its park, its state, and the orders and filters of the paged cooldown list.
 */
import { z } from '@hono/zod-openapi';
import { COOLDOWN_STATES, ParkRecordSchema, TaskCooldownSchema } from '@maintd/core';

const {
  kind,
  target,
  until_ms: untilMs,
  last_error: lastError,
  last_error_class: lastErrorClass,
  first_failure_ms: firstFailureMs,
  last_failure_ms: lastFailureMs,
  last_task_id: lastTaskId,
} = TaskCooldownSchema.shape;

/**
 * Where a (kind, store) stands, as the list's `state` filter and the dashboard use it: `parked`
 * (an operator's park is in force; it wins over the rest), `cooling` (a window is open),
 * `below` (failures counted, none opened a window) or `lapsed` (the window ended; the count stays
 * until a success or the record's lease ends).
 */
export const CooldownStateSchema = z
  .enum(COOLDOWN_STATES)
  .describe(
    'Where this kind on this store stands: `parked` (an operator park is in force: the sweeps skip it until released), `cooling` (a cooldown window is open: the sweeps skip it until `until`), `below` (failures counted, below the threshold: no window) or `lapsed` (the window ended; the count stays, so the next failure opens a doubled window)',
  );
export type { CooldownState } from '@maintd/core';

const park = ParkRecordSchema.shape;
/** A park as the API serves it inside a cooldown entry: the stored record with ISO 8601 times beside the ms ones. */
export const ParkViewSchema = z
  .object({
    reason: park.reason,
    by: park.by,
    parked_at_ms: park.parked_at_ms,
    parked_at: z.iso
      .datetime()
      .describe('`parked_at_ms` (milliseconds since the Unix epoch) as an ISO 8601 UTC timestamp'),
    until_ms: park.until_ms,
    until: z.iso
      .datetime()
      .nullable()
      .describe('`until_ms` as an ISO 8601 UTC timestamp; null when the park lasts until released'),
  })
  .meta({
    id: 'Park',
    description:
      'The park in force on this kind on this store (absent from a cooldown entry when not parked; a lapsed park counts as not parked): the sweeps skip it until it is released (DELETE) or `until`; manual tasks still run and a success does not release it',
  });
/** A park as the API serves it. */
export type ParkView = z.infer<typeof ParkViewSchema>;

/**
 * One (kind, store) as the cooldown list serves it: its failure-cooldown record (with `until`,
 * the window's end as ISO 8601 text, derived when served so the stored record has one source of
 * truth), merged with its park when one is in force, and its `state`. A parked store that never
 * failed has `failures` 0, null `until_ms`/`until`, an empty `last_error`, and none of the
 * failure-only fields.
 */
export const CooldownSchema = z
  .object({
    kind,
    target,
    state: CooldownStateSchema,
    gating: z
      .boolean()
      .describe(
        "Whether this keeps the automatic work of the master that answered off this store now: a park in force, or an open window of a kind that master's policy runs the cooldown for. False for `below` and `lapsed`, and for a window of a kind that master does not count (the cooldown turned off, or the kind left out of `TASK_COOLDOWN_KINDS`): such a window is listed until it lapses but gates nothing",
      ),
    failures: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Consecutive failures of this kind on this store (a count); a success resets it. 0 for a parked store with no failure record',
      ),
    until_ms: untilMs.describe(
      'End of the cooldown window, in milliseconds since the Unix epoch; null below the failure threshold (counted, no window) and for a parked store with no failure record',
    ),
    until: z.iso
      .datetime()
      .nullable()
      .describe('`until_ms` as an ISO 8601 UTC timestamp (millisecond precision); null when `until_ms` is null'),
    last_error: lastError.describe(
      'Error message of the latest counted failure: at most 512 characters, control characters stripped; empty for a parked store with no failure record',
    ),
    last_error_class: lastErrorClass.optional(),
    cause: z
      .string()
      .regex(/^[0-9a-f]{12}$/)
      .optional()
      .describe(
        "The cause of the latest failure: a stable id of `last_error` with the store's name, ids, numbers and the variable parts of paths taken out, shared by the stores failing alike (`GET /api/v1/scheduler/causes`); absent without a failure record",
      ),
    first_failure_ms: firstFailureMs.optional(),
    last_failure_ms: lastFailureMs.optional(),
    last_task_id: lastTaskId.optional(),
    // No description of its own: the property is a reference to the `Park` component, which has one.
    parked: ParkViewSchema.optional(),
  })
  .meta({
    id: 'Cooldown',
    description:
      'One kind on one store as the sweeps see it: its consecutive-failure bookkeeping as stored plus `until` (derived when served, not stored), its park when one is in force, and its `state`. `last_error_class`, `first_failure_ms`, `last_failure_ms` and `last_task_id` are absent for a parked store with no failure record.',
  });
/** A cooldown entry as the API serves it. */
export type CooldownView = z.infer<typeof CooldownSchema>;

/** Largest page of the paged cooldown list. */
export const COOLDOWN_PAGE_MAX = 200;
/** Orders of the paged cooldown list. */
export const CooldownSortSchema = z
  .enum(['until', 'failures', 'last_failure'])
  .describe(
    'Order of the page: `until` (the window’s end, soonest first; entries without one last), `failures` (most first) or `last_failure` (latest first; entries without a failure last). Ties by kind, then store name',
  );
/** Orders of the paged cooldown list. */
export type CooldownSort = z.infer<typeof CooldownSortSchema>;
/** The `state` filter of the paged cooldown list. */
export const CooldownStateFilterSchema = z
  .enum(['cooling', 'parked', 'below', 'lapsed', 'any'])
  .describe(
    'Only entries in this state; `any`: every state. Absent: `cooling` and `parked` (what the sweeps skip) on the list, every state on a bulk action',
  );
