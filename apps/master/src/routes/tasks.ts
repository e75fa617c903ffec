import { type ListTasksQuery, type TaskKind, type TaskStore, ValidationError } from '@maintd/core';
import type { Metrics } from '@maintd/scheduler';
import { enqueueRoute, getTaskRoute, listTasksRoute } from '@maintd/api';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import { auditIntent } from '../http/audit-intent.js';
import { type AppEnv, operatorOf } from '../http/context.js';
import { sendJson } from '../http/json-bytes.js';
import { nextLinks } from '../http/next-link.js';
import { createRouter } from '../http/router.js';
import type { TaskLists } from '../task-lists.js';

/** `/api/v1/tasks`: enqueue, the paged list, one task. */
export function taskRoutes(deps: {
  readonly store: TaskStore;
  readonly metrics: Metrics;
  readonly lists: TaskLists;
  /** The kinds this master runs: the only ones it accepts at enqueue. */
  readonly runs: readonly TaskKind[];
  readonly logger: Logger;
}): OpenAPIHono<AppEnv> {
  const { store, metrics, lists, runs, logger } = deps;
  const withNextLink = nextLinks();
  return createRouter()
    .openapi(enqueueRoute, async (c) => {
      const body = c.req.valid('json');
      // A well-formed kind this master does not run would sit in the queue until a master that
      // runs it comes along: refused, so that a typo or a kind of a newer release fails loudly here.
      if (!runs.includes(body.kind)) {
        throw new ValidationError(`invalid kind: this master runs ${runs.join(', ')}, not '${body.kind}'`, {
          field: 'kind',
        });
      }
      // This master's own enqueue must be visible to its next task list read even before its
      // watch reports it; cleared whatever the outcome, since a failed call may have committed.
      const res = await store
        .enqueue(body.kind, body.target, {
          source: 'manual',
          // Who asked: the task's `manual_run` timeline event names them.
          by: operatorOf(c),
          // Recorded in the transaction that queues it (none on a dedupe hit: nothing commits).
          audit: auditIntent(c, enqueueRoute, 'task.enqueue', logger),
          ...(body.depends_on ? { dependsOn: body.depends_on } : {}),
        })
        .finally(() => lists.clear());
      if (res.created) metrics.enqueued.inc({ kind: body.kind, source: 'manual' });
      return res.created ? c.json(res.task, 202) : c.json(res.task, 200);
    })
    .openapi(listTasksRoute, async (c) => {
      const q = c.req.valid('query');
      const query: ListTasksQuery = {
        limit: q.limit,
        ...(q.state ? { state: q.state } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.target ? { target: q.target } : {}),
        ...(q.q !== undefined ? { q: q.q } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      };
      const page = await lists.read(query);
      return sendJson(c, page.body, 200, withNextLink(c.req.url, page.next, {}));
    })
    .openapi(getTaskRoute, async (c) => {
      const { id } = c.req.valid('param');
      const task = await store.getTask(id);
      if (!task) return c.json({ error: `task '${id}' not found` }, 404);
      return c.json(task, 200);
    });
}
