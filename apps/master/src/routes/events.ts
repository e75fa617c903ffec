import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock } from '@maintd/core';
import { type MaintdEvent, eventsRoute } from '@maintd/api';
import { streamSSE } from 'hono/streaming';
import type { EventHub } from '../events.js';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** Events buffered for one slow `/events` client before it is cut off (it reconnects and re-reads). */
const SSE_BUFFER_LIMIT = 1000;
const SSE_HEARTBEAT_MS = 15_000;

/** `/api/v1/events`: the event hub's changes as server-sent events, one stream per client. */
export function eventRoutes(deps: {
  readonly hub: EventHub | undefined;
  readonly clock: Clock;
  readonly masterId: string;
}): OpenAPIHono<AppEnv> {
  const { hub, clock, masterId } = deps;
  return createRouter().openapi(eventsRoute, (c) => {
    // Hono answers HEAD with the GET handler and drops the body unread: a stream would never
    // see its client go, and its subscription would leak.
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'content-type': 'text/event-stream' });
    if (!hub) return c.json({ error: 'events are not available on this master' }, 503);
    return streamSSE(c, async (stream) => {
      const queue: MaintdEvent[] = [];
      let wake: (() => void) | undefined;
      let overflow = false;
      const unsubscribe = hub.subscribe((e) => {
        if (queue.length >= SSE_BUFFER_LIMIT) overflow = true;
        else queue.push(e);
        wake?.();
      });
      const closed = new AbortController();
      stream.onAbort(() => {
        closed.abort();
        wake?.();
      });
      try {
        // The task watch opens for the first stream: hello waits for it (a moment, or as long
        // as etcd is away, within a bound), so no task change after hello goes unstreamed.
        await hub.tasksWatched();
        await stream.writeSSE({ event: 'hello', data: JSON.stringify({ master_id: masterId }) });
        while (!closed.signal.aborted && !overflow) {
          const e = queue.shift();
          if (e) {
            await stream.writeSSE({ event: e.type, id: String(e.revision), data: JSON.stringify(e) });
            continue;
          }
          const heartbeat = new AbortController();
          await Promise.race([
            new Promise<void>((resolve) => (wake = resolve)),
            clock.sleep(SSE_HEARTBEAT_MS, heartbeat.signal).then(
              () => stream.write(': keepalive\n\n'),
              () => undefined,
            ),
          ]);
          heartbeat.abort();
          wake = undefined;
        }
        if (overflow) await stream.writeSSE({ event: 'overflow', data: '{"error":"client too slow; reconnect"}' });
      } finally {
        unsubscribe();
      }
    });
  });
}
