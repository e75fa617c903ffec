import { EtcdKv, type Watch, type WatchEvent } from '@maintd/core';

/** One change under the prefix, as etcd's watch delivered it. */
export interface Change {
  /** etcd revision (total order across every key; one transaction shares one). */
  readonly revision: number;
  /** Wall-clock ms at which the test process received it. */
  readonly seenAt: number;
  /** Key relative to the prefix, e.g. `tasks/<id>`, `cooldown/merge_wal/<hex>`. */
  readonly key: string;
  /** The raw JSON written (unknown fields and all), or undefined for a delete. */
  readonly value: Record<string, unknown> | undefined;
}

/** The parts of the keyspace the checks replay. */
/** Markers written so far (each marker write has a new value, so etcd always records it). */
let markers = 0;
const KEPT = ['tasks/', 'cooldown/', 'parked/', 'sweeps/', 'masters/'];

/**
 * Every write to the parts of `P/` the checks need, in revision order, from one etcd watch
 * (re-opened from the last revision seen if it dies; the test's etcd never compacts). One watch,
 * so that tasks, cooldowns, parks and sweep marks are totally ordered against each other: the
 * checks replay them and judge each record at the revision it was written.
 */
export class EtcdLog {
  readonly #kv: EtcdKv;
  readonly #prefix: string;
  readonly #marker: string;
  readonly #changes: Change[] = [];
  #watch: Watch | undefined;
  #lastRevision: number;
  readonly #keysAtLast = new Set<string>();
  #closed = false;
  /** Watch failures (each followed by a resume). */
  resumes = 0;

  private constructor(kv: EtcdKv, prefix: string, fromRevision: number) {
    this.#kv = kv;
    this.#prefix = `${prefix}/`;
    this.#marker = `${prefix}~marker`;
    this.#lastRevision = fromRevision - 1;
  }

  /** Starts watching `<prefix>/` at the current revision. */
  static async start(endpoint: string, prefix: string): Promise<EtcdLog> {
    const kv = new EtcdKv({ endpoints: [endpoint] });
    const log = new EtcdLog(kv, prefix, (await kv.revision()) + 1);
    await log.#open();
    return log;
  }

  /** The store the log reads (for the test's own reads and writes). */
  get kv(): EtcdKv {
    return this.#kv;
  }

  async #open(): Promise<void> {
    for (;;) {
      if (this.#closed) return;
      try {
        // The prefix without its slash: the marker key beside it is in the watch too.
        this.#watch = await this.#kv.watch(this.#prefix.slice(0, -1), (events) => this.#record(events), {
          fromRevision: this.#lastRevision + 1,
          onError: () => {
            this.resumes++;
            void this.#open();
          },
        });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  #record(events: readonly WatchEvent[]): void {
    const seenAt = Date.now();
    for (const e of events) {
      // A resumed watch may repeat the revision it resumed from (see the fault suite's TaskHistory).
      if (e.modRevision < this.#lastRevision) continue;
      if (e.modRevision > this.#lastRevision) this.#keysAtLast.clear();
      if (this.#keysAtLast.has(e.key)) continue;
      this.#keysAtLast.add(e.key);
      this.#lastRevision = e.modRevision;
      if (!e.key.startsWith(this.#prefix)) continue;
      const key = e.key.slice(this.#prefix.length);
      if (!KEPT.some((k) => key.startsWith(k))) continue;
      const value = e.type === 'put' ? (JSON.parse(e.value) as Record<string, unknown>) : undefined;
      this.#changes.push({ revision: e.modRevision, seenAt, key, value });
    }
  }

  /** Every change so far, oldest first. */
  changes(): readonly Change[] {
    return this.#changes;
  }

  /**
   * Waits until the watch has delivered every change etcd holds now: writes a marker key beside
   * the prefix (`<prefix>~marker`, which no daemon reads) and waits for its revision to arrive.
   */
  async caughtUp(timeoutMs = 20_000): Promise<void> {
    const { revision } = await this.#kv.put(this.#marker, String(markers++));
    const deadline = performance.now() + timeoutMs;
    while (this.#lastRevision < revision) {
      if (performance.now() > deadline) throw new Error(`etcd log stuck at ${this.#lastRevision} < ${revision}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#watch?.close().catch(() => undefined);
    await this.#kv.close().catch(() => undefined);
  }
}
