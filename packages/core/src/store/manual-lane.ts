import type { WatchEvent } from '../kv/port.js';
import type { TaskKind, TaskSource } from '../model.js';
import { SortedList } from '../sorted-list.js';
import type { StoreContext } from './context.js';
import { scanPages } from './scan.js';

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Ids a claim reads from the lane of one kind when its mirror is not live. */
const LANE_READ = 64;
/** Queue keys looked up in one read-only transaction (etcd allows 128 operations). */
const STALE_BATCH = 100;

/**
 * The value a manual task's queue key holds (an automatic task's holds none). Every master keeps
 * a watch of the queue already (docs/ARCHITECTURE.md §3.2); the mark lets that watch's events
 * keep the lane's mirror too, where a watch of the lane of its own cost each master two more
 * events per manual task. Releases before it read queue keys only, never their values.
 */
export const MANUAL_QUEUE_MARK = 'manual';

/** The value to write at the queue key of a task from `source`. */
export function queueValue(source: TaskSource): string {
  return source === 'manual' ? MANUAL_QUEUE_MARK : '';
}

/**
 * The manual lane (docs/ARCHITECTURE.md §2.6): the ids of queued manual tasks, by kind, at
 * `P/manual/<kind>/<id>` beside their queue keys, so that a claim finds an operator's run without
 * reading past the automatic work queued before it. While the store is fed a queue watch (see
 * {@link ManualLane.setFeed}), a mirror answers claims with no read: loaded from the lane once,
 * then kept by the watch's events, whose queue keys carry {@link MANUAL_QUEUE_MARK} (a peer's
 * enqueue reaches it a moment later, as with the queue mirror); otherwise a claim reads the lane.
 * The lane is an index, not the queue: a release that predates it claims manual tasks from the
 * queue in FIFO order and leaves their lane keys behind, which the next recovery here removes.
 */
export class ManualLane {
  readonly #ctx: StoreContext;
  readonly #prefix: string;
  readonly #queuePrefix: string;
  /** Queued manual task ids by kind, oldest first (ids are UUIDv7): no sort per claim. */
  readonly #ids = new Map<TaskKind, SortedList<string>>();
  /** Whether the mirror answers claims: loaded, and fed since. */
  #live = false;
  /** Queue events seen while the mirror loads, applied once it has (undefined: not loading). */
  #pending: WatchEvent[] | undefined;
  /** Bumped per change of feed, so that a load the feed outlived is dropped. */
  #generation = 0;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
    this.#prefix = ctx.keys.manualPrefix();
    this.#queuePrefix = ctx.keys.queuePrefix();
  }

  /**
   * The queue watch feeding {@link ManualLane.observe} is established (`true`: the mirror loads the
   * lane, then answers claims) or lost (`false`: the mirror is dropped, and claims read the lane).
   */
  setFeed(live: boolean): void {
    this.#generation++;
    this.#live = false;
    this.#pending = undefined;
    this.#ids.clear();
    if (live) void this.#load(this.#generation);
  }

  /** What the queue watch reported (see {@link ManualLane.setFeed}). */
  observe(events: readonly WatchEvent[]): void {
    if (this.#pending) {
      for (const e of events) if (e.key.startsWith(this.#queuePrefix)) this.#pending.push(e);
    } else if (this.#live) {
      for (const e of events) this.#observed(e);
    }
  }

  /**
   * The queued manual tasks of each of `kinds` that has any, oldest first (ids are UUIDv7): from
   * the mirror while it is live (a copy of its sorted ids, no object per task: every pool wakes
   * on every queue change and asks), else read (keys only, the oldest {@link LANE_READ} of each).
   */
  async pages(kinds: readonly TaskKind[]): Promise<{ readonly kind: TaskKind; readonly ids: readonly string[] }[]> {
    if (this.#live) {
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

  /**
   * A change this instance committed (the watch reports it a moment later; until then, this), or
   * a task a claim found no longer queued: a lane key left behind by a release that predates the
   * lane is loaded with the rest, and no queue event ever removes it.
   */
  noted(kind: TaskKind, id: string, queued: boolean): void {
    // Not live, the mirror is not kept: it is loaded afresh when the feed comes back.
    if (this.#live) this.#apply(kind, id, queued);
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
          this.noted(kind, id, false);
        }
      }
    }
    return removed;
  }

  /** Loads the lane (keys only, every page), then applies what the queue watch reported meanwhile. */
  async #load(generation: number): Promise<void> {
    this.#pending = [];
    const loaded: { kind: TaskKind; id: string }[] = [];
    // Pages may be read at different revisions: events after the first page's are replayed, in
    // order, over what was read, which is exact because each one states a key's whole state.
    let revision: number | undefined;
    try {
      for await (const page of scanPages(this.#ctx.kv, this.#prefix, { keysOnly: true })) {
        revision ??= page.revision;
        for (const kv of page.kvs) {
          const [kind, id, ...rest] = kv.key.slice(this.#prefix.length).split('/');
          if (kind && id && rest.length === 0) loaded.push({ kind, id });
        }
      }
    } catch {
      // Not live: claims read the lane until the feed is set again (the queue watch reopens).
      if (generation === this.#generation) this.#pending = undefined;
      return;
    }
    if (generation !== this.#generation) return;
    const pending = this.#pending ?? [];
    this.#pending = undefined;
    for (const { kind, id } of loaded) this.#apply(kind, id, true);
    for (const e of pending) if (e.modRevision > (revision ?? 0)) this.#observed(e);
    this.#live = true;
  }

  /** One queue event: a manual task queued (its key holds the mark), or any task leaving the queue. */
  #observed(e: WatchEvent): void {
    if (!e.key.startsWith(this.#queuePrefix)) return;
    const [kind, id, ...rest] = e.key.slice(this.#queuePrefix.length).split('/');
    if (!kind || !id || rest.length > 0) return;
    this.#apply(kind, id, e.type === 'put' && e.value === MANUAL_QUEUE_MARK);
  }

  #apply(kind: TaskKind, id: string, queued: boolean): void {
    let ids = this.#ids.get(kind);
    if (queued) {
      if (!ids) this.#ids.set(kind, (ids = new SortedList<string>(byId)));
      if (ids.indexOf(id) < 0) ids.insert(id);
    } else if (ids) {
      ids.delete(id);
      if (ids.length === 0) this.#ids.delete(kind);
    }
  }
}
