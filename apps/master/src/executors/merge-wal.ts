import { type Clock, type TaskOutcome, TargetSchema, sanitizeError } from '@maintd/core';
import { z } from 'zod';
import { callWorker } from '../workers/client.js';

/** One worker call of an executor, for the per-worker metrics and logs. */
export interface WorkerAttempt {
  /** The worker's base URL as configured. */
  readonly endpoint: string;
  readonly result: 'ok' | 'not_found' | 'http_error' | 'transport_error';
  /** Wall time of the call. */
  readonly seconds: number;
  /** Generations this worker folded (0 unless `ok`). */
  readonly reclaimed: number;
}

/** What a merge_wal run came to. */
export interface MergeWalResult {
  readonly outcome: TaskOutcome;
  /** Generations reclaimed over all workers. */
  readonly reclaimed: number;
  /** Every worker call, in call order. */
  readonly attempts: readonly WorkerAttempt[];
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
export const OUTCOME_TEXT_MAX = 2000;

/** Message of the failure when WORKER_ENDPOINTS is empty. */
export const NO_ENDPOINTS_ERROR = 'no worker endpoints configured (WORKER_ENDPOINTS)';

const MergeReplySchema = z.object({ reclaimed: z.number().int().nonnegative() });

/**
 * Merges a store's pending WAL generations on every worker (DESIGN §3.2). The calls are serial:
 * every worker commits to the same base table, and concurrent commits conflict and give up.
 * A 404 means the worker owns no shard (0 generations, a success). Errors with nothing merged
 * fail the task, `target` if a worker answered with an error, so a broken store enters the
 * cooldown; errors beside progress leave it done, with the errors in the detail.
 */
export async function runMergeWal(target: string, deps: ExecutorDeps): Promise<MergeWalResult> {
  const invalid = checkTarget(target);
  if (invalid) return { outcome: invalid, reclaimed: 0, attempts: [] };
  if (deps.endpoints.length === 0) {
    return {
      outcome: { ok: false, error: NO_ENDPOINTS_ERROR, errorClass: 'infrastructure' },
      reclaimed: 0,
      attempts: [],
    };
  }
  const now = deps.now ?? (() => performance.now());
  const attempts: WorkerAttempt[] = [];
  const errors: string[] = [];
  let total = 0;
  let answered = 0;
  let httpErrors = 0;

  for (const endpoint of deps.endpoints) {
    if (deps.signal?.aborted) {
      const left = deps.endpoints.length - attempts.length;
      errors.push(`aborted before calling ${left} of ${deps.endpoints.length} workers`);
      break;
    }
    const started = now();
    const r = await callWorker('POST', workerUrl(endpoint, 'merge-wal', target), MergeReplySchema, {
      timeoutMs: deps.timeoutMs,
      token: deps.token,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    const seconds = Math.max(0, (now() - started) / 1000);
    const reclaimed = r.kind === 'ok' ? r.value.reclaimed : 0;
    attempts.push({ endpoint, result: r.kind, seconds, reclaimed });
    if (r.kind === 'ok' || r.kind === 'not_found') {
      answered++;
      // Clamped so that a fleet of absurd replies still sums to a valid integer.
      total = Math.min(total + reclaimed, Number.MAX_SAFE_INTEGER);
    } else {
      if (r.kind === 'http_error') httpErrors++;
      errors.push(r.message);
    }
  }

  const summary = `merged ${total} generations across ${answered}/${deps.endpoints.length} workers`;
  let outcome: TaskOutcome;
  if (errors.length === 0) {
    outcome = { ok: true, detail: summary };
  } else if (total > 0) {
    outcome = { ok: true, detail: bound(`${summary}; errors: ${errors.join('; ')}`) };
  } else {
    outcome = {
      ok: false,
      error: bound(`${summary}; ${errors.join('; ')}`),
      errorClass: httpErrors > 0 ? 'target' : 'infrastructure',
    };
  }
  return { outcome, reclaimed: total, attempts };
}

/**
 * The URL of a per-store worker route. The name is percent-encoded; it is also validated
 * first, since a name such as `..` would be resolved away as a path segment.
 */
export function workerUrl(endpoint: string, route: 'merge-wal' | 'compact', target: string): string {
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
