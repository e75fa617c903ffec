import { createHash, timingSafeEqual } from 'node:crypto';
import { OpenAPIHono, type z } from '@hono/zod-openapi';
import {
  ClaimLostError,
  type Clock,
  ClosedError,
  ContentionError,
  type CooldownPolicy,
  type Kv,
  type ParkRecord,
  StoreFullError,
  StoreUnavailableError,
  TASK_KINDS,
  type TaskCooldown,
  type TaskKind,
  type ListTasksQuery,
  type TaskStore,
  ValidationError,
} from '@maintd/core';
import { type Metrics, type WorkerStatus } from '@maintd/scheduler';
import {
  type CooldownView,
  MAX_BODY_BYTES,
  type MaintdEvent,
  cooldownView,
  enqueueRoute,
  eventsRoute,
  getTaskRoute,
  healthRoute,
  listCooldownsRoute,
  listTasksRoute,
  mastersRoute,
  metricsRoute,
  openApiDocument,
  openApiRoute,
  parkRoute,
  policyRoute,
  policyView,
  readyRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
  storesRoute,
  workersRoute,
} from '@maintd/scheduler/api';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { routePath } from 'hono/route';
import { streamSSE } from 'hono/streaming';
import type { Logger } from 'pino';
import { CooldownIndex, type CooldownPage, type CooldownPageQuery, LOCAL_REVISION } from './cooldown-index.js';
import type { EventHub } from './events.js';
/** Events buffered for one slow `/events` client before it is cut off (it reconnects and re-reads). */
const SSE_BUFFER_LIMIT = 1000;
const SSE_HEARTBEAT_MS = 15_000;
/** Longest an event stream's hello, or a task list read, waits for the task watch it opened. */
const TASK_WATCH_WAIT_MS = 2000;
const READY_TIMEOUT_MS = 2000;
const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** Everything the HTTP API needs; `main.ts` wires the real ones. */
export interface AppDeps {
  readonly store: TaskStore;
  readonly kv: Kv;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** MASTER_API_TOKEN; unset = only loopback clients may mutate. */
  readonly apiToken: string | undefined;
  /** The configured workers with the fleet's latest scan of each (a store read). */
  readonly workers?: () => Promise<readonly WorkerStatus[]>;
  readonly events?: EventHub;
  /** The cooldown policy this master runs (its `TASK_COOLDOWN_*` settings); default the store's. */
  readonly policy?: CooldownPolicy;
}

/** Connection details @hono/node-server passes as the app's environment. */
interface NodeBindings {
  readonly incoming?: { readonly socket?: { readonly remoteAddress?: string } };
}
/** Set by the mutation guard: whether the bearer token authenticated this request. */
type Variables = { viaToken: boolean };
type Env = { Bindings: NodeBindings; Variables: Variables };

/**
 * The master's HTTP API (DESIGN §3.4) as a Hono app, independent of how it is served: tests
 * call `app.request()`, `main.ts` serves it with @hono/node-server.
 */
