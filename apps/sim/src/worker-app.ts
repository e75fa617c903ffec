import type { Clock, Random, TaskKind } from '@maintd/core';
import { KIND_NAMES, kindSpec } from '@maintd/scheduler';
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Fleet, SimReply } from './fleet.js';
import { AbandonedError, MergeExecutor, type MergeExecutorObserver } from './merge-executor.js';

/** Misbehaviour knobs of one simulated worker. */
export interface WorkerKnobs {
  /** Extra latency added to every call, ms. */
  readonly latencyMs?: number;
  /** Probability that a per-store call (merge, compaction, index build) answers 503 instead of working. */
  readonly flakyRate?: number;
  /** Per-store calls never answer. */
  readonly hang?: boolean;
  /** Randomness for flakiness. */
  readonly random?: Random;
  /**
   * Merges this worker runs at once; the others queue (see {@link MergeExecutor}). Default
   * unbounded: every call is answered at its own latency.
   */
  readonly mergeConcurrency?: number;
  /** Watches the merge executor (busy time, abandoned calls). */
  readonly mergeObserver?: MergeExecutorObserver;
}

/** A worker's answer to one call. */
export interface WorkerAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** One simulated worker: the worker protocol (docs/ARCHITECTURE.md §3.3) over the shared fleet, without HTTP. */
export interface SimWorker {
  /**
   * Answers `method path` after the call's latency on the worker's clock. `signal` aborts when
   * the caller goes away (a client disconnect); a merge still queued is then dropped.
   */
  handle(method: string, path: string, signal?: AbortSignal): Promise<WorkerAnswer>;
}

const STORE_ROUTE = /^\/api\/v1\/internal\/([^/]+)\/([^/]+)$/;

/**
 * The kind each per-store route runs, from the scheduler's registry: a kind added there is served
 * here with no change of this file (as a plain success, until the fleet models it).
 */
const ROUTE_KINDS: ReadonlyMap<string, TaskKind> = new Map(KIND_NAMES.map((k) => [kindSpec(k).route, k]));

/** Simulated worker `index` of the fleet. */
export function createSimWorker(fleet: Fleet, index: number, clock: Clock, knobs: WorkerKnobs = {}): SimWorker {
  const executor = new MergeExecutor(clock, index, knobs.mergeConcurrency, knobs.mergeObserver);
  const extra = knobs.latencyMs ?? 0;
  const reply = async (r: SimReply): Promise<WorkerAnswer> => {
    // No sleeper for an instant answer: most merge calls are 404s from workers without a shard.
    if (r.latencyMs + extra > 0) await clock.sleep(r.latencyMs + extra);
    return { status: r.status, body: r.body };
  };
  const merge = async (name: string, signal: AbortSignal | undefined): Promise<WorkerAnswer> => {
    // A worker that holds no shard answers at once; only real merges take an executor slot.
    if (!fleet.owns(index, name)) return reply(fleet.merge(index, name));
    try {
      const r = await executor.run(name, () => fleet.merge(index, name), signal);
      if (extra > 0) await clock.sleep(extra);
      return { status: r.status, body: r.body };
    } catch (err) {
      if (!(err instanceof AbandonedError)) throw err;
      // Nobody reads this answer: the caller has gone.
      return { status: 503, body: { error: err.message } };
    }
  };
  const misbehave = (): Promise<WorkerAnswer> | undefined => {
    if (knobs.hang) return new Promise<WorkerAnswer>(() => undefined);
    if (knobs.flakyRate && (knobs.random?.next() ?? 1) < knobs.flakyRate) {
      return reply({ status: 503, body: { error: 'worker overloaded; try again' }, latencyMs: 5 });
    }
    return undefined;
  };
  return {
    handle: (method, path, signal) => {
      if (method === 'GET' && path === '/api/v1/internal/stores') return reply(fleet.report(index));
      if (method === 'GET' && path === '/healthz')
        return Promise.resolve({ status: 200, body: { status: 'ok', worker: index } });
      const m = method === 'POST' ? STORE_ROUTE.exec(path) : null;
      const kind = m ? ROUTE_KINDS.get(m[1]!) : undefined;
      const name = m ? decodeName(m[2]!) : undefined;
      if (kind === undefined || name === undefined) {
        return Promise.resolve({ status: 404, body: { error: 'no such route' } });
      }
      const broken = misbehave();
      if (broken) return broken;
      if (kind === 'merge_wal') return merge(name, signal);
      if (kind === 'compact') return reply(fleet.compact(index, name));
      if (kind === 'index_id') return reply(fleet.indexId(index, name));
      return reply({ status: 200, body: {}, latencyMs: 0 });
    },
  };
}

