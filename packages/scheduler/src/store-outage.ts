import { type Clock, OUTAGE_REMINDER_MS, StoreUnavailableError } from '@maintd/core';
import type { Logger } from 'pino';

/**
 * What the scheduler's loops log about failures. While etcd is down every loop fails on every
 * turn (claim polls several times a second, each periodic job every few seconds): one warn line
 * when the outage starts, one a minute while it lasts, and one info line when etcd answers again
 * say what an operator needs; the rest go to debug. Failures of anything else stay warnings.
 */
export interface StoreOutageLog {
  /** A loop's call failed; `msg` and `fields` are what it logs as. */
  failed(err: unknown, msg: string, fields?: Record<string, unknown>): void;
  /** A loop's call to the store succeeded: an outage, if any, is over. */
  ok(): void;
}

/** The scheduler's {@link StoreOutageLog}. */
export function createStoreOutageLog(logger: Logger, clock: Clock): StoreOutageLog {
  let down: { since: number; warnedAt: number; quiet: number } | undefined;
  return {
    failed(err, msg, fields = {}) {
      if (!(err instanceof StoreUnavailableError)) {
        logger.warn({ err, ...fields }, msg);
        return;
      }
      const now = clock.now();
      if (!down) {
        down = { since: now, warnedAt: now, quiet: 0 };
        logger.warn({ err, ...fields }, `etcd unreachable (${msg}); retrying, and logging at debug until it is back`);
        return;
      }
      down.quiet++;
      logger.debug({ err, ...fields }, msg);
      if (now - down.warnedAt >= OUTAGE_REMINDER_MS) {
        down.warnedAt = now;
        logger.warn(
          { err, down_ms: now - down.since, failures: down.quiet },
          `etcd still unreachable after ${Math.round((now - down.since) / 1000)} s`,
        );
      }
    },
    ok() {
      if (!down) return;
      const downMs = clock.now() - down.since;
      logger.info(
        { down_ms: downMs, failures: down.quiet + 1 },
        `etcd reachable again after ${(downMs / 1000).toFixed(1)} s`,
      );
      down = undefined;
    },
  };
}
