/** The task routes of the master's API (docs/ARCHITECTURE.md §3.4): enqueue, list, read one. */
import { createRoute, z } from '@hono/zod-openapi';
import { TargetSchema, TaskKindSchema, TaskStateSchema } from '@maintd/core';
import {
  ErrorSchema,
  LIST_RULE,
  MUTATION_SECURITY,
  OPEN,
  PAGING_RULE,
  errors,
  json,
  mutationErrors,
  mutationQuery,
  pageHeaders,
} from '../contract.js';
import { Count, Limit, NextCursor, Task, TaskId } from '../schemas/common.js';

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
    query: mutationQuery({}),
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
  description: `One page of tasks matching the filters (\`state\`, \`kind\`, \`target\`, and \`q\`, a search of the store name and the error), newest first; follow \`next_cursor\` (or the \`Link\` header) for the next page. ${PAGING_RULE} ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      state: TaskStateSchema.optional().describe('Only tasks in this state'),
      kind: TaskKindSchema.optional().describe('Only tasks of this kind'),
      target: TargetSchema.optional().describe('Only tasks of this store'),
      q: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          "Only tasks whose store name or `error` contains this text, ignoring case (1–200 characters); `total` and the pages count only those. A master older than this parameter ignores it: check the master's version before relying on it",
        ),
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
