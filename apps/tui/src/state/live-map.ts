/**
 * A Map that changes in place and remembers which keys changed at which revision, so that a sorted
 * view of 10,000 rows follows a change by moving one row instead of rebuilding and re-sorting all
 * of them. Copying a 10,000-entry map per batch of events (the earlier design) cost more than the
 * change itself.
 */
export class LiveMap<V> extends Map<string, V> {
  /** Bumped by every change; a view that saw revision r asks for {@link changedSince}(r). */
  #revision = 0;
  /** Keys changed, in order: `#log[i]` changed at revision `#base + i + 1`. */
  #log: string[] = [];
  /** Revision before the first entry of `#log`. */
  #base = 0;
  /** Longest log kept; a view further behind rebuilds (and a full rebuild costs about this much). */
  readonly #maxLog: number;

  constructor(entries?: Iterable<readonly [string, V]>, maxLog = 4096) {
    // Not through super(entries): Map's constructor calls this.set before the fields exist.
    super();
    this.#maxLog = maxLog;
    if (entries) for (const [k, v] of entries) super.set(k, v);
  }

  get revision(): number {
    return this.#revision;
  }

  override set(key: string, value: V): this {
    super.set(key, value);
    this.#changed(key);
    return this;
  }

  override delete(key: string): boolean {
    const had = super.delete(key);
    if (had) this.#changed(key);
    return had;
  }

  override clear(): void {
    super.clear();
    // Every key may have changed: views further back than this rebuild.
    this.#revision++;
    this.#log = [];
    this.#base = this.#revision;
  }

  /**
   * Keys changed after `revision`, oldest first (a key may repeat); undefined when the log no
   * longer reaches that far back (the caller rebuilds).
   */
  changedSince(revision: number): readonly string[] | undefined {
    if (revision === this.#revision) return [];
    if (revision < this.#base || revision > this.#revision) return undefined;
    return this.#log.slice(revision - this.#base);
  }

  #changed(key: string): void {
    this.#revision++;
    this.#log.push(key);
    if (this.#log.length > this.#maxLog) {
      // Drop the older half at once: trimming one entry per change would copy the log each time.
      const drop = this.#log.length >> 1;
      this.#log = this.#log.slice(drop);
      this.#base += drop;
    }
  }
}
