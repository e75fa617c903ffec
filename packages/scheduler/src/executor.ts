import { type Clock, type TaskOutcome, TargetSchema, sanitizeError } from '@maintd/core';
import type { z } from 'zod';
import { type WorkerResult, callWorker, isStoreError } from './workers/client.js';

/** One worker call of an executor, for the per-worker metrics and logs. */
export interface WorkerAttempt {
  /** The worker's base URL as configured. */
  readonly endpoint: string;
  readonly result: WorkerResult<unknown>['kind'];
  /** Wall time of the call. */
  readonly seconds: number;
}

/** What an executor needs from the master. */
export interface ExecutorDeps {
  /** WORKER_ENDPOINTS: worker base URLs. */
  readonly endpoints: readonly string[];
  /** WORKER_TIMEOUT_SECS in milliseconds: the deadline of each worker call. */
  readonly timeoutMs: number;
  /** WORKER_TOKEN. */
  readonly token?: string | undefined;
  /** Shutdown: stops the fan-out; calls not made yet are reported as an error. */
  readonly signal?: AbortSignal;
  /** Monotonic milliseconds for call durations; default `performance.now`. */
  readonly now?: () => number;
  /** The HTTP transport; default the platform's `fetch` (simulations route calls in-process). */
  readonly fetch?: typeof fetch;
  /** Clock of the per-worker timeout; default real timers. */
  readonly clock?: Clock;
}

/** Bound of a task's detail or error: one error per worker must fit for a small fleet. */
const OUTCOME_TEXT_MAX = 2000;

/** Message of the failure when WORKER_ENDPOINTS is empty. */
export const NO_ENDPOINTS_ERROR = 'no worker endpoints configured (WORKER_ENDPOINTS)';

/**
 * The URL of a per-store worker route. The name is percent-encoded; it is also validated
 * first, since a name such as `..` would be resolved away as a path segment.
 */
function workerUrl(endpoint: string, route: string, target: string): string {
  return `${endpoint.replace(/\/+$/, '')}/api/v1/internal/${route}/${encodeURIComponent(target)}`;
}

/** A failed outcome for a name no worker can have, or undefined for a valid name. */
export function checkTarget(target: string): TaskOutcome | undefined {
  if (TargetSchema.safeParse(target).success) return undefined;
  return { ok: false, error: bound(`invalid store name '${target}'`), errorClass: 'target' };
}

/** Sanitises and bounds a task's detail or error text. */
export function bound(text: string): string {
  return sanitizeError(text, OUTCOME_TEXT_MAX);
}

/**
 * How much of the first worker's error leads a failure's text: short enough that the summary
 * after it survives the cooldown's 512-character `last_error`.
 */
const CAUSE_MAX = 400;

/**
 * A failure's text, the cause first (docs/ARCHITECTURE.md §3.2): the first worker's own error, then
 * `(summary; N more errors)`, then those other errors while the bound leaves room. Operators read
 * the head of the text (a dashboard column, a log line, a cooldown's bounded `last_error`); a
 * summary first made every failure of a kind start alike, and the count says what a cut tail hid.
 */
export function causeFirst(errors: readonly string[], summary: string): string {
  const [first, ...rest] = errors;
  if (first === undefined) return bound(summary);
  const cause = sanitizeError(first, CAUSE_MAX);
  if (rest.length === 0) return bound(`${cause} (${summary})`);
  const more = `${rest.length} more error${rest.length === 1 ? '' : 's'}`;
  return bound(`${cause} (${summary}; ${more}); ${rest.join('; ')}`);
}

