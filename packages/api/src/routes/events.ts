/** The event stream route of the master's API (docs/ARCHITECTURE.md §3.4). */
import { createRoute } from '@hono/zod-openapi';
import { ErrorSchema, OPEN, json } from '../contract.js';
import { EventMessageSchema } from '../events.js';

export const eventsRoute = createRoute({
  method: 'get',
  path: '/api/v1/events',
  operationId: 'streamEvents',
  tags: ['events'],
  summary: 'Stream task, cooldown, park, timeline and audit changes',
  description:
    "Server-sent events from this master's etcd watch of tasks, cooldowns and parks. The stream opens with a `hello` event, then sends one `task`, `task_deleted` or `cooldown` event per change, one `timeline` event per event added to a store's timeline, and one `audit` event per audit entry written (a bulk action's again as its count grows) (`id:` is the etcd revision) and a `: keepalive` comment after 15 seconds without one. A client more than 1000 events behind gets an `overflow` event and the stream ends: reconnect and re-read the lists. Events carry no history: read the lists after `hello` to start from a consistent view.",
  security: OPEN,
  responses: {
    200: {
      description: 'The event stream (`text/event-stream`)',
      content: { 'text/event-stream': { schema: EventMessageSchema } },
    },
    503: json(ErrorSchema, 'This master serves no event stream'),
  },
});
