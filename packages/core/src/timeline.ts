import { z } from 'zod';
import { ErrorClassSchema, KIND_PATTERN, TargetSchema, TaskKindSchema } from './model.js';

/**
 * The event types this release writes to a (kind, store)'s timeline (docs/ARCHITECTURE.md §2.7),
 * plus `window_lapsed`, which is derived when a timeline is read (a window lapses by time
 * passing: nothing commits then). A type is data, not an enum: a timeline written by a newer
 * release may hold types this one does not know, and readers show them as they are.
 */
export const TIMELINE_EVENT_TYPES = [
  'failure',
  'window_opened',
  'window_lapsed',
  'cleared',
  'reset',
  'parked',
  'released',
  'manual_run',
  'held',
] as const;
/** One of {@link TIMELINE_EVENT_TYPES}, or a newer release's type. */
export type TimelineEventType = (typeof TIMELINE_EVENT_TYPES)[number] | (string & {});

const Ms = z.number().int().nonnegative();

/**
 * Schema of one timeline event, stored at `P/timeline/<kind>/<hex>/<id>`: what happened to one
 * kind on one store, when, and the details that apply to its type. Optional fields are omitted,
 * never null (but `until_ms` is null on a park that lasts until released).
 */
export const TimelineEventSchema = z
  .object({
    id: z.uuid({ version: 'v7' }).describe('Event id: a UUIDv7 minted when it committed, so key order is time order'),
    kind: TaskKindSchema.describe('The kind this happened to'),
    target: TargetSchema.describe('The store this happened to'),
    type: z
      .string()
      .regex(KIND_PATTERN)
      .describe(
        'What happened: `failure` (a task failed: `task_id`, `error`, `error_class`, and `failures` when it counted), `window_opened` (`failures`, `window_ms`, `until_ms`), `window_lapsed` (derived when read: the window of the event before it ended at `at_ms`), `cleared` (a success cleared `failures` counted failures: `task_id`), `reset` (an operator reset the count: `by`, `failures`), `parked` (`by`, `reason`, `until_ms`), `released` (`by`), `manual_run` (an operator enqueued `task_id`: `by`), `held` (a park held automatic task `task_id` back: `by`, `reason`). Other values come from a newer release: show them as they are',
      ),
    at_ms: Ms.describe('When it happened, in milliseconds since the Unix epoch'),
    task_id: z.string().optional().describe('The task it concerns, if any'),
    error: z
      .string()
      .max(512)
      .optional()
      .describe('A failure’s error, the cause first: at most 512 characters, control characters stripped'),
    error_class: ErrorClassSchema.optional().describe('A failure’s class: `target` or `infrastructure`'),
    failures: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'The consecutive-failure count after a counted failure, at a window, or that a success or reset cleared',
      ),
    window_ms: Ms.optional().describe('Length of the window opened, in milliseconds'),
    until_ms: Ms.nullable()
      .optional()
      .describe(
        'End of the window opened, or of the park (null: until released), in milliseconds since the Unix epoch',
      ),
    by: z
      .string()
      .max(512)
      .optional()
      .describe(
        'Who did it (operator actions): `<token name>@<client address>` (0.1.0 masters: `token@<client address>`) or the client address',
      ),
    reason: z.string().max(512).optional().describe('Why (a park, a hold): the operator’s words'),
  })
  .describe('One thing that happened to one kind on one store, as its timeline keeps it.');
/** One event of a (kind, store)'s timeline. */
export type TimelineEvent = z.infer<typeof TimelineEventSchema>;

/**
 * What a writer says about an event: the fields besides those the store fills in (`id`, `kind`,
 * `target`, and `at_ms` unless the writer knows better: a failure's is the time its count was
 * decided at, so that a window's `until_ms` is its `at_ms` plus its length).
 */
export type TimelineEntry = Omit<TimelineEvent, 'id' | 'kind' | 'target' | 'at_ms'> & {
  readonly type: TimelineEventType;
  readonly at_ms?: number;
};

/** Encodes an event with a fixed field order and optional fields omitted. */
export function encodeTimelineEvent(e: TimelineEvent): string {
  return JSON.stringify({
    id: e.id,
    kind: e.kind,
    target: e.target,
    type: e.type,
    at_ms: e.at_ms,
    task_id: e.task_id,
    error: e.error,
    error_class: e.error_class,
    failures: e.failures,
    window_ms: e.window_ms,
    until_ms: e.until_ms,
    by: e.by,
    reason: e.reason,
  });
}

/** The stored events that end a window early: a later window, a success that cleared the count, a reset. */
const ENDS_WINDOW: ReadonlySet<string> = new Set(['window_opened', 'cleared', 'reset']);

/**
 * A timeline as served at `nowMs`, newest first: the stored events (given newest first) and a
 * `window_lapsed` event at the end of each window that ended by itself — before `nowMs`, with no
 * later window, success or reset before its end. A lapse is time passing, so no transaction
 * could record it; deriving it when read keeps every stored event tied to a commit. The derived
 * event's id is its window's, as the pair is one fact.
 */
export function timelineView(newestFirst: readonly TimelineEvent[], nowMs: number): TimelineEvent[] {
  const lapses: TimelineEvent[] = [];
  // Walking newest first, `endedAt` is the earliest event seen so far that ends a window.
  let endedAt = Infinity;
  for (const e of newestFirst) {
    if (e.type === 'window_opened' && typeof e.until_ms === 'number') {
      const end = e.until_ms;
      if (end <= nowMs && end <= endedAt) {
        lapses.push({
          id: e.id,
          kind: e.kind,
          target: e.target,
          type: 'window_lapsed',
          at_ms: end,
          ...(e.failures !== undefined ? { failures: e.failures } : {}),
        });
      }
    }
    if (ENDS_WINDOW.has(e.type)) endedAt = Math.min(endedAt, e.at_ms);
  }
  if (lapses.length === 0) return [...newestFirst];
  // Merged by time, newest first; a lapse sorts after (older than) a stored event of the same ms.
  const out: TimelineEvent[] = [];
  let j = lapses.length - 1;
  lapses.sort((a, b) => a.at_ms - b.at_ms);
  for (const e of newestFirst) {
    while (j >= 0 && lapses[j]!.at_ms > e.at_ms) out.push(lapses[j--]!);
    out.push(e);
  }
  while (j >= 0) out.push(lapses[j--]!);
  return out;
}
