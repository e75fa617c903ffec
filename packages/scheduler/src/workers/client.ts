import type { Clock } from '@maintd/core';
import { sanitizeError } from '@maintd/core';
import { Agent, request } from 'undici';
import type { z } from 'zod';

/**
 * What one worker call came to. Worker misbehaviour is a value, never an exception: an executor
 * must classify every failure (`target` vs `infrastructure`), and a throw would lose which one.
 */
export type WorkerResult<T> =
  | { readonly kind: 'ok'; readonly value: T }
  /** HTTP 404: the worker owns no shard of the store. */
  | { readonly kind: 'not_found' }
  /** Any other non-2xx status: the worker answered, with an error. */
  | { readonly kind: 'http_error'; readonly status: number; readonly message: string }
  /** No usable answer: refused, timed out, reset, or a 2xx body that is unparseable, oversized or invalid. */
  | { readonly kind: 'transport_error'; readonly message: string };

/**
 * Statuses by which a worker says it cannot serve the call now, or will not serve this master
 * (overloaded, rate-limited, a proxy with no worker behind it, a wrong WORKER_TOKEN), rather than
 * that the store failed.
 */
const WORKER_SIDE_STATUSES: ReadonlySet<number> = new Set([401, 403, 408, 429, 502, 503, 504]);

/**
 * Whether a result is an error about the store (docs/ARCHITECTURE.md §2.1: class `target`, which counts toward
 * its cooldown). A worker that answered 503 or 401 said nothing about the store: like one that
 * could not be reached, it is the fleet's problem (`infrastructure`), so an overloaded worker or a
 * wrong token does not cool healthy stores down.
 */
export function isStoreError(result: WorkerResult<unknown>): boolean {
  return result.kind === 'http_error' && !WORKER_SIDE_STATUSES.has(result.status);
}

/** Options of one worker call. */
export interface WorkerCallOptions {
  /** Deadline of the whole exchange, body included, in milliseconds. */
  readonly timeoutMs: number;
  /** WORKER_TOKEN: sent as `Authorization: Bearer <token>` when non-empty. */
  readonly token?: string | undefined;
  /** Largest reply body read before giving up; default {@link DEFAULT_MAX_BODY_BYTES}. */
  readonly maxBodyBytes?: number;
  /** Aborts the call (shutdown); the result is then a transport error saying so. */
  readonly signal?: AbortSignal;
  /**
   * The HTTP transport; default the platform's `fetch`. Simulations route calls to in-process
   * workers through it, with no sockets.
   */
  readonly fetch?: typeof fetch;
  /**
   * Clock that measures the timeout; default real timers. The scheduler passes its injected
   * clock, so a simulation on a fake clock times calls out in simulated time.
   */
  readonly clock?: Clock;
}

/** Default reply size limit: worker replies of the merge/compact calls are a few bytes. */
const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/**
 * The reason given when a settled call releases its timer and connection: `abort()` without a
 * reason builds a DOMException (with a stack) per call, which profiling found on the hot path.
 */
const SETTLED = new Error('worker call settled');

/** Largest unread reply drained to keep its connection; a longer one closes it instead. */
const DISCARD_DRAIN_BYTES = 16 * 1024;

/** Bound of every message a call produces, matching what a cooldown stores. */
const MESSAGE_MAX = 512;

/** Bound of the error text quoted from an error reply: enough to name a missing fragment. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

// setTimeout stores its delay in a signed 32-bit integer; beyond that Node fires at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls a worker and validates its 2xx JSON reply with `schema`. Never rejects: every failure,
 * including a caller abort, is a {@link WorkerResult}. Messages start with the worker's endpoint,
 * are sanitised (no control characters or terminal escapes) and are at most 512 characters.
 */
