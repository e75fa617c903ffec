/**
 * The cooldown routes of the master's API (docs/ARCHITECTURE.md §2.7, §3.4): the list of
 * cooldowns and parks, parking, resets and releases, and the policy a master runs.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { TargetSchema, TaskKindSchema } from '@maintd/core';
import {
  ErrorSchema,
  LIST_RULE,
  LinkHeader,
  MUTATION_SECURITY,
  OPEN,
  errors,
  json,
  mutationErrors,
  mutationQuery,
} from '../contract.js';
import { Bool, Count } from '../schemas/common.js';
import {
  COOLDOWN_PAGE_MAX,
  CooldownSchema,
  CooldownSortSchema,
  CooldownStateFilterSchema,
} from '../schemas/cooldown.js';
import { PolicySchema } from '../schemas/policy.js';

export const listCooldownsRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/cooldowns',
  operationId: 'listCooldowns',
  tags: ['cooldowns'],
  summary: 'List cooldowns and parks',
  description: `The (kind, store) pairs the sweeps skip: open cooldown windows and operator parks in force, each with its \`state\` and \`until\`, the window's end as ISO 8601 text (derived when served, not stored). Without \`limit\`, the whole list as one array, by kind then store (\`all=true\` adds the counters below the threshold and the lapsed windows). With \`limit\`, one page as an array, filtered by \`kind\` and \`state\` and ordered by \`sort\`; the \`X-Total-Count\` header counts every matching entry, and while more entries follow, the \`Link\` header holds the URL of the next page (\`<…>; rel="next"\`, RFC 8288; absent on the last page). Pages are served from this master's watch-maintained index of cooldowns and parks. ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      kind: TaskKindSchema.optional().describe('Only entries of this kind'),
      all: Bool.optional().describe(
        'Without `limit` only: `true` or `1` adds the counters below the threshold and the lapsed windows; default false',
      ),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(COOLDOWN_PAGE_MAX)
        .optional()
        .describe(`Page size (entries): 1–${COOLDOWN_PAGE_MAX}. Absent: the whole list, unpaged`),
      cursor: z
        .string()
        .max(1024)
        .regex(/^[A-Za-z0-9_-]+$/, 'must be a cursor from a previous page')
        .optional()
        .describe('With `limit`: the opaque cursor from the previous page’s `Link` header'),
      state: CooldownStateFilterSchema.optional(),
      sort: CooldownSortSchema.optional(),
    }),
  },
  responses: {
    200: json(z.array(CooldownSchema), 'Cooldown entries (one page with `limit`)', {
      Link: LinkHeader.optional(),
      'X-Total-Count': z
        .string()
        .regex(/^[0-9]+$/)
        .optional()
        .describe('With `limit`: how many entries match `kind` and `state`, over all pages (a count)'),
    }),
    ...errors,
  },
});

const ParkRequestSchema = z
  .object({
    reason: z.string().min(1).max(512).describe('Why the store is parked (1–512 characters), kept with the park'),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('When the park lapses by itself, an ISO 8601 time in the future; absent: until released'),
  })
  .strict()
  .openapi('ParkRequest', { description: 'A park: why, and optionally until when' });

export const parkRoute = createRoute({
  method: 'put',
  path: '/api/v1/scheduler/cooldowns/{kind}/{target}',
  operationId: 'parkTarget',
  tags: ['cooldowns'],
  summary: 'Park a store with a reason',
  description:
    'Parks this kind on this store: the sweeps skip it until it is released (`DELETE`) or until `until`; manual tasks still run, and their success does not release the park (it still clears the failure count). The park keeps who parked it (`token@<client address>` when the bearer token authenticated the request, else the client address), when and why. Parking again replaces the reason, the time and `until`. Answers the merged cooldown entry (state `parked`), and a `cooldown` event follows on the event stream.',
  security: MUTATION_SECURITY,
  request: {
    query: mutationQuery({}),
    params: z.object({
      kind: TaskKindSchema.describe('The kind the sweeps should stop enqueueing'),
      target: TargetSchema.describe('The store to park'),
    }),
    body: {
      required: true,
      description: 'Why, and optionally until when',
      content: { 'application/json': { schema: ParkRequestSchema } },
    },
  },
  responses: {
    200: json(CooldownSchema, 'Parked: the cooldown entry, state `parked`'),
    ...mutationErrors,
  },
});

const Deleted = z
  .object({
    deleted: Count.describe(
      'How many records were deleted (a count): cooldown records, plus the park for a single reset (so 1 or 2 there)',
    ),
  })
  .openapi('Deleted', { description: 'The outcome of an operator reset' });

export const resetCooldownRoute = createRoute({
  method: 'delete',
  path: '/api/v1/scheduler/cooldowns/{kind}/{target}',
  operationId: 'resetCooldown',
  tags: ['cooldowns'],
  summary: 'Reset one cooldown and release its park',
  description:
    'Operator reset and release: deletes the cooldown record of this kind on this store and its park (lapsed or not), so that the next sweep may enqueue it again and its next failure counts from one. A `cooldown` event follows on the event stream.',
  security: MUTATION_SECURITY,
  request: {
    query: mutationQuery({}),
    params: z.object({
      kind: TaskKindSchema.describe('The kind of the cooldown'),
      target: TargetSchema.describe('The store of the cooldown'),
    }),
  },
  responses: {
    200: json(Deleted, 'Reset'),
    404: json(ErrorSchema, 'Neither a cooldown record nor a park for this kind and target'),
    ...mutationErrors,
  },
});

export const resetCooldownsRoute = createRoute({
  method: 'delete',
  path: '/api/v1/scheduler/cooldowns',
  operationId: 'resetCooldowns',
  tags: ['cooldowns'],
  summary: 'Reset every cooldown (of one kind, or all)',
  description:
    'Operator bulk reset: deletes every cooldown record (of `kind`, when given) and returns how many. Parks stay: each is an operator decision with its own reason, released one by one (`DELETE /api/v1/scheduler/cooldowns/{kind}/{target}`).',
  security: MUTATION_SECURITY,
  request: { query: mutationQuery({ kind: TaskKindSchema.optional().describe('Only cooldowns of this kind') }) },
  responses: {
    200: json(Deleted, 'How many were reset'),
    ...mutationErrors,
  },
});

export const policyRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/policy',
  operationId: 'getCooldownPolicy',
  tags: ['cooldowns'],
  summary: 'The cooldown policy this master runs',
  description:
    'The failure-cooldown settings of the master that answers (threshold, windows, jitter, kinds, fleet guard, whether infrastructure failures count). Each master answers for itself: masters that disagree are visible by asking each. Reads no store; never secret.',
  security: OPEN,
  responses: { 200: json(PolicySchema, 'The policy') },
});
