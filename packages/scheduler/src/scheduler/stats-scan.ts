import type { StoreStats, WorkerScan } from '@maintd/core';
import { type ScanResult, scanWorkers } from '../workers/scan.js';
import type { SchedulerDeps } from './context.js';

/** Result of one stats scan. */
export interface ScanSummary {
  readonly stores: number;
  readonly written: number;
  readonly deleted: number;
  readonly complete: boolean;
}

/** The stats scan's periodic job, named as in etcd (`P/sweeps/<name>`); sweeps are named by their kinds. */
export const SCAN_JOB = 'stats-scan';

/** Scan intervals after which the recorded scan of a worker no master scans any more is deleted. */
const STALE_WORKER_SCANS = 3;

/**
 * Scans every worker's stores and writes the changed stats rows and each worker's result. Rows
 * of stores no worker reports are deleted only when every worker answered: a partial scan
 * never erases the fleet.
 */
export async function scanOnce(deps: SchedulerDeps, signal: AbortSignal): Promise<ScanSummary> {
  const { config, store, clock, logger } = deps;
  const result = await scanWorkers(config.workers.endpoints, {
    timeoutMs: config.workers.timeoutSecs * 1000,
    token: config.workers.token,
    signal,
    clock,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const now = clock.now();
  const previous = new Map((await store.listWorkerScans()).map((w) => [w.endpoint, w]));
  const scans = workerScans(result, previous, now);
  const existing = new Map((await store.listStats()).map((r) => [r.name, r]));
  const changed = changedRows(result, existing, now);
  await store.putStats(changed);
  const gone = result.complete ? [...existing.keys()].filter((name) => !result.rows.has(name)) : [];
  const deleted = gone.length > 0 ? await store.deleteStats(gone) : 0;
  await store.putWorkerScans(scans);
  const staleMs = STALE_WORKER_SCANS * config.intervals.statsScanSecs * 1000;
  const dropped = forgottenWorkers(previous.values(), config.workers.endpoints, now, staleMs);
  if (dropped.length > 0) {
    await store.deleteWorkerScans(dropped);
    logger.info({ workers: dropped }, 'forgot the scans of workers no master has scanned for a while');
  }
  if (result.failed.length > 0) {
    logger.warn({ failed: result.failed }, 'stats scan: some workers did not answer; keeping their stores');
  }
  logger.debug({ stores: result.rows.size, written: changed.length, deleted }, 'stats scan done');
  return { stores: result.rows.size, written: changed.length, deleted, complete: result.complete };
}

/** Each worker's result of this scan, as recorded for `GET /workers`. */
function workerScans(result: ScanResult, previous: ReadonlyMap<string, WorkerScan>, now: number): WorkerScan[] {
  const scans: WorkerScan[] = [];
  for (const endpoint of result.answered) {
    let stores = 0;
    for (const row of result.rows.values()) if (row.owners.includes(endpoint)) stores++;
    scans.push({ endpoint, ok: true, error: null, last_scan_at: now, stores });
  }
  // A worker that did not answer keeps the store count it last reported, which only a
  // previous scan (likely another master's) knows.
  for (const f of result.failed) {
    const stores = previous.get(f.endpoint)?.stores ?? 0;
    scans.push({ endpoint: f.endpoint, ok: false, error: f.error, last_scan_at: now, stores });
  }
  return scans;
}

/** The rows of this scan that differ from the stored ones (or are new), stamped `now`. */
function changedRows(result: ScanResult, existing: ReadonlyMap<string, StoreStats>, now: number): StoreStats[] {
  const changed: StoreStats[] = [];
  for (const row of result.rows.values()) {
    const prev = existing.get(row.name);
    if (!prev || !sameStats(prev, row)) changed.push({ ...row, scanned_at: now });
  }
  return changed;
}

/**
 * Workers whose recorded scan is to be deleted. A worker dropped from the configuration would
 * keep its last record for good. It goes once no master has scanned it for a few intervals: one
 * still configured with it (a rollout of the new list in progress) keeps it fresh, and so listed.
 */
function forgottenWorkers(
  previous: Iterable<WorkerScan>,
  configured: readonly string[],
  now: number,
  staleMs: number,
): string[] {
  const kept = new Set(configured);
  return [...previous]
    .filter((w) => staleMs > 0 && !kept.has(w.endpoint) && now - w.last_scan_at > staleMs)
    .map((w) => w.endpoint);
}

function sameStats(a: StoreStats, b: Omit<StoreStats, 'scanned_at'>): boolean {
  return (
    a.pending_wal_generations === b.pending_wal_generations &&
    a.fragment_count === b.fragment_count &&
    a.row_count === b.row_count &&
    a.owners.length === b.owners.length &&
    a.owners.every((o, i) => o === b.owners[i])
  );
}
