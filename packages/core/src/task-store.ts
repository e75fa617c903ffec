import type { z } from 'zod';
import { type Clock, systemClock } from './clock.js';
import { ClaimLostError, ContentionError, CorruptRecordError, LeaseNotFoundError, ValidationError } from './errors.js';
import { createIdGenerator } from './ids.js';
import { type Keys, keysFor, targetFromHex } from './keys.js';
import type { KeyValue, Kv, RangeResult, TxnOp } from './kv/port.js';
import {
  type ErrorClass,
  type MasterInfo,
  type StoreStats,
  type TaskCooldown,
  type TaskKind,
  type TaskRecord,
  type TaskSource,
  type TaskState,
  StoreStatsSchema,
  SweepMarkSchema,
  TaskCooldownSchema,
  TaskKindSchema,
  TaskRecordSchema,
  TargetSchema,
  encodeCooldown,
  encodeTask,
  isTerminal,
} from './model.js';
import {
  type CooldownDecision,
  type CooldownPolicy,
  DEFAULT_COOLDOWN_POLICY,
  isCooling,
  nextCooldown,
  sanitizeError,
  wouldCool,
} from './policy.js';
import { type Random, cryptoRandom } from './random.js';
import { Session, type SessionEvent } from './session.js';

/** Options of {@link TaskStore.open}. */
export interface TaskStoreOptions {
  /** The store to keep state in (etcd, or MemoryKv embedded). */
  readonly kv: Kv;
  /** This master's id: written as claim owner and registration key. */
  readonly masterId: string;
  /** Key prefix (default `/maintd`). */
  readonly prefix?: string;
  /** Time source (default: the system clock). */
  readonly clock?: Clock;
  /** Randomness for ids and retry jitter (default: crypto). */
  readonly random?: Random;
  /** Session lease TTL in seconds (default 30, minimum 5). */
  readonly leaseTtlSecs?: number;
  /** A task orphaned more often than this is failed instead of requeued (default 5). */
  readonly maxAttempts?: number;
  /** Terminal tasks kept (default 1000). */
  readonly historyLimit?: number;
  /** Terminal tasks older than this are pruned; 0 = count cap only (default 86400). */
  readonly historyTtlSecs?: number;
  /** Finishes between two history prunes of this instance (default 50). */
  readonly pruneEvery?: number;
  /** Cooldown policy overrides. */
  readonly cooldown?: Partial<CooldownPolicy>;
  /** Registration published at `P/masters/<id>` while the session lives. */
  readonly info?: Omit<MasterInfo, 'id'>;
  /** Session lifecycle notifications (lost, renewed). */
  readonly onSessionEvent?: (event: SessionEvent) => void;
}

/** What {@link TaskStore.enqueue} did. */
export interface EnqueueResult {
  /** The new task, or the active one it deduped to. */
  readonly task: TaskRecord;
  /** False on a dedupe hit. */
  readonly created: boolean;
}

/** A claimed task, held under this instance's session. Pass it back to {@link TaskStore.finish}. */
export interface Claim {
  /** The task record. */
  readonly task: TaskRecord;
  /** Revision at which the claim key was created; `finish` requires it unchanged. */
  readonly revision: number;
  /** Session lease the claim rides on. */
  readonly leaseId: string;
}

/** How a task ended. */
export type TaskOutcome =
  | { readonly ok: true; readonly detail: string }
  | { readonly ok: false; readonly error: string; readonly errorClass: ErrorClass };

/** Result of {@link TaskStore.recordFailure}. */
export type RecordFailureResult =
  | Exclude<CooldownDecision, { action: 'write' }>
  | (Extract<CooldownDecision, { action: 'write' }> & {
      /** CAS conflicts met before the write landed. */
      readonly conflicts: number;
    });

/** Cooldown bookkeeping that followed a committed finish. */
export type CooldownEffect =
  | { readonly type: 'cleared'; readonly existed: boolean }
  | { readonly type: 'failure'; readonly result: RecordFailureResult }
  | { readonly type: 'error'; readonly error: unknown };

/** Result of {@link TaskStore.finish}. */
export interface FinishResult {
  /** The task record. */
  readonly task: TaskRecord;
  /** What the cooldown bookkeeping did. */
  readonly cooldown: CooldownEffect;
  /** Terminal tasks pruned after this finish (amortised; usually 0). */
  readonly pruned: number;
}

/** Result of {@link TaskStore.recoverOrphaned}. */
export interface RecoveryResult {
  /** Ids put back in the queue, FIFO position kept. */
  readonly requeued: readonly string[];
  /** Ids failed for exceeding the attempt limit. */
  readonly failed: readonly string[];
}

/** Filter and page of {@link TaskStore.listTasks}. */
export interface ListTasksQuery {
  /** Only tasks in this state. */
  readonly state?: TaskState;
  /** Only tasks of this kind. */
  readonly kind?: TaskKind;
  /** Only tasks of this store. */
  readonly target?: string;
  /** Page size (default 50). */
  readonly limit?: number;
  /** Opaque cursor from a previous page. */
  readonly cursor?: string;
}

/** A page of tasks, newest first. */
export interface TaskPage {
  /** The page, newest first. */
  readonly tasks: readonly TaskRecord[];
  /** Tasks matching the filter. */
  readonly total: number;
  /** Cursor of the next page, or null at the end. */
  readonly nextCursor: string | null;
}

/** A held coordination lock; release it when done (it also dies with the session). */
export interface HeldLock {
  /** The lock’s name. */
  readonly name: string;
  /** Releases the lock if still held. */
  release(): Promise<void>;
}

