import createClient from 'openapi-fetch';
import { sanitizeDeep, sanitizeText } from '../sanitize.js';
import { type AuditEntry, parseAuditPage } from './audit.js';
import type { paths } from './schema.js';
import { tlsProblem } from './tls-errors.js';
import type {
  BulkResult,
  Capacity,
  Cooldown,
  CooldownDetail,
  CooldownStateFilter,
  FailureCause,
  Master,
  Policy,
  Store,
  Task,
  TaskKind,
  TaskPage,
  TaskQuery,
  Worker,
} from './types.js';

/** A request the master answered with an error status. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/**
 * Whether an error says the master predates what was asked (a route it does not have, or a query
 * parameter a mutation of its release refuses), rather than that the request failed.
 */
export function needsNewerMaster(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return (
    (err.status === 404 && err.message.includes('no route for')) ||
    (err.status === 400 && err.message.includes('unknown query parameter'))
  );
}

/** The filter of the cooldown list that a bulk action runs over (docs/ARCHITECTURE.md §3.4). */
export interface CooldownFilter {
  /** Case-insensitive substring of the store name or the error text. */
  readonly q?: string | undefined;
  readonly kind?: TaskKind | undefined;
  /** Absent on a bulk action: every state. */
  readonly state?: CooldownStateFilter | undefined;
  /** Only the entries whose latest failure has this cause (`GET /api/v1/scheduler/causes`). */
  readonly cause?: string | undefined;
}

/** What the detail route answered about one (kind, store). */
export type DetailAnswer =
  | { readonly status: 'ok'; readonly detail: CooldownDetail }
  /** The pair has no record, no park and no timeline. */
  | { readonly status: 'none' }
  /** The master predates the route (0.1.0 answers 404 for every pair). */
  | { readonly status: 'unsupported' };

