import type { WatchEvent } from '../kv/port.js';
import type { TaskKind } from '../model.js';
import { ResumingWatch } from '../resuming-watch.js';
import { SortedList } from '../sorted-list.js';
import type { StoreContext } from './context.js';

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Ids a claim reads from the lane of one kind when its mirror is not live. */
const LANE_READ = 64;
/** Queue keys looked up in one read-only transaction (etcd allows 128 operations). */
const STALE_BATCH = 100;

/**
 * The manual lane (docs/ARCHITECTURE.md §2.6): the ids of queued manual tasks, by kind, at
 * `P/manual/<kind>/<id>` beside their queue keys, so that a claim finds an operator's run without
 * reading past the automatic work queued before it. Once {@link ManualLane.follow | followed}, a
 * mirror kept by a watch of the lane's prefix (loaded, then followed) answers claims with no read
 * (a peer's enqueue reaches it a moment later, as with the queue mirror); otherwise, and while that
 * watch is not live, a claim reads the lane. The lane is an index, not the queue: a release that predates it claims manual tasks from
 * the queue in FIFO order and leaves their lane keys behind, which the next claim here removes.
 */
export class ManualLane {
  readonly #ctx: StoreContext;
  readonly #prefix: string;
  /** Queued manual task ids by kind, oldest first (ids are UUIDv7): no sort per claim. */
  readonly #ids = new Map<TaskKind, SortedList<string>>();
  #watch: ResumingWatch | undefined;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
    this.#prefix = ctx.keys.manualPrefix();
  }

  /**
   * Keeps the mirror from now on (a master's scheduler asks for it): claims then read no lane.
   * Without it every claim reads the lane, which is exact but costs a read per claim.
   */
  follow(): void {
    if (this.#watch) return;
    const ctx = this.#ctx;
    this.#watch = new ResumingWatch({
      kv: ctx.kv,
      clock: ctx.clock,
      watch: [this.#prefix],
      load: [this.#prefix],
      onReload: () => this.#ids.clear(),
      onPage: (_prefix, pairs) => {
        for (const kv of pairs) this.#apply(kv.key, true);
      },
      onEvents: (events: readonly WatchEvent[]) => {
        for (const e of events) this.#apply(e.key, e.type === 'put');
      },
    });
  }

  /**
   * The queued manual tasks of each of `kinds` that has any, oldest first (ids are UUIDv7): from
   * the mirror while it is live (a copy of its sorted ids, no object per task: every pool wakes
   * on every queue change and asks), else read (keys only, the oldest {@link LANE_READ} of each).
   */
  async pages(kinds: readonly TaskKind[]): Promise<{ readonly kind: TaskKind; readonly ids: readonly string[] }[]> {
    if (this.#watch?.live) {
      return kinds.flatMap((kind) => {
        const ids = this.#ids.get(kind);
        return ids && ids.length > 0 ? [{ kind, ids: ids.slice() }] : [];
      });
    }
    const { kv, keys } = this.#ctx;
    const read = await Promise.all(
      kinds.map((kind) => kv.range(keys.manualPrefix(kind), { keysOnly: true, limit: LANE_READ })),
    );
    return kinds.flatMap((kind, i) => {
      const prefix = keys.manualPrefix(kind);
      const ids = (read[i]?.kvs ?? []).map((kv) => kv.key.slice(prefix.length));
      return ids.length > 0 ? [{ kind, ids }] : [];
    });
  }

  /** A change this instance committed (the watch reports it a moment later; until then, this). */
  noted(kind: TaskKind, id: string, queued: boolean): void {
    this.#apply(this.#ctx.keys.manual(kind, id), queued);
  }

  /**
   * Removes the lane keys whose task left its queue without taking its lane key along: a release
   * that predates the lane claimed it. Each removal is guarded on the queue key being gone, so a
   * task requeued meanwhile keeps its place. Returns how many were removed.
   */
  async removeStale(): Promise<number> {
    const { kv, keys } = this.#ctx;
    const lane = (await kv.range(this.#prefix, { keysOnly: true })).kvs.flatMap((found) => {
      const [kind, id] = found.key.slice(this.#prefix.length).split('/');
      return kind && id ? [{ kind, id }] : [];
    });
    let removed = 0;
    for (let i = 0; i < lane.length; i += STALE_BATCH) {
      const batch = lane.slice(i, i + STALE_BATCH);
      const res = await kv.txn(
        [],
        batch.map(({ kind, id }) => ({ type: 'get' as const, key: keys.queue(kind, id) })),
      );
      for (const [n, { kind, id }] of batch.entries()) {
        const r = res.results[n];
        if (r?.type === 'get' && r.kv) continue;
        const gone = await kv.txn(
          [{ key: keys.queue(kind, id), target: 'version', op: '==', value: 0 }],
          [{ type: 'delete', key: keys.manual(kind, id) }],
        );
        if (gone.succeeded) {
          removed++;
          this.#apply(keys.manual(kind, id), false);
        }
      }
    }
    return removed;
  }

  /** Stops following the lane. */
  async close(): Promise<void> {
    await this.#watch?.close();
  }

  #apply(key: string, put: boolean): void {
    const [kind, id, ...rest] = key.slice(this.#prefix.length).split('/');
    if (!kind || !id || rest.length > 0) return;
    let ids = this.#ids.get(kind);
    if (put) {
      if (!ids) this.#ids.set(kind, (ids = new SortedList<string>(byId)));
      if (ids.indexOf(id) < 0) ids.insert(id);
    } else if (ids) {
      ids.delete(id);
      if (ids.length === 0) this.#ids.delete(kind);
    }
  }
}
