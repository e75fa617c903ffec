import { type Clock, TaskKindSchema } from '@maintd/core';
import { type EventSourceMessage, createParser } from 'eventsource-parser';
import { z } from 'zod';
import { sanitizeDeep, sanitizeText } from '../sanitize.js';
import { parseAuditEvent } from './audit.js';
import { ConnectionError, connectionError } from './client.js';
import type { MaintdEvent } from './types.js';

/** A change the master reports over `GET /api/v1/events` (its `MaintdEvent`), sanitised. */
export type { MaintdEvent };

// The payloads' types come from the OpenAPI document; at run time they are checked here, loosely:
// enough that a malformed event is dropped instead of corrupting the screen; extra fields pass.
// A kind is any well-formed name: a newer master's kind is shown, not dropped. Likewise the enums a
// later release may extend (task state and source, cooldown state, error class) take any string:
// a dropped event would leave its row stale, so the views show a value they do not know verbatim
// (docs/ARCHITECTURE.md §2.8: masters gate what they write, readers tolerate what they read).
const Kind = TaskKindSchema;
const OpenEnum = z.string().min(1);
const TaskShape = z.looseObject({
  id: z.string(),
  kind: Kind,
  target: z.string(),
  state: OpenEnum,
  source: OpenEnum,
  enqueued_at: z.number(),
  attempt: z.number(),
});
const ParkShape = z.looseObject({
  reason: z.string(),
  by: z.string(),
  parked_at_ms: z.number(),
  parked_at: z.string(),
  until_ms: z.number().nullable(),
  until: z.string().nullable(),
});
const CooldownShape = z.looseObject({
  kind: Kind,
  target: z.string(),
  state: OpenEnum,
  failures: z.number(),
  until_ms: z.number().nullable(),
  until: z.string().nullable(),
  last_error: z.string(),
  // Absent for a park with no failure record.
  last_error_class: OpenEnum.optional(),
  first_failure_ms: z.number().optional(),
  last_failure_ms: z.number().optional(),
  last_task_id: z.string().optional(),
  parked: ParkShape.optional(),
  // Absent from a master that predates it: unknown, not false.
  gating: z.boolean().optional(),
});
// A timeline event's `type` is data: one of a later release is shown as it comes.
const TimelineShape = z.looseObject({
  id: z.string(),
  kind: Kind,
  target: z.string(),
  type: OpenEnum,
  at_ms: z.number(),
  task_id: z.string().optional(),
  error: z.string().optional(),
  error_class: OpenEnum.optional(),
  failures: z.number().optional(),
  window_ms: z.number().optional(),
  until_ms: z.number().nullable().optional(),
  by: z.string().optional(),
  reason: z.string().optional(),
});
const EventShape = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task'), revision: z.number(), task: TaskShape }),
  z.object({ type: z.literal('task_deleted'), revision: z.number(), id: z.string() }),
  z.object({
    type: z.literal('cooldown'),
    revision: z.number(),
    kind: Kind,
    target: z.string(),
    cooldown: CooldownShape.nullable(),
  }),
  z.object({ type: z.literal('timeline'), revision: z.number(), event: TimelineShape }),
]);

/**
 * Parses the data of a `task`, `task_deleted`, `cooldown`, `timeline` or `audit` event; undefined
 * when malformed. A master that predates the audit trail (0.1.0) sends no `audit` event.
 */
export function parseMaintdEvent(data: string): MaintdEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return undefined;
  }
  if ((json as { type?: unknown } | null)?.type === 'audit') return parseAuditEvent(json);
  const parsed = EventShape.safeParse(json);
  // The document's types name today's enum values; a later release's pass here as they do in a
  // REST answer, and every view handles a value outside them.
  return parsed.success ? (sanitizeDeep(parsed.data) as MaintdEvent) : undefined;
}

/** What one event-stream connection reports. */
export interface EventStreamHandlers {
  /** The master accepted the stream (`hello`): from now on every change arrives. */
  readonly onOpen: (masterId: string | undefined) => void;
  readonly onEvent: (event: MaintdEvent) => void;
  /** After the events of one read were reported: a batch, to apply as one change. */
  readonly onBatch?: () => void;
}

