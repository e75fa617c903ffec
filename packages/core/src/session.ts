import { whenAborted } from './abort.js';
import type { Clock } from './clock.js';
import { ClosedError } from './errors.js';
import type { Keys } from './keys.js';
import type { Kv, Lease } from './kv/port.js';
import { type MasterInfo } from './model.js';

/** Options of {@link Session.open}. */
export interface SessionOptions {
  /** The store the lease lives in. */
  readonly kv: Kv;
  /** Key layout (for the registration key). */
  readonly keys: Keys;
  /** Time source of the renewal backoff. */
  readonly clock: Clock;
  /** The master this session belongs to. */
  readonly masterId: string;
  /** Session lease TTL in seconds (≥ 5; default 30). */
  readonly ttlSecs?: number;
  /** Registration written at `P/masters/<id>` on every (re)opened lease; omit to not register. */
  readonly info?: Omit<MasterInfo, 'id'>;
  /** Called with each new lease after a loss, and with errors of the renewal loop. */
  readonly onEvent?: (event: SessionEvent) => void;
}

/** Lifecycle events of a {@link Session}. */
export type SessionEvent =
  | { readonly type: 'lost'; readonly leaseId: string }
  | { readonly type: 'renewed'; readonly leaseId: string }
  | { readonly type: 'renew_failed'; readonly error: unknown };

/** Smallest session TTL accepted: a lease shorter than a few keepalive periods flaps. */
export const MIN_SESSION_TTL_SECS = 5;

/** Session lease TTL when none is given, in seconds (docs/ARCHITECTURE.md §2.5). */
export const DEFAULT_SESSION_TTL_SECS = 30;

/**
 * A master's session lease (docs/ARCHITECTURE.md §2.5). Registration, claims, target locks and coordination
 * locks ride on it. When it is lost the holder must stop claiming; the session then opens a new
 * lease in the background, and claims made under the old one fail their `finish`.
 */
export class Session {
  /** The master this session belongs to. */
  readonly masterId: string;
  /** TTL of the lease, seconds. */
  readonly ttlSecs: number;
  readonly #o: SessionOptions;
  #lease: Lease | undefined;
  #closed = false;
  #renewing: Promise<void> | undefined;
  readonly #stop = new AbortController();

  private constructor(o: SessionOptions, ttlSecs: number) {
    this.#o = o;
    this.masterId = o.masterId;
    this.ttlSecs = ttlSecs;
  }

  /** Grants the first lease (and registers); rejects if the store is unreachable. */
  static async open(options: SessionOptions): Promise<Session> {
    const ttl = options.ttlSecs ?? DEFAULT_SESSION_TTL_SECS;
    if (!Number.isInteger(ttl) || ttl < MIN_SESSION_TTL_SECS) {
      throw new RangeError(`session lease TTL must be a whole number ≥ ${MIN_SESSION_TTL_SECS} s, got ${ttl}`);
    }
    const s = new Session(options, ttl);
    await s.#acquire();
    return s;
  }

  /** The live lease, or undefined while the session is lost and being renewed. */
  get lease(): Lease | undefined {
    return this.#lease && !this.#lease.lost.aborted ? this.#lease : undefined;
  }

  /** True while a live lease is held. */
  get alive(): boolean {
    return this.lease !== undefined;
  }

  /**
   * Declares the current lease lost (a write said the store no longer knows it, or the caller
   * knows better), and starts renewing in the background.
   */
  markLost(leaseId?: string): void {
    const lease = this.#lease;
    if (!lease || (leaseId !== undefined && lease.id !== leaseId) || this.#closed) return;
    this.#lease = undefined;
    lease.release();
    this.#o.onEvent?.({ type: 'lost', leaseId: lease.id });
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = undefined;
    });
  }

  /** Waits for a live lease (after a loss), or rejects when the session is closed. */
  async ready(): Promise<Lease> {
    for (;;) {
      if (this.#closed) throw new ClosedError('session is closed');
      const l = this.lease;
      if (l) return l;
      if (this.#renewing) await this.#renewing;
      else this.markLost();
    }
  }

  /** Revokes the lease (peers recover its claims at once) and stops renewing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop.abort();
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease) await lease.revoke().catch(() => undefined);
  }

  async #acquire(): Promise<void> {
    const lease = await this.#o.kv.grant(this.ttlSecs, { keepAlive: true });
    try {
      if (this.#o.info) {
        // Written whole, never read back: the key is this master's alone and died with its lost
        // lease, so there is no newer release's field in it to keep (docs/ARCHITECTURE.md §2.1).
        await this.#o.kv.put(
          this.#o.keys.master(this.masterId),
          JSON.stringify({ id: this.masterId, ...this.#o.info }),
          {
            lease: lease.id,
          },
        );
      }
    } catch (err) {
      await lease.revoke().catch(() => undefined);
      throw err;
    }
    if (this.#closed) {
      await lease.revoke().catch(() => undefined);
      return;
    }
    this.#lease = lease;
    // The lease may have been lost while its master key was written.
    void whenAborted(lease.lost).then(() => this.markLost(lease.id));
  }

  async #renew(): Promise<void> {
    let backoff = 200;
    while (!this.#closed) {
      try {
        await this.#acquire();
        if (this.#lease) this.#o.onEvent?.({ type: 'renewed', leaseId: this.#lease.id });
        return;
      } catch (error) {
        this.#o.onEvent?.({ type: 'renew_failed', error });
        try {
          await this.#o.clock.sleep(backoff, this.#stop.signal);
        } catch {
          return;
        }
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }
}