export async function callWorker<T>(
  method: 'GET' | 'POST',
  url: string,
  schema: z.ZodType<T>,
  options: WorkerCallOptions,
): Promise<WorkerResult<T>> {
  const { parsed, label } = parsedUrl(url);
  const fail = (reason: string): WorkerResult<T> => ({
    kind: 'transport_error',
    message: sanitizeError(`${label}: ${reason}`, MESSAGE_MAX),
  });
  if (!parsed) return fail('invalid worker URL');
  // fetch also serves data: and blob: URLs locally; a misconfigured endpoint must not "answer".
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return fail('unsupported URL scheme');
  // fetch refuses such URLs with an error quoting the whole URL, password included.
  if (parsed.username || parsed.password) return fail('credentials in the worker URL are not supported');
  if (options.signal?.aborted) return fail('aborted');

  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const timeoutMs = Math.min(Math.max(Math.ceil(options.timeoutMs), 1), MAX_TIMER_MS);
  // One controller for the whole exchange, so the deadline also cuts off a slow-drip body.
  const controller = new AbortController();
  let timedOut = false;
  const onTimeout = (): void => {
    timedOut = true;
    controller.abort();
  };
  const timer = options.clock ? undefined : setTimeout(onTimeout, timeoutMs);
  // The exchange's own controller ends the clock's timer too (it aborts once the call settles):
  // a second controller per call was a measurable share of a simulation's CPU.
  options.clock?.sleep(timeoutMs, controller.signal).then(onTimeout, () => undefined);
  const onCallerAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const interrupted = (): string | undefined =>
    timedOut ? `timed out after ${timeoutMs} ms` : options.signal?.aborted ? 'aborted' : undefined;

  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  try {
    let res: Reply;
    try {
      res = await (options.fetch
        ? fetchReply(options.fetch, parsed, method, headers, controller.signal)
        : undiciReply(parsed, method, headers, controller.signal));
    } catch (err) {
      return fail(interrupted() ?? connectFailure(err));
    }

    if (res.status === 404) {
      res.discard();
      return { kind: 'not_found' };
    }
    if (res.status < 200 || res.status > 299) {
      // The status alone classifies the failure; the body only adds the worker's explanation, so
      // a body that cannot be read (too big, too slow, cut off) costs the text, not the status.
      const text = await readErrorText(res, Math.min(maxBody, ERROR_BODY_MAX_BYTES));
      return {
        kind: 'http_error',
        status: res.status,
        message: sanitizeError(`${label}: HTTP ${res.status}${text ? `: ${text}` : ''}`, MESSAGE_MAX),
      };
    }

    let body: Buffer | 'too_large';
    try {
      body = await readBounded(res, maxBody);
    } catch (err) {
      return fail(interrupted() ?? `${connectFailure(err)} while reading the reply`);
    }
    if (body === 'too_large') return fail(`reply exceeds the ${maxBody}-byte limit`);

    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return fail('reply is not valid JSON');
    }
    const checked = schema.safeParse(json);
    if (!checked.success) return fail(`invalid reply: ${describeIssues(checked.error.issues)}`);
    return { kind: 'ok', value: checked.data };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
    // Releases a body nobody read to the end; a no-op once the exchange completed.
    controller.abort(SETTLED);
  }
}

/** Parsed worker URLs: a fleet has a few endpoints and stores, and parsing was a tenth of a call. */
const PARSED = new Map<string, { readonly parsed: URL | undefined; readonly label: string }>();
const PARSED_MAX = 10_000;

function parsedUrl(url: string): { readonly parsed: URL | undefined; readonly label: string } {
  let hit = PARSED.get(url);
  if (!hit) {
    const parsed = parseUrl(url);
    hit = { parsed, label: parsed ? endpointLabel(parsed) : url };
    if (PARSED.size >= PARSED_MAX) PARSED.clear();
    PARSED.set(url, hit);
  }
  return hit;
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * The endpoint a URL was built from: the part before the protocol path, credentials removed,
 * so an error names the worker (as configured) rather than the route, and never a password.
 */
function endpointLabel(url: URL): string {
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  const href = bare.href;
  const at = href.indexOf('/api/v1/');
  return at > 0 ? href.slice(0, at) : href.replace(/\/+$/, '');
}

/**
 * A worker's reply, whichever transport carried it: the status, the declared length, and the body
 * as chunks, to be read once or discarded.
 */
interface Reply {
  readonly status: number;
  readonly contentLength: number | undefined;
  readonly chunks: AsyncIterable<Uint8Array>;
  /** Stops reading the body and releases the connection. */
  discard(): void;
  /**
   * Reads the whole body at once, without an async iterator per reply; only used when the
   * length is declared (and within the bound), which the HTTP parser then enforces.
   */
  readonly read?: () => Promise<ArrayBuffer>;
}

/**
 * Keep-alive connections to the workers, shared by every call of this process: undici's
 * `request` on a pooled agent costs a fraction of a `fetch` (no WHATWG request, headers and
 * stream objects per call), and a task makes one call per worker.
 */
const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });

async function undiciReply(
  url: URL,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Reply> {
  const res = await request(url, { method, headers, signal, dispatcher: agent });
  const declared = Number(res.headers['content-length']);
  return {
    status: res.statusCode,
    contentLength: Number.isFinite(declared) ? declared : undefined,
    chunks: res.body,
    // Drains a short reply (a 404's few bytes): destroying an unread body made undici build an
    // abort error, stack trace included, per call, a visible share of a master's CPU
    // (docs/SCALING.md) since a store is missing on most workers, so most merges get a 404 or two.
    discard: () => void res.body.dump({ limit: DISCARD_DRAIN_BYTES }).catch(() => undefined),
    read: () => res.body.arrayBuffer(),
  };
}

async function fetchReply(
  fetchFn: typeof fetch,
  url: URL,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Reply> {
  const res = await fetchFn(url, { method, headers, signal, redirect: 'manual' });
  const declared = Number(res.headers.get('content-length') ?? NaN);
  const body = res.body;
  return {
    status: res.status,
    contentLength: Number.isFinite(declared) ? declared : undefined,
    // @types/node types fetch bodies as ReadableStream<any>; the platform's yields bytes.
    chunks: body ? (body as AsyncIterable<Uint8Array>) : emptyBody(),
    discard: () => void body?.cancel().catch(() => undefined),
  };
}

async function* emptyBody(): AsyncIterable<Uint8Array> {
  // No body: nothing to yield.
}

/** Reads at most `max` bytes of a body, stopping the stream past that instead of buffering it. */
async function readBounded(res: Reply, max: number): Promise<Buffer | 'too_large'> {
  if (res.contentLength !== undefined && res.contentLength > max) {
    res.discard();
    return 'too_large';
  }
  if (res.read && res.contentLength !== undefined) return Buffer.from(await res.read());
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const value of res.chunks) {
    size += value.byteLength;
    if (size > max) {
      res.discard();
      return 'too_large';
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** The worker's error text from `{"error": "..."}` or `{"error": {"message": "..."}}`, if any. */
async function readErrorText(res: Reply, max: number): Promise<string | undefined> {
  let body: Buffer | 'too_large';
  try {
    body = await readBounded(res, max);
  } catch {
    return undefined;
  }
  if (body === 'too_large') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(json)) return undefined;
  const error = json.error;
  if (typeof error === 'string') return error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const CODE_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed by the worker',
  UND_ERR_CLOSED: 'connection closed by the worker',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_OVERFLOW: 'reply headers too large',
};

/**
 * Names a fetch failure. undici wraps the socket error as `cause` (an AggregateError when several
 * addresses were tried), and its own message ("fetch failed", "terminated") says nothing.
 */
function connectFailure(err: unknown): string {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  let innermost: string | undefined;
  while (queue.length > 0) {
    const e = queue.shift();
    if (!isRecord(e) || seen.has(e)) continue;
    seen.add(e);
    const code = typeof e.code === 'string' ? e.code : undefined;
    const reason = code ? CODE_REASONS[code] : undefined;
    if (reason) return reason;
    if (typeof e.message === 'string' && e.message) innermost = code ? `${e.message} (${code})` : e.message;
    if (e.cause !== undefined) queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...(e.errors as unknown[]));
  }
  return innermost ?? 'request failed';
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, 3).map((i) => {
    const path = i.path.map((p) => String(p)).join('.');
    return path ? `${path}: ${i.message}` : i.message;
  });
  if (issues.length > 3) parts.push(`and ${issues.length - 3} more`);
  return parts.join('; ');
}