function decodeName(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * One simulated worker as a Hono app, served over real HTTP by `maintd-sim workers`; its latency
 * runs on the given clock.
 */
export function createWorkerApp(fleet: Fleet, index: number, clock: Clock, knobs: WorkerKnobs = {}): Hono {
  const worker = createSimWorker(fleet, index, clock, knobs);
  const app = new Hono();
  app.all('*', async (c) => {
    // The raw path: the worker decodes the store name itself, exactly once.
    const r = await worker.handle(c.req.method, new URL(c.req.url).pathname, c.req.raw.signal);
    return c.json(r.body, r.status as ContentfulStatusCode);
  });
  return app;
}

/**
 * A `fetch` that routes `http://sim-worker-<i>/…` to in-process workers: the master's real HTTP
 * client and executors run unchanged, with no sockets and no real time. Like the real `fetch`,
 * it rejects when the caller's signal aborts (the master's per-call timeout), and the worker
 * sees the abort as a server sees a client disconnect.
 */
export function inProcessFetch(workers: readonly SimWorker[]): typeof fetch {
  return (input, init) => {
    // The master's client passes the URL it parsed already.
    const url = input instanceof URL ? input : new URL(input instanceof Request ? input.url : String(input));
    const m = /^sim-worker-(\d+)$/.exec(url.hostname);
    const worker = m ? workers[Number(m[1])] : undefined;
    if (!worker) return Promise.reject(new TypeError(`fetch failed: no simulated worker at ${url.host}`));
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const answer = worker
      .handle(init?.method ?? 'GET', url.pathname, signal)
      .then((r) => new InProcessResponse(r.status, JSON.stringify(r.body)).asResponse());
    if (!signal) return answer;
    return new Promise<Response>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      answer.then(
        (res) => {
          signal.removeEventListener('abort', onAbort);
          resolve(res);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  };
}

/**
 * What {@link inProcessFetch} answers with: the part of a `Response` that the master's worker
 * client and the tests read — the status, the headers, and a JSON body read once, as bytes or
 * parsed. A real `Response` builds a web stream per call: close to a tenth of the incident's CPU,
 * whose runs make some 50,000 worker calls each.
 */
class InProcessResponse {
  readonly status: number;
  readonly headers: Pick<Headers, 'get' | 'has'> = JSON_HEADERS;
  /** The body as one chunk, readable once; `cancel()` drops it unread. */
  readonly body: OneChunk;

  constructor(status: number, json: string) {
    this.status = status;
    this.body = new OneChunk(json);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get bodyUsed(): boolean {
    return this.body.used;
  }

  text(): Promise<string> {
    const text = this.body.takeText();
    if (text === undefined) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    return Promise.resolve(text);
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  /** This, typed as the `Response` that `fetch` promises. */
  asResponse(): Response {
    return this as unknown as Response;
  }
}

/**
 * A body of one chunk, as a reader iterates a response body (and can cancel it). It is encoded
 * only when read: most replies are 404s whose bodies the master drops unread.
 */
class OneChunk implements AsyncIterableIterator<Uint8Array> {
  #text: string | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  get used(): boolean {
    return this.#text === undefined;
  }

  takeText(): string | undefined {
    const text = this.#text;
    this.#text = undefined;
    return text;
  }

  take(): Uint8Array | undefined {
    const text = this.takeText();
    return text === undefined ? undefined : Buffer.from(text, 'utf8');
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array, undefined>> {
    const value = this.take();
    return Promise.resolve(value ? { done: false, value } : { done: true, value: undefined });
  }

  return(): Promise<IteratorResult<Uint8Array, undefined>> {
    this.takeText();
    return Promise.resolve({ done: true, value: undefined });
  }

  cancel(): Promise<void> {
    this.takeText();
    return Promise.resolve();
  }
}

/** The worker protocol's one content type: what a `Response`'s headers would say. */
const JSON_HEADERS: Pick<Headers, 'get' | 'has'> = {
  get: (name) => (name.toLowerCase() === 'content-type' ? 'application/json' : null),
  has: (name) => name.toLowerCase() === 'content-type',
};

/** Endpoint URLs of in-process workers, as `inProcessFetch` understands them. */
export function inProcessEndpoints(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `http://sim-worker-${i}`);
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
