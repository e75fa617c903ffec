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
import { CauseId, CauseSchema } from '../schemas/causes.js';
import { PolicySchema } from '../schemas/policy.js';
import { BULK_SAMPLE_MAX, BulkResultSchema, CooldownDetailSchema, TIMELINE_PAGE_MAX } from '../schemas/timeline.js';

/** Longest search text (`q`) of the cooldown list and its bulk actions. */
export const SEARCH_MAX = 200;

/** `q`: a case-insensitive substring of the store name or of the last error. */
const Search = z
  .string()
  .min(1)
  .max(SEARCH_MAX)
  .describe(
    `Only entries whose store name or \`last_error\` contains this text, ignoring case (1–${SEARCH_MAX} characters). A master older than this parameter ignores it on a read: check the master's version before relying on it`,
  );

/** `cause`: only the entries whose latest failure has this cause. */
const Cause = CauseId.describe(
  'Only entries whose latest failure has this cause (`GET /api/v1/scheduler/causes`). A master older than this parameter ignores it on a read and refuses it on a mutation',
);

/** The filter of the bulk actions: the list's, where an absent `state` means every state. */
const bulkFilter = {
  kind: TaskKindSchema.optional().describe('Only entries of this kind'),
  state: CooldownStateFilterSchema.optional(),
  q: Search.optional(),
  cause: Cause.optional(),
  dry_run: Bool.optional().describe(
    '`true` or `1`: change nothing; answer how many entries match and the first of them. Default false',
  ),
};

export const listCooldownsRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/cooldowns',
  operationId: 'listCooldowns',
  tags: ['cooldowns'],
  summary: 'List cooldowns and parks',
  description: `The (kind, store) pairs the sweeps skip: open cooldown windows and operator parks in force, each with its \`state\` and \`until\`, the window's end as ISO 8601 text (derived when served, not stored). Without \`limit\`, the whole list as one array, by kind then store (\`all=true\` adds the counters below the threshold and the lapsed windows). With \`limit\`, one page as an array, filtered by \`kind\` and \`state\` and ordered by \`sort\`; either way \`q\` keeps only the entries whose store name or last error contains it; the \`X-Total-Count\` header counts every matching entry, and while more entries follow, the \`Link\` header holds the URL of the next page (\`<…>; rel="next"\`, RFC 8288; absent on the last page). Pages are served from this master's watch-maintained index of cooldowns and parks. ${LIST_RULE}`,
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
      q: Search.optional(),
      cause: Cause.optional(),
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