/** Settings of {@link readEventStream}. */
export interface EventStreamOptions {
  readonly url: string;
  readonly token?: string | undefined;
  /** Deadline for the response headers. */
  readonly connectTimeoutMs: number;
  /**
   * Silence after which the stream counts as dead: the master sends a keepalive every 15 s, so a
   * longer silence means a half-open connection (the master's host vanished), not a quiet fleet.
   */
  readonly idleTimeoutMs: number;
  /** Times both deadlines. */
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly fetch?: typeof fetch;
  /**
   * A pause after each read, on `clock`, before the next: what arrives meanwhile waits in the
   * socket and comes in one read. Each read of fetch's body costs about the same for one event as
   * for fifty (its web stream, the socket read, the HTTP parser), so 100 events a second read
   * every 50 ms cost a fraction of reading each on its own. Default 0: read as data comes.
   */
  readonly paceMs?: number;
}

/** Why an event stream ended. */
export type StreamEnd = 'closed' | 'overflow' | 'aborted';

/**
 * Reads `GET /api/v1/events` until it ends: resolves with why (`overflow` = the master cut a slow
 * client off; reconnect and re-read), rejects with a {@link ConnectionError} when it cannot
 * connect, goes silent, or breaks. Node 20 has no EventSource, so the stream is fetched here and
 * parsed by eventsource-parser; a `retry:` field is ignored (the caller paces reconnects).
 */
export async function readEventStream(options: EventStreamOptions, handlers: EventStreamHandlers): Promise<StreamEnd> {
  const f = options.fetch ?? globalThis.fetch;
  const { clock } = options;
  const local = new AbortController();
  const signal = AbortSignal.any([options.signal, local.signal]);
  // One watchdog for both deadlines: every chunk only moves `deadline`, so a busy stream costs no
  // timer per chunk; the watchdog sleeps again until the latest deadline has really passed.
  let deadline = clock.now() + options.connectTimeoutMs;
  let idleFired = false;
  const watchdog = (async () => {
    for (let left = deadline - clock.now(); left > 0; left = deadline - clock.now()) await clock.sleep(left, signal);
    idleFired = true;
    local.abort();
  })().catch(() => undefined); // `signal` aborted: the stream ended first
  try {
    const res = await f(`${options.url.replace(/\/+$/, '')}/api/v1/events`, {
      headers: { accept: 'text/event-stream', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
      signal,
    });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw new ConnectionError(`events: HTTP ${res.status}`);
    }
    deadline = clock.now() + options.idleTimeoutMs;
    // The parser reports events through a callback; they are collected per chunk and handled
    // after it, where an `overflow` can end the read.
    const batch: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => batch.push(m) });
    const decoder = new TextDecoder();
    const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'closed';
      deadline = clock.now() + options.idleTimeoutMs;
      parser.feed(decoder.decode(value, { stream: true }));
      for (const m of batch.splice(0)) {
        if (m.event === 'hello') handlers.onOpen(helloMaster(m.data));
        else if (m.event === 'overflow') {
          await reader.cancel().catch(() => undefined);
          return 'overflow';
        } else {
          const e = parseMaintdEvent(m.data);
          if (e) handlers.onEvent(e);
        }
      }
      handlers.onBatch?.();
      if (options.paceMs) await clock.sleep(options.paceMs, signal);
    }
  } catch (err) {
    if (options.signal.aborted) return 'aborted';
    if (idleFired) throw new ConnectionError('events: no data (not even a keepalive) in time', { cause: err });
    throw connectionError(err, options.connectTimeoutMs, options.url);
  } finally {
    local.abort();
    await watchdog;
  }
}

function helloMaster(data: string): string | undefined {
  try {
    const v = JSON.parse(data) as { master_id?: unknown };
    return typeof v.master_id === 'string' ? sanitizeText(v.master_id) : undefined;
  } catch {
    return undefined;
  }
}
