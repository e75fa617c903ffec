import { type StoreStats, TargetSchema } from '@maintd/core';
import { z } from 'zod';
import { type WorkerCallOptions, callWorker } from './client.js';

/** One store as one worker reports it: that worker's shards only. */
interface StoreReport {
  readonly name: string;
  readonly pending_wal_generations: number;
  readonly fragment_count: number;
  readonly row_count: number;
}

/** A fleet-wide scan of the workers' stores. */
export interface ScanResult {
  /** Per store name: the aggregate over the workers that reported it. */
  readonly rows: ReadonlyMap<string, Omit<StoreStats, 'scanned_at'>>;
  /** Endpoints that answered validly, in endpoint order. */
  readonly answered: readonly string[];
  /** Endpoints that did not, with why, in endpoint order. */
  readonly failed: readonly { readonly endpoint: string; readonly error: string }[];
  /**
   * Every worker answered, so a store missing from `rows` is really gone. False when there are
   * no endpoints: an empty configuration must not read as "the fleet has no stores".
   */
  readonly complete: boolean;
}

/** Default reply size limit of a scan: a worker may own tens of thousands of shards. */
const SCAN_MAX_BODY_BYTES = 16 * 1024 * 1024;

const StoresReplySchema = z.object({ stores: z.array(z.unknown()) });

const count = z.number().int().nonnegative();
const StoreReportSchema = z.object({
  name: TargetSchema,
  pending_wal_generations: count,
  fragment_count: count,
  row_count: count,
});

/**
 * Asks every worker which stores it holds (`GET /api/v1/internal/stores`, concurrently) and
 * aggregates per store: pending generations and rows summed (each worker holds its own shard's
 * WAL and rows), fragments the max (the base table is shared, so each worker sees the same
 * fragments), owners in endpoint order. A malformed row is skipped rather than failing its
 * worker, so one bad store cannot blank out a worker's other stores; a reply of the wrong shape
 * fails the worker.
 */
export async function scanWorkers(endpoints: readonly string[], options: WorkerCallOptions): Promise<ScanResult> {
  const callOptions: WorkerCallOptions = { ...options, maxBodyBytes: options.maxBodyBytes ?? SCAN_MAX_BODY_BYTES };
  const replies = await Promise.all(
    endpoints.map((endpoint) =>
      callWorker('GET', `${endpoint.replace(/\/+$/, '')}/api/v1/internal/stores`, StoresReplySchema, callOptions),
    ),
  );

  const rows = new Map<string, Omit<StoreStats, 'scanned_at'>>();
  const answered: string[] = [];
  const failed: { endpoint: string; error: string }[] = [];
  endpoints.forEach((endpoint, i) => {
    const reply = replies[i];
    if (reply?.kind !== 'ok') {
      const error =
        reply === undefined
          ? `${endpoint}: no reply`
          : reply.kind === 'not_found'
            ? `${endpoint}: HTTP 404: the worker does not serve /api/v1/internal/stores`
            : reply.message;
      failed.push({ endpoint, error });
      return;
    }
    answered.push(endpoint);
    const seen = new Set<string>();
    for (const raw of reply.value.stores) {
      const parsed = StoreReportSchema.safeParse(raw);
      // A store listed twice by one worker is one shard, not two: count it once.
      if (!parsed.success || seen.has(parsed.data.name)) continue;
      seen.add(parsed.data.name);
      merge(rows, parsed.data, endpoint);
    }
  });
  return { rows, answered, failed, complete: endpoints.length > 0 && failed.length === 0 };
}

function merge(rows: Map<string, Omit<StoreStats, 'scanned_at'>>, report: StoreReport, endpoint: string): void {
  const prev = rows.get(report.name);
  if (!prev) {
    rows.set(report.name, {
      name: report.name,
      pending_wal_generations: report.pending_wal_generations,
      fragment_count: report.fragment_count,
      row_count: report.row_count,
      owners: [endpoint],
    });
    return;
  }
  rows.set(report.name, {
    name: report.name,
    pending_wal_generations: saturatingAdd(prev.pending_wal_generations, report.pending_wal_generations),
    fragment_count: Math.max(prev.fragment_count, report.fragment_count),
    row_count: saturatingAdd(prev.row_count, report.row_count),
    owners: [...prev.owners, endpoint],
  });
}

// Sums of safe integers can leave the safe range, which StoreStatsSchema would then reject.
function saturatingAdd(a: number, b: number): number {
  return Math.min(a + b, Number.MAX_SAFE_INTEGER);
}
