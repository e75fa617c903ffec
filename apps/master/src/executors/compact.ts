import type { TaskOutcome } from '@maintd/core';
import { z } from 'zod';
import { callWorker } from '../workers/client.js';
import {
  type ExecutorDeps,
  NO_ENDPOINTS_ERROR,
  type WorkerAttempt,
  bound,
  checkTarget,
  workerUrl,
} from './merge-wal.js';

/** What a compact run came to. `WorkerAttempt.reclaimed` is always 0 here. */
export interface CompactResult {
  readonly outcome: TaskOutcome;
  /** Every worker call, in call order. */
  readonly attempts: readonly WorkerAttempt[];
}

const CompactReplySchema = z.object({
  fragments_removed: z.number().int().nonnegative(),
  fragments_added: z.number().int().nonnegative(),
});

/**
 * Compacts a store's base table (DESIGN §3.2). With `owners` (the endpoints the last stats scan
 * saw report the store), every owner compacts its shard, serially since they commit to the same
 * base table, and all of them must succeed; the fragment counts are summed. Without owners, the
 * configured workers are asked in order until one claims the store (answers other than 404);
 * a worker that cannot be reached is passed over, since it may not own the store at all.
 *
 * Failure classes as for merge_wal: an error reply is `target` (the store is broken there),
 * unreachable workers only are `infrastructure`, and a 404 from every worker asked is `target`.
 */
export async function runCompact(
  target: string,
  deps: ExecutorDeps & { readonly owners?: readonly string[] },
): Promise<CompactResult> {
  const invalid = checkTarget(target);
  if (invalid) return { outcome: invalid, attempts: [] };
  const useOwners = deps.owners !== undefined && deps.owners.length > 0;
  const workers = useOwners ? (deps.owners ?? []) : deps.endpoints;
  if (workers.length === 0) {
    return { outcome: { ok: false, error: NO_ENDPOINTS_ERROR, errorClass: 'infrastructure' }, attempts: [] };
  }
  const now = deps.now ?? (() => performance.now());
  const attempts: WorkerAttempt[] = [];
  const errors: string[] = [];
  let httpErrors = 0;
  let compacted = 0;
  let removed = 0;
  let added = 0;

  for (const endpoint of workers) {
    if (deps.signal?.aborted) {
      errors.push(`aborted before calling ${workers.length - attempts.length} of ${workers.length} workers`);
      break;
    }
    const started = now();
    const r = await callWorker('POST', workerUrl(endpoint, 'compact', target), CompactReplySchema, {
      timeoutMs: deps.timeoutMs,
      token: deps.token,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    attempts.push({ endpoint, result: r.kind, seconds: Math.max(0, (now() - started) / 1000), reclaimed: 0 });
    if (r.kind === 'ok') {
      compacted++;
      removed = Math.min(removed + r.value.fragments_removed, Number.MAX_SAFE_INTEGER);
      added = Math.min(added + r.value.fragments_added, Number.MAX_SAFE_INTEGER);
      if (!useOwners) break;
    } else if (r.kind === 'http_error') {
      httpErrors++;
      errors.push(r.message);
      // The worker claimed the store and failed on it: asking others would only find non-owners.
      if (!useOwners) break;
    } else if (r.kind === 'transport_error') {
      errors.push(r.message);
    }
  }

  const fragments = `removed ${removed} / added ${added} fragments`;
  // In fallback mode one owner suffices, so a passed-over unreachable worker is only noted.
  if (compacted > 0 && (errors.length === 0 || (!useOwners && httpErrors === 0))) {
    const detail = errors.length === 0 ? fragments : bound(`${fragments}; errors: ${errors.join('; ')}`);
    return { outcome: { ok: true, detail }, attempts };
  }
  if (errors.length === 0) {
    const asked = useOwners ? `its ${workers.length} recorded owners` : `all ${workers.length} workers`;
    return {
      outcome: {
        ok: false,
        error: bound(`no worker owns store '${target}' (404 from ${asked})`),
        errorClass: 'target',
      },
      attempts,
    };
  }
  const progress = compacted > 0 ? `; ${fragments} on ${compacted}/${workers.length} workers` : '';
  return {
    outcome: {
      ok: false,
      error: bound(`compaction failed: ${errors.join('; ')}${progress}`),
      errorClass: httpErrors > 0 ? 'target' : 'infrastructure',
    },
    attempts,
  };
}
