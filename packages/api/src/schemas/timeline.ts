/**
 * A (kind, store)'s timeline and detail as the API serves them, and the answers of the bulk
 * actions over the cooldown list's filter (docs/ARCHITECTURE.md §2.7, §3.4).
 */
import { z } from '@hono/zod-openapi';
import { TargetSchema, TaskKindSchema, TimelineEventSchema } from '@maintd/core';
import { Count, IsoTimes } from './common.js';
import { CooldownSchema } from './cooldown.js';
import { PolicySchema } from './policy.js';

/** One timeline event as served: the stored event with `at` (and `until`, where it has `until_ms`) as ISO 8601 text. */
export const TimelineEventViewSchema = TimelineEventSchema.extend(IsoTimes).meta({
  id: 'TimelineEvent',
  description:
    'One thing that happened to one kind on one store: its `type`, when, and the details that apply to it. A client shows a `type` it does not know as it is',
});
/** A timeline event as the API serves it. */
export type TimelineEventView = z.infer<typeof TimelineEventViewSchema>;

/** Most timeline events one detail answer holds. */
export const TIMELINE_PAGE_MAX = 200;

/** `GET /api/v1/scheduler/cooldowns/{kind}/{target}`: everything about one (kind, store) in one answer. */
export const CooldownDetailSchema = z
  .object({
    kind: TaskKindSchema.describe('The kind'),
    target: TargetSchema.describe('The store'),
    // A union with null, not `.nullable()`: zod-to-openapi drops the null of a nullable $ref.
    entry: z
      .union([CooldownSchema, z.null()])
      .describe(
        'The entry as the cooldown list serves it (record, park in force, `state`, `gating`); null when it has neither a failure record nor a park in force',
      ),
    // No description of its own: a described copy would take the `CooldownPolicy` component's
    // place, and the policy route would then answer an `allOf` instead of the released `$ref`.
    policy: PolicySchema,
    applies: z
      .boolean()
      .describe("Whether this master's policy runs the cooldown for this kind (on, and the kind listed)"),
    timeline: z
      .array(TimelineEventViewSchema)
      .describe(
        'Recent events, newest first (at most `TASK_TIMELINE_LIMIT` stored per pair, plus the derived `window_lapsed` events)',
      ),
  })
  .openapi('CooldownDetail', {
    description:
      'One kind on one store: its cooldown entry, the policy that applies, and its timeline — why it is cooling, since when, and who touched it',
  });
/** The detail of one (kind, store) as the API serves it. */
export type CooldownDetail = z.infer<typeof CooldownDetailSchema>;

/** Most matches a bulk action's answer lists. */
export const BULK_SAMPLE_MAX = 100;

/** What a bulk park or reset over the cooldown list's filter answers. */
export const BulkResultSchema = z
  .object({
    dry_run: z.boolean().describe('True when nothing was changed (`dry_run=true`)'),
    count: Count.describe('How many entries matched the filter (a count)'),
    done: Count.describe('How many were parked or reset (a count); 0 on a dry run'),
    entries: z
      .array(CooldownSchema)
      .describe(`The first matches (at most ${BULK_SAMPLE_MAX}) in the list's order, as they were before the action`),
  })
  .openapi('BulkResult', { description: 'The outcome (or, on a dry run, the preview) of a bulk action' });
/** A bulk action's answer. */
export type BulkResult = z.infer<typeof BulkResultSchema>;
