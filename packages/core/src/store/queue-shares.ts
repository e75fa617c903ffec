import type { WatchEvent } from '../kv/port.js';
import { idTime } from './codec.js';
import type { StoreContext } from './context.js';
import { rendezvousRank } from './rendezvous.js';

/** How long one read of the live masters decides which queued tasks are this master's share. */
const PEERS_TTL_MS = 5000;
/** Rendezvous ranks remembered; cleared beyond this (a queue page is at most 2,048 ids per kind). */
const RANK_MEMO_MAX = 16_384;

/**
 * Which queued tasks are this master's share: the live masters, read from their registrations at
 * `P/masters/` at most every {@link PEERS_TTL_MS}, and where this master ranks for a task among
 * them (rendezvous hashing; 0: its own share).
 */
export class QueueShares {
  readonly #ctx: StoreContext;
  /** The live masters' ids (this one included) and when they were read. */
  #peers: { readonly ids: readonly string[]; readonly readAt: number } | undefined;
  #peersInFlight: Promise<readonly string[]> | undefined;
  /** Where this master ranks for a task id (0: its share), for the current {@link QueueShares.#peers}. */
  readonly #rank = new Map<string, number>();

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
  }

  /**
   * The live masters, this one included, read at most every {@link PEERS_TTL_MS}: a master that
   * joins is given a share a few seconds late, and one that dies keeps one until its orphans are
   * requeued (see {@link QueueShares.mastersChanged}).
   */
  async livePeers(): Promise<readonly string[]> {
    const now = this.#ctx.clock.now();
    if (this.#peers && now - this.#peers.readAt < PEERS_TTL_MS) return this.#peers.ids;
    this.#peersInFlight ??= (async () => {
      const prefix = this.#ctx.keys.mastersPrefix;
      const res = await this.#ctx.kv.range(prefix, { keysOnly: true });
      const ids = new Set(res.kvs.map((kv) => kv.key.slice(prefix.length)));
      ids.add(this.#ctx.masterId);
      const sorted = [...ids].sort();
      if (sorted.join('\0') !== this.#peers?.ids.join('\0')) this.#rank.clear();
      this.#peers = { ids: sorted, readAt: now };
      return sorted;
    })().finally(() => {
      this.#peersInFlight = undefined;
    });
    return this.#peersInFlight;
  }

  /** Where this master ranks for `id` among `peers` (0: its own share), remembered. */
  rankOf(id: string, peers: readonly string[]): number {
    let rank = this.#rank.get(id);
    if (rank === undefined) {
      if (this.#rank.size >= RANK_MEMO_MAX) this.#rank.clear();
      rank = rendezvousRank(id, peers, this.#ctx.masterId);
      this.#rank.set(id, rank);
    }
    return rank;
  }

  /**
   * Forgets the live masters read last: a master died (its orphans were requeued). Its share
   * would otherwise hold the requeued tasks until the next read, up to {@link PEERS_TTL_MS} later,
   * and the others take such a share last, after their own: a dead master's tasks waited up to
   * 5 s more for a slot.
   */
  mastersChanged(): void {
    this.#peers = undefined;
  }

  /**
   * Watches the queue for requeued orphans: a task put in the queue well after its enqueue (its
   * id says when) was recovered from a master that died, so the live masters have changed.
   */
  observeQueue(events: readonly Pick<WatchEvent, 'type' | 'key'>[]): void {
    // Already to be read again at the next claim: every queue change is seen here.
    if (!this.#peers) return;
    const now = this.#ctx.clock.now();
    for (const e of events) {
      if (e.type !== 'put') continue;
      const enqueuedAt = idTime(e.key.slice(e.key.lastIndexOf('/') + 1));
      if (enqueuedAt !== undefined && now - enqueuedAt > PEERS_TTL_MS) {
        this.mastersChanged();
        return;
      }
    }
  }
}
