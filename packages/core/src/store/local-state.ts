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
  readonly #held = new Set<string>();
  readonly #attempting = new Set<string>();

  /** A claim of `id` was handed to a caller. */
  hold(id: string): void {
    this.#held.add(id);
  }

  /** The claim of `id` was settled by a finish, whatever its outcome. */
  settle(id: string): void {
    this.#held.delete(id);
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
