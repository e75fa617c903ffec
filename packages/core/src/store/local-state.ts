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

  /** Remembers a record just written, forgetting the oldest past the bound. */
  remember(task: TaskRecord, modRevision: number): void {
    this.#records.set(task.id, { task, modRevision });
    if (this.#records.size > KNOWN_LIMIT) {
      const oldest = this.#records.keys().next();
      if (!oldest.done) this.#records.delete(oldest.value);
    }
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
