import type { TaskOutcome } from '@maintd/core';
import { setting, timerSecs, wholeNumber } from '@maintd/settings';
import { z } from 'zod';
import { type ExecutorDeps, type WorkerAttempt, checkTarget, ownersOutcome, runOnOwners } from '../executor.js';
import type { KindSpec } from './spec.js';

/** The worker route of this kind. */
const ROUTE = 'compact';

/** What a compact run came to. */
interface CompactResult {
  readonly outcome: TaskOutcome;
  /** Every worker call, in call order. */
  readonly attempts: readonly WorkerAttempt[];
  /** Fragments the workers removed and added, summed (0 when none compacted). */
  readonly removed: number;
  readonly added: number;
}

const CompactReplySchema = z.object({
  fragments_removed: z.number().int().nonnegative(),
  fragments_added: z.number().int().nonnegative(),
});

// Clamped so that a fleet of absurd replies still sums to a valid integer.
const sum = (xs: readonly number[]): number =>
  Math.min(
    xs.reduce((a, b) => a + b, 0),
    Number.MAX_SAFE_INTEGER,
  );

/**
 * Compacts a store's base table (docs/ARCHITECTURE.md §3.2) on its recorded owners, all of which must succeed,
 * else on the first configured worker that claims it; the fragment counts are summed. Failure
 * classes as for merge_wal: an error reply is `target` (the store is broken there), unreachable
 * workers only are `infrastructure`, and a 404 from every worker asked is `target`.
 */
async function runCompact(
  target: string,
  deps: ExecutorDeps & { readonly owners?: readonly string[] | undefined },
): Promise<CompactResult> {
  const invalid = checkTarget(target);
  if (invalid) return { outcome: invalid, attempts: [], removed: 0, added: 0 };
  const run = await runOnOwners(ROUTE, target, CompactReplySchema, deps);
  const removed = sum(run.replies.map((r) => r.fragments_removed));
  const added = sum(run.replies.map((r) => r.fragments_added));
  const outcome = ownersOutcome(run, target, 'compaction', () => `removed ${removed} / added ${added} fragments`);
  return { outcome, attempts: run.attempts, removed, added };
}

/** `compact`: rewrite a store's base table into fewer fragments, on the workers that own it. */
export const compact = {
  route: ROUTE,
  sweep: {
    job: 'compaction-sweep',
    intervalSetting: 'COMPACTION_INTERVAL_SECS',
    thresholdSetting: 'MIN_FRAGMENTS',
    backlog: (row) => row.fragment_count,
  },
  settings: {
    COMPACTION_INTERVAL_SECS: setting(timerSecs(0), '600', {
      description: 'How often the compaction sweep runs; 0 disables automatic compaction.',
    }),
    MIN_FRAGMENTS: setting(wholeNumber(1), '16', {
      description: 'Fragments at which the sweep enqueues a compaction.',
    }),
  },
  run: async (target, ctx) => {
    const owners = await ctx.owners();
    const r = await runCompact(target, { ...ctx, owners });
    return {
      outcome: r.outcome,
      attempts: r.attempts,
      facts: { fragments_removed: r.removed, fragments_added: r.added },
    };
  },
} satisfies KindSpec;
