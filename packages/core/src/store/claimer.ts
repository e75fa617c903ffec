import { LeaseNotFoundError } from '../errors.js';
import { keyAfter } from '../keys.js';
import type { KeyValue } from '../kv/port.js';
import { ParkRecordSchema, type TaskKind, type TaskRecord, TaskRecordSchema, encodeTask, isParked } from '../model.js';
import { type Candidate, CandidateOrder } from './candidate-order.js';
import { decode, decodeOrNone } from './codec.js';
import type { StoreContext } from './context.js';
import { dependencyVerdict, failDependent } from './dependencies.js';
import { type CooldownRead, cooldownRead } from './cooldown-store.js';
import type { KnownRecord, KnownRecords, LocalClaims } from './local-state.js';
import type { ManualLane } from './manual-lane.js';
import type { QueueMirror } from './queue-mirror.js';
import { QueuePages } from './queue-pages.js';
import type { QueueShares } from './queue-shares.js';
import { holdTask } from './held.js';
import type { TimelineStore } from './timeline-store.js';

/** How {@link TaskStore.claimNext} treats the automatic tasks of a parked (kind, target). */
export interface ClaimOptions {
  /**
   * Hold them instead of running them (docs/ARCHITECTURE.md §2.7): the claim transaction checks
   * the pair's park, and a task whose pair is parked becomes `held` until the park ends. Only
   * once every master can read the `held` state (the `held_tasks` cluster feature, §2.8);
   * without it a task queued before its park runs once, as releases before it did.
   */
  readonly holdParked?: boolean;
  /**
   * The kinds whose automatic tasks may start now (docs/ARCHITECTURE.md §3.2: a kind outside its
   * maintenance window is left out); default every kind claimed. Of a kind left out, only manual
   * tasks are claimed, from the manual lane.
   */
  readonly automaticKinds?: readonly TaskKind[];
}

/**
 * Manual claims in a row after which a claimer takes automatic work first once: a steady trickle
 * of operators' runs then still leaves one claim in five to the sweeps, and a lone manual run
 * waits for no more than the slot it needs.
 */
export const MANUAL_STREAK = 4;

/** Widest window of queue candidates a claimer that keeps losing races picks its next try from. */
const CLAIM_SPREAD_MAX = 32;
/** Candidate records read in one transaction ahead of claim attempts. */
const READ_AHEAD = 8;
/** The candidates one claim call tried, and the records it read ahead (undefined: no such record). */
interface Attempts {
  readonly seen: Set<string>;
  readonly records: Map<string, KeyValue | undefined>;
}

/** What `#tryClaim` returns when another claimer took the task first. */
const LOST = Symbol('lost');
/** What `#tryClaim` returns when the task is queued no longer (or has no record). */
const GONE = Symbol('gone');

/** A claimed task, held under this instance's session. Pass it back to {@link TaskStore.finish}. */
export interface Claim {
  /** The task record. */
  readonly task: TaskRecord;
  /** Revision at which the claim key was created; `finish` requires it unchanged. */
  readonly revision: number;
  /** Session lease the claim rides on. */
  readonly leaseId: string;
  /**
   * The task's cooldown record as the claim transaction read it: `finish` writes the next one in
   * its own transaction, guarded by this revision, with no read of its own. Absent on claims not
   * made by {@link TaskStore.claimNext}; `finish` then reads it.
   */
  readonly cooldown?: CooldownRead;
}

/**
 * Claims queued tasks: FIFO across kinds, one running task per target, dependencies checked.
 * With other masters alive, each first claims its own share of the queue's head page (rendezvous
 * hashing of task ids over the registrations at `P/masters/`), so masters do not race for the
 * same head. The page is 256 ids per live master (up to 2,048), a page's worth of each share.
 * When it holds none of this master's share, the head is read again once half of it was
 * claimed; otherwise the master takes the others' share (which also covers a peer that died or
 * stalls) from the page's young end, the tasks it ranks next for first, where their owner
 * reaches last. FIFO thus loosens to "oldest of one's share within the head page"; contention
 * that remains is spread over the oldest few candidates: a claimer that loses a race draws its
 * next tries from a window of the oldest (up to {@link CLAIM_SPREAD_MAX}), widening per loss and
 * narrowing per win, so that masters stop racing each other for the very oldest task.
 * Uncontended, the oldest runnable task is claimed.
 */
