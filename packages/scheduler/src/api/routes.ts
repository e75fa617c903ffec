/**
 * The master's HTTP API as data (DESIGN §3.4): every route's request and response schemas,
 * shared by the daemon (which implements them) and the dashboard's client generator (which
 * reads {@link openApiDocument}) without either constructing the other.
 */
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import {
  MasterInfoSchema,
  StoreStatsSchema,
  TargetSchema,
  TaskCooldownSchema,
  TaskKindSchema,
  TaskRecordSchema,
  TaskStateSchema,
} from '@maintd/core';

/** Largest request body accepted (DESIGN §3.4). */
export const MAX_BODY_BYTES = 16 * 1024;

/** The body of every error answer. */
export const ErrorSchema = z.object({ error: z.string() }).openapi('Error');
// Core's schemas were built before @hono/zod-openapi extended zod, so they carry no `.openapi()`;
// they are used as they are (inlined in the document) rather than re-declared here.
const Task = TaskRecordSchema;
const Cooldown = TaskCooldownSchema;
const StoreRow = z.object({ ...StoreStatsSchema.shape, cooldowns: z.array(TaskCooldownSchema) }).openapi('Store');
const TaskId = z.uuid({ version: 'v7' });
const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const json = <S extends z.ZodType>(schema: S, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});
const errors = {
  400: json(ErrorSchema, 'Invalid request; the message names the field'),
  503: json(ErrorSchema, 'The store (etcd) is unavailable'),
};
const mutationErrors = {
  ...errors,
  401: json(ErrorSchema, 'Missing or wrong bearer token'),
  403: json(ErrorSchema, 'Mutation from a non-loopback client while no token is configured'),
  413: json(ErrorSchema, 'Body over 16 KiB'),
};

export const enqueueRoute = createRoute({
  method: 'post',
  path: '/api/v1/tasks',
  summary: 'Enqueue a task (never cooldown-gated)',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({ kind: TaskKindSchema, target: TargetSchema, depends_on: z.array(TaskId).max(16).optional() })
            .strict(),
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
  summary: 'Tasks, newest first',
  request: {
    query: z.object({
      state: TaskStateSchema.optional(),
      kind: TaskKindSchema.optional(),
      target: TargetSchema.optional(),
      limit: Limit,
      cursor: TaskId.optional(),
    }),
  },
  responses: {
    200: json(
      z.object({ tasks: z.array(Task), total: z.number().int(), next_cursor: z.string().nullable() }),
      'A page of tasks',
    ),
    ...errors,
  },
});

export const getTaskRoute = createRoute({
  method: 'get',
  path: '/api/v1/tasks/{id}',
  summary: 'One task',
  request: { params: z.object({ id: TaskId }) },
  responses: { 200: json(Task, 'The task'), 404: json(ErrorSchema, 'No such task'), ...errors },
});

export const listCooldownsRoute = createRoute({
  method: 'get',
  path: '/api/v1/scheduler/cooldowns',
  summary: 'Targets the sweeps skip (all=true adds below-threshold counters)',
  request: { query: z.object({ kind: TaskKindSchema.optional(), all: Bool.optional() }) },
  responses: { 200: json(z.array(Cooldown), 'Cooldown records'), ...errors },
});

export const resetCooldownRoute = createRoute({
  method: 'delete',
  path: '/api/v1/scheduler/cooldowns/{kind}/{target}',
  summary: 'Operator reset of one cooldown',
  request: { params: z.object({ kind: TaskKindSchema, target: TargetSchema }) },
  responses: {
    200: json(z.object({ deleted: z.number().int() }), 'Reset'),
    404: json(ErrorSchema, 'No cooldown record for this kind and target'),
    ...mutationErrors,
  },
});

export const resetCooldownsRoute = createRoute({
  method: 'delete',
  path: '/api/v1/scheduler/cooldowns',
  summary: 'Operator reset of every cooldown (of one kind, or all)',
  request: { query: z.object({ kind: TaskKindSchema.optional() }) },
  responses: { 200: json(z.object({ deleted: z.number().int() }), 'How many were reset'), ...mutationErrors },
});

export const storesRoute = createRoute({
  method: 'get',
  path: '/api/v1/stores',
  summary: 'Stats rows with their cooldown state, by name',
  request: {
    query: z.object({
      search: z
        .string()
        .max(255)
        .regex(/^[A-Za-z0-9._-]*$/, 'may contain only A-Z a-z 0-9 . _ -')
        .optional(),
      limit: Limit,
      cursor: TargetSchema.optional(),
    }),
  },
  responses: {
    200: json(
      z.object({ stores: z.array(StoreRow), total: z.number().int(), next_cursor: z.string().nullable() }),
      'A page of stores',
    ),
    ...errors,
  },
});

export const mastersRoute = createRoute({
  method: 'get',
  path: '/api/v1/masters',
  summary: 'Live masters (session-bound registrations)',
  responses: { 200: json(z.object({ masters: z.array(MasterInfoSchema) }), 'Masters'), ...errors },
});

export const workersRoute = createRoute({
  method: 'get',
  path: '/api/v1/workers',
  summary: 'Worker endpoints with their last scan result',
  responses: {
    200: json(
      z.object({
        workers: z.array(
          z.object({
            endpoint: z.string(),
            ok: z.boolean().nullable(),
            error: z.string().nullable(),
            last_scan_at: z.number().nullable(),
            stores: z.number().int(),
          }),
        ),
      }),
      'Workers',
    ),
  },
});

/** Every route of the API, in document order. */
export const ROUTES = [
  enqueueRoute,
  listTasksRoute,
  getTaskRoute,
  listCooldownsRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
  storesRoute,
  mastersRoute,
  workersRoute,
] as const;

/** The document's header: what `/api/v1/openapi.json` says about itself. */
export const OPENAPI_INFO = {
  openapi: '3.1.0',
  info: { title: 'maintd master API', version: '1' },
} as const;

/**
 * The OpenAPI 3.1 document of the master's API, built from the route definitions alone: no
 * store, no app, no network. The daemon serves this same document.
 */
export function openApiDocument(): ReturnType<OpenAPIHono['getOpenAPI31Document']> {
  const app = new OpenAPIHono();
  for (const route of ROUTES) app.openAPIRegistry.registerPath(route);
  return app.getOpenAPI31Document(OPENAPI_INFO);
}
