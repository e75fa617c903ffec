import type { RangeResult } from '../kv/port.js';
import type { TaskKind } from '../model.js';
import type { StoreContext } from './context.js';
import type { QueueMirror } from './queue-mirror.js';
import type { QueueShares } from './queue-shares.js';

const QUEUE_PAGE = 256;
/** Most masters a first queue page is lengthened for (see {@link QueuePages.page}): 2,048 ids, about 100 KB. */
const PAGE_PEERS_MAX = 8;

/** One page of a kind's queue: candidate ids, oldest first, and whether the queue goes on. */
export interface QueuePage {
  readonly ids: readonly string[];
  readonly more: boolean;
}

/**
 * Pages of queue ids for the claimer to pick candidates from: the head from the {@link QueueMirror}
 * while it holds it, otherwise read from etcd (keys only), a first page then handed to the mirror.
 */
export class QueuePages {
  readonly #ctx: StoreContext;
  readonly #mirror: QueueMirror;
  readonly #shares: QueueShares;
  /** Queue page reads in flight, by queue prefix, with the mirror epoch they began in (see #read). */
  readonly #inFlight = new Map<string, { readonly read: Promise<RangeResult>; readonly epoch: number }>();

  constructor(ctx: StoreContext, mirror: QueueMirror, shares: QueueShares) {
    this.#ctx = ctx;
    this.#mirror = mirror;
    this.#shares = shares;
  }

  /**
   * Candidate ids of one page of `kind`'s queue: the first from the mirror when it holds the
   * queue's head (no read), else read — and a first page read is handed to the mirror to keep.
   * With peers, a page is as many times longer as there are masters (up to
   * {@link PAGE_PEERS_MAX}), so that it holds a page's worth of this master's own share; and a
   * mirrored head that holds none of it, with more of the queue beyond and half of it claimed
   * since it was read, is read again: the head has moved, and this master's share with it. (A
   * head that is mostly a dead or slow peer's share is taken from as it is, and read again only
   * each half page, not per claim.)
   */
  async page(kind: TaskKind, prefix: string, from: string | undefined, peers: readonly string[]): Promise<QueuePage> {
    const now = this.#ctx.clock.now();
    const head = from === undefined ? this.#mirror.head(kind, now) : undefined;
    if (
      head &&
      (head.complete || !head.halved || peers.length < 2 || head.ids.some((id) => this.#shares.rankOf(id, peers) === 0))
    ) {
      return { ids: head.ids, more: !head.complete };
    }
    if (head) this.#mirror.forget(kind);
    const limit = QUEUE_PAGE * Math.min(peers.length, PAGE_PEERS_MAX);
    const { read, epoch } = this.#read(prefix, from, limit);
    const page = await read;
    const ids = page.kvs.map((kv) => kv.key.slice(prefix.length));
    if (from === undefined) this.#mirror.adopt(kind, ids, !page.more, page.revision, epoch, now);
    return { ids, more: page.more };
  }

  /**
   * Reads a page of queue keys. Concurrent first-page reads of one instance (pool slots claiming
   * at once) share a single request: the page is only a list of candidates, and every claim is
   * re-checked by its transaction, so a read a few milliseconds old is as good as a fresh one.
   */
  #read(
    prefix: string,
    from: string | undefined,
    limit: number,
  ): { readonly read: Promise<RangeResult>; readonly epoch: number } {
    const read = (): Promise<RangeResult> =>
      this.#ctx.kv.range(prefix, { limit, keysOnly: true, ...(from ? { fromKey: from } : {}) });
    if (from) return { read: read(), epoch: this.#mirror.epoch };
    let pending = this.#inFlight.get(prefix);
    if (!pending) {
      pending = { read: read().finally(() => this.#inFlight.delete(prefix)), epoch: this.#mirror.epoch };
      this.#inFlight.set(prefix, pending);
    }
    return pending;
  }
}