export function createApp(deps: AppDeps): OpenAPIHono<Env> {
  const { store, metrics, logger } = deps;
  const app = new OpenAPIHono<Env>({
    defaultHook: (result, c) => {
      if (!result.success) return c.json({ error: describeZodError(result.error) }, 400);
      return undefined;
    },
  });

  // The cheapest read there is (a count-only get inside the prefix): proof that etcd answers now.
  const reads = new ReadCache(
    deps.events,
    () => deps.kv.revision(`${store.keys.prefix}/`),
    () => deps.clock.now(),
  );
  app.use('*', httpMetrics(metrics));
  // This master's own mutations must be visible to its next read even before the watch reports them.
  app.use('/api/v1/*', async (c, next) => {
    await next();
    if (MUTATING.has(c.req.method)) reads.clear();
  });
  const tooLarge = (c: Context<Env>): Response => c.json({ error: `request body over ${MAX_BODY_BYTES} bytes` }, 413);
  const limitBody: MiddlewareHandler<Env> = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  // Only where a body can matter, and from the declared length when there is one: hono's
  // bodyLimit touches `raw.body`, which makes the Node adapter build a whole fetch Request and
  // stream per call (a tenth of an enqueue's CPU, profiled) instead of reading the body straight
  // off the socket. Node's parser reads exactly the declared length, so the header is the bound.
  const limitMutations: MiddlewareHandler<Env> = async (c, next) => {
    if (!MUTATING.has(c.req.method)) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined && /^\d{1,15}$/.test(declared)) {
      return Number(declared) > MAX_BODY_BYTES ? tooLarge(c) : next();
    }
    return limitBody(c, next);
  };
  app.use('/api/v1/*', limitMutations);
  app.use('/api/v1/*', mutationGuard(deps.apiToken));

  app.openapi(enqueueRoute, async (c) => {
    const body = c.req.valid('json');
    const res = await store.enqueue(body.kind, body.target, {
      source: 'manual',
      ...(body.depends_on ? { dependsOn: body.depends_on } : {}),
    });
    if (res.created) metrics.enqueued.inc({ kind: body.kind, source: 'manual' });
    return res.created ? c.json(res.task, 202) : c.json(res.task, 200);
  });

  const sharedTasks = reads.cached('task', async (query: string) => {
    const page = await store.listTasks(JSON.parse(query) as ListTasksQuery);
    return {
      text: JSON.stringify({ tasks: page.tasks, total: page.total, next_cursor: page.nextCursor }),
      next: page.nextCursor,
    };
  });
  app.openapi(listTasksRoute, async (c) => {
    const q = c.req.valid('query');
    const query: ListTasksQuery = {
      limit: q.limit,
      ...(q.state ? { state: q.state } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.target ? { target: q.target } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
    };
    const hub = deps.events;
    if (hub) {
      const live = hub.tasksLive;
      hub.wantTasks();
      // The first read after a quiet spell waits (briefly) for the task watch it opened: until
      // it is up nothing can be kept, and a burst of readers would each build the list anew.
      if (!live) await withTimeout(deps.clock, hub.tasksWatched(), TASK_WATCH_WAIT_MS).catch(() => undefined);
    }
    const page = await sharedTasks(JSON.stringify(query));
    return c.body(page.body, 200, withNextLink(c.req.url, page.next, JSON_TYPE)) as never;
  });

  app.openapi(getTaskRoute, async (c) => {
    const { id } = c.req.valid('param');
    const task = await store.getTask(id);
    if (!task) return c.json({ error: `task '${id}' not found` }, 404);
    return c.json(task, 200);
  });

  const hub = deps.events;
  /** The watch-maintained index, when it can be trusted (its watches are up). */
  const liveIndex = (): CooldownIndex | undefined => (hub?.live ? hub.cooldowns : undefined);
  /**
   * An index to serve the cooldown lists from: the live one after a store round trip (the list
   * rule), else one built from a read of both prefixes (no watch: nothing can be kept).
   */
  const cooldownIndex = async (kind: TaskKind | undefined): Promise<CooldownIndex> => {
    const live = liveIndex();
    if (live) {
      await reads.reachable();
      return live;
    }
    const filter = kind ? { kind } : {};
    const [cooldowns, parks] = await Promise.all([
      store.listCooldowns({ ...filter, all: true }),
      store.listParks(filter),
    ]);
    return CooldownIndex.from(cooldowns, parks);
  };

  const sharedCooldowns = reads.cached('cooldown', async (kind: string, all: boolean) => {
    const k = kind ? (kind as TaskKind) : undefined;
    const index = await cooldownIndex(k);
    const now = deps.clock.now();
    return { text: JSON.stringify(index.list(k, all, now)), next: null, validUntil: index.validUntil(now) };
  });
  app.openapi(listCooldownsRoute, async (c) => {
    const q = c.req.valid('query');
    if (q.limit === undefined) {
      // Without `limit` the answer is the whole list, as before paging existed: paging options
      // would be silently ignored, so they are refused instead.
      for (const [field, value] of [
        ['cursor', q.cursor],
        ['state', q.state],
        ['sort', q.sort],
      ] as const) {
        if (value !== undefined) throw new ValidationError(`invalid ${field}: needs limit (a paged list)`, { field });
      }
      const list = await sharedCooldowns(q.kind ?? '', q.all ?? false);
      return c.body(list.body, 200, JSON_TYPE) as never;
    }
    if (q.all !== undefined) {
      throw new ValidationError('invalid all: a paged list filters with state instead', { field: 'all' });
    }
    const query: CooldownPageQuery = { limit: q.limit, cursor: q.cursor, kind: q.kind, state: q.state, sort: q.sort };
    const page: CooldownPage = (await cooldownIndex(q.kind)).page(query, deps.clock.now());
    return c.body(
      page.body,
      200,
      withNextLink(c.req.url, page.nextCursor, { ...JSON_TYPE, 'x-total-count': String(page.total) }),
    ) as never;
  });

  app.openapi(parkRoute, async (c) => {
    const { kind, target } = c.req.valid('param');
    const body = c.req.valid('json');
    const now = deps.clock.now();
    let untilMs: number | null = null;
    if (body.until !== undefined) {
      untilMs = Date.parse(body.until);
      if (!(untilMs > now)) {
        throw new ValidationError(`invalid until: must be in the future (now is ${new Date(now).toISOString()})`, {
          field: 'until',
        });
      }
    }
    const address = remoteAddress(c) ?? 'unknown';
    const by = c.get('viaToken') ? `token@${address}` : address;
    const park: ParkRecord = await store.park(kind, target, { reason: body.reason, by, untilMs });
    const cooldown: TaskCooldown | undefined = await store.getCooldown(kind, target);
    // This master's next read shows the park even before its watch reports it.
    hub?.cooldowns.applyPark(kind, target, park, LOCAL_REVISION);
    logger.info({ kind, target, reason: park.reason, by, until_ms: park.until_ms }, 'target parked by operator');
    return c.json(cooldownView(cooldown, park, now)!, 200);
  });

  app.openapi(resetCooldownRoute, async (c) => {
    const { kind, target } = c.req.valid('param');
    const [cleared, released] = await Promise.all([store.clearCooldown(kind, target), store.unpark(kind, target)]);
    if (!cleared && !released) {
      return c.json({ error: `no cooldown or park for ${kind} '${target}'` }, 404);
    }
    if (cleared) {
      hub?.cooldowns.applyCooldown(kind, target, undefined, LOCAL_REVISION);
      metrics.cooldownCleared.inc({ kind, reason: 'operator' });
      logger.info({ kind, target }, 'cooldown reset by operator');
    }
    if (released) {
      hub?.cooldowns.applyPark(kind, target, undefined, LOCAL_REVISION);
      logger.info({ kind, target }, 'target released by operator');
    }
    return c.json({ deleted: Number(cleared) + Number(released) }, 200);
  });

  app.openapi(resetCooldownsRoute, async (c) => {
    const { kind } = c.req.valid('query');
    // Kind by kind, even for all of them: master_cooldown_cleared_total counts per kind.
    let deleted = 0;
    for (const k of kind ? [kind] : TASK_KINDS) {
      const n = await store.clearCooldowns(k);
      if (n > 0) metrics.cooldownCleared.inc({ kind: k, reason: 'operator' }, n);
      deleted += n;
    }
    hub?.cooldowns.clearCooldowns(kind);
    if (deleted > 0) logger.info({ kind: kind ?? 'all', deleted }, 'cooldowns reset by operator');
    return c.json({ deleted }, 200);
  });

  const policy = policyView(deps.policy ?? store.policy, store.masterId);
  app.openapi(policyRoute, (c) => c.json(policy, 200));

  app.openapi(storesRoute, async (c) => {
    const q = c.req.valid('query');
    const [rows, cooldowns, parks] = await Promise.all([
      store.listStats(),
      store.listCooldowns({ all: true }),
      store.listParks(),
    ]);
    const byTarget = new Map<string, CooldownView[]>();
    for (const view of CooldownIndex.from(cooldowns, parks).list(undefined, true, deps.clock.now())) {
      byTarget.set(view.target, [...(byTarget.get(view.target) ?? []), view]);
    }
    const matching = rows
      .filter((r) => !q.search || r.name.toLowerCase().includes(q.search.toLowerCase()))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const start = q.cursor ? matching.findIndex((r) => r.name > q.cursor!) : 0;
    const from = start < 0 ? matching.length : start;
    const page = matching.slice(from, from + q.limit);
    const nextCursor = matching[from + q.limit] ? page.at(-1)!.name : null;
    return c.json(
      {
        stores: page.map((r) => ({ ...r, cooldowns: byTarget.get(r.name) ?? [] })),
        total: matching.length,
        next_cursor: nextCursor,
      },
      200,
      withNextLink(c.req.url, nextCursor, {}),
    );
  });

  app.openapi(mastersRoute, async (c) => c.json({ masters: await store.listMasters() }, 200));

  app.openapi(workersRoute, async (c) => c.json({ workers: [...((await deps.workers?.()) ?? [])] }, 200));

  app.openapi(eventsRoute, (c) => {
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
        await withTimeout(deps.clock, hub.tasksWatched(), TASK_WATCH_WAIT_MS).catch(() => undefined);
        await stream.writeSSE({ event: 'hello', data: JSON.stringify({ master_id: store.masterId }) });
        while (!closed.signal.aborted && !overflow) {
          const e = queue.shift();
          if (e) {
            await stream.writeSSE({ event: e.type, id: String(e.revision), data: JSON.stringify(e) });
            continue;
          }
          const heartbeat = new AbortController();
          await Promise.race([
            new Promise<void>((resolve) => (wake = resolve)),
            deps.clock.sleep(SSE_HEARTBEAT_MS, heartbeat.signal).then(
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

  app.openapi(healthRoute, (c) => c.json({ status: 'ok' as const }, 200));

  app.openapi(readyRoute, async (c) => {
    const session = store.session.alive;
    const reachable = await withTimeout(deps.clock, deps.kv.revision(`${store.keys.prefix}/`), READY_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
    const ready = session && reachable;
    const body = {
      ready,
      store: reachable ? ('ok' as const) : ('unavailable' as const),
      session: session ? ('held' as const) : ('lost' as const),
    };
    return ready ? c.json(body, 200) : c.json(body, 503);
  });

  app.openapi(metricsRoute, async (c) => {
    // Parks lapse with time, without an event: counted when scraped. Without a live index the
    // gauge keeps its last values (a scrape never waits for etcd).
    const index = liveIndex();
    if (index) {
      for (const [kind, n] of Object.entries(index.parkedCounts(deps.clock.now()))) metrics.parked.set({ kind }, n);
    }
    metrics.sessionHeld.set(store.session.alive ? 1 : 0);
    const text = await metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': metrics.registry.contentType });
  });

  const document = JSON.stringify(openApiDocument());
  app.openapi(openApiRoute, (c) => c.body(document, 200, JSON_TYPE) as never);

  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));

  app.onError((err, c) => {
    if (err instanceof HTTPException) {
      const status = err.status;
      const message =
        status === 400 && /json/i.test(err.message) ? 'invalid JSON body' : err.message || 'request rejected';
      return c.json({ error: message }, status);
    }
    if (err instanceof ValidationError) return c.json({ error: err.message }, 400);
    if (err instanceof StoreFullError) {
      return c.json(
        { error: 'etcd is out of space and refuses writes until an operator compacts, defragments and disarms it' },
        503,
      );
    }
    if (err instanceof StoreUnavailableError || err instanceof ClosedError) {
      return c.json({ error: 'the store (etcd) is unavailable; retry later' }, 503);
    }
    if (err instanceof ContentionError) return c.json({ error: 'too much contention on this record; retry' }, 503);
    if (err instanceof ClaimLostError) return c.json({ error: err.message }, 409);
    logger.error({ err, method: c.req.method, path: new URL(c.req.url).pathname }, 'request failed');
    return c.json({ error: 'internal error' }, 500);
  });

  return app;
}

const UTF8 = new TextEncoder();

/** A list response encoded once, with the cursor of the next page (null: last page, or unpaged). */
interface SharedBody {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly next: string | null;
  /** Until when (ms) it holds without a change (Infinity: until the watch reports one). */
  readonly validUntil: number;
}

/**
 * `headers` plus, when a next page exists, its `Link` (RFC 8288): the request's own path and
 * query with `cursor` replaced, the convention of every paged list.
 */
function withNextLink(
  requestUrl: string,
  nextCursor: string | null,
  headers: Record<string, string>,
): Record<string, string> {
  if (nextCursor === null) return headers;
  const url = new URL(requestUrl);
  url.searchParams.set('cursor', nextCursor);
  return { ...headers, link: `<${url.pathname}${url.search}>; rel="next"` };
}

/**
 * Serialised list responses, shared by concurrent readers and kept until the event watch reports
 * a change of their kind (the informer pattern): a fleet of dashboards polling the same lists
 * costs one etcd read per change, not one per request, and never sees data older than the
 * watch. Without a live watch, identical concurrent requests still share one read, but nothing
 * is kept. Bodies are kept encoded so that every response writes the same bytes: a string is
 * re-encoded into a fresh buffer per response, and under `pnpm bench:master` (50 readers of the
 * 3 MB cooldown list) those copies took the master from about 175 MB to 357 MB RSS, against
 * 174–247 MB encoded once.
 *
 * The rule for every list (`LIST_RULE` in the route definitions): a body is served only after a
 * store round trip made during the request succeeded. A read still in flight is one; a kept body
 * waits for a probe (a count-only get, shared by the requests that arrive while it is in flight).
 * The watch alone cannot vouch for a kept body: etcd3 re-dials a broken watch stream without
 * reporting an error, so the hub stays "live" through an outage and would serve stale lists with
 * a 200 while every other route answers 503.
 */
class ReadCache {
  static readonly MAX_ENTRIES = 64;
  readonly #hub: EventHub | undefined;
  readonly #probe: () => Promise<unknown>;
  readonly #now: () => number;
  readonly #entries = new Map<
    string,
    { generation: number; body: Promise<SharedBody>; settled: boolean; builtAt: number; validUntil: number }
  >();
  #probing: Promise<void> | undefined;

  /** `now`: the clock a kept list's time limit (`validUntil` of its compute) is checked against. */
  constructor(hub: EventHub | undefined, probe: () => Promise<unknown>, now: () => number) {
    this.#hub = hub;
    this.#probe = probe;
    this.#now = now;
    hub?.onChange((kind) => {
      for (const key of this.#entries.keys()) if (key.startsWith(`${kind}:`)) this.#entries.delete(key);
    });
  }

  clear(): void {
    this.#entries.clear();
  }

  /**
   * A shared, kept version of `compute`. A computed list may say until when it holds
   * (`validUntil`: a cooldown window ends or a park lapses without any write, so without any
   * event); past that it is computed again.
   */
  cached<A extends (string | boolean)[]>(
    kind: 'task' | 'cooldown',
    compute: (
      ...args: A
    ) => Promise<{ readonly text: string; readonly next: string | null; readonly validUntil?: number }>,
  ): (...args: A) => Promise<SharedBody> {
    return (...args) => {
      const key = `${kind}:${JSON.stringify(args)}`;
      // Task lists are kept only while the task watch (opened on demand) is up to drop them.
      const live = (kind === 'task' ? this.#hub?.tasksLive : this.#hub?.live) ?? false;
      const generation = (kind === 'task' ? this.#hub?.taskGeneration : this.#hub?.generation) ?? -1;
      const now = this.#now();
      const hit = this.#entries.get(key);
      if (hit && hit.generation === generation && hit.builtAt <= now && now < hit.validUntil) {
        return hit.settled ? this.reachable().then(() => hit.body) : hit.body;
      }
      const body = compute(...args).then(({ text, next, validUntil }) => ({
        body: UTF8.encode(text),
        next,
        validUntil: validUntil ?? Infinity,
      }));
      const entry = { generation, body, settled: false, builtAt: now, validUntil: Infinity };
      this.#entries.set(key, entry);
      const drop = (): void => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      };
      // Without a live watch only the in-flight read is shared; failures are never kept.
      body.then((kept) => {
        entry.settled = true;
        entry.validUntil = kept.validUntil;
        if (!live) drop();
      }, drop);
      if (this.#entries.size > ReadCache.MAX_ENTRIES) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      return body;
    };
  }

  /**
   * Resolves once a store probe in flight now (or started now) succeeds; rejects with its error.
   * What a list served from memory awaits first (the list rule).
   */
  reachable(): Promise<void> {
    this.#probing ??= this.#probe().then(
      () => {
        this.#probing = undefined;
      },
      (err: unknown) => {
        this.#probing = undefined;
        throw err;
      },
    );
    return this.#probing;
  }
}

/** Counts and times every request by its route template (never the raw path: bounded labels). */
function httpMetrics(metrics: Metrics): MiddlewareHandler<Env> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    let route = 'unmatched';
    try {
      route = routePath(c);
    } catch {
      // No route matched.
    }
    if (route === '/*' || route === '*') route = 'unmatched';
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    metrics.httpDuration.observe({ method: c.req.method, route }, (performance.now() - start) / 1000);
  };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Mutations need the bearer token when one is configured (compared in constant time); without
 * one, only loopback clients may mutate. Reads are open.
 */
function mutationGuard(token: string | undefined): MiddlewareHandler<Env> {
  const expected = token ? digest(token) : undefined;
  return async (c, next) => {
    if (!MUTATING.has(c.req.method)) return next();
    if (expected) {
      const header = c.req.header('authorization') ?? '';
      const given = /^Bearer (.+)$/i.exec(header)?.[1] ?? '';
      if (!timingSafeEqual(digest(given), expected)) {
        return c.json({ error: 'missing or invalid bearer token' }, 401, { 'www-authenticate': 'Bearer' });
      }
      c.set('viaToken', true);
      return next();
    }
    if (!isLoopback(remoteAddress(c))) {
      return c.json({ error: 'mutations are allowed only from loopback while MASTER_API_TOKEN is unset' }, 403);
    }
    return next();
  };
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function remoteAddress(c: Context<Env>): string | undefined {
  return (c.env as NodeBindings | undefined)?.incoming?.socket?.remoteAddress;
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  return `invalid ${field}: ${issue.message}`;
}

async function withTimeout<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p,
      clock.sleep(ms, timer.signal).then(() => {
        throw new StoreUnavailableError(`no answer within ${ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}
