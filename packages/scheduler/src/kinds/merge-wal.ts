import type { TaskOutcome } from '@maintd/core';
import { timerSecs, setting, wholeNumber } from '@maintd/settings';
import { Counter, Histogram } from 'prom-client';
import { z } from 'zod';
import {
  type ExecutorDeps,
  NO_ENDPOINTS_ERROR,
  type WorkerAttempt,
  bound,
  causeFirst,
  callStoreRoute,
  checkTarget,
} from '../executor.js';
import { JOB_BUCKETS } from '../buckets.js';
import { isStoreError } from '../workers/client.js';
import type { KindRun, KindSpec } from './spec.js';

/** The worker route of this kind. */
const ROUTE = 'merge-wal';

/** One worker call of a merge, with the generations that worker folded (0 unless `ok`). */
interface MergeWalAttempt extends WorkerAttempt {
  readonly reclaimed: number;
}

/** What a merge_wal run came to. */
interface MergeWalResult {
  readonly outcome: TaskOutcome;
  /** Generations reclaimed over all workers. */
  readonly reclaimed: number;
  /** Every worker call, in call order. */
  readonly attempts: readonly MergeWalAttempt[];
}

const MergeReplySchema = z.object({ reclaimed: z.number().int().nonnegative() });

/**
 * Merges a store's pending WAL generations on every worker (docs/ARCHITECTURE.md §3.2). The calls are serial:
 * every worker commits to the same base table, and concurrent commits conflict and give up.
 * A 404 means the worker owns no shard (0 generations, a success). Errors with nothing merged
 * fail the task, `target` if a worker answered with an error about the store (not 503, 401 and
 * the like: see `isStoreError`), so a broken store enters the
 * cooldown; errors beside progress leave it done, with the errors in the detail.
 */
async function runMergeWal(target: string, deps: ExecutorDeps): Promise<MergeWalResult> {
  const invalid = checkTarget(target);
  if (invalid) return { outcome: invalid, reclaimed: 0, attempts: [] };
  if (deps.endpoints.length === 0) {
    return {
      outcome: { ok: false, error: NO_ENDPOINTS_ERROR, errorClass: 'infrastructure' },
      reclaimed: 0,
      attempts: [],
    };
  }
  const attempts: MergeWalAttempt[] = [];
  const errors: string[] = [];
  let total = 0;
  let answered = 0;
  let storeErrors = 0;

  for (const endpoint of deps.endpoints) {
    if (deps.signal?.aborted) {
      const left = deps.endpoints.length - attempts.length;
      errors.push(`aborted before calling ${left} of ${deps.endpoints.length} workers`);
      break;
    }
    const { result: r, attempt } = await callStoreRoute(endpoint, ROUTE, target, MergeReplySchema, deps);
    const reclaimed = r.kind === 'ok' ? r.value.reclaimed : 0;
    attempts.push({ ...attempt, reclaimed });
    if (r.kind === 'ok' || r.kind === 'not_found') {
      answered++;
      // Clamped so that a fleet of absurd replies still sums to a valid integer.
      total = Math.min(total + reclaimed, Number.MAX_SAFE_INTEGER);
    } else {
      if (isStoreError(r)) storeErrors++;
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
      error: causeFirst(errors, summary),
      errorClass: storeErrors > 0 ? 'target' : 'infrastructure',
    };
  }
  return { outcome, reclaimed: total, attempts };
}

/** `merge_wal`: fold a store's pending WAL generations into its base table, on every worker. */
export const mergeWal = {
  pool: { name: 'merge', sizeSetting: 'MERGE_WAL_CONCURRENCY' },
  route: ROUTE,
  sweep: {
    job: 'merge-wal-sweep',
    intervalSetting: 'MERGE_WAL_INTERVAL_SECS',
    thresholdSetting: 'MERGE_WAL_MIN_GENERATIONS',
    backlog: (row) => row.pending_wal_generations,
  },
  settings: {
    MERGE_WAL_CONCURRENCY: setting(wholeNumber(0), '4', {
      description: 'Slots of the merge-wal pool; 0 = no pool of its own, the general pool runs merges too.',
    }),
    MERGE_WAL_INTERVAL_SECS: setting(timerSecs(0), '600', {
      description: 'How often the merge-wal sweep runs; 0 disables automatic merges.',
    }),
    MERGE_WAL_MIN_GENERATIONS: setting(wholeNumber(1), '8', {
      description: 'Pending WAL generations at which the sweep enqueues a merge.',
    }),
  },
  metrics: (registry) => {
    const registers = [registry];
    const workers = new Counter({
      name: 'master_merge_wal_workers_total',
      help: 'Per-worker merge-wal calls by result (ok, not_found, http_error, transport_error).',
      labelNames: ['result'],
      registers,
    });
    const duration = new Histogram({
      name: 'master_merge_wal_worker_duration_seconds',
      help: 'Duration of one merge-wal call to one worker.',
      buckets: JOB_BUCKETS,
      registers,
    });
    const reclaimed = new Counter({
      name: 'master_merge_wal_generations_reclaimed_total',
      help: 'WAL generations merged by workers on this master’s requests.',
      registers,
    });
    return (run) => {
      reclaimed.inc(run.facts?.reclaimed ?? 0);
      for (const a of run.attempts) {
        workers.inc({ result: a.result });
        duration.observe(a.seconds);
      }
    };
  },
  run: async (target, ctx): Promise<KindRun> => {
    const r = await runMergeWal(target, ctx);
    return { outcome: r.outcome, attempts: r.attempts, facts: { reclaimed: r.reclaimed } };
  },
} satisfies KindSpec;
