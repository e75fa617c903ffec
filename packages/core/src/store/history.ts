import { type Keys, keyAfter } from '../keys.js';
import type { KeyValue, Kv } from '../kv/port.js';
import { type TaskKind, type TaskRecord, type TaskState, TaskRecordSchema, isTerminal } from '../model.js';
import { deleteInBatches, txnInBatches } from './batched.js';
import { decode, idTime } from './codec.js';
import type { StoreContext } from './context.js';
import type { HeldLock } from './coordination.js';
import { bounded } from './local-state.js';
import { NewestKeys, scan } from './scan.js';

// History scans are background work over the biggest prefix: small pages keep memory flat.
const HISTORY_PAGE = 1000;
/**
 * Task records of which a prune keeps what it needs between prunes (about 150 bytes each), beyond
 * four times the limit: a history past that (a huge backlog) is read whole at every prune instead.
 */
const VIEWS_SPARE = 4096;
/** The coordination lock a due prune takes, so that masters do not prune the same tasks at once. */
export const PRUNE_LOCK = 'history-prune';

/** Filter and page of {@link TaskStore.listTasks}. */
export interface ListTasksQuery {
  /** Only tasks in this state. */
  readonly state?: TaskState;
  /** Only tasks of this kind. */
  readonly kind?: TaskKind;
  /** Only tasks of this store. */
  readonly target?: string;
  /**
   * Only tasks whose store name or `error` contains this text, ignoring case (a search; an
   * empty text matches every task).
   */
  readonly q?: string;
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

/** How much terminal history a store keeps. */
export interface HistoryOptions {
  /** Terminal tasks kept (at least 1). */
  readonly limit: number;
  /** Terminal tasks older than this are pruned; 0 = count cap only. */
  readonly ttlMs: number;
  /** Finishes between two prunes (at least 1). */
  readonly pruneEvery: number;
}

/** The task record of `id`, or undefined. */
export async function readTask(kv: Kv, keys: Keys, id: string): Promise<TaskRecord | undefined> {
  const found = await kv.get(keys.task(id));
  return found ? decode(TaskRecordSchema, found) : undefined;
}

/** What pruning needs of a task record, as of the revision it was read at. */
interface PruneView {
  readonly modRevision: number;
  /** When a terminal task finished (its enqueue time if it has none); undefined while active. */
  readonly finishedAt: number | undefined;
  /** What an active task waits on: those terminal tasks are kept. */
  readonly dependsOn: readonly string[] | undefined;
}

function pruneView(t: TaskRecord, modRevision: number): PruneView {
  return isTerminal(t.state)
    ? { modRevision, finishedAt: t.finished_at ?? t.enqueued_at, dependsOn: undefined }
    : { modRevision, finishedAt: undefined, dependsOn: t.depends_on };
}

/** Reads of task records (one, a page, counts) and the pruning of terminal ones. */
export class TaskHistory {
  readonly #ctx: StoreContext;
  readonly #options: HistoryOptions;
  readonly #newest: NewestKeys;
  readonly #tryLock: (name: string) => Promise<HeldLock | undefined>;
  #finishesSincePrune = 0;
  /** Before this time no retained terminal task can reach the history TTL (from the last scan). */
  #nextTtlDue = -Infinity;
  /**
   * Task id → what was last read of its record (by a prune, or this instance's own finish). A
   * revision names one write, so a view whose revision a keys-only read still shows is current:
   * a prune decodes only the records written since, not the whole history each time.
   */
  #views = new Map<string, PruneView>();
  readonly #viewsMax: number;

  constructor(ctx: StoreContext, options: HistoryOptions, tryLock: (name: string) => Promise<HeldLock | undefined>) {
    this.#ctx = ctx;
    this.#options = options;
    this.#newest = new NewestKeys(ctx.kv, ctx.keys, ctx.clock);
    this.#tryLock = tryLock;
    this.#viewsMax = 4 * options.limit + VIEWS_SPARE;
  }

