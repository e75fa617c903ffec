import {
  type Clock,
  type Random,
  StoreAccessDeniedError,
  StoreFullError,
  StoreUnavailableError,
  reconnectBackoff,
} from '@maintd/core';
import type { Logger } from 'pino';

/**
 * Waits between attempts to open the store at startup: doubling from 1 s (drawn from the upper
 * half, so never under the etcd client's 500 ms half-open delay: each attempt really dials) up to
 * 10 s, so a master started before etcd is serving within about 10 s of etcd coming up.
 */
export const STARTUP_BACKOFF = { initialMs: 1000, maxMs: 10_000 } as const;

/** Options of {@link openWithRetry}. */
export interface OpenWithRetryOptions<T> {
  /** One attempt (e.g. `TaskStore.open`). */
  readonly open: () => Promise<T>;
  /** etcd endpoints, for the warning lines. */
  readonly endpoints: readonly string[];
  readonly clock: Clock;
  /** Jitter of the waits. */
  readonly random: Random;
  readonly logger: Logger;
  /** Aborted on SIGTERM/SIGINT: the wait ends at once and the outcome is `stopped`. */
  readonly signal: AbortSignal;
  /**
   * Explains an unreachable etcd that will never become reachable as configured (the TLS
   * handshake diagnosis: gRPC reports a certificate mismatch as a bare UNAVAILABLE), or undefined.
   */
  readonly explain?: (err: unknown) => Promise<string | undefined>;
  /** The waits' growth: {@link STARTUP_BACKOFF} for a daemon. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
}

/** How {@link openWithRetry} ended. */
export type OpenOutcome<T> =
  /** Open after `attempts` attempts. The caller closes `value` if it was stopped meanwhile. */
  | { readonly kind: 'open'; readonly value: T; readonly attempts: number }
  /** A configuration that can never work (credentials refused, TLS mismatch): exit 2. */
  | { readonly kind: 'misconfigured'; readonly message: string; readonly error: unknown }
  /** Something other than reachability failed: exit 1. */
  | { readonly kind: 'failed'; readonly message: string; readonly error: unknown }
  /** `signal` was aborted first. */
  | { readonly kind: 'stopped' };

/**
 * Opens the store, retrying while etcd is unreachable (docs/ARCHITECTURE.md §3.1) with capped, jittered
 * backoff and one warning per attempt that names the endpoints, the cause and the next wait.
 * Only unreachability is retried: a refusal or a TLS mismatch will not heal by waiting.
 */
export async function openWithRetry<T>(o: OpenWithRetryOptions<T>): Promise<OpenOutcome<T>> {
  const schedule = reconnectBackoff({ ...o.backoff, random: o.random });
  let step: ReturnType<typeof schedule.next> | undefined;
  for (let attempt = 1; ; attempt++) {
    if (o.signal.aborted) return { kind: 'stopped' };
    let error: unknown;
    try {
      return { kind: 'open', value: await o.open(), attempts: attempt };
    } catch (err) {
      error = err;
    }
    if (o.signal.aborted) return { kind: 'stopped' };
    if (error instanceof StoreAccessDeniedError) return { kind: 'misconfigured', message: error.message, error };
    if (!(error instanceof StoreUnavailableError)) return { kind: 'failed', message: messageOf(error), error };
    const reason = await o.explain?.(error).catch(() => undefined);
    if (reason !== undefined) return { kind: 'misconfigured', message: reason, error };
    step = step ? step.next(undefined) : schedule.next();
    const waitMs = step.duration;
    o.logger.warn(
      { endpoints: o.endpoints, attempt, retry_in_ms: waitMs },
      retryMessage(
        o.endpoints,
        error.message.replace(/^etcd unavailable: /, ''),
        waitMs,
        error instanceof StoreFullError ? 'refusing writes' : 'not reachable',
      ),
    );
    try {
      await o.clock.sleep(waitMs, o.signal);
    } catch {
      return { kind: 'stopped' };
    }
  }
}

/** The fields of the retry line besides its message (the pretty log format leaves them out). */
export const RETRY_FIELDS = ['endpoints', 'attempt', 'retry_in_ms'] as const;

/**
 * `etcd not reachable at <endpoints>: <cause>; retrying in 1.2 s` — the exporter's line is the same.
 * A master also needs to write (its session, orphan recovery): `etcd refusing writes at …` when
 * etcd is out of space.
 */
function retryMessage(
  endpoints: readonly string[],
  cause: string,
  waitMs: number,
  state: 'not reachable' | 'refusing writes' = 'not reachable',
): string {
  return `etcd ${state} at ${endpoints.join(', ')}: ${cause}; retrying in ${(waitMs / 1000).toFixed(1)} s`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
