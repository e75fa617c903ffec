import type { FinishResult } from '@maintd/core';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';

/**
 * Metrics and log lines for what a finish did to its store's cooldown (docs/ARCHITECTURE.md
 * §2.7): a cleared record, a counted failure, a window opened, or the fleet guard holding one back.
 */
export function reportCooldownEffects(metrics: Metrics, logger: Logger, f: FinishResult): void {
  const { kind, target } = f.task;
  const c = f.cooldown;
  if (c.type === 'cleared') {
    if (c.existed) {
      metrics.cooldownCleared.inc({ kind, reason: 'success' });
      logger.info({ kind, target }, 'target succeeded; cooldown cleared');
    }
    return;
  }
  if (c.type === 'error') {
    logger.warn({ err: c.error, kind, target }, 'cooldown bookkeeping failed');
    return;
  }
  const r = c.result;
  if (r.action !== 'write') return;
  if (r.conflicts > 0) metrics.casConflicts.inc({ op: 'record_failure' }, r.conflicts);
  if (r.guardOverflow) {
    metrics.guardOverflow.inc({ kind });
    logger.warn(
      { kind, target, failures: r.record.failures, last_error: r.record.last_error },
      'fleet guard: too much of the fleet is cooling; counted the failure but opened no window',
    );
  }
  if (r.cooling) {
    metrics.cooldowns.inc({ kind });
    logger.warn(
      {
        kind,
        target,
        failures: r.record.failures,
        cooldown_secs: Math.round(r.windowMs / 1000),
        until_ms: r.record.until_ms,
        last_error: r.record.last_error,
      },
      'target failed repeatedly; sweeps will skip it until the cooldown lapses',
    );
  }
}
