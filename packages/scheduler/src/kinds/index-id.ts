import type { TaskOutcome } from '@maintd/core';
import { z } from 'zod';
import { type ExecutorDeps, type WorkerAttempt, checkTarget, ownersOutcome, runOnOwners } from '../executor.js';
import type { KindRun, KindSpec } from './spec.js';

/** The worker route of this kind. */
const ROUTE = 'index-id';

/** What an index_id run came to. */
interface IndexIdResult {
  readonly outcome: TaskOutcome;
  /** Every worker call, in call order. */
  readonly attempts: readonly WorkerAttempt[];
}

const IndexIdReplySchema = z.object({ index_type: z.enum(['btree', 'zonemap']) });

/**
 * Builds the scalar index on a store's `id` column (docs/ARCHITECTURE.md §3.2), on its owners like a
 * compaction: `200 {"index_type"}` is done, `built <type> index on id` (the types of several
 * owners, distinct, joined by `+`); failure classes as for compact.
 */
async function runIndexId(
  target: string,
  deps: ExecutorDeps & { readonly owners?: readonly string[] | undefined },
): Promise<IndexIdResult> {
  const invalid = checkTarget(target);
  if (invalid) return { outcome: invalid, attempts: [] };
  const run = await runOnOwners(ROUTE, target, IndexIdReplySchema, deps);
  const types = [...new Set(run.replies.map((r) => r.index_type))].join('+');
  const outcome = ownersOutcome(run, target, 'index build', () => `built ${types} index on id`);
  return { outcome, attempts: run.attempts };
}

/**
 * `index_id`: the id index, rebuilt after a compaction that added fragments (upstream's
 * `compaction_that_rewrites_fragments_enqueues_id_index`); no sweep of its own.
 */
export const indexId = {
  route: ROUTE,
  follows: { after: 'compact', when: (facts) => (facts.fragments_added ?? 0) > 0 },
  settings: {},
  run: async (target, ctx): Promise<KindRun> => {
    const owners = await ctx.owners();
    return runIndexId(target, { ...ctx, owners });
  },
} satisfies KindSpec;
