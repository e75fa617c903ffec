/**
 * The master's HTTP API as data (DESIGN §3.4): every route's request and response schemas,
 * shared by the daemon (which implements them) and the dashboard's client generator (which
 * reads {@link openApiDocument}) without either constructing the other.
 */
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import {
  type CooldownPolicy,
  MasterInfoSchema,
  type ParkRecord,
  ParkRecordSchema,
  StoreStatsSchema,
  TargetSchema,
  type TaskCooldown,
  TaskCooldownSchema,
  TaskKindSchema,
  TaskRecordSchema,
  TaskStateSchema,
  isParked,
} from '@maintd/core';

/** Largest request body accepted (DESIGN §3.4). */
export const MAX_BODY_BYTES = 16 * 1024;

/** The body of every error answer. */
export const ErrorSchema = z
  .object({ error: z.string().describe('What went wrong; a validation error names the field') })
  .openapi('Error', { description: 'The body of every error answer' });

// Core's schemas are plain zod (core does not depend on the OpenAPI layer): their descriptions
// are zod's own `.describe()`, and `.meta({ id })` names them as components of the document.
const Task = TaskRecordSchema.meta({ id: 'TaskRecord' });
const TaskId = z.uuid({ version: 'v7' });

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

/** ISO 8601 text of a time in ms since the Unix epoch (millisecond precision, UTC). */
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Where a (kind, store) stands, as the list's `state` filter and the dashboard use it: `parked`
 * (an operator's park is in force; it wins over the rest), `cooling` (a window is open),
 * `below` (failures counted, none opened a window) or `lapsed` (the window ended; the count stays
 * until a success or the record's lease ends).
 */
export const CooldownStateSchema = z
  .enum(['cooling', 'below', 'lapsed', 'parked'])
  .describe(
    'Where this kind on this store stands: `parked` (an operator park is in force: the sweeps skip it until released), `cooling` (a cooldown window is open: the sweeps skip it until `until`), `below` (failures counted, below the threshold: no window) or `lapsed` (the window ended; the count stays, so the next failure opens a doubled window)',
  );
/** Where a (kind, store) stands: `cooling`, `below`, `lapsed` or `parked`. */
export type CooldownState = z.infer<typeof CooldownStateSchema>;

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

/** The state of a (kind, store) with this record and park at `nowMs`; undefined when it has neither. */
export function cooldownState(
  cooldown: TaskCooldown | undefined,
  parked: ParkRecord | undefined,
  nowMs: number,
): CooldownState | undefined {
  if (isParked(parked, nowMs)) return 'parked';
  if (!cooldown) return undefined;
  if (cooldown.until_ms === null) return 'below';
  return cooldown.until_ms > nowMs ? 'cooling' : 'lapsed';
}

/**
 * The API's view of one (kind, store) at `nowMs`: its cooldown record with `until` beside
 * `until_ms`, merged with its park when one is in force. Null when there is neither a record nor
 * a park in force (a lapsed park alone is not shown: it gates nothing).
 */
export function cooldownView(
  cooldown: TaskCooldown | undefined,
  parked: ParkRecord | undefined,
  nowMs: number,
): CooldownView | null {
  const state = cooldownState(cooldown, parked, nowMs);
  if (state === undefined) return null;
  const p = state === 'parked' ? parked : undefined;
  const parkView: ParkView | undefined = p && {
    reason: p.reason,
    by: p.by,
    parked_at_ms: p.parked_at_ms,
    parked_at: iso(p.parked_at_ms),
    until_ms: p.until_ms,
    until: p.until_ms === null ? null : iso(p.until_ms),
  };
  if (!cooldown) {
    const only = p!;
    return {
      kind: only.kind,
      target: only.target,
      state,
      failures: 0,
      until_ms: null,
      until: null,
      last_error: '',
      parked: parkView!,
    };
  }
  return {
    kind: cooldown.kind,
    target: cooldown.target,
    state,
    failures: cooldown.failures,
    until_ms: cooldown.until_ms,
    until: cooldown.until_ms === null ? null : iso(cooldown.until_ms),
    last_error: cooldown.last_error,
    last_error_class: cooldown.last_error_class,
    first_failure_ms: cooldown.first_failure_ms,
    last_failure_ms: cooldown.last_failure_ms,
    last_task_id: cooldown.last_task_id,
    ...(parkView ? { parked: parkView } : {}),
  };
}

const Cooldown = CooldownSchema;
const StoreRow = z
  .object({
    ...StoreStatsSchema.shape,
    cooldowns: z
      .array(Cooldown)
      .describe(
        "This store's cooldown entries of every kind: failure records (below the threshold and lapsed included) and parks in force; empty when none",
      ),
  })
  .openapi('Store', { description: "A store's stats row with its cooldown state" });
const Master = MasterInfoSchema.meta({ id: 'MasterInfo' });
const Limit = z.coerce.number().int().min(1).max(200).default(50).describe('Page size (items): 1–200, default 50');
const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const Count = z.number().int().nonnegative();
const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as `cursor` to read the next page (the `Link` header says the same); null on the last page');
/**
 * The paging convention of every paged list: the next page's URL in a `Link` header
 * (RFC 8288, `rel="next"`), absent on the last page.
 */
export const PAGING_RULE =
  'Paged: while more items follow, the `Link` header holds the URL of the next page (`<…>; rel="next"`, RFC 8288); it is absent on the last page.';
const LinkHeader = z
  .string()
  .describe(
    'The URL (path and query) of the next page, as `</api/v1/…?…&cursor=…>; rel="next"`; absent on the last page',
  );
const pageHeaders = { Link: LinkHeader.optional() };
const json = <S extends z.ZodType>(schema: S, description: string, headers?: Record<string, z.ZodType>) => ({
  content: { 'application/json': { schema } },
  description,
  ...(headers ? { headers: z.object(headers) } : {}),
});
const unavailable = json(ErrorSchema, 'The store (etcd) cannot be reached; retry later');
const errors = {
  400: json(ErrorSchema, 'Invalid request; the message names the field'),
  503: unavailable,
};
const mutationErrors = {
  ...errors,
  401: json(ErrorSchema, 'Missing or wrong bearer token (MASTER_API_TOKEN is set)'),
  403: json(ErrorSchema, 'Mutation from a non-loopback client while MASTER_API_TOKEN is unset'),
  413: json(ErrorSchema, 'Body over 16 KiB'),
};

/** The name of the bearer-token security scheme in the document. */
export const BEARER_AUTH = 'bearerAuth';
/** Mutations: the bearer token (see the scheme's description for the loopback exception). */
const MUTATION_SECURITY = [{ [BEARER_AUTH]: [] }];
/** Reads need no credentials. */
const OPEN: { [name: string]: string[] }[] = [];

/**
 * What every list route does while etcd is unreachable (DESIGN §3.4, README). Lists are served
 * from a per-master cache that an etcd watch invalidates, and a watch can stay quiet through an
 * outage; so a list is only ever served after a store read made during the request, never from
 * the cache alone.
 */
export const LIST_RULE =
  'Like every list, it answers only after a store (etcd) round trip made during the request succeeded: while etcd cannot be reached it answers 503, never a cached copy.';

export const enqueueRoute = createRoute({
  method: 'post',
  path: '/api/v1/tasks',
  operationId: 'enqueueTask',
  tags: ['tasks'],
  summary: 'Enqueue a task',
  description:
    'Queues a manual task of `kind` on `target`, never held back by a cooldown (its failure still counts and its success still clears one). A task without `depends_on` is deduplicated against the queued or running task of the same kind and target: that task is returned with 200 instead of a new one.',
  security: MUTATION_SECURITY,
  request: {
    body: {
      required: true,
      description: 'The task to enqueue',
      content: {
        'application/json': {
          schema: z
            .object({
              kind: TaskKindSchema.describe('What the task does to its store'),
              target: TargetSchema.describe('The store to maintain'),
              depends_on: z
                .array(TaskId)
                .max(16)
                .optional()
                .describe('Ids of tasks (at most 16) that must be done first; the task fails if one fails'),
            })
            .strict()
            .openapi('EnqueueRequest', { description: 'A manual task' }),
        },
      },
    },
  },
  responses: {
    202: json(Task, 'Queued a new task'),
    200: json(Task, 'An active task of this kind and target already exists (dedupe hit)'),
    ...mutationErrors,
  },
});

export const listTasksRoute = createRoute({
  method: 'get',
  path: '/api/v1/tasks',
  operationId: 'listTasks',
  tags: ['tasks'],
  summary: 'List tasks, newest first',
  description: `One page of tasks matching the filters, newest first; follow \`next_cursor\` (or the \`Link\` header) for the next page. ${PAGING_RULE} ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      state: TaskStateSchema.optional().describe('Only tasks in this state'),
      kind: TaskKindSchema.optional().describe('Only tasks of this kind'),
      target: TargetSchema.optional().describe('Only tasks of this store'),
      limit: Limit,
      cursor: TaskId.optional().describe('`next_cursor` of the previous page: only tasks older than this id'),
    }),
  },
  responses: {
    200: json(
      z
        .object({
          tasks: z.array(Task).describe('The page, newest first'),
          total: Count.describe('How many tasks match the filters, over all pages (a count)'),
          next_cursor: NextCursor,
        })
        .openapi('TaskPage', { description: 'One page of tasks' }),
      'A page of tasks',
      pageHeaders,
    ),
    ...errors,
  },
});

export const getTaskRoute = createRoute({
  method: 'get',
  path: '/api/v1/tasks/{id}',
  operationId: 'getTask',
  tags: ['tasks'],
  summary: 'Read one task',
  description: 'The task record with this id, read from the store.',
  security: OPEN,
  request: { params: z.object({ id: TaskId.describe('The task id (a UUIDv7)') }) },
  responses: { 200: json(Task, 'The task'), 404: json(ErrorSchema, 'No such task'), ...errors },
});

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
  .enum(['cooling', 'parked', 'below', 'lapsed'])
  .describe('Only entries in this state; absent: `cooling` and `parked` (what the sweeps skip)');

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
    200: json(z.array(Cooldown), 'Cooldown entries (one page with `limit`)', {
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
    200: json(Cooldown, 'Parked: the cooldown entry, state `parked`'),
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
  request: { query: z.object({ kind: TaskKindSchema.optional().describe('Only cooldowns of this kind') }) },
  responses: {
    200: json(Deleted, 'How many were reset'),
    ...mutationErrors,
  },
});

/** The cooldown policy a master runs, as `GET /api/v1/scheduler/policy` serves it. */
export const PolicySchema = z
  .object({
    threshold: Count.describe(
      'Consecutive failures of a kind on a store before a cooldown window opens (`TASK_COOLDOWN_AFTER_FAILURES`; a count). 0: cooldowns are off',
    ),
    base_secs: Count.describe(
      'Window length when the threshold is first reached, in seconds (`TASK_COOLDOWN_BASE_SECS`); each further failure doubles it',
    ),
    max_secs: Count.describe(
      'Longest window, in seconds (`TASK_COOLDOWN_MAX_SECS`); also how long a failure count is kept',
    ),
    jitter: z
      .number()
      .min(0)
      .max(1)
      .describe(
        'Downward jitter fraction of a window (`TASK_COOLDOWN_JITTER`): a window is shortened by up to this fraction, the same on every master',
      ),
    kinds: z.array(TaskKindSchema).describe('The kinds whose failures are counted (`TASK_COOLDOWN_KINDS`)'),
    guard_percent: z
      .number()
      .min(0)
      .max(100)
      .describe(
        'Fleet guard (`TASK_COOLDOWN_MAX_PERCENT`, a percentage): no new window opens while more than this share of the stores already cools for that kind (parked stores are not counted)',
      ),
    count_infrastructure_failures: z
      .boolean()
      .describe(
        'Whether failures where no worker answered count too (`TASK_COOLDOWN_COUNT_INFRA`); false: only errors a worker reported about the store count',
      ),
    master_id: z.string().describe('Id of the master that answered: the policy is each master’s own setting'),
  })
  .openapi('CooldownPolicy', {
    description:
      'The failure-cooldown policy of the master that answers. Every master reads its own settings: masters started with different settings apply different policies (each failure is counted by the master that ran the task, each sweep by the master that ran it). Ask each master to compare; `master_id` says which one answered.',
  });
/** The cooldown policy as the API serves it. */
export type PolicyView = z.infer<typeof PolicySchema>;

/** The API's view of a cooldown policy, run by master `masterId`. */
export function policyView(policy: CooldownPolicy, masterId: string): PolicyView {
  return {
    threshold: policy.afterFailures,
    base_secs: policy.baseSecs,
    max_secs: policy.maxSecs,
    jitter: policy.jitter,
    kinds: [...policy.kinds],
    guard_percent: policy.maxPercent,
    count_infrastructure_failures: policy.countInfrastructure,
    master_id: masterId,
  };
}

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

export const storesRoute = createRoute({
  method: 'get',
  path: '/api/v1/stores',
  operationId: 'listStores',
  tags: ['fleet'],
  summary: 'List stores with their cooldown state',
  description: `One page of the stats rows the latest scans wrote, by name, each with its cooldown entries of every kind (as in the cooldown list: \`until\`, \`state\`, and the park when one is in force). ${PAGING_RULE} ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      search: z
        .string()
        .max(255)
        .regex(/^[A-Za-z0-9._-]*$/, 'may contain only A-Z a-z 0-9 . _ -')
        .optional()
        .describe('Only stores whose name contains this text, ignoring case'),
      limit: Limit,
      cursor: TargetSchema.optional().describe('`next_cursor` of the previous page: only stores named after it'),
    }),
  },
  responses: {
    200: json(
      z
        .object({
          stores: z.array(StoreRow).describe('The page, by name'),
          total: Count.describe('How many stores match the search, over all pages (a count)'),
          next_cursor: NextCursor,
        })
        .openapi('StorePage', { description: 'One page of stores' }),
      'A page of stores',
      pageHeaders,
    ),
    ...errors,
  },
});

export const mastersRoute = createRoute({
  method: 'get',
  path: '/api/v1/masters',
  operationId: 'listMasters',
  tags: ['fleet'],
  summary: 'List live masters',
  description: `Every master whose session lease is alive, from its registration in the store. ${LIST_RULE}`,
  security: OPEN,
  responses: {
    200: json(
      z
        .object({ masters: z.array(Master).describe('Live masters') })
        .openapi('MasterList', { description: 'The live masters' }),
      'Masters',
    ),
    ...errors,
  },
});

export const workersRoute = createRoute({
  method: 'get',
  path: '/api/v1/workers',
  operationId: 'listWorkers',
  tags: ['fleet'],
  summary: 'List worker endpoints',
  description: `The configured worker endpoints (\`WORKER_ENDPOINTS\` of the master asked) with the result of the latest stats scan of each, from the store: a scan runs on one master per interval fleet-wide, and every master answers with its result. ${LIST_RULE}`,
  security: OPEN,
  responses: {
    200: json(
      z
        .object({
          workers: z
            .array(
              z
                .object({
                  endpoint: z.string().describe('Base URL of the worker'),
                  ok: z
                    .boolean()
                    .nullable()
                    .describe('Whether the worker answered the latest scan; null before its first scan'),
                  error: z
                    .string()
                    .nullable()
                    .describe('Why the latest scan of this worker failed; null when it answered'),
                  last_scan_at: z
                    .number()
                    .nullable()
                    .describe(
                      'When the latest scan asked the worker, in milliseconds since the Unix epoch; null before its first scan',
                    ),
                  stores: Count.describe('Stores the worker reported in its latest successful scan (a count)'),
                })
                .openapi('Worker', { description: 'A worker endpoint with its latest scan result' }),
            )
            .describe('Every configured worker endpoint'),
        })
        .openapi('WorkerList', { description: 'The worker endpoints' }),
      'Workers',
    ),
    ...errors,
  },
});

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
      .union([Cooldown, z.null()])
      .describe(
        'The entry after the change, as the cooldown list serves it (record, park and `state` merged); null when neither a record nor a park in force is left (a success, an operator reset or release, or expiry)',
      ),
  })
  .openapi('CooldownEvent', {
    description: 'A failure was counted, a cooldown record was deleted, or a store was parked or released',
  });
/** A change sent over `GET /api/v1/events` (the JSON `data` of a `task`, `task_deleted` or `cooldown` event). */
export const MaintdEventSchema = z.discriminatedUnion('type', [
  TaskEventSchema,
  TaskDeletedEventSchema,
  CooldownEventSchema,
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
  ])
  .openapi('EventMessage', {
    description:
      'One server-sent event, as its fields: `event`, `id` (change events only) and `data`, sent JSON-encoded on one `data:` line. The stream is a sequence of these, plus `: keepalive` comment lines.',
  });

export const eventsRoute = createRoute({
  method: 'get',
  path: '/api/v1/events',
  operationId: 'streamEvents',
  tags: ['events'],
  summary: 'Stream task, cooldown and park changes',
  description:
    "Server-sent events from this master's etcd watch of tasks, cooldowns and parks. The stream opens with a `hello` event, then sends one `task`, `task_deleted` or `cooldown` event per change (`id:` is the etcd revision) and a `: keepalive` comment after 15 seconds without one. A client more than 1000 events behind gets an `overflow` event and the stream ends: reconnect and re-read the lists. Events carry no history: read the lists after `hello` to start from a consistent view.",
  security: OPEN,
  responses: {
    200: {
      description: 'The event stream (`text/event-stream`)',
      content: { 'text/event-stream': { schema: EventMessageSchema } },
    },
    503: json(ErrorSchema, 'This master serves no event stream'),
  },
});

export const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'getHealth',
  tags: ['operations'],
  summary: 'Liveness',
  description:
    'Answers 200 while the process serves HTTP, from the moment it starts (also while it waits for etcd); it reads nothing. Use it as a liveness probe.',
  security: OPEN,
  responses: {
    200: json(
      z
        .object({
          status: z
            .enum(['ok', 'starting'])
            .describe('`ok` once serving; `starting` while the master waits for etcd at startup'),
        })
        .openapi('Health', { description: 'The process is alive' }),
      'Alive',
    ),
  },
});