export const cooldownDetailRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/cooldowns/{kind}/{target}',
  operationId: 'getCooldown',
  tags: ['cooldowns'],
  summary: 'One store’s cooldown, policy and timeline',
  description: `Everything about this kind on this store in one answer: its entry as the list serves it (or null), the cooldown policy of the master that answers and whether it applies to this kind, and the store's timeline, newest first — every failure with its error, each window opened and lapsed, the success that cleared a count, each reset, park, release and manual run with who and why. 404 when there is no failure record, no park (lapsed or not) and no event. Read from the store (etcd) at each request.`,
  security: OPEN,
  request: {
    params: z.object({
      kind: TaskKindSchema.describe('The kind'),
      target: TargetSchema.describe('The store'),
    }),
    query: z.object({
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(TIMELINE_PAGE_MAX)
        .optional()
        .describe(
          `Most stored timeline events to answer (1–${TIMELINE_PAGE_MAX}); default \`TASK_TIMELINE_LIMIT\` (every event the store keeps per pair)`,
        ),
    }),
  },
  responses: {
    200: json(CooldownDetailSchema, 'The entry, the policy and the timeline'),
    404: json(ErrorSchema, 'Neither a failure record, a park nor a timeline event for this kind and store'),
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
    'Parks this kind on this store: the sweeps skip it until it is released (`DELETE`) or until `until`; manual tasks still run, and their success does not release the park (it still clears the failure count). The park keeps who parked it (`<token name>@<client address>` when a token authenticated the request, `default` being MASTER_API_TOKEN, else the client address), when and why. Parking again replaces the reason, the time and `until`. Answers the merged cooldown entry (state `parked`), and a `cooldown` event follows on the event stream.',
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

export const parkTargetsRoute = createRoute({
  method: 'put',
  path: '/api/v1/scheduler/cooldowns',
  operationId: 'parkTargets',
  tags: ['cooldowns'],
  summary: 'Park every entry matching a filter',
  description: `Bulk park: parks every (kind, store) of the cooldown list matching \`kind\`, \`state\` and \`q\` (an absent \`state\` is every state) with one reason and optional \`until\`, as one park each would: each store's timeline records its park and who parked it. With \`dry_run=true\` nothing changes and the answer says how many would be parked. Answers the count matched, the count parked and the first ${BULK_SAMPLE_MAX} matches (by \`until\`, as the paged list orders them) as they were before. A master older than this route refuses it (400 naming the unknown parameter, or 404), so nothing is parked by mistake.`,
  security: MUTATION_SECURITY,
  request: {
    query: mutationQuery(bulkFilter),
    body: {
      required: true,
      description: 'Why, and optionally until when: the same for every match',
      content: { 'application/json': { schema: ParkRequestSchema } },
    },
  },
  responses: {
    200: json(BulkResultSchema, 'Parked (or, on a dry run, what would be)'),
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

/** The answer of a bulk reset: a bulk result, plus `deleted` as releases before the filter answered it. */
// Its own object, not an extension (an `allOf`): the released answer was an object with `deleted`,
// and stays one, with fields added.
const BulkResetSchema = z
  .object({
    deleted: Count.describe(
      'How many cooldown records were deleted (a count): the same as `done`, kept for clients of the bulk reset before its filter',
    ),
    ...BulkResultSchema.shape,
  })
  .openapi('BulkReset', { description: 'The outcome (or, on a dry run, the preview) of a bulk reset' });

export const resetCooldownsRoute = createRoute({
  method: 'delete',
  path: '/api/v1/scheduler/cooldowns',
  operationId: 'resetCooldowns',
  tags: ['cooldowns'],
  summary: 'Reset every cooldown matching a filter',
  description: `Operator bulk reset: deletes the cooldown record of every entry of the cooldown list matching \`kind\`, \`state\` and \`q\` (an absent \`state\` is every state, so \`?kind=x\` alone resets every record of that kind, below the threshold and lapsed included), each with a \`reset\` event naming who on its store's timeline. An entry without a failure record (a park alone) has nothing to reset and does not match. Parks stay: each is an operator decision with its own reason, released one by one (\`DELETE /api/v1/scheduler/cooldowns/{kind}/{target}\`). With \`dry_run=true\` nothing changes. Answers the count matched, the count reset (also as \`deleted\`) and the first ${BULK_SAMPLE_MAX} matches as they were before. A master older than the filter refuses \`state\`, \`q\` and \`dry_run\` (400 naming them), so nothing is reset by mistake.`,
  security: MUTATION_SECURITY,
  request: { query: mutationQuery(bulkFilter) },
  responses: {
    200: json(BulkResetSchema, 'How many matched and were reset'),
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

export const causesRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/causes',
  operationId: 'listCauses',
  tags: ['cooldowns'],
  summary: 'List failures grouped by cause',
  description: `Every failure record (below the threshold and lapsed included) grouped by the cause of its latest error: errors that differ only in the store's name, ids, numbers, hex, UUIDs and the variable parts of paths share a cause. The most stores first, then the most failures. Pass a \`cause\` to the cooldown list or to the bulk park and reset to act on its stores in one request. Served from this master's watch-maintained index. ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      kind: TaskKindSchema.optional().describe('Only failures of this kind'),
    }),
  },
  responses: {
    200: json(z.array(CauseSchema), 'The causes, the most stores first'),
    ...errors,
  },
});
