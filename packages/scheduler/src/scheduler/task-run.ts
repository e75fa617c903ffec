import {
  type CapacityLedger,
  type Claim,
  ClaimLostError,
  type FinishResult,
  StoreUnavailableError,
  type TaskOutcome,
} from '@maintd/core';
import type { WorkerAttempt } from '../executor.js';
import { kindSpec } from '../kinds/index.js';
import type { KindRun } from '../kinds/spec.js';
import { type SchedulerDeps, registryOf } from './context.js';
import { reportCooldownEffects } from './cooldown-effects.js';
import { enqueueFollowUps } from './follow-ups.js';
import type { KindObserver } from './kind-metrics.js';

/**
 * Runs one claimed task to its end (docs/ARCHITECTURE.md §3.2): its kind's run against the
 * workers, the finish in the store, then its follow-ups and cooldown effects. Once `abandon` is
 * aborted (the shutdown grace ran out) the run's executor is cut off and its result left
 * unwritten: the claim expires, or is released with the session, and a peer recovers the task.
 * A finished task's slot time (claim to finish) is counted in `capacity` and
 * `master_task_busy_seconds_total` by this master only, once its finish committed.
 */
export async function runTask(
  deps: SchedulerDeps,
  abandon: AbortSignal,
  claim: Claim,
  observe: KindObserver | undefined,
  capacity?: CapacityLedger,
): Promise<void> {
  const { config, clock, metrics, store, logger } = deps;
  const { task } = claim;
  const started = clock.now();
  let run: KindRun;
  try {
    run = await kindSpec(task.kind, registryOf(deps)).run(task.target, {
      endpoints: config.workers.endpoints,
      timeoutMs: config.workers.timeoutSecs * 1000,
      token: config.workers.token,
      signal: abandon,
      now: () => clock.now(),
      clock,
      owners: async () => (await store.getStats(task.target).catch(() => undefined))?.owners,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
  } catch (err) {
    run = {
      outcome: { ok: false, error: `executor failed: ${String(err)}`, errorClass: 'infrastructure' },
      attempts: [],
    };
  }
  const { outcome } = run;
  const attempts: readonly WorkerAttempt[] = run.attempts;
  if (abandon.aborted) {
    logger.warn(
      { task_id: task.id, kind: task.kind, target: task.target },
      'task abandoned at shutdown; peers will recover it',
    );
    return;
  }
  const seconds = (clock.now() - started) / 1000;
  metrics.tasks.inc({ kind: task.kind, result: outcome.ok ? 'success' : 'failed' });
  observe?.(run);
  metrics.taskDuration.observe({ kind: task.kind }, seconds);
  const finished = await finishClaim(deps, abandon, claim, outcome);
  const line = {
    task_id: task.id,
    kind: task.kind,
    target: task.target,
    attempt: task.attempt,
    source: task.source,
    duration_ms: Math.round(seconds * 1000),
    workers: attempts.length,
  };
  if (!finished) return;
  const result = outcome.ok ? 'success' : 'failed';
  const slotSeconds = (clock.now() - started) / 1000;
  metrics.busySeconds.inc({ kind: task.kind, result }, slotSeconds);
  capacity?.record(task.kind, task.target, slotSeconds, !outcome.ok, clock.now());
  if (outcome.ok) {
    logger.info({ ...line, state: 'done', detail: outcome.detail }, 'task done');
    await enqueueFollowUps(deps, task.kind, task.target, run.facts ?? {});
  } else
    logger.warn({ ...line, state: 'failed', error: outcome.error, error_class: outcome.errorClass }, 'task failed');
  reportCooldownEffects(metrics, logger, finished);
}

/** Finishes a claim, retrying while etcd is away; a lost claim discards the result. */
async function finishClaim(
  deps: SchedulerDeps,
  abandon: AbortSignal,
  claim: Claim,
  outcome: TaskOutcome,
): Promise<FinishResult | undefined> {
  const { store, logger, clock } = deps;
  let backoff = 200;
  for (;;) {
    try {
      return await store.finish(claim, outcome);
    } catch (err) {
      if (err instanceof ClaimLostError) {
        logger.warn(
          { task_id: claim.task.id, kind: claim.task.kind, target: claim.task.target },
          'claim lost before completion; result discarded',
        );
        return undefined;
      }
      if (!(err instanceof StoreUnavailableError) || abandon.aborted) {
        logger.error({ err, task_id: claim.task.id }, 'failed to persist task completion');
        return undefined;
      }
      try {
        await clock.sleep(backoff, abandon);
      } catch {
        return undefined;
      }
      backoff = Math.min(backoff * 2, 5000);
    }
  }
}
