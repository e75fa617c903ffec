import { EtcdKv, type WatchEvent } from '@maintd/core';
import { ResumingWatch } from '@maintd/faults/harness/resuming-watch';

/** One change under the prefix, as etcd's watch delivered it. */
export interface Change {
  /** etcd revision (total order across every key; one transaction shares one). */
  readonly revision: number;
  /** Wall-clock ms at which the test process received it. */
  readonly seenAt: number;
  /** Key relative to the prefix, e.g. `tasks/<id>`, `cooldown/merge_wal/<hex>`. */
  readonly key: string;
  /** The raw JSON written (unknown fields and all; `{}` for an empty value), or undefined for a delete. */
  readonly value: Record<string, unknown> | undefined;
}

/** Markers written so far (each marker write has a new value, so etcd always records it). */
let markers = 0;
/** The parts of the keyspace the checks replay (`cluster`: the one record of the feature gates). */
const KEPT = ['tasks/', 'cooldown/', 'parked/', 'held/', 'sweeps/', 'masters/', 'cluster'];

/**
 * Every write to the parts of `P/` the checks need, in revision order, from one etcd watch
 * (re-opened from the last revision seen if it dies; the test's etcd never compacts). One watch,
 * so that tasks, cooldowns, parks, holds, sweep marks, registrations and the cluster record are
 * totally ordered against each other: the
 * checks replay them and judge each record at the revision it was written.
 */
export class EtcdLog {
  readonly #kv: EtcdKv;
  readonly #prefix: string;
  readonly #marker: string;
  readonly #changes: Change[] = [];
  #watch!: ResumingWatch;

  private constructor(kv: EtcdKv, prefix: string) {
    this.#kv = kv;
    this.#prefix = `${prefix}/`;
    this.#marker = `${prefix}~marker`;
  }

  /** Starts watching `<prefix>/` at the current revision. */
  static async start(endpoint: string, prefix: string): Promise<EtcdLog> {
    const kv = new EtcdKv({ endpoints: [endpoint] });
    const log = new EtcdLog(kv, prefix);
    // The prefix without its slash: the marker key beside it is in the watch too.
    log.#watch = await ResumingWatch.start(kv, prefix, (e, seenAt) => log.#record(e, seenAt));
    return log;
  }

  /** The store the log reads (for the test's own reads and writes). */
  get kv(): EtcdKv {
    return this.#kv;
  }

  /** Watch failures (each followed by a resume). */
  get resumes(): number {
    return this.#watch.resumes;
  }

  #record(e: WatchEvent, seenAt: number): void {
    if (!e.key.startsWith(this.#prefix)) return;
    const key = e.key.slice(this.#prefix.length);
    if (!KEPT.some((k) => key.startsWith(k))) return;
    // A `held/` key's value is empty: present is all it says.
    const value =
      e.type === 'put' ? (e.value === '' ? {} : (JSON.parse(e.value) as Record<string, unknown>)) : undefined;
    this.#changes.push({ revision: e.modRevision, seenAt, key, value });
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
    while (this.#watch.lastRevision < revision) {
      if (performance.now() > deadline) throw new Error(`etcd log stuck at ${this.#watch.lastRevision} < ${revision}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close(): Promise<void> {
    await this.#watch.close();
    await this.#kv.close().catch(() => undefined);
  }
}