const ReadinessSchema = z
  .object({
    ready: z.boolean().describe('True when the store answers and the session is held'),
    store: z.enum(['ok', 'unavailable']).describe('Whether etcd answered a read within 2 seconds'),
    session: z
      .enum(['held', 'lost', 'none'])
      .describe('Whether this master holds its session lease (needed to claim tasks); `none` before its first one'),
    starting: z
      .boolean()
      .optional()
      .describe('Present and true while the master waits for etcd at startup (it serves nothing else yet)'),
  })
  .openapi('Readiness', { description: 'Readiness and its two conditions' });
export const readyRoute = createRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'getReadiness',
  tags: ['operations'],
  summary: 'Readiness',
  description:
    'Ready when the store (etcd) answers a read within 2 seconds and this master holds its session lease. Use it for load balancers.',
  security: OPEN,
  responses: {
    200: json(ReadinessSchema, 'Ready'),
    503: json(ReadinessSchema, 'Not ready: the body says which condition fails'),
  },
});

export const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'getMetrics',
  tags: ['operations'],
  summary: 'Prometheus metrics',
  description:
    "This process's metrics in the Prometheus text exposition format (version 0.0.4): `master_*` task, worker, cooldown and sweep metrics, `http_*` request metrics and Node's process metrics. No per-store labels.",
  security: OPEN,
  responses: {
    200: {
      description: 'The metrics',
      content: {
        'text/plain': {
          schema: z.string().describe('Prometheus text exposition format 0.0.4 (`text/plain; version=0.0.4`)'),
        },
      },
    },
  },
});

