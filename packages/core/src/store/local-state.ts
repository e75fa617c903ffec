import type { TaskRecord } from '../model.js';

// Bounded so that tasks enqueued here but claimed by peers cannot grow it without end.
const KNOWN_LIMIT = 4096;

/** A queued record as this instance wrote it, with the revision of that write. */
export interface KnownRecord {
  readonly task: TaskRecord;
  readonly modRevision: number;
}

/**
 * Queued records this instance wrote (enqueue fills it, the claimer drains it), so that claiming
 * a task enqueued here needs no read. A stale entry costs one failed transaction, never a wrong
 * claim: the claim transaction compares the record's revision.
 */
export class KnownRecords {
  readonly #records = new Map<string, KnownRecord>();
  /**
   * Revisions at which this instance claimed a task. A read begun before such a claim can answer
   * after it: remembered, its queued record would send a later claim of the same task to a
   * transaction that cannot succeed, and with group commit it fails the claims batched beside it.
   */
  readonly #claimedAt = new Map<string, number>();

  /**
   * Remembers a record just written or read, forgetting the oldest past the bound. False when it
   * is older than this instance's claim of the task, and so not remembered.
   */
  remember(task: TaskRecord, modRevision: number): boolean {
    const claimed = this.#claimedAt.get(task.id);
    if (claimed !== undefined && claimed >= modRevision) return false;
    bounded(this.#records, task.id, { task, modRevision });
    return true;
  }

  /** This instance claimed `id` at `revision`: what was read of it before is stale. */
  claimed(id: string, revision: number): void {
    this.#records.delete(id);
    bounded(this.#claimedAt, id, revision);
  }

  has(id: string): boolean {
    return this.#records.has(id);
  }

  /** The remembered record, forgotten on the way: one claim attempt may use it. */
  take(id: string): KnownRecord | undefined {
    const record = this.#records.get(id);
    this.#records.delete(id);
    return record;
  }
}

/** Sets `key` as the newest entry of `map` (insertion order is age), dropping the oldest past `max`. */
export function bounded<V>(map: Map<string, V>, key: string, value: V, max = KNOWN_LIMIT): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

/**
 * Claims of this instance that recovery must not release: those handed to callers and not yet
 * finished, and those a claim transaction is in flight for (it may have committed with its reply
 * still on the way). Also keeps sibling pool slots of one instance off the same candidate.
 */
export class LocalClaims {
  /** Task id → revision of the claim handed out: a task recovered and claimed again here has a new one. */
  readonly #held = new Map<string, number>();
  readonly #attempting = new Set<string>();

  /** A claim of `id`, created at `revision`, was handed to a caller. */
  hold(id: string, revision: number): void {
    this.#held.set(id, revision);
  }

  /**
   * The claim of `id` created at `revision` was settled by a finish, whatever its outcome. A late
   * finish of an earlier, lost claim of the same task leaves a newer claim held.
   */
  settle(id: string, revision: number): void {
    if (this.#held.get(id) === revision) this.#held.delete(id);
  }

  /** A claim attempt of `id` starts. */
  beginAttempt(id: string): void {
    this.#attempting.add(id);
  }

  /** The claim attempt of `id` ended, won or lost. */
  endAttempt(id: string): void {
    this.#attempting.delete(id);
  }

  /** True while a claim attempt of `id` is in flight here. */
  attempting(id: string): boolean {
    return this.#attempting.has(id);
  }

  /** True if this instance holds or is attempting the claim of `id`. */
  owns(id: string): boolean {
    return this.#held.has(id) || this.#attempting.has(id);
  }
}