const QUEUE_PAGE = 256;
const KNOWN_LIMIT = 4096;
/** Widest window of queue candidates a claimer that keeps losing races picks its next try from. */
const CLAIM_SPREAD_MAX = 32;
/** Candidate records read in one transaction ahead of claim attempts. */
const READ_AHEAD = 8;
/** What `#tryClaim` returns when another claimer took the task first. */
const LOST = Symbol('lost');
// Large pages: a sweep reads stats, cooldowns and dedupe keys in one round trip each up to this
// many stores (about 3 MB of cooldown records), so its cost does not grow with the fleet.
const SCAN_PAGE = 10_000;
// History scans are background work over the biggest prefix: small pages keep memory flat.
const HISTORY_PAGE = 1000;
const DELETE_BATCH = 100;
const ENQUEUE_ATTEMPTS = 4;
const COOLDOWN_ATTEMPTS = 64;

/**
 * The task queue, claims, history and failure cooldown, over any {@link Kv} (DESIGN §2.6–2.7).
 * Safe to use from many instances (masters) at once: every state change is one guarded
 * transaction. Holds a session lease; call {@link TaskStore.close} to release it.
 */
export class TaskStore {
  /** The key layout under this store’s prefix. */
  readonly keys: Keys;
  /** This instance’s master id (claim owner). */
  readonly masterId: string;
  /** The effective cooldown policy. */
  readonly policy: CooldownPolicy;
  /** This instance’s session lease. */
  readonly session: Session;
  readonly #kv: Kv;
  readonly #clock: Clock;
  readonly #random: Random;
  /** Width of the queue window the next claim draws its first try from (1: strictly oldest). */
  #spread = 1;
  readonly #newId: () => string;
  readonly #maxAttempts: number;
  readonly #historyLimit: number;
  readonly #historyTtlMs: number;
  readonly #pruneEvery: number;
  #finishesSincePrune = 0;
  /** Before this time no retained terminal task can reach the history TTL (from the last scan). */
  #nextTtlDue = -Infinity;
  /** Lower bound (ms) that last held the newest page (see #newestKeys). */
  #lowHint: number | undefined;
  /** Queue page reads in flight, by queue prefix (see #queuePage). */
  readonly #pagesInFlight = new Map<string, Promise<RangeResult>>();
  /** Queued records this instance wrote, with their revision (see #remember). */
  readonly #known = new Map<string, { task: TaskRecord; modRevision: number }>();
  /** Ids of claims handed to callers and not yet finished. */
  readonly #held = new Set<string>();
  /** Ids a sibling claim of this instance is attempting, so concurrent pool slots don't collide. */
  readonly #attempting = new Set<string>();

  private constructor(o: TaskStoreOptions, keys: Keys, session: Session, clock: Clock, random: Random) {
    this.#kv = o.kv;
    this.keys = keys;
    this.session = session;
    this.masterId = o.masterId;
    this.#clock = clock;
    this.#random = random;
    this.#newId = createIdGenerator(clock, random);
    this.#maxAttempts = o.maxAttempts ?? 5;
    this.#historyLimit = Math.max(1, o.historyLimit ?? 1000);
    this.#historyTtlMs = (o.historyTtlSecs ?? 86400) * 1000;
    this.#pruneEvery = Math.max(1, o.pruneEvery ?? 50);
    this.policy = Object.freeze({ ...DEFAULT_COOLDOWN_POLICY, ...o.cooldown });
  }

  /** Opens a session, registers, recovers orphaned tasks and prunes history. */
  static async open(options: TaskStoreOptions): Promise<TaskStore> {
    const clock = options.clock ?? systemClock;
    const keys = keysFor(options.prefix);
    const session = await Session.open({
      kv: options.kv,
      keys,
      clock,
      masterId: options.masterId,
      ...(options.leaseTtlSecs !== undefined ? { ttlSecs: options.leaseTtlSecs } : {}),
      ...(options.info ? { info: options.info } : {}),
      ...(options.onSessionEvent ? { onEvent: options.onSessionEvent } : {}),
    });
    const store = new TaskStore(options, keys, session, clock, options.random ?? cryptoRandom);
    try {
      await store.recoverOrphaned();
      await store.pruneHistory();
    } catch (err) {
      await session.close();
      throw err;
    }
    return store;
  }

  /** Revokes the session: claims still held are recovered by peers at once. */
  async close(): Promise<void> {
    await this.session.close();
  }

  // ---------------------------------------------------------------- tasks