/** Calls one worker's per-store route, timing the call. */
export async function callStoreRoute<T>(
  endpoint: string,
  route: string,
  target: string,
  schema: z.ZodType<T>,
  deps: ExecutorDeps,
): Promise<{ readonly result: WorkerResult<T>; readonly attempt: WorkerAttempt }> {
  const now = deps.now ?? (() => performance.now());
  const started = now();
  const result = await callWorker('POST', workerUrl(endpoint, route, target), schema, {
    timeoutMs: deps.timeoutMs,
    token: deps.token,
    ...(deps.signal ? { signal: deps.signal } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
  return { result, attempt: { endpoint, result: result.kind, seconds: Math.max(0, (now() - started) / 1000) } };
}

/** What {@link runOnOwners} came to, before a kind turns it into an outcome. */
export interface OwnersRun<T> {
  /** Replies of the workers that did the work. */
  readonly replies: readonly T[];
  /** Error messages, in call order. */
  readonly errors: readonly string[];
  /**
   * How many of the errors were about the store (see `isStoreError`), not an unreachable or
   * unavailable worker.
   */
  readonly storeErrors: number;
  readonly attempts: readonly WorkerAttempt[];
  /** The workers asked: the recorded owners, or the configured list. */
  readonly workers: readonly string[];
  /** True when the recorded owners were asked (all must succeed), false in fallback mode. */
  readonly usedOwners: boolean;
}

/**
 * The fan-out of the kinds that work on a store's base table through its owners (compact,
 * index_id). With `owners` (the endpoints the last stats scan saw report the store), every owner
 * is called, serially since they commit to the same base table. Without owners, the configured
 * workers are asked in order until one claims the store (answers other than 404); a worker that
 * cannot be reached is passed over, since it may not own the store at all, and one that answers
 * with an error ends the search (others would only answer 404).
 */
export async function runOnOwners<T>(
  route: string,
  target: string,
  schema: z.ZodType<T>,
  deps: ExecutorDeps & { readonly owners?: readonly string[] | undefined },
): Promise<OwnersRun<T>> {
  const usedOwners = deps.owners !== undefined && deps.owners.length > 0;
  const workers = usedOwners ? (deps.owners ?? []) : deps.endpoints;
  const replies: T[] = [];
  const errors: string[] = [];
  const attempts: WorkerAttempt[] = [];
  let storeErrors = 0;
  for (const endpoint of workers) {
    if (deps.signal?.aborted) {
      errors.push(`aborted before calling ${workers.length - attempts.length} of ${workers.length} workers`);
      break;
    }
    const { result, attempt } = await callStoreRoute(endpoint, route, target, schema, deps);
    attempts.push(attempt);
    if (result.kind === 'ok') {
      replies.push(result.value);
      if (!usedOwners) break;
    } else if (result.kind !== 'not_found') {
      errors.push(result.message);
      // An error about the store came from its owner; a worker that is unreachable, or answers
      // only that it cannot serve now, is passed over in the search for the owner.
      if (isStoreError(result)) {
        storeErrors++;
        if (!usedOwners) break;
      }
    }
  }
  return { replies, errors, storeErrors, attempts, workers, usedOwners };
}

/**
 * The outcome of an owners fan-out (docs/ARCHITECTURE.md §3.2): done when some worker did the
 * work and no owner failed (in fallback mode an unreachable or unavailable worker passed over is
 * only noted); failed `target` when a worker answered with an error about the store or none owns
 * it; failed `infrastructure` when no worker answered about it at all.
 */
export function ownersOutcome<T>(
  run: OwnersRun<T>,
  target: string,
  verb: string,
  summary: (replies: readonly T[]) => string,
): TaskOutcome {
  if (run.workers.length === 0) return { ok: false, error: NO_ENDPOINTS_ERROR, errorClass: 'infrastructure' };
  const done = summary(run.replies);
  if (run.replies.length > 0 && (run.errors.length === 0 || (!run.usedOwners && run.storeErrors === 0))) {
    return { ok: true, detail: run.errors.length === 0 ? done : bound(`${done}; errors: ${run.errors.join('; ')}`) };
  }
  if (run.errors.length === 0) {
    const asked = run.usedOwners ? `its ${run.workers.length} recorded owners` : `all ${run.workers.length} workers`;
    return { ok: false, error: bound(`no worker owns store '${target}' (404 from ${asked})`), errorClass: 'target' };
  }
  const progress = run.replies.length > 0 ? `; ${done} on ${run.replies.length}/${run.workers.length} workers` : '';
  return {
    ok: false,
    error: causeFirst(run.errors, `${verb} failed${progress}`),
    errorClass: run.storeErrors > 0 ? 'target' : 'infrastructure',
  };
}