  getTask(id: string): Promise<TaskRecord | undefined> {
    return readTask(this.#ctx.kv, this.#ctx.keys, id);
  }

  async listTasks(query: ListTasksQuery): Promise<TaskPage> {
    const { kv, keys } = this.#ctx;
    const limit = Math.max(1, query.limit ?? 50);
    const prefix = keys.tasksPrefix;
    const filtered =
      query.state !== undefined || query.kind !== undefined || query.target !== undefined || query.q !== undefined;
    const from = query.cursor ? keys.task(query.cursor) : undefined;
    if (!filtered) {
      const [newest, total] = await Promise.all([this.#newest.take(limit + 1, from), this.#taskCount()]);
      const shown = newest.slice(0, limit);
      const oldest = shown.at(-1);
      const newestShown = shown[0];
      const page =
        oldest && newestShown ? await kv.range(prefix, { fromKey: oldest, toKey: keyAfter(newestShown) }) : { kvs: [] };
      const byKey = new Map(page.kvs.map((found) => [found.key, found]));
      const tasks = shown.flatMap((k) => {
        const found = byKey.get(k);
        return found ? [decode(TaskRecordSchema, found)] : [];
      });
      const next = newest[limit];
      return { tasks, total, nextCursor: next ? next.slice(prefix.length) : null };
    }
    const needle = query.q?.toLowerCase();
    const match = (t: TaskRecord): boolean =>
      (query.state === undefined || t.state === query.state) &&
      (query.kind === undefined || t.kind === query.kind) &&
      (query.target === undefined || t.target === query.target) &&
      (needle === undefined ||
        t.target.toLowerCase().includes(needle) ||
        (t.error !== undefined && t.error.toLowerCase().includes(needle)));
    const tasks: TaskRecord[] = [];
    let total = 0;
    let nextCursor: string | null = null;
    for await (const found of scan(kv, prefix, { reverse: true })) {
      const t = decode(TaskRecordSchema, found);
      if (!match(t)) continue;
      total++;
      if (from !== undefined && found.key > from) continue;
      if (tasks.length < limit) tasks.push(t);
      else nextCursor ??= found.key.slice(prefix.length);
    }
    return { tasks, total, nextCursor };
  }

  async queueDepth(kind: TaskKind | undefined): Promise<number> {
    return (await this.#ctx.kv.range(this.#ctx.keys.queuePrefix(kind), { countOnly: true })).count;
  }

  async #taskCount(): Promise<number> {
    return (await this.#ctx.kv.range(this.#ctx.keys.tasksPrefix, { countOnly: true })).count;
  }

  /**
   * Counts a committed finish of `task` (its terminal record, written at `modRevision`, which the
   * next prune then need not read); true once every `pruneEvery` finishes, when a prune is due.
   */
  finished(task: TaskRecord, modRevision: number): boolean {
    // Bounded, oldest first out: a master whose peers do the pruning would keep a view per finish.
    bounded(this.#views, task.id, pruneView(task, modRevision), this.#viewsMax);
    if (++this.#finishesSincePrune < this.#options.pruneEvery) return false;
    this.#finishesSincePrune = 0;
    return true;
  }

  /**
   * Scans history only when it can hold something to prune: terminal tasks (counted cheaply as
   * all minus queued minus running) past the limit plus a 10% slack, or a TTL expiry due. So the
   * amortised cost per finish stays a few count reads, not a scan. A due prune takes
   * {@link PRUNE_LOCK}: while another master prunes, this one leaves it the work.
   */
  async maybePrune(): Promise<number> {
    const { kv, keys, clock } = this.#ctx;
    if (this.#nextTtlDue === -Infinity) this.#nextTtlDue = await this.#ttlLowerBound();
    if (clock.now() < this.#nextTtlDue) {
      const [all, queued, running] = await Promise.all([
        kv.range(keys.tasksPrefix, { countOnly: true }),
        kv.range(keys.queuePrefix(), { countOnly: true }),
        kv.range(keys.runningPrefix, { countOnly: true }),
      ]);
      const terminal = all.count - queued.count - running.count;
      const { limit } = this.#options;
      if (terminal <= limit + Math.floor(limit / 10)) return 0;
    }
    const lock = await this.#tryLock(PRUNE_LOCK);
    if (!lock) return 0;
    try {
      return await this.pruneHistory();
    } finally {
      await lock.release().catch(() => undefined);
    }
  }

  /**
   * Before a first scan: the earliest a terminal task can reach the history TTL, from one
   * keys-only read of the oldest task key. A task finishes after it is enqueued, and its id (a
   * UUIDv7, so key order is enqueue order) carries its enqueue time: no task reaches the TTL
   * before the oldest one's enqueue time plus the TTL. So a master that opens on a long history
   * it need not prune counts it instead of reading every record (which, at 100k tasks, left the
   * process tens of megabytes larger for good). -Infinity (scan now) when the key says nothing.
   */
  async #ttlLowerBound(): Promise<number> {
    const { kv, keys, clock } = this.#ctx;
    const { ttlMs } = this.#options;
    if (ttlMs <= 0) return Infinity;
    const oldest = (await kv.range(keys.tasksPrefix, { limit: 1, keysOnly: true })).kvs[0];
    if (!oldest) return clock.now() + ttlMs;
    const enqueued = idTime(oldest.key.slice(keys.tasksPrefix.length));
    return enqueued === undefined ? -Infinity : enqueued + ttlMs;
  }

  /**
   * Deletes the terminal tasks past the limit (oldest finish first) and those past the TTL, never
   * one an active task depends on. Reads the task keys only, then the records whose revision it
   * has no view of: after a first prune, about those finished since the last one.
   */
  async pruneHistory(): Promise<number> {
    const { kv, keys, clock } = this.#ctx;
    const { limit, ttlMs } = this.#options;
    const now = clock.now();
    const prefix = keys.tasksPrefix;
    const views = new Map<string, PruneView>();
    const unread: string[] = [];
    let present = 0;
    for await (const found of scan(kv, prefix, { keysOnly: true })) {
      present++;
      const id = found.key.slice(prefix.length);
      const view = this.#views.get(id);
      if (view?.modRevision === found.modRevision) views.set(id, view);
      else unread.push(id);
    }
    const see = (found: KeyValue): void => {
      const id = found.key.slice(prefix.length);
      if (views.get(id)?.modRevision !== found.modRevision) {
        views.set(id, pruneView(decode(TaskRecordSchema, found), found.modRevision));
      }
    };
    if (unread.length * 4 > present) {
      // Most of it unseen (a first prune): paging through the values costs less than fetching them.
      for await (const found of scan(kv, prefix, { pageSize: HISTORY_PAGE })) see(found);
    } else {
      const gets = unread.map((id) => ({ type: 'get' as const, key: keys.task(id) }));
      // A record deleted since the keys were read is gone: nothing to prune.
      for (const r of await txnInBatches(kv, gets)) if (r.type === 'get' && r.kv) see(r.kv);
    }

    const terminal: { id: string; at: number }[] = [];
    const protectedIds = new Set<string>();
    for (const [id, view] of views) {
      if (view.finishedAt !== undefined) terminal.push({ id, at: view.finishedAt });
      else for (const d of view.dependsOn ?? []) protectedIds.add(d);
    }
    terminal.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
    const cutoff = ttlMs > 0 ? now - ttlMs : -Infinity;
    const doomed = terminal
      .filter((t, i) => (i >= limit || t.at <= cutoff) && !protectedIds.has(t.id))
      .map((t) => t.id);
    const doomedSet = new Set(doomed);
    const oldestKept = terminal.reduce((min, t) => (doomedSet.has(t.id) ? min : Math.min(min, t.at)), Infinity);
    this.#nextTtlDue = ttlMs > 0 ? oldestKept + ttlMs : Infinity;
    for (const id of doomed) views.delete(id);
    // A task this instance finished while the prune read has a newer view than the one read.
    for (const [id, view] of views) {
      const mine = this.#views.get(id);
      if (mine && mine.modRevision > view.modRevision) views.set(id, mine);
    }
    this.#views = views.size <= this.#viewsMax ? views : new Map<string, PruneView>();
    await deleteInBatches(
      kv,
      doomed.map((id) => keys.task(id)),
    );
    return doomed.length;
  }
}