  /**
   * Queues a task. A task without dependencies dedupes against an active (queued or running)
   * task of the same kind and target and returns it with `created: false`. Never gated by
   * cooldown.
   */
  async enqueue(
    kind: TaskKind,
    target: string,
    options: { readonly dependsOn?: readonly string[]; readonly source?: TaskSource } = {},
  ): Promise<EnqueueResult> {
    parseInput(TaskKindSchema, kind, 'kind');
    parseInput(TargetSchema, target, 'target');
    const dependsOn = [...new Set(options.dependsOn ?? [])];
    for (const [i, dep] of dependsOn.entries()) parseInput(TaskRecordSchema.shape.id, dep, `depends_on[${i}]`);
    const task: TaskRecord = {
      id: this.#newId(),
      kind,
      target,
      state: 'queued',
      source: options.source ?? 'manual',
      enqueued_at: this.#clock.now(),
      attempt: 0,
      ...(dependsOn.length > 0 ? { depends_on: dependsOn } : {}),
    };
    const k = this.keys;
    const writes: TxnOp[] = [
      { type: 'put', key: k.task(task.id), value: encodeTask(task) },
      { type: 'put', key: k.queue(kind, task.id), value: '' },
    ];
    if (dependsOn.length > 0) {
      const res = await this.#kv.txn([], writes);
      this.#remember(task, res.revision);
      return { task, created: true };
    }
    const dedupeKey = k.dedupe(kind, target);
    for (let attempt = 0; attempt < ENQUEUE_ATTEMPTS; attempt++) {
      const res = await this.#kv.txn(
        [{ key: dedupeKey, target: 'version', op: '==', value: 0 }],
        [...writes, { type: 'put', key: dedupeKey, value: task.id }],
        [{ type: 'get', key: dedupeKey }],
      );
      if (res.succeeded) {
        this.#remember(task, res.revision);
        return { task, created: true };
      }
      const held = res.results[0]?.type === 'get' ? res.results[0].kv : undefined;
      if (!held) continue;
      const existing = await this.getTask(held.value);
      if (existing && !isTerminal(existing.state)) return { task: existing, created: false };
      // The key outlived its task: remove it only if it still says what we read, then retry.
      await this.#kv.txn(
        [{ key: dedupeKey, target: 'modRevision', op: '==', value: held.modRevision }],
        [{ type: 'delete', key: dedupeKey }],
      );
    }
    throw new ContentionError(`failed to resolve concurrent task enqueue for ${kind} '${target}'`);
  }

  /** The task with this id, or undefined. */
  async getTask(id: string): Promise<TaskRecord | undefined> {
    const kv = await this.#kv.get(this.keys.task(id));
    return kv ? decode(TaskRecordSchema, kv) : undefined;
  }

  /** Tasks newest first, optionally filtered, in pages. */
  async listTasks(query: ListTasksQuery = {}): Promise<TaskPage> {
    const limit = Math.max(1, query.limit ?? 50);
    const prefix = this.keys.tasksPrefix;
    const filtered = query.state !== undefined || query.kind !== undefined || query.target !== undefined;
    const from = query.cursor ? prefix + query.cursor : undefined;
    if (!filtered) {
      const [keys, total] = await Promise.all([this.#newestKeys(limit + 1, from), this.#taskCount()]);
      const shown = keys.slice(0, limit);
      const oldest = shown.at(-1);
      const newest = shown[0];
      const page =
        oldest && newest ? await this.#kv.range(prefix, { fromKey: oldest, toKey: `${newest}\0` }) : { kvs: [] };
      const byKey = new Map(page.kvs.map((kv) => [kv.key, kv]));
      const tasks = shown.flatMap((k) => {
        const kv = byKey.get(k);
        return kv ? [decode(TaskRecordSchema, kv)] : [];
      });
      const next = keys[limit];
      return { tasks, total, nextCursor: next ? next.slice(prefix.length) : null };
    }
    const match = (t: TaskRecord): boolean =>
      (query.state === undefined || t.state === query.state) &&
      (query.kind === undefined || t.kind === query.kind) &&
      (query.target === undefined || t.target === query.target);
    const tasks: TaskRecord[] = [];
    let total = 0;
    let nextCursor: string | null = null;
    for await (const kv of this.#scan(prefix, true)) {
      const t = decode(TaskRecordSchema, kv);
      if (!match(t)) continue;
      total++;
      if (from !== undefined && kv.key > from) continue;
      if (tasks.length < limit) tasks.push(t);
      else nextCursor ??= kv.key.slice(prefix.length);
    }
    return { tasks, total, nextCursor };
  }

  /**
   * The newest `n` task keys at or before `through` (inclusive), newest first. Avoids etcd's
   * descending range, which reads the whole prefix to sort it: ids are UUIDv7, so a key is
   * bounded below by the time it encodes, and windows of growing age are probed until one holds
   * `n` keys. Typically one or two small reads, whatever the size of the history.
   */
  async #newestKeys(n: number, through: string | undefined): Promise<string[]> {
    const prefix = this.keys.tasksPrefix;
    const toKey = through !== undefined ? `${through}\0` : undefined;
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
        ...(lowMs > 0 ? { fromKey: prefix + idLowerBound(lowMs) } : {}),
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

  /** Count of all task records. */
  async #taskCount(): Promise<number> {
    return (await this.#kv.range(this.keys.tasksPrefix, { countOnly: true })).count;
  }

  /** Number of queued tasks (of one kind, or all). */
  async queueDepth(kind?: TaskKind): Promise<number> {
    return (await this.#kv.range(this.keys.queuePrefix(kind), { countOnly: true })).count;
  }

  /**
   * Claims the oldest runnable task of the given kinds, or returns undefined. Every kind takes
   * the per-target lock, so at most one task per store runs at a time. A task whose dependency
   * failed or vanished is failed here; one whose dependency is still active is skipped.
   *
   * Under contention the order is FIFO within a window: a claimer that loses a race to another
   * instance draws its next tries from the oldest few (up to 32) candidates, widening per loss and
   * narrowing per win, so that masters stop racing each other for the very oldest task. Uncontended,
   * the oldest runnable task is claimed.
   */
  async claimNext(kinds: readonly TaskKind[]): Promise<Claim | undefined> {
    const lease = this.session.lease;
    if (!lease || kinds.length === 0) return undefined;
    const k = this.keys;
    // Target locks seen held during this call: later candidates on those targets are skipped
    // without a transaction.
    const locked = new Set<string>();
    const cursors = new Map<TaskKind, string | undefined>(kinds.map((kind) => [kind, undefined]));
    const exhausted = new Set<TaskKind>();
    const seen = new Set<string>();
    // Task records read ahead of their claim attempts (undefined: no such record).
    const records = new Map<string, KeyValue | undefined>();
    // Contention outlives one call: a claimer that just lost races starts spread out.
    let spread = this.#spread;
    while (exhausted.size < kinds.length) {
      // One page per kind, merged by id: ids are UUIDv7, so this is FIFO across kinds.
      const candidates: { kind: TaskKind; id: string }[] = [];
      for (const kind of kinds) {
        if (exhausted.has(kind)) continue;
        const prefix = k.queuePrefix(kind);
        const from = cursors.get(kind);
        const page = await this.#queuePage(prefix, from);
        if (!page.more) exhausted.add(kind);
        const last = page.kvs.at(-1);
        if (last) cursors.set(kind, `${last.key}\0`);
        for (const kv of page.kvs) candidates.push({ kind, id: kv.key.slice(prefix.length) });
      }
      candidates.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      this.#spreadFrom(candidates, 0, spread);
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[i]!;
        if (seen.has(c.id) || this.#attempting.has(c.id)) continue;
        seen.add(c.id);
        this.#attempting.add(c.id);
        try {
          if (!this.#known.has(c.id) && !records.has(c.id)) await this.#readAhead(candidates, i, records, seen);
          const claim = await this.#tryClaim(c.kind, c.id, locked, lease.id, records.get(c.id));
          if (claim === LOST) {
            // Another master took it: every loser of that race would otherwise try the next oldest
            // together and lose again, one fewer each time. Each loss widens the window the next
            // try is drawn from, so contenders spread out while an uncontended claim stays FIFO.
            spread = Math.min(spread * 2, CLAIM_SPREAD_MAX);
            this.#spreadFrom(candidates, i + 1, spread);
          } else if (claim) {
            this.#spread = Math.max(1, spread >> 1);
            return claim;
          }
        } catch (err) {
          if (err instanceof LeaseNotFoundError) {
            this.session.markLost(lease.id);
            return undefined;
          }
          throw err;
        } finally {
          this.#attempting.delete(c.id);
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
    candidates: readonly { id: string }[],
    from: number,
    into: Map<string, KeyValue | undefined>,
    seen: ReadonlySet<string>,
  ): Promise<void> {
    const ids: string[] = [];
    for (let i = from; i < candidates.length && ids.length < READ_AHEAD; i++) {
      const id = candidates[i]!.id;
      if (i === from || (!seen.has(id) && !this.#attempting.has(id) && !this.#known.has(id) && !into.has(id))) {
        ids.push(id);
      }
    }
    const res = await this.#kv.txn(
      [],
      ids.map((id) => ({ type: 'get', key: this.keys.task(id) })),
    );
    ids.forEach((id, n) => {
      const r = res.results[n];
      into.set(id, r?.type === 'get' ? r.kv : undefined);
    });
  }

  /** Swaps into `list[at]` an entry drawn from the `width` entries starting there. */
  #spreadFrom<T>(list: T[], at: number, width: number): void {
    const w = Math.min(width, list.length - at);
    if (w < 2) return;
    const j = at + Math.floor(this.#random.next() * w);
    [list[at], list[j]] = [list[j]!, list[at]!];
  }

  /**
   * Reads a page of queue keys. Concurrent first-page reads of one instance (pool slots claiming
   * at once) share a single request: the page is only a list of candidates, and every claim is
   * re-checked by its transaction, so a read a few milliseconds old is as good as a fresh one.
   */
  #queuePage(prefix: string, from: string | undefined): Promise<RangeResult> {
    const read = (): Promise<RangeResult> =>
      this.#kv.range(prefix, { limit: QUEUE_PAGE, keysOnly: true, ...(from ? { fromKey: from } : {}) });
    if (from) return read();
    let pending = this.#pagesInFlight.get(prefix);
    if (!pending) {
      pending = read().finally(() => this.#pagesInFlight.delete(prefix));
      this.#pagesInFlight.set(prefix, pending);
    }
    return pending;
  }

  /** Remembers a queued record this instance wrote, so claiming it here needs no read. */
  #remember(task: TaskRecord, modRevision: number): void {
    this.#known.set(task.id, { task, modRevision });
    if (this.#known.size > KNOWN_LIMIT) {
      const oldest = this.#known.keys().next();
      if (!oldest.done) this.#known.delete(oldest.value);
    }
  }

  async #tryClaim(
    kind: TaskKind,
    id: string,
    locked: Set<string>,
    leaseId: string,
    readAhead?: KeyValue,
  ): Promise<Claim | typeof LOST | undefined> {
    const k = this.keys;
    let current: { task: TaskRecord; modRevision: number } | undefined = this.#known.get(id);
    this.#known.delete(id);
    if (!current) {
      // Not remembered, so read ahead by the caller; absent there means no such record.
      if (!readAhead) return undefined;
      current = { task: decode(TaskRecordSchema, readAhead), modRevision: readAhead.modRevision };
    }
    // At most twice: once more only when the record (remembered, or read ahead) turned out stale.
    for (let attempt = 0; attempt < 2; attempt++) {
      const { task, modRevision }: { task: TaskRecord; modRevision: number } = current;
      if (task.state === 'running') return LOST;
      if (task.state !== 'queued' || task.kind !== kind) return undefined;
      const lockKey = k.targetLock(task.target);
      if (locked.has(lockKey)) return undefined;
      if (task.depends_on) {
        const verdict = await this.#dependencies(task.depends_on);
        if (verdict.state === 'wait') return undefined;
        if (verdict.state === 'fail') {
          await this.#failDependent(task, modRevision, verdict.id);
          return undefined;
        }
      }
      const running: TaskRecord = {
        ...task,
        state: 'running',
        started_at: this.#clock.now(),
        attempt: task.attempt + 1,
        owner: this.masterId,
      };
      const res = await this.#kv.txn(
        [
          { key: k.task(id), target: 'modRevision', op: '==', value: modRevision },
          { key: k.queue(kind, id), target: 'version', op: '>', value: 0 },
          { key: k.claim(id), target: 'version', op: '==', value: 0 },
          { key: lockKey, target: 'version', op: '==', value: 0 },
        ],
        [
          { type: 'put', key: k.task(id), value: encodeTask(running) },
          { type: 'delete', key: k.queue(kind, id) },
          { type: 'put', key: k.running(id), value: this.masterId },
          { type: 'put', key: k.claim(id), value: this.masterId, lease: leaseId },
          { type: 'put', key: lockKey, value: id, lease: leaseId },
        ],
        [
          { type: 'get', key: lockKey },
          { type: 'get', key: k.task(id) },
        ],
      );
      if (res.succeeded) {
        this.#held.add(id);
        return { task: running, revision: res.revision, leaseId };
      }
      const [lock, fresh] = res.results;
      if (lock?.type === 'get' && lock.kv) {
        if (lock.kv.value === id) return LOST;
        locked.add(lockKey);
      }
      if (attempt > 0 || fresh?.type !== 'get' || !fresh.kv || fresh.kv.modRevision === modRevision) {
        return undefined;
      }
      current = { task: decode(TaskRecordSchema, fresh.kv), modRevision: fresh.kv.modRevision };
    }
    return undefined;
  }

  async #dependencies(
    ids: readonly string[],
  ): Promise<{ state: 'run' } | { state: 'wait' } | { state: 'fail'; id: string }> {
    let wait = false;
    for (const id of ids) {
      const dep = await this.getTask(id);
      if (!dep || dep.state === 'failed') return { state: 'fail', id };
      if (dep.state !== 'done') wait = true;
    }
    return wait ? { state: 'wait' } : { state: 'run' };
  }

  async #failDependent(task: TaskRecord, modRevision: number, depId: string): Promise<void> {
    const k = this.keys;
    const failed: TaskRecord = {
      ...task,
      state: 'failed',
      finished_at: this.#clock.now(),
      error: `dependency ${depId} did not complete`,
      error_class: 'infrastructure',
    };
    await this.#kv.txn(
      [
        { key: k.task(task.id), target: 'modRevision', op: '==', value: modRevision },
        { key: k.queue(task.kind, task.id), target: 'version', op: '>', value: 0 },
      ],
      [
        { type: 'put', key: k.task(task.id), value: encodeTask(failed) },
        { type: 'delete', key: k.queue(task.kind, task.id) },
      ],
    );
  }

  /**
   * Records a claimed task's outcome in one transaction guarded by the claim. A lost claim
   * throws {@link ClaimLostError} and records nothing, cooldown included. After the commit,
   * best-effort: a success clears the target's cooldown (inside the same transaction), a
   * failure is counted toward it, and history is pruned every few finishes.
   */
  async finish(claim: Claim, outcome: TaskOutcome): Promise<FinishResult> {
    const k = this.keys;
    const t = claim.task;
    const base = { ...t, finished_at: this.#clock.now() };
    delete base.owner;
    const record: TaskRecord = outcome.ok
      ? { ...base, state: 'done', detail: sanitizeError(outcome.detail, 2048) }
      : { ...base, state: 'failed', error: sanitizeError(outcome.error, 2048), error_class: outcome.errorClass };
    const ops: TxnOp[] = [
      { type: 'put', key: k.task(t.id), value: encodeTask(record) },
      { type: 'delete', key: k.claim(t.id) },
      { type: 'delete', key: k.running(t.id) },
      { type: 'delete', key: k.targetLock(t.target) },
    ];
    // While a depless task is active its dedupe key can only point at it (enqueue creates the key
    // only when absent, and removes it only once its task is terminal), so this delete is owned.
    if (!t.depends_on) ops.push({ type: 'delete', key: k.dedupe(t.kind, t.target) });
    if (outcome.ok) ops.push({ type: 'delete', key: k.cooldown(t.kind, t.target) });
    const res = await this.#kv.txn(
      [{ key: k.claim(t.id), target: 'createRevision', op: '==', value: claim.revision }],
      ops,
    );
    // Settled either way; an error above (no reply) leaves the claim held, so a retry can finish it.
    this.#held.delete(t.id);
    if (!res.succeeded) throw new ClaimLostError(t.id);

    let cooldown: CooldownEffect;
    if (outcome.ok) {
      const del = res.results.at(-1);
      cooldown = { type: 'cleared', existed: del?.type === 'delete' && del.deleted > 0 };
    } else {
      try {
        const result = await this.recordFailure(t.kind, t.target, t.id, outcome.error, outcome.errorClass);
        cooldown = { type: 'failure', result };
      } catch (error) {
        cooldown = { type: 'error', error };
      }
    }
    let pruned = 0;
    if (++this.#finishesSincePrune >= this.#pruneEvery) {
      this.#finishesSincePrune = 0;
      pruned = await this.#maybePrune().catch(() => 0);
    }
    return { task: record, cooldown, pruned };
  }

  /**
   * Requeues running tasks whose claim is gone (their master died or was cut off), keeping id
   * and `enqueued_at` so they keep their FIFO position. A task orphaned more than `maxAttempts`
   * times is failed instead (`infrastructure`), so a task that kills masters cannot loop forever.
   */
  async recoverOrphaned(): Promise<RecoveryResult> {
    const k = this.keys;
    const requeued: string[] = [];
    const failed: string[] = [];
    const claimed = new Set<string>();
    const lease = this.session.lease;
    for await (const kv of this.#scan(k.claimsPrefix)) {
      const id = kv.key.slice(k.claimsPrefix.length);
      // A claim under our own live session that no caller holds: its transaction committed but
      // the reply was lost (etcd timeout). Nobody would ever finish it, so release it here. A
      // claim still being attempted may have committed with its reply on the way: not stray.
      if (
        lease &&
        kv.lease === lease.id &&
        kv.value === this.masterId &&
        !this.#held.has(id) &&
        !this.#attempting.has(id)
      ) {
        if (await this.#releaseStrayClaim(id, kv.createRevision)) continue;
      }
      claimed.add(id);
    }
    const orphans: string[] = [];
    for await (const kv of this.#scan(k.runningPrefix, false, true)) {
      const id = kv.key.slice(k.runningPrefix.length);
      if (!claimed.has(id)) orphans.push(id);
    }
    for (const id of orphans) {
      const kv = await this.#kv.get(k.task(id));
      if (!kv) {
        await this.#kv.txn(
          [{ key: k.claim(id), target: 'version', op: '==', value: 0 }],
          [{ type: 'delete', key: k.running(id) }],
        );
        continue;
      }
      const task = decode(TaskRecordSchema, kv);
      if (task.state !== 'running') continue;
      const giveUp = task.attempt > this.#maxAttempts;
      const next: TaskRecord = giveUp
        ? {
            ...stripRun(task),
            state: 'failed',
            finished_at: this.#clock.now(),
            error: `task was orphaned ${task.attempt} times (its master died or lost its session each time); giving up`,
            error_class: 'infrastructure',
          }
        : { ...stripRun(task), state: 'queued' };
      const ops: TxnOp[] = [
        { type: 'put', key: k.task(id), value: encodeTask(next) },
        { type: 'delete', key: k.running(id) },
      ];
      if (giveUp && !task.depends_on) ops.push({ type: 'delete', key: k.dedupe(task.kind, task.target) });
      if (!giveUp) ops.push({ type: 'put', key: k.queue(task.kind, id), value: '' });
      const res = await this.#kv.txn(
        [
          { key: k.task(id), target: 'modRevision', op: '==', value: kv.modRevision },
          { key: k.claim(id), target: 'version', op: '==', value: 0 },
          { key: k.running(id), target: 'version', op: '>', value: 0 },
        ],
        ops,
      );
      if (res.succeeded) (giveUp ? failed : requeued).push(id);
    }
    return { requeued, failed };
  }

  async #releaseStrayClaim(id: string, createRevision: number): Promise<boolean> {
    const k = this.keys;
    const task = await this.getTask(id);
    const ops: TxnOp[] = [{ type: 'delete', key: k.claim(id) }];
    if (task) ops.push({ type: 'delete', key: k.targetLock(task.target) });
    const res = await this.#kv.txn(
      [
        { key: k.claim(id), target: 'createRevision', op: '==', value: createRevision },
        ...(task ? [{ key: k.targetLock(task.target), target: 'value' as const, op: '==' as const, value: id }] : []),
      ],
      ops,
    );
    return res.succeeded;
  }

  /**
   * Scans history only when it can hold something to prune: terminal tasks (counted cheaply as
   * all minus queued minus running) past the limit plus a 10% slack, or a TTL expiry due. So the
   * amortised cost per finish stays a few count reads, not a scan.
   */
  async #maybePrune(): Promise<number> {
    if (this.#clock.now() < this.#nextTtlDue) {
      const k = this.keys;
      const [all, queued, running] = await Promise.all([
        this.#kv.range(k.tasksPrefix, { countOnly: true }),
        this.#kv.range(k.queuePrefix(), { countOnly: true }),
        this.#kv.range(k.runningPrefix, { countOnly: true }),
      ]);
      const terminal = all.count - queued.count - running.count;
      if (terminal <= this.#historyLimit + Math.floor(this.#historyLimit / 10)) return 0;
    }
    return this.pruneHistory();
  }

  /**
   * Deletes terminal tasks beyond the newest `historyLimit` or older than the history TTL. Never
   * touches active tasks or a terminal task that an active task depends on.
   */
  async pruneHistory(): Promise<number> {
    const now = this.#clock.now();
    const terminal: { id: string; at: number }[] = [];
    const protectedIds = new Set<string>();
    for await (const kv of this.#scan(this.keys.tasksPrefix, false, false, HISTORY_PAGE)) {
      const t = decode(TaskRecordSchema, kv);
      if (isTerminal(t.state)) terminal.push({ id: t.id, at: t.finished_at ?? t.enqueued_at });
      else for (const d of t.depends_on ?? []) protectedIds.add(d);
    }
    terminal.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
    const cutoff = this.#historyTtlMs > 0 ? now - this.#historyTtlMs : -Infinity;
    const doomed = terminal
      .filter((t, i) => (i >= this.#historyLimit || t.at <= cutoff) && !protectedIds.has(t.id))
      .map((t) => t.id);
    const doomedSet = new Set(doomed);
    const oldestKept = terminal.reduce((min, t) => (doomedSet.has(t.id) ? min : Math.min(min, t.at)), Infinity);
    this.#nextTtlDue = this.#historyTtlMs > 0 ? oldestKept + this.#historyTtlMs : Infinity;
    for (let i = 0; i < doomed.length; i += DELETE_BATCH) {
      const batch = doomed.slice(i, i + DELETE_BATCH);
      await this.#kv.txn(
        [],
        batch.map((id) => ({ type: 'delete' as const, key: this.keys.task(id) })),
      );
    }
    return doomed.length;
  }

  // ---------------------------------------------------------------- cooldown

  /**
   * Counts a failure of (kind, target) toward its cooldown: read, compute the next record with
   * the pure policy, CAS it on `mod_revision` under a fresh lease of `maxSecs` (so the count
   * outlives a lapsed window), and on conflict revoke that lease, back off 5–25 ms and retry.
   * Idempotent per task id.
   */
  async recordFailure(
    kind: TaskKind,
    target: string,
    taskId: string,
    error: string,
    errorClass: ErrorClass,
  ): Promise<RecordFailureResult> {
    const key = this.keys.cooldown(kind, target);
    const report = { kind, target, taskId, error, errorClass };
    let conflicts = 0;
    for (let attempt = 0; attempt < COOLDOWN_ATTEMPTS; attempt++) {
      if (attempt > 0) await this.#clock.sleep(5 + Math.floor(this.#random.next() * 20));
      const kv = await this.#kv.get(key);
      const prev = kv ? decode(TaskCooldownSchema, kv) : undefined;
      const now = this.#clock.now();
      const fleet = wouldCool(this.policy, prev) ? await this.#fleetState(kind, target, now) : undefined;
      const decision = nextCooldown(this.policy, prev, report, now, fleet);
      if (decision.action !== 'write') return decision;
      const lease = await this.#kv.grant(this.policy.maxSecs, { keepAlive: false });
      const res = await this.#kv.txn(
        [{ key, target: 'modRevision', op: '==', value: kv?.modRevision ?? 0 }],
        [{ type: 'put', key, value: encodeCooldown(decision.record), lease: lease.id }],
      );
      if (res.succeeded) return { ...decision, conflicts };
      conflicts++;
      await lease.revoke().catch(() => undefined);
    }
    throw new ContentionError(`cooldown for ${kind} '${target}' contended past ${COOLDOWN_ATTEMPTS} attempts`);
  }

  async #fleetState(
    kind: TaskKind,
    target: string,
    now: number,
  ): Promise<{ knownStores: number; coolingOthers: number }> {
    const [stats, cooling] = await Promise.all([
      this.#kv.range(this.keys.statsPrefix, { countOnly: true }),
      this.coolingTargets(kind, now),
    ]);
    cooling.delete(target);
    return { knownStores: stats.count, coolingOthers: cooling.size };
  }

  /** Deletes the cooldown record of (kind, target); true if there was one. */
  async clearCooldown(kind: TaskKind, target: string): Promise<boolean> {
    return (await this.#kv.delete(this.keys.cooldown(kind, target))) > 0;
  }

  /** Deletes every cooldown record (of one kind, or all); returns how many. */
  async clearCooldowns(kind?: TaskKind): Promise<number> {
    return this.#kv.deletePrefix(this.keys.cooldownPrefix(kind));
  }

  /** The cooldown record of (kind, target), active or not. */
  async getCooldown(kind: TaskKind, target: string): Promise<TaskCooldown | undefined> {
    const kv = await this.#kv.get(this.keys.cooldown(kind, target));
    return kv ? decode(TaskCooldownSchema, kv) : undefined;
  }

  /**
   * Cooldown records, ordered by kind then target: only active windows, or with `all` the
   * below-threshold counters and lapsed windows too.
   */
  async listCooldowns(options: { readonly kind?: TaskKind; readonly all?: boolean } = {}): Promise<TaskCooldown[]> {
    const now = this.#clock.now();
    const out: TaskCooldown[] = [];
    for await (const kv of this.#scan(this.keys.cooldownPrefix(options.kind))) {
      const c = decode(TaskCooldownSchema, kv);
      if (options.all || isCooling(c, now)) out.push(c);
    }
    return out;
  }

  /** Targets of `kind` with an active window, in one prefix read: what a sweep skips. */
  async coolingTargets(kind: TaskKind, nowMs = this.#clock.now()): Promise<Set<string>> {
    const prefix = this.keys.cooldownPrefix(kind);
    const out = new Set<string>();
    for await (const kv of this.#scan(prefix)) {
      const c = decode(TaskCooldownSchema, kv);
      if (isCooling(c, nowMs)) out.add(targetFromHex(kv.key.slice(prefix.length)));
    }
    return out;
  }

  // ---------------------------------------------------------------- stats

  /** Writes stats rows, batched within etcd's per-transaction operation limit. */
  async putStats(rows: readonly StoreStats[]): Promise<void> {
    const valid = rows.map((row, i) => parseInput(StoreStatsSchema, row, `stats[${i}]`));
    for (let i = 0; i < valid.length; i += DELETE_BATCH) {
      await this.#kv.txn(
        [],
        valid
          .slice(i, i + DELETE_BATCH)
          .map((row) => ({ type: 'put' as const, key: this.keys.stats(row.name), value: JSON.stringify(row) })),
      );
    }
  }

  /** One store's stats row. */
  async getStats(name: string): Promise<StoreStats | undefined> {
    const kv = await this.#kv.get(this.keys.stats(name));
    return kv ? decode(StoreStatsSchema, kv) : undefined;
  }

  /** Every stats row, in key order. */
  async listStats(): Promise<StoreStats[]> {
    const out: StoreStats[] = [];
    for await (const kv of this.#scan(this.keys.statsPrefix)) out.push(decode(StoreStatsSchema, kv));
    return out;
  }

  /** Deletes stats rows; returns how many existed. */
  async deleteStats(names: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < names.length; i += DELETE_BATCH) {
      const res = await this.#kv.txn(
        [],
        names.slice(i, i + DELETE_BATCH).map((name) => ({ type: 'delete' as const, key: this.keys.stats(name) })),
      );
      for (const r of res.results) if (r.type === 'delete') deleted += r.deleted;
    }
    return deleted;
  }

  /**
   * Targets with an active (queued or running) dependency-free task of `kind`, from one
   * keys-only read of the dedupe keys: what a sweep would only dedupe against.
   */
  async activeTargets(kind: TaskKind): Promise<Set<string>> {
    const prefix = `${this.keys.dedupePrefix}${kind}/`;
    const out = new Set<string>();
    for await (const kv of this.#scan(prefix, false, true)) out.add(targetFromHex(kv.key.slice(prefix.length)));
    return out;
  }

  // ---------------------------------------------------------------- coordination

  /** Takes the named lock on this session if free; undefined if someone holds it. */
  async tryLock(name: string): Promise<HeldLock | undefined> {
    const lease = this.session.lease;
    if (!lease) return undefined;
    const key = this.keys.lock(name);
    const res = await this.#kv.txn(
      [{ key, target: 'version', op: '==', value: 0 }],
      [{ type: 'put', key, value: this.masterId, lease: lease.id }],
    );
    if (!res.succeeded) return undefined;
    const revision = res.revision;
    return {
      name,
      release: async () => {
        await this.#kv.txn([{ key, target: 'createRevision', op: '==', value: revision }], [{ type: 'delete', key }]);
      },
    };
  }

  /**
   * Claims this interval's run of a periodic job: true for exactly one caller per interval
   * fleet-wide, however many masters call and however their timers drift. Intervals are
   * aligned slots of `intervalMs` on the clock, recorded by a CAS on `P/sweeps/<name>`.
   */
  async runEvery(name: string, intervalMs: number): Promise<boolean> {
    if (!(intervalMs > 0)) return false;
    const key = this.keys.sweep(name);
    const now = this.#clock.now();
    const slot = Math.floor(now / intervalMs);
    const kv = await this.#kv.get(key);
    if (kv && decode(SweepMarkSchema, kv).slot >= slot) return false;
    const res = await this.#kv.txn(
      [{ key, target: 'modRevision', op: '==', value: kv?.modRevision ?? 0 }],
      [{ type: 'put', key, value: JSON.stringify({ slot, ran_at: now, master_id: this.masterId }) }],
    );
    return res.succeeded;
  }

  /** Live masters, from their session-bound registrations. */
  async listMasters(): Promise<MasterInfo[]> {
    const out: MasterInfo[] = [];
    for await (const kv of this.#scan(this.keys.mastersPrefix)) {
      out.push(JSON.parse(kv.value) as MasterInfo);
    }
    return out;
  }

  /** Pages through a prefix without loading it in one response. */
  async *#scan(prefix: string, reverse = false, keysOnly = false, pageSize = SCAN_PAGE): AsyncGenerator<KeyValue> {
    let from: string | undefined;
    for (;;) {
      const page = await this.#kv.range(prefix, {
        limit: pageSize,
        reverse,
        keysOnly,
        ...(from !== undefined ? { fromKey: from } : {}),
      });
      // A reverse page ends at `fromKey` inclusive: that key was the last of the previous page.
      const kvs = reverse && from !== undefined && page.kvs[0]?.key === from ? page.kvs.slice(1) : page.kvs;
      yield* kvs;
      const last = page.kvs.at(-1);
      if (!page.more || !last) return;
      from = reverse ? last.key : `${last.key}\0`;
    }
  }
}

