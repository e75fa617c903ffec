import type { TaskKind } from '../model.js';

/** A queued task a claim may try. */
export interface Candidate {
  readonly kind: TaskKind;
  readonly id: string;
}

/**
 * The order a claim tries one page of queue candidates in: this master's share (rank 0) oldest
 * first, then the others by how close this master is to owning each, each rank youngest first
 * (owners work from the old end of their share, so a master out of work takes from the young end
 * of the shares it ranks next for, as work-stealing schedulers do).
 *
 * Built lazily: a claim usually succeeds within the first few of its own share, and ranking and
 * reordering a whole page (up to 2,048 ids) on every claim was most of a claim's own CPU with
 * several masters. Only the entries asked for, and those scanned past to reach them, are ranked.
 */
export class CandidateOrder {
  readonly #ids: readonly string[];
  readonly #kindOf: (index: number) => TaskKind;
  readonly #rank: ((id: string) => number) | undefined;
  /** Indices into #ids, in the order they are tried, as far as built. */
  readonly #order: number[] = [];
  /** How many of #ids the scan for rank 0 has passed. */
  #scanned = 0;
  /** Indices passed over by that scan, by rank (index 0 unused). */
  readonly #others: number[][] = [];

  /**
   * `ids` ascending (FIFO), the kind of the id at an index, and this master's rank for an id; no
   * rank (a master alone) keeps the page's own order.
   */
  constructor(ids: readonly string[], kindOf: (index: number) => TaskKind, rank: ((id: string) => number) | undefined) {
    this.#ids = ids;
    this.#kindOf = kindOf;
    this.#rank = rank;
  }

  /** Whether there is an `i`th candidate. */
  has(i: number): boolean {
    while (this.#order.length <= i && this.#scanned < this.#ids.length) this.#scan();
    return i < this.#order.length;
  }

  /** The `i`th candidate; throws past the last (see {@link has}). */
  at(i: number): Candidate {
    const index = this.has(i) ? this.#order[i] : undefined;
    if (index === undefined) throw new RangeError(`no candidate ${i} (of ${this.#ids.length})`);
    return { kind: this.#kindOf(index), id: this.#ids[index]! };
  }

  /**
   * Swaps into place `at` a candidate drawn (by `draw`, in [0, 1)) from the `width` starting
   * there: contenders that lost a race spread out over the next few instead of racing again.
   */
  spread(at: number, width: number, draw: () => number): void {
    let w = 0;
    while (w < width && this.has(at + w)) w++;
    if (w < 2) return;
    const j = at + Math.floor(draw() * w);
    if (j === at) return;
    const order = this.#order;
    [order[at], order[j]] = [order[j]!, order[at]!];
  }

  #scan(): void {
    const index = this.#scanned++;
    const r = this.#rank ? this.#rank(this.#ids[index]!) : 0;
    if (r === 0) this.#order.push(index);
    else (this.#others[r] ??= []).push(index);
    if (this.#scanned < this.#ids.length) return;
    // The page's own share is all taken: the others follow, nearest rank first, young end first.
    for (const bucket of this.#others) {
      if (!bucket) continue;
      for (let k = bucket.length - 1; k >= 0; k--) this.#order.push(bucket[k]!);
    }
  }
}
