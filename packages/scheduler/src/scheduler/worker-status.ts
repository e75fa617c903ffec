import type { TaskStore } from '@maintd/core';

/**
 * A configured worker with the fleet's latest stats scan of it, for `GET /workers`: the same on
 * every master, whichever ran the scan. `ok` and `last_scan_at` are null before its first scan.
 */
export interface WorkerStatus {
  readonly endpoint: string;
  readonly ok: boolean | null;
  readonly error: string | null;
  readonly last_scan_at: number | null;
  readonly stores: number;
}

/**
 * The configured worker endpoints with their latest scan result, from one store read: the scan
 * runs on one master per interval, so its result is read from the store, not kept here. A
 * worker dropped from this master's configuration is left out though its record remains.
 */
export async function workerStatus(store: TaskStore, endpoints: readonly string[]): Promise<WorkerStatus[]> {
  const scans = new Map((await store.listWorkerScans()).map((w) => [w.endpoint, w]));
  return [...new Set(endpoints)].map(
    (endpoint) => scans.get(endpoint) ?? { endpoint, ok: null, error: null, last_scan_at: null, stores: 0 },
  );
}
