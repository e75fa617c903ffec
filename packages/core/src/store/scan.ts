import type { Clock } from '../clock.js';
import { type Keys, keyAfter } from '../keys.js';
import type { KeyValue, Kv, RangeResult } from '../kv/port.js';
import { idLowerBound, idTime } from './codec.js';

// Large pages: a sweep reads stats, cooldowns and dedupe keys in one round trip each up to this
// many stores (about 3 MB of cooldown records), so its cost does not grow with the fleet.
const SCAN_PAGE = 10_000;

/** How {@link scanPages} reads a prefix. */
export interface ScanOptions {
  /** Last key first. */
  readonly reverse?: boolean;
  /** Keys without values. */
  readonly keysOnly?: boolean;
  /** Keys per round trip (default 10 000). */
  readonly pageSize?: number;
}

/** One page of a {@link scanPages}. */
export interface ScanPage {
  /** The page's pairs, in the scan's order. */
  readonly kvs: readonly KeyValue[];
  /**
   * The store revision the page was read at. A page is read after the one before it, so a
   * scan's first page is its oldest: a watch from the first page's revision + 1 replays every
   * change the later pages may or may not show (each pair's `modRevision` tells which).
   */
  readonly revision: number;
}

/**
 * The paged read of every key under `prefix`, over the {@link Kv} port: one range per page,
 * each resuming after the last key of the one before, so no response holds the whole prefix.
 * Yields each page as it is read (an empty prefix yields one empty page, with its revision).
 */
export async function* scanPages(kv: Kv, prefix: string, options: ScanOptions = {}): AsyncGenerator<ScanPage> {
  const { reverse = false, keysOnly = false, pageSize = SCAN_PAGE } = options;
  let from: string | undefined;
  for (;;) {
    const page = await kv.range(prefix, {
      limit: pageSize,
      reverse,
      keysOnly,
      ...(from !== undefined ? { fromKey: from } : {}),
    });
    // A reverse page ends at `fromKey` inclusive: that key was the last of the previous page.
    const kvs = reverse && from !== undefined && page.kvs[0]?.key === from ? page.kvs.slice(1) : page.kvs;
    yield { kvs, revision: page.revision };
    const last = page.kvs.at(-1);
    if (!page.more || !last) return;
    from = reverse ? last.key : keyAfter(last.key);
  }
}

/** Every pair under `prefix`, read as {@link scanPages} reads them. */
export async function* scan(kv: Kv, prefix: string, options: ScanOptions = {}): AsyncGenerator<KeyValue> {
  for await (const page of scanPages(kv, prefix, options)) yield* page.kvs;
}

/**
 * Finds the newest task keys without etcd's descending range, which reads the whole prefix to
 * sort it. Keeps, per instance, the time bound that last held the newest page.
 */
export class NewestKeys {
  readonly #kv: Kv;
  readonly #keys: Keys;
  readonly #clock: Clock;
  /** Lower bound (ms) that last held the newest page. */
  #lowHint: number | undefined;

  constructor(kv: Kv, keys: Keys, clock: Clock) {
    this.#kv = kv;
    this.#keys = keys;
    this.#clock = clock;
  }

  /**
   * The newest `n` task keys at or before `through` (inclusive), newest first. Ids are UUIDv7, so
   * a key is bounded below by the time it encodes, and windows of growing age are probed until
   * one holds `n` keys. Typically one or two small reads, whatever the size of the history.
   */
  async take(n: number, through: string | undefined): Promise<string[]> {
    const prefix = this.#keys.tasksPrefix;
    const toKey = through !== undefined ? keyAfter(through) : undefined;
    // Other masters' clocks may run a little ahead: the first window ends slightly in the future.
    // A cursor names a time, but a hostile one may lie far in the future: never search above now.
    const horizon = this.#clock.now() + 60_000;
    const top = Math.min(
      (through !== undefined ? idTime(through.slice(prefix.length)) : undefined) ?? horizon,
      horizon,
    );
    const cap = 4 * n;
    // The lower bound (a time) that last held the newest page stays right until enough new tasks
    // arrive, so the first page usually costs one read.
    let low = through === undefined && this.#lowHint !== undefined && this.#lowHint < top ? this.#lowHint : top - 1000;
    let tooNew = Infinity; // a lower bound known to leave fewer than n keys
    let tooOld = -Infinity; // a lower bound known to leave more than `cap` keys
    const read = (lowMs: number, limit?: number): Promise<RangeResult> =>
      this.#kv.range(prefix, {
        keysOnly: true,
        ...(limit ? { limit } : {}),
        ...(lowMs > 0 ? { fromKey: this.#keys.task(idLowerBound(lowMs)) } : {}),
        ...(toKey ? { toKey } : {}),
      });
    for (let probe = 0; probe < 64; probe++) {
      const res = await read(low, cap + 1);
      if ((res.count >= n && res.count <= cap) || (res.count < n && low <= 0)) {
        if (through === undefined) this.#lowHint = low;
        return newestFirst(res.kvs, n);
      }
      if (res.count < n) tooNew = low;
      else tooOld = low;
      if (tooNew - tooOld <= 1) {
        // More than `cap` keys within one millisecond (a burst): read that window whole.
        return newestFirst((await read(tooOld)).kvs, n);
      }
      if (tooOld === -Infinity) low = Math.max(0, top - (top - low) * 4);
      else if (tooNew === Infinity) low = top - Math.floor((top - low) / 4);
      else low = Math.floor((tooNew + tooOld) / 2);
    }
    // The search ran out of probes (the history kept changing under it): one exact, if costly, read.
    const exact = await this.#kv.range(prefix, {
      limit: n,
      reverse: true,
      ...(through !== undefined ? { fromKey: through } : {}),
    });
    return exact.kvs.map((kv) => kv.key);
  }
}

/** The keys of the last `n` entries of an ascending page, newest first. */
export function newestFirst(kvs: readonly KeyValue[], n: number): string[] {
  return kvs
    .slice(-n)
    .map((kv) => kv.key)
    .reverse();
}
