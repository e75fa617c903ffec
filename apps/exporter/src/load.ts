import { type KeyValue, type Kv, scanPages } from '@maintd/core';
import { type ClusterAggregate, aggregatePrefixes, applyChange, createAggregate } from './aggregate.js';

/**
 * Keys per range page of a sync when not told otherwise. Smaller pages hold less at once (the
 * response, its decoding and the strings made of it), larger ones make fewer reads, each of which
 * costs etcd a count of every key left in the section; docs/SCALING.md has the measurements.
 */
export const DEFAULT_PAGE_SIZE = 500;

/** Options of {@link loadAggregate}. */
export interface LoadOptions {
  /**
   * Keys per range page (default {@link DEFAULT_PAGE_SIZE}). Each page is folded into the
   * aggregate and dropped before the next is asked for, so one page's response is the most a
   * sync holds beside the aggregate; 100k tasks take about 200 reads.
   */
  readonly pageSize?: number;
  /** Stops between pages, rejecting with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Reads a full sync: every section of `prefix` the metrics need, range-read in pages into a new
 * aggregate. Its revision is the first page's: later pages are read at later revisions, and the
 * watch that follows from that revision replays every change made meanwhile (see `watcher.ts`).
 */
export async function loadAggregate(
  kv: Kv,
  prefix: string | undefined,
  options: LoadOptions = {},
): Promise<ClusterAggregate> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const agg = createAggregate(prefix);
  let first: number | undefined;
  for (const section of aggregatePrefixes(agg.keys)) {
    options.signal?.throwIfAborted();
    for await (const page of scanPages(kv, section, { pageSize })) {
      first ??= page.revision;
      applyLoaded(agg, page.kvs);
      options.signal?.throwIfAborted();
    }
  }
  agg.revision = first ?? 0;
  return agg;
}

/**
 * Folds one page of a sync's read into `agg`. Each pair goes in with modRevision 0: the
 * aggregate's revision is the first page's, whatever later pages saw.
 */
export function applyLoaded(agg: ClusterAggregate, pairs: readonly KeyValue[]): void {
  for (const e of pairs) applyChange(agg, { type: 'put', key: e.key, value: e.value, modRevision: 0 });
}
