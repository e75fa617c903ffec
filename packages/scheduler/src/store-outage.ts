import { type Clock, OUTAGE_REMINDER_MS, StoreFullError, StoreUnavailableError } from '@maintd/core';
import type { Logger } from 'pino';

/**
 * What the scheduler's loops log about failures. While etcd is down every loop fails on every
 * turn (claim polls several times a second, each periodic job every few seconds): one warn line
 * when the outage starts, one a minute while it lasts, and one info line when etcd answers again
 * say what an operator needs; the rest go to debug. Failures of anything else stay warnings.
 *
 * etcd out of space (its NOSPACE alarm) is an outage of its own: reads still work, so the loops
 * that only read go on succeeding while every write fails. It ends with the first write that
 * succeeds, not the first answer, or the log would say "back" and "gone" on every turn.
 */
export interface StoreOutageLog {
  /** A loop's call failed; `msg` and `fields` are what it logs as. */
  failed(err: unknown, msg: string, fields?: Record<string, unknown>): void;
  /**
   * A loop's call to the store succeeded: etcd answers, and if `wrote`, the call wrote to it. An
   * outage, if any, is over: an unreachable etcd on any answer, a full one on a write.
   */
  ok(wrote?: boolean): void;
}

/** The lines of one kind of outage. */
interface OutageWords {
  /** The warning that opens it, naming the loop that found it. */
  readonly opens: (msg: string) => string;
  /** The reminder while it lasts. */
  readonly lasts: (secs: number) => string;
  /** The info line that closes it, before "after N s". */
  readonly ends: string;
}

/** One kind of outage: warn when it opens, debug and a reminder a minute while it lasts, info when it ends. */
function outage(logger: Logger, clock: Clock, words: OutageWords) {
  let state: { readonly since: number; warnedAt: number; quiet: number } | undefined;
  return {
    failed(err: unknown, msg: string, fields: Record<string, unknown>): void {
      const now = clock.now();
      if (!state) {
        state = { since: now, warnedAt: now, quiet: 0 };
        logger.warn({ err, ...fields }, words.opens(msg));
        return;
      }
      state.quiet++;
      logger.debug({ err, ...fields }, msg);
      if (now - state.warnedAt >= OUTAGE_REMINDER_MS) {
        state.warnedAt = now;
        const downMs = now - state.since;
        logger.warn({ err, down_ms: downMs, failures: state.quiet }, words.lasts(Math.round(downMs / 1000)));
      }
    },
    end(): void {
      if (!state) return;
      const downMs = clock.now() - state.since;
      logger.info(
        { down_ms: downMs, failures: state.quiet + 1 },
        `${words.ends} after ${(downMs / 1000).toFixed(1)} s`,
      );
      state = undefined;
    },
  };
}

/** The scheduler's {@link StoreOutageLog}. */
export function createStoreOutageLog(logger: Logger, clock: Clock): StoreOutageLog {
  const unreachable = outage(logger, clock, {
    opens: (msg) => `etcd unreachable (${msg}); retrying, and logging at debug until it is back`,
    lasts: (secs) => `etcd still unreachable after ${secs} s`,
    ends: 'etcd reachable again',
  });
  const full = outage(logger, clock, {
    opens: (msg) =>
      `etcd is out of space and refuses writes (${msg}): compact and defragment it, then disarm its NOSPACE alarm ` +
      '(docs/DEPLOY.md); retrying, and logging at debug until a write succeeds',
    lasts: (secs) => `etcd still out of space, refusing writes after ${secs} s`,
    ends: 'etcd accepts writes again',
  });
  return {
    failed(err, msg, fields = {}) {
      if (err instanceof StoreFullError) full.failed(err, msg, fields);
      else if (err instanceof StoreUnavailableError) unreachable.failed(err, msg, fields);
      else logger.warn({ err, ...fields }, msg);
    },
    ok(wrote = false) {
      unreachable.end();
      if (wrote) full.end();
    },
  };
}