export class Claimer {
  readonly #ctx: StoreContext;
  readonly #known: KnownRecords;
  readonly #claims: LocalClaims;
  readonly #mirror: QueueMirror;
  readonly #shares: QueueShares;
  readonly #pages: QueuePages;
  readonly #timeline: TimelineStore;
  readonly #lane: ManualLane;
  /** Manual tasks claimed in a row by this instance (see {@link MANUAL_STREAK}). */
  #manualStreak = 0;
  /** Width of the queue window the next claim draws its first try from (1: strictly oldest). */
  #spread = 1;

  constructor(
    ctx: StoreContext,
    known: KnownRecords,
    claims: LocalClaims,
    mirror: QueueMirror,
    shares: QueueShares,
    timeline: TimelineStore,
    lane: ManualLane,
  ) {
    this.#ctx = ctx;
    this.#timeline = timeline;
    this.#lane = lane;
    this.#known = known;
    this.#claims = claims;
    this.#mirror = mirror;
    this.#shares = shares;
    this.#pages = new QueuePages(ctx, mirror, shares);
  }

  /**
   * The next task of `kinds` (see the class): a queued manual task first, oldest first, from the
   * manual lane — except once after {@link MANUAL_STREAK} of them in a row, when automatic work
   * goes first — then the queue's own order, for the kinds whose automatic work may start.
   */
  async claimNext(kinds: readonly TaskKind[], options: ClaimOptions = {}): Promise<Claim | undefined> {
    const lease = this.#ctx.session.lease;
    if (!lease || kinds.length === 0) return undefined;
    const hold = options.holdParked === true;
    const allowed = options.automaticKinds;
    const automatic = allowed ? kinds.filter((kind) => allowed.includes(kind)) : kinds;
    const automaticFirst = this.#manualStreak >= MANUAL_STREAK && automatic.length > 0;
    // One call's attempts, shared by its lane and queue rounds: a manual task is in both, and a
    // candidate tried (or read) in one is not tried again in the other.
    const tried: Attempts = { seen: new Set(), records: new Map() };
    const claim =
      (automaticFirst ? undefined : await this.#claimFrom(true, kinds, lease.id, hold, tried)) ??
      (automatic.length > 0 ? await this.#claimFrom(false, automatic, lease.id, hold, tried) : undefined) ??
      (automaticFirst ? await this.#claimFrom(true, kinds, lease.id, hold, tried) : undefined);
    if (claim) this.#manualStreak = claim.task.source === 'manual' ? this.#manualStreak + 1 : 0;
    return claim;
  }

  /**
   * Claims from the queues of `kinds` in their order (see the class), or from the manual lane: the
   * same order (each master's share first) over the queued manual tasks alone, read in one page.
   * A lane key left by a release that predates the lane is skipped here and removed by recovery.
   */
  async #claimFrom(
    lane: boolean,
    kinds: readonly TaskKind[],
    leaseId: string,
    hold: boolean,
    { seen, records }: Attempts,
  ): Promise<Claim | undefined> {
    const k = this.#ctx.keys;
    // Target locks seen held during this call: later candidates on those targets are skipped
    // without a transaction.
    const locked = new Set<string>();
    const cursors = new Map<TaskKind, string | undefined>(kinds.map((kind) => [kind, undefined]));
    const exhausted = new Set<TaskKind>();
    // Contention outlives one call: a claimer that just lost races starts spread out.
    let spread = this.#spread;
    const peers = await this.#shares.livePeers();
    while (exhausted.size < kinds.length) {
      // One page per kind, merged by id: ids are UUIDv7, so this is FIFO across kinds.
      const pages: { readonly kind: TaskKind; readonly ids: readonly string[] }[] = [];
      if (lane) {
        for (const kind of kinds) exhausted.add(kind);
        pages.push(...(await this.#lane.pages(kinds)));
        if (pages.length === 0) return undefined;
      }
      for (const kind of kinds) {
        if (exhausted.has(kind)) continue;
        const prefix = k.queuePrefix(kind);
        const page = await this.#pages.page(kind, prefix, cursors.get(kind), peers);
        if (!page.more) exhausted.add(kind);
        const last = page.ids.at(-1);
        if (last !== undefined) cursors.set(kind, keyAfter(prefix + last));
        pages.push({ kind, ids: page.ids });
      }
      const candidates = this.#order(pages, peers);
      candidates.spread(0, spread, () => this.#ctx.random.next());
      for (let i = 0; candidates.has(i); i++) {
        const c = candidates.at(i);
        if (seen.has(c.id) || this.#claims.attempting(c.id)) continue;
        seen.add(c.id);
        this.#claims.beginAttempt(c.id);
        try {
          if (!this.#known.has(c.id) && !records.has(c.id)) await this.#readAhead(candidates, i, records, seen);
          const claim = await this.#tryClaim(c.kind, c.id, locked, leaseId, hold, records.get(c.id));
          // Not queued any more: a lane key a release before the lane left behind (loaded with the
          // lane, and no queue event removes it), or a peer's claim the mirror has not seen yet.
          if (lane && (claim === LOST || claim === GONE)) this.#lane.noted(c.kind, c.id, false);
          if (claim === LOST) {
            // Another master took it: every loser of that race would otherwise try the next oldest
            // together and lose again, one fewer each time. Each loss widens the window the next
            // try is drawn from, so contenders spread out while an uncontended claim stays FIFO.
            spread = Math.min(spread * 2, CLAIM_SPREAD_MAX);
            candidates.spread(i + 1, spread, () => this.#ctx.random.next());
          } else if (claim && claim !== GONE) {
            this.#spread = Math.max(1, spread >> 1);
            return claim;
          }
        } catch (err) {
          if (err instanceof LeaseNotFoundError) {
            this.#ctx.session.markLost(leaseId);
            return undefined;
          }
          throw err;
        } finally {
          this.#claims.endAttempt(c.id);
        }
      }
    }
    return undefined;
  }

  /**
   * Reads the records of the next few candidates in one read-only transaction: under contention
   * most candidates of a page were claimed by peers since it was read, and finding that out one
   * `get` at a time cost a round trip each.
   */
  async #readAhead(
    candidates: CandidateOrder,
    from: number,
    into: Map<string, KeyValue | undefined>,
    seen: ReadonlySet<string>,
  ): Promise<void> {
    const ids: string[] = [];
    for (let i = from; ids.length < READ_AHEAD && candidates.has(i); i++) {
      const { id } = candidates.at(i);
      if (i === from || (!seen.has(id) && !this.#claims.attempting(id) && !this.#known.has(id) && !into.has(id))) {
        ids.push(id);
      }
    }
    const res = await this.#ctx.kv.txn(
      [],
      ids.map((id) => ({ type: 'get', key: this.#ctx.keys.task(id) })),
    );
    ids.forEach((id, n) => {
      const r = res.results[n];
      const kv = r?.type === 'get' ? r.kv : undefined;
      // Remembered past this call: the next claims of this instance try these candidates too, and
      // a record that changed since is caught by the claim transaction, whose failure branch
      // returns it fresh. (Per call only, that was one read per claim of a peer-enqueued task.)
      let task: TaskRecord | undefined;
      try {
        task = kv ? decode(TaskRecordSchema, kv) : undefined;
      } catch {
        // A corrupt record stays raw: the claim that reaches it fails on it, as before.
      }
      // A record read before this instance's own claim of it is no candidate: as if gone.
      if (kv && task) {
        if (!this.#known.remember(task, kv.modRevision)) into.set(id, undefined);
      } else into.set(id, kv);
    });
  }

  /**
   * The order to try one round's pages in (see {@link CandidateOrder}): one kind's page is already
   * FIFO; several are merged by id.
   */
  #order(
    pages: readonly { readonly kind: TaskKind; readonly ids: readonly string[] }[],
    peers: readonly string[],
  ): CandidateOrder {
    const rank = peers.length > 1 ? (id: string): number => this.#shares.rankOf(id, peers) : undefined;
    const [only] = pages;
    if (pages.length === 1 && only) return new CandidateOrder(only.ids, () => only.kind, rank);
    const merged: Candidate[] = pages.flatMap(({ kind, ids }) => ids.map((id) => ({ kind, id })));
    merged.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return new CandidateOrder(
      merged.map((c) => c.id),
      (i) => merged[i]!.kind,
      rank,
    );
  }

  async #tryClaim(
    kind: TaskKind,
    id: string,
    locked: Set<string>,
    leaseId: string,
    hold: boolean,
    readAhead?: KeyValue,
  ): Promise<Claim | typeof LOST | typeof GONE | undefined> {
    const { kv, keys: k, clock, masterId } = this.#ctx;
    let current: KnownRecord | undefined = this.#known.take(id);
    if (!current) {
      // Not remembered, so read ahead by the caller; absent there means no such record.
      if (!readAhead) return GONE;
      current = { task: decode(TaskRecordSchema, readAhead), modRevision: readAhead.modRevision };
    }
    // The park of the task's pair as last seen (0: none), when the claim must check it.
    let parkRevision = 0;
    // At most three: once more when the record (remembered, or read ahead) turned out stale, and
    // once more when the pair has a park that turned out lapsed.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { task, modRevision }: KnownRecord = current;
      if (task.state === 'running') return LOST;
      if (task.state !== 'queued' || task.kind !== kind) return GONE;
      const lockKey = k.targetLock(task.target);
      if (locked.has(lockKey)) return undefined;
      if (task.depends_on) {
        const verdict = await dependencyVerdict(this.#ctx, task.depends_on);
        if (verdict.state === 'wait') return undefined;
        if (verdict.state === 'fail') {
          await failDependent(this.#ctx, task, modRevision, verdict.id);
          return undefined;
        }
      }
      // Manual tasks are never held: only the automatic work of a parked pair waits.
      const parkKey = hold && task.source === 'sweep' ? k.parked(task.kind, task.target) : undefined;
      const running: TaskRecord = {
        ...task,
        state: 'running',
        started_at: clock.now(),
        attempt: task.attempt + 1,
        owner: masterId,
      };
      const res = await kv.txn(
        [
          { key: k.task(id), target: 'modRevision', op: '==', value: modRevision },
          { key: k.queue(kind, id), target: 'version', op: '>', value: 0 },
          { key: k.claim(id), target: 'version', op: '==', value: 0 },
          { key: lockKey, target: 'version', op: '==', value: 0 },
          ...(parkKey
            ? [{ key: parkKey, target: 'modRevision' as const, op: '==' as const, value: parkRevision }]
            : []),
        ],
        [
          { type: 'put', key: k.task(id), value: encodeTask(running) },
          { type: 'delete', key: k.queue(kind, id) },
          ...(task.source === 'manual' ? [{ type: 'delete' as const, key: k.manual(kind, id) }] : []),
          { type: 'put', key: k.running(id), value: masterId },
          { type: 'put', key: k.claim(id), value: masterId, lease: leaseId },
          { type: 'put', key: lockKey, value: id, lease: leaseId },
          { type: 'get', key: k.cooldown(task.kind, task.target) },
        ],
        [
          { type: 'get', key: lockKey },
          { type: 'get', key: k.task(id) },
          ...(parkKey ? [{ type: 'get' as const, key: parkKey }] : []),
        ],
      );
      if (res.succeeded) {
        this.#claims.hold(id, res.revision);
        this.#known.claimed(id, res.revision);
        this.#mirror.apply([{ type: 'delete', key: k.queue(kind, id), modRevision: res.revision }]);
        if (task.source === 'manual') this.#lane.noted(kind, id, false);
        const read = res.results.at(-1);
        return {
          task: running,
          revision: res.revision,
          leaseId,
          cooldown: cooldownRead(read?.type === 'get' ? read.kv : undefined),
        };
      }
      const [lock, fresh, parkNow] = res.results;
      if (lock?.type === 'get' && lock.kv) {
        if (lock.kv.value === id) return LOST;
        locked.add(lockKey);
      }
      if (fresh?.type !== 'get' || !fresh.kv) return GONE;
      if (fresh.kv.modRevision !== modRevision) {
        // Stale: try once more on the record the failure branch returned.
        if (attempt > 0) return undefined;
        current = { task: decode(TaskRecordSchema, fresh.kv), modRevision: fresh.kv.modRevision };
        continue;
      }
      const park = parkNow?.type === 'get' ? parkNow.kv : undefined;
      if (!parkKey || !park || park.modRevision === parkRevision || (lock?.type === 'get' && lock.kv)) return undefined;
      const parked = decodeOrNone(ParkRecordSchema, park);
      if (parked && isParked(parked, clock.now())) {
        const at = await holdTask(this.#ctx, this.#timeline, task, modRevision, park.modRevision, parked);
        if (at !== undefined)
          this.#mirror.apply([{ type: 'delete', key: k.queue(task.kind, task.id), modRevision: at }]);
        return undefined;
      }
      // A lapsed (or unreadable) park gates nothing: claim, guarded on the park as just read.
      parkRevision = park.modRevision;
    }
    return undefined;
  }
}
