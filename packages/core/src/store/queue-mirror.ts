import type { WatchEvent } from '../kv/port.js';
import { partitionPoint } from '../sorted-list.js';

/**
 * How long a mirrored queue head is trusted before a claim reads the queue again: a bound on what
 * any change the mirror missed (a bug, a dropped event) can cost — a delay, never a lost task.
 */
const VIEW_TTL_MS = 10_000;
/** Recent queue changes kept, to replay onto a page whose read raced them. */
const RECENT_MAX = 4096;
/** Per-task revisions remembered against changes reported twice or out of order; cleared past this. */
const SEEN_MAX = 16_384;

interface Change {
  readonly kind: string;
  readonly id: string;
  readonly put: boolean;
  readonly revision: number;
}

interface View {
  /** Queued task ids, ascending (ids are UUIDv7, so this is FIFO). */
  readonly ids: string[];
  /** Whether the page held the whole queue of its kind. */
  readonly complete: boolean;
  /** Last id of a partial page: later ids belong to pages not read, and are left to them. */
  readonly bound: string | undefined;
  /** How many ids the page held when it was read. */
  readonly read: number;
  /** Revision the page was read at: changes at or below it are already in it. */
  readonly revision: number;
  readonly readAt: number;
}

/** The mirrored head of one kind's queue. */
export interface QueueHead {
  /** Queued task ids, oldest first. */
  readonly ids: readonly string[];
  /** Whether these are all of the kind's queued tasks (else more follow the last). */
  readonly complete: boolean;
  /** Whether claims since the page was read took at least half of it. */
  readonly halved: boolean;
}

/**
 * A mirror of the head of each kind's queue, kept from the queue watch the scheduler holds anyway
 * (and from this instance's own enqueues and claims, which the watch reports a moment later), so
 * that a claim picks its candidates without reading a queue page: that read was one of a task's
 * four etcd calls. Trusted only while the feed is live: a page read begun after the watch was
 * established, plus every change since the page's revision. Candidates are only candidates —
 * every claim is still decided by its transaction — so a stale entry costs a failed attempt, and
 * a missed one a delay of at most {@link VIEW_TTL_MS}.
 */
export class QueueMirror {
  readonly #prefix: string;
  #live = false;
  #epoch = 0;
  readonly #views = new Map<string, View>();
  #recent: Change[] = [];
  /** Changes at or below this revision may have been dropped from {@link #recent}. */
  #floor = 0;
  readonly #seen = new Map<string, number>();

  /** @param prefix - the queue prefix of all kinds (`Keys.queuePrefix()`). */
  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** A page read begun now is adoptable only while the epoch is unchanged. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The queue watch was established (true) or lost (false): what was mirrored before is dropped. */
  setLive(live: boolean): void {
    this.#live = live;
    this.#epoch++;
    this.#views.clear();
    this.#recent = [];
    this.#floor = 0;
    this.#seen.clear();
  }

  /** Changes of queue keys, as the watch reports them or as this instance committed them. */
  apply(events: readonly Pick<WatchEvent, 'type' | 'key' | 'modRevision'>[]): void {
    if (!this.#live) return;
    for (const e of events) {
      if (!e.key.startsWith(this.#prefix)) continue;
      const rest = e.key.slice(this.#prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 1) continue;
      this.#note({
        kind: rest.slice(0, slash),
        id: rest.slice(slash + 1),
        put: e.type === 'put',
        revision: e.modRevision,
      });
    }
  }

  /** The mirrored head of `kind`'s queue, or undefined when a claim must read a page. */
  head(kind: string, now: number): QueueHead | undefined {
    if (!this.#live) return undefined;
    const view = this.#views.get(kind);
    if (!view) return undefined;
    if (now - view.readAt >= VIEW_TTL_MS || (!view.complete && view.ids.length === 0)) {
      this.#views.delete(kind);
      return undefined;
    }
    return { ids: view.ids.slice(), complete: view.complete, halved: view.ids.length * 2 <= view.read };
  }

  /** Drops `kind`'s mirrored head, so that the next claim reads the queue. */
  forget(kind: string): void {
    this.#views.delete(kind);
  }

  /** Adopts a first page of `kind`'s queue (ids ascending) read at `revision` by a read begun in `epoch`. */
  adopt(kind: string, ids: readonly string[], complete: boolean, revision: number, epoch: number, now: number): void {
    if (!this.#live || epoch !== this.#epoch || revision < this.#floor) return;
    const view: View = {
      ids: [...ids],
      complete,
      bound: complete ? undefined : ids.at(-1),
      read: ids.length,
      revision,
      readAt: now,
    };
    for (const c of this.#recent) if (c.kind === kind && c.revision > revision) applyTo(view, c.id, c.put);
    this.#views.set(kind, view);
  }

  #note(change: Change): void {
    const seen = this.#seen.get(change.id);
    if (seen !== undefined && change.revision <= seen) return;
    if (this.#seen.size >= SEEN_MAX) this.#seen.clear();
    this.#seen.set(change.id, change.revision);
    this.#recent.push(change);
    if (this.#recent.length > RECENT_MAX) {
      const dropped = this.#recent.splice(0, RECENT_MAX / 2);
      for (const c of dropped) this.#floor = Math.max(this.#floor, c.revision);
    }
    const view = this.#views.get(change.kind);
    if (view && change.revision > view.revision) applyTo(view, change.id, change.put);
  }
}

function applyTo(view: View, id: string, put: boolean): void {
  const { ids } = view;
  const lo = partitionPoint(ids, (x) => x < id);
  const present = ids[lo] === id;
  if (put) {
    if (present || (view.bound !== undefined && id > view.bound)) return;
    ids.splice(lo, 0, id);
  } else if (present) {
    ids.splice(lo, 1);
  }
}
