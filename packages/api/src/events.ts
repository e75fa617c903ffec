/**
 * The server-sent events of `GET /api/v1/events` (docs/ARCHITECTURE.md §3.4): the JSON `data`
 * of each event, and each message as its SSE fields, for the document and the event hub.
 */
import { z } from '@hono/zod-openapi';
import { TargetSchema, TaskKindSchema } from '@maintd/core';
import { Task } from './schemas/common.js';
import { CooldownSchema } from './schemas/cooldown.js';
import { TimelineEventViewSchema } from './schemas/timeline.js';
import { AuditEntryViewSchema } from './schemas/audit.js';

const Revision = z
  .number()
  .int()
  .nonnegative()
  .describe('The etcd revision of the change (also the SSE `id`); it only grows');
const TaskEventSchema = z
  .object({ type: z.literal('task').describe('A task was written'), revision: Revision, task: Task })
  .openapi('TaskEvent', { description: 'A task was enqueued, claimed, finished or requeued: its new record' });
const TaskDeletedEventSchema = z
  .object({
    type: z.literal('task_deleted').describe('A task was deleted'),
    revision: Revision,
    id: z.string().describe('Id of the deleted task'),
  })
  .openapi('TaskDeletedEvent', { description: 'A finished task was pruned from the history' });
const CooldownEventSchema = z
  .object({
    type: z.literal('cooldown').describe('A cooldown record or a park changed'),
    revision: Revision,
    kind: TaskKindSchema.describe('The kind of the cooldown'),
    target: TargetSchema.describe('The store of the cooldown'),
    // A union with null, not `.nullable()`: zod-to-openapi drops the null of a nullable $ref.
    cooldown: z
      .union([CooldownSchema, z.null()])
      .describe(
        'The entry after the change, as the cooldown list serves it (record, park and `state` merged); null when neither a record nor a park in force is left (a success, an operator reset or release, or expiry)',
      ),
  })
  .openapi('CooldownEvent', {
    description: 'A failure was counted, a cooldown record was deleted, or a store was parked or released',
  });
const TimelineStreamEventSchema = z
  .object({
    type: z.literal('timeline').describe("An event was added to a store's timeline"),
    revision: Revision,
    event: TimelineEventViewSchema,
  })
  .openapi('TimelineStreamEvent', {
    description:
      "A new event on one kind's timeline on one store (a failure, a window opened, a clearing success, a reset, park, release, manual run or hold), as the cooldown detail serves it. Derived `window_lapsed` events are not sent: nothing commits when a window lapses",
  });
const AuditStreamEventSchema = z
  .object({
    type: z.literal('audit').describe('An operator action was recorded in the audit trail'),
    revision: Revision,
    entry: AuditEntryViewSchema,
  })
  .openapi('AuditStreamEvent', {
    description:
      "An entry written to the audit trail, as `GET /api/v1/audit` serves it: an operator action committed. A bulk action's entry is sent again each time its `count` grows (same `id`): a client keeps the latest per `id`",
  });
/**
 * A change sent over `GET /api/v1/events` (the JSON `data` of a `task`, `task_deleted`,
 * `cooldown`, `timeline` or `audit` event).
 */
export const MaintdEventSchema = z.discriminatedUnion('type', [
  TaskEventSchema,
  TaskDeletedEventSchema,
  CooldownEventSchema,
  TimelineStreamEventSchema,
  AuditStreamEventSchema,
]);
/** A change sent over `GET /api/v1/events`. */
export type MaintdEvent = z.infer<typeof MaintdEventSchema>;

/** The `data` of the `hello` event that opens every event stream. */
export const HelloEventSchema = z
  .object({ master_id: z.string().describe('Id of the master serving the stream') })
  .openapi('HelloEvent', { description: 'The stream is open: every change from now on is sent' });
/** The `data` of the `overflow` event that ends a stream whose client reads too slowly. */
export const OverflowEventSchema = z
  .object({ error: z.string().describe('Why the stream ends') })
  .openapi('OverflowEvent', {
    description: 'The client fell 1000 events behind: the stream ends; reconnect and re-read the lists',
  });

const sse = <E extends string, D extends z.ZodType>(event: E, data: D, description: string, id: boolean) =>
  z
    .object({
      event: z.literal(event).describe('The SSE `event:` field'),
      ...(id ? { id: z.string().describe('The SSE `id:` field: the etcd revision of the change, in decimal') } : {}),
      data,
    })
    .describe(description);
/** One message of `GET /api/v1/events` as its SSE fields (`data` parsed from its JSON). */
export const EventMessageSchema = z
  .discriminatedUnion('event', [
    sse('hello', HelloEventSchema, 'First message of every stream', false),
    sse('task', TaskEventSchema, 'A task changed', true),
    sse('task_deleted', TaskDeletedEventSchema, 'A task was pruned', true),
    sse('cooldown', CooldownEventSchema, 'A cooldown changed', true),
    sse('overflow', OverflowEventSchema, 'Last message of a stream cut off for reading too slowly', false),
    // Last: a message added after a release goes at the end, so the released ones keep their places.
    sse('timeline', TimelineStreamEventSchema, "A store's timeline gained an event", true),
    sse('audit', AuditStreamEventSchema, 'An operator action was recorded', true),
  ])
  .openapi('EventMessage', {
    description:
      'One server-sent event, as its fields: `event`, `id` (change events only) and `data`, sent JSON-encoded on one `data:` line. The stream is a sequence of these, plus `: keepalive` comment lines.',
  });