export const openApiRoute = createRoute({
  method: 'get',
  path: '/api/v1/openapi.json',
  operationId: 'getOpenApiDocument',
  tags: ['operations'],
  summary: 'This document',
  description: 'The OpenAPI 3.1 document of every route the master serves.',
  security: OPEN,
  responses: {
    200: json(
      z.record(z.string(), z.unknown()).describe('An OpenAPI 3.1 document').openapi('OpenApiDocument'),
      'The OpenAPI document',
    ),
  },
});

/** Every route of the API, in document order. */
export const ROUTES = [
  enqueueRoute,
  listTasksRoute,
  getTaskRoute,
  listCooldownsRoute,
  parkRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
  policyRoute,
  storesRoute,
  mastersRoute,
  workersRoute,
  eventsRoute,
  healthRoute,
  readyRoute,
  metricsRoute,
  openApiRoute,
] as const;

type DocumentConfig = Parameters<OpenAPIHono['getOpenAPI31Document']>[0];

/** The document's header: what `/api/v1/openapi.json` says about itself. */
export const OPENAPI_INFO: Readonly<DocumentConfig> = {
  openapi: '3.1.0',
  info: {
    title: 'maintd master API',
    version: '1',
    description:
      'The HTTP API of a maintd master (DESIGN §3.4). Any master answers for the whole fleet: they share their state through etcd. Reads are open; mutations need the bearer token (`MASTER_API_TOKEN`) or, while none is set, a loopback client. Errors are `{"error": "…"}`. Every time is in milliseconds since the Unix epoch unless the field says otherwise.',
  },
  // Variables rather than a fixed URL: every master serves the same API wherever it runs.
  servers: [
    {
      url: 'http://{host}:{port}',
      description: 'A maintd master (any one: each answers for the whole fleet)',
      variables: {
        host: {
          default: 'localhost',
          description: 'Host of the master: MASTER_HOST, or any address it listens on',
        },
        port: { default: '8090', description: 'MASTER_PORT (default 8090)' },
      },
    },
  ],
  tags: [
    { name: 'tasks', description: 'Enqueue and read maintenance tasks' },
    {
      name: 'cooldowns',
      description: 'Failure cooldowns and parks: what the sweeps skip, the policy, operator resets, parks and releases',
    },
    { name: 'fleet', description: 'Stores, masters and workers' },
    { name: 'events', description: 'Live task and cooldown changes' },
    { name: 'operations', description: 'Health, readiness, metrics and this document' },
  ],
};

/**
 * The OpenAPI 3.1 document of the master's API, built from the route definitions alone: no
 * store, no app, no network. The daemon serves this same document.
 */
export function openApiDocument(): ReturnType<OpenAPIHono['getOpenAPI31Document']> {
  const app = new OpenAPIHono();
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_AUTH, {
    type: 'http',
    scheme: 'bearer',
    description:
      'MASTER_API_TOKEN, sent as `Authorization: Bearer <token>`. Mutations need it when it is set. While MASTER_API_TOKEN is unset, loopback clients may mutate without a token and other clients may not mutate at all (403). Reads never need it.',
  });
  for (const route of ROUTES) app.openAPIRegistry.registerPath(route);
  return app.getOpenAPI31Document(structuredClone(OPENAPI_INFO));
}