/** A request that got no answer: refused, reset, DNS, or no response within the timeout. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** How the TUI reaches one master. */
export interface ClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8090`. */
  readonly url: string;
  /** An API token of the master, sent as a bearer header (never in the URL). */
  readonly token?: string | undefined;
  /** Per-request deadline: a slow master costs at most this, never a frozen screen. */
  readonly timeoutMs: number;
  /** How requests are sent: a `MasterTransport`'s (TLS client options) or a test's; default the global fetch. */
  readonly fetch?: typeof fetch;
}

/** Most stores read per refresh (pages of 200); beyond it the Stores view says how many it shows. */
export const MAX_STORE_PAGES = 50;
const PAGE = 200;
/** Most pages of one cooldown state read per full read: 200,000 entries, far beyond any fleet. */
const MAX_COOLDOWN_PAGES = 1000;
/** The states a paged read asks for, one sequence each: together what `all=true` answers. */
const COOLDOWN_STATES = [undefined, 'below', 'lapsed'] as const;

/** The URL of the next page from a `Link` header (RFC 8288, `rel="next"`); undefined on the last page. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m && /(?:^|;)\s*rel\s*=\s*"?next"?\s*(?:;|$)/i.test(m[2]!)) return m[1];
  }
  return undefined;
}

/**
 * The master's HTTP API as the TUI uses it: typed by the generated OpenAPI schema, every request
 * bounded by a timeout, every answer sanitised (no terminal escapes from worker text reach the
 * screen), every failure an {@link ApiError} or a {@link ConnectionError}.
 */
export class MaintdClient {
  readonly url: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #api: ReturnType<typeof createClient<paths>>;

  constructor(options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch ?? globalThis.fetch;
    const f = this.#fetch;
    this.#api = createClient<paths>({
      baseUrl: this.url,
      headers: this.#headers(),
      // Through a wrapper so a test's fetch (or one installed later) is used for every call.
      fetch: (req: Request) => f(req),
    });
  }

  /** Headers of every request (the bearer token when one is configured). */
  #headers(): Record<string, string> {
    return this.#token ? { authorization: `Bearer ${this.#token}` } : {};
  }

  /** Live masters. */
  async masters(signal?: AbortSignal): Promise<Master[]> {
    const body = await this.#call((s) => this.#api.GET('/api/v1/masters', { signal: s }), signal);
    return [...body.masters];
  }

  /** Worker endpoints with their last scan. */
  async workers(signal?: AbortSignal): Promise<Worker[]> {
    const body = await this.#call((s) => this.#api.GET('/api/v1/workers', { signal: s }), signal);
    return [...body.workers];
  }

  /**
   * Every cooldown entry (parks, open windows, counters below the threshold and lapsed windows),
   * read in pages of 200 and following `Link: <…>; rel="next"`, so no request builds (or parses)
   * a 3 MB body.
   */
  async cooldowns(signal?: AbortSignal): Promise<Cooldown[]> {
    const out: Cooldown[] = [];
    for (const state of COOLDOWN_STATES) {
      let path: string | undefined = `/api/v1/scheduler/cooldowns?limit=${PAGE}${state ? `&state=${state}` : ''}`;
      for (let page = 0; path && page < MAX_COOLDOWN_PAGES; page++) {
        const res = await this.#raw(path, { headers: this.#headers() }, signal);
        out.push(...(await this.#json<Cooldown[]>(res, path)));
        path = nextLink(res.headers.get('link'));
      }
    }
    return out;
  }

  /** The cooldown policy of the master. */
  async policy(signal?: AbortSignal): Promise<Policy> {
    return this.#call((s) => this.#api.GET('/api/v1/scheduler/policy', { signal: s }), signal);
  }

  /** Stats rows by name, up to {@link MAX_STORE_PAGES} pages, and how many there are in all. */
  async stores(signal?: AbortSignal): Promise<{ stores: Store[]; total: number }> {
    const stores: Store[] = [];
    let cursor: string | undefined;
    let total = 0;
    for (let page = 0; page < MAX_STORE_PAGES; page++) {
      const query = { limit: PAGE, ...(cursor ? { cursor } : {}) };
      const body = await this.#call((s) => this.#api.GET('/api/v1/stores', { params: { query }, signal: s }), signal);
      stores.push(...body.stores);
      total = body.total;
      if (!body.next_cursor) break;
      cursor = body.next_cursor;
    }
    return { stores, total };
  }

  /** One page of tasks, newest first. */
  async tasks(query: TaskQuery = {}, signal?: AbortSignal): Promise<TaskPage> {
    return this.#call((s) => this.#api.GET('/api/v1/tasks', { params: { query }, signal: s }), signal);
  }

  /**
   * The newest tasks whose store name or error text holds `q` (case-insensitive). A master that
   * predates `q` ignores it (reads ignore unknown parameters) and answers the newest of all:
   * the caller filters what comes back with the same predicate.
   */
  async searchTasks(q: string, limit: number, signal?: AbortSignal): Promise<TaskPage> {
    const query: TaskQuery = { limit, q };
    return this.tasks(query, signal);
  }

  /** The master's Prometheus text (for the fleet-guard overflow counter). */
  async metrics(signal?: AbortSignal): Promise<string> {
    const res = await this.#raw('/metrics', { headers: this.#headers() }, signal);
    return res.text();
  }

  /** Manual enqueue (never cooldown-gated); `created` is false on a dedupe hit. */
  async enqueue(kind: TaskKind, target: string): Promise<{ task: Task; created: boolean }> {
    let created = false;
    const task = await this.#call(async (s) => {
      const r = await this.#api.POST('/api/v1/tasks', { body: { kind, target }, signal: s });
      created = r.response.status === 202;
      return r;
    });
    return { task, created };
  }

  /** Operator reset of one cooldown (and release of its park); false when there was none. */
  async resetCooldown(kind: TaskKind, target: string): Promise<boolean> {
    try {
      await this.#call((s) =>
        this.#api.DELETE('/api/v1/scheduler/cooldowns/{kind}/{target}', {
          params: { path: { kind, target } },
          signal: s,
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }

  /** Parks one kind on one store with a reason: the sweeps skip it until it is released. */
  async park(kind: TaskKind, target: string, reason: string): Promise<Cooldown> {
    return this.#call((s) =>
      this.#api.PUT('/api/v1/scheduler/cooldowns/{kind}/{target}', {
        params: { path: { kind, target } },
        body: { reason },
        signal: s,
      }),
    );
  }

  /**
   * Releases a park. The master's DELETE also resets the failure count (one verb for both); false
   * when there was neither.
   */
  async release(kind: TaskKind, target: string): Promise<boolean> {
    return this.resetCooldown(kind, target);
  }

  /**
   * One (kind, store) in one request: its entry, the policy, and its timeline, newest first
   * (docs/ARCHITECTURE.md §3.4).
   */
  async cooldownDetail(kind: TaskKind, target: string, signal?: AbortSignal): Promise<DetailAnswer> {
    const path = `/api/v1/scheduler/cooldowns/${encodeURIComponent(kind)}/${encodeURIComponent(target)}`;
    try {
      const res = await this.#send('GET', path, undefined, signal);
      return { status: 'ok', detail: await this.#json<CooldownDetail>(res, path) };
    } catch (err) {
      if (needsNewerMaster(err)) return { status: 'unsupported' };
      if (err instanceof ApiError && err.status === 404) return { status: 'none' };
      throw err;
    }
  }

  /**
   * Parks every entry the filter matches with one reason (`dry_run`: only counts them). The
   * filter goes to the master as it is: it decides what matches, and a master that predates the
   * filter refuses it (400) rather than park more than asked.
   */
  async bulkPark(filter: CooldownFilter, reason: string, dryRun: boolean): Promise<BulkResult> {
    const path = `/api/v1/scheduler/cooldowns?${bulkQuery(filter, dryRun)}`;
    return this.#json<BulkResult>(await this.#send('PUT', path, { reason }), path);
  }

  /** Resets the failure count of every entry the filter matches (parks stay); `dry_run`: only counts them. */
  async bulkReset(filter: CooldownFilter, dryRun: boolean): Promise<BulkResult> {
    const path = `/api/v1/scheduler/cooldowns?${bulkQuery(filter, dryRun)}`;
    return this.#json<BulkResult>(await this.#send('DELETE', path), path);
  }

  /**
   * The newest entries of the audit trail, newest first; undefined from a master that predates it
   * (0.1.0 has no such route).
   */
  async audit(limit: number, signal?: AbortSignal): Promise<AuditEntry[] | undefined> {
    const path = `/api/v1/audit?limit=${limit}`;
    try {
      const res = await this.#send('GET', path, undefined, signal);
      return parseAuditPage(await this.#json<unknown>(res, path));
    } catch (err) {
      if (needsNewerMaster(err)) return undefined;
      throw err;
    }
  }

  /**
   * The fleet's slot time over the last hour; undefined from a master that predates the route
   * (0.1.0 answers 404).
   */
  async capacity(signal?: AbortSignal): Promise<Capacity | undefined> {
    return this.#optional<Capacity>('/api/v1/capacity', signal);
  }

  /** Failures grouped by cause, the most stores first; undefined from a master that predates the route. */
  async causes(signal?: AbortSignal): Promise<FailureCause[] | undefined> {
    return this.#optional<FailureCause[]>('/api/v1/scheduler/causes', signal);
  }

  /** A read of a route a master may predate: undefined when it does not serve it. */
  async #optional<T>(path: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      const res = await this.#send('GET', path, undefined, signal);
      return await this.#json<T>(res, path);
    } catch (err) {
      if (needsNewerMaster(err)) return undefined;
      throw err;
    }
  }

  /** The newest tasks of one store (the detail pane's history). */
  async history(target: string, limit = 20): Promise<Task[]> {
    const page = await this.tasks({ target, limit });
    return [...page.tasks];
  }

  /** A plain request with the same deadline and error mapping (routes outside the OpenAPI document). */
  async #raw(path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const s = this.#signal(signal);
    let res: Response;
    try {
      res = await this.#fetch(`${this.url}${path}`, { ...init, signal: s });
    } catch (err) {
      throw connectionError(err, this.#timeoutMs, this.url);
    }
    if (!res.ok) throw new ApiError(res.status, `HTTP ${res.status} from ${path}`);
    return res;
  }

  /**
   * A request outside the typed client (routes and parameters a master may predate), its error
   * answer turned into an {@link ApiError} with the master's own message.
   */
  async #send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...this.#headers() };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.#fetch(`${this.url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: this.#signal(signal),
      });
    } catch (err) {
      throw connectionError(err, this.#timeoutMs, this.url);
    }
    if (res.ok) return res;
    const answer = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
    const message = typeof answer?.error === 'string' ? answer.error : res.statusText || 'request failed';
    throw new ApiError(res.status, `HTTP ${res.status}: ${sanitizeText(message)}`);
  }

  /** A JSON body, sanitised, or an {@link ApiError} when it is not JSON. */
  async #json<T>(res: Response, path: string): Promise<T> {
    let body: unknown;
    try {
      body = await res.json();
    } catch (err) {
      throw new ApiError(res.status, `HTTP ${res.status} from ${path}: not JSON (${(err as Error).message})`);
    }
    return sanitizeDeep(body as T);
  }

  #signal(outer?: AbortSignal): AbortSignal {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    return outer ? AbortSignal.any([outer, timeout]) : timeout;
  }

  async #call<R extends { data?: unknown; error?: unknown; response: Response }>(
    request: (signal: AbortSignal) => Promise<R>,
    signal?: AbortSignal,
  ): Promise<NonNullable<R['data']>> {
    let result: R;
    try {
      result = await request(this.#signal(signal));
    } catch (err) {
      throw connectionError(err, this.#timeoutMs, this.url);
    }
    const { data, error, response } = result;
    if (!response.ok || data === undefined) {
      const message =
        error && typeof error === 'object' && 'error' in error && typeof error.error === 'string'
          ? error.error
          : response.statusText || 'request failed';
      throw new ApiError(response.status, `HTTP ${response.status}: ${sanitizeText(message)}`);
    }
    return sanitizeDeep(data as NonNullable<R['data']>);
  }
}

/** The query of a bulk action: its filter and whether it is a dry run. */
function bulkQuery(filter: CooldownFilter, dryRun: boolean): string {
  const q = new URLSearchParams();
  if (filter.kind) q.set('kind', filter.kind);
  if (filter.state) q.set('state', filter.state);
  if (filter.q) q.set('q', filter.q);
  if (filter.cause) q.set('cause', filter.cause);
  q.set('dry_run', String(dryRun));
  return q.toString();
}

/**
 * A fetch failure as one short, readable message ("connection refused", "timed out after 5s").
 * `url`: the master's, for a hint that depends on its scheme.
 */
export function connectionError(err: unknown, timeoutMs: number, url?: string): ConnectionError {
  if (err instanceof ConnectionError) return err;
  const e = err as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string; reason?: string; socket?: { bytesRead?: number } | null };
  };
  if (e?.name === 'TimeoutError')
    return new ConnectionError(`no answer within ${formatSeconds(timeoutMs)}`, { cause: err });
  if (e?.name === 'AbortError') return new ConnectionError('request cancelled', { cause: err });
  const code = e?.cause?.code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host lookup failed',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    UND_ERR_SOCKET: 'connection closed',
    UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  };
  // A master serving https closes a plain-http connection without a byte in answer.
  if (code === 'UND_ERR_SOCKET' && e.cause?.socket?.bytesRead === 0 && url?.startsWith('http:')) {
    const hint = 'connection closed before any answer: if the master serves https, use an https:// --url';
    return new ConnectionError(hint, { cause: err });
  }
  const text = (code && known[code]) ?? tlsProblem(e?.cause) ?? e?.cause?.message ?? e?.message ?? String(err);
  return new ConnectionError(sanitizeText(text), { cause: err });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