function newestFirst(kvs: readonly KeyValue[], n: number): string[] {
  return kvs
    .slice(-n)
    .map((kv) => kv.key)
    .reverse();
}

/** The smallest UUIDv7 text for a millisecond timestamp: every id minted at or after it sorts ≥. */
function idLowerBound(ms: number): string {
  const hex = Math.floor(ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/** The millisecond timestamp a UUIDv7 encodes, if it is one. */
function idTime(id: string): number | undefined {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7/.exec(id);
  return m ? parseInt(`${m[1]}${m[2]}`, 16) : undefined;
}

function stripRun(t: TaskRecord): TaskRecord {
  const copy = { ...t };
  delete copy.started_at;
  delete copy.owner;
  delete copy.finished_at;
  delete copy.detail;
  delete copy.error;
  delete copy.error_class;
  return copy;
}

function decode<S extends z.ZodType>(schema: S, kv: KeyValue): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(kv.value);
  } catch (cause) {
    throw new CorruptRecordError(kv.key, { cause });
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw new CorruptRecordError(kv.key, { cause: r.error });
  return r.data;
}

function parseInput<S extends z.ZodType>(schema: S, value: unknown, field: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${field}.${issue.path.join('.')}` : field;
  throw new ValidationError(`invalid ${path}: ${issue?.message ?? 'invalid value'}`, { field: path });
}
