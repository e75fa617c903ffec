import { CAPACITY_HOUR_MS, type CapacityRecord, CapacityRecordSchema } from '../capacity.js';
import type { Clock } from '../clock.js';
import type { Keys } from '../keys.js';
import type { Kv } from '../kv/port.js';
import { decodeOrNone } from './codec.js';
import { scan } from './scan.js';

/** What a {@link CapacityStore} works on: a master's Kv, key layout, id and clock. */
export interface CapacityStoreContext {
  /** The store the records live in. */
  readonly kv: Kv;
  /** The key layout of the fleet's prefix. */
  readonly keys: Keys;
  /** The master whose record {@link CapacityStore.write} writes. */
  readonly masterId: string;
  /** Says which records are old enough to delete. */
  readonly clock: Clock;
}

/**
 * The masters' slot-time records at `P/capacity/<master id>` (docs/ARCHITECTURE.md §3.5): each
 * master writes its own every few seconds, any master reads them all for `GET /api/v1/capacity`.
 * Not on the session lease: what a master counted stays counted after it stops, until its record
 * is older than the hour it covers; then any master's write removes it.
 */
export class CapacityStore {
  readonly #ctx: CapacityStoreContext;

  constructor(ctx: CapacityStoreContext) {
    this.#ctx = ctx;
  }

  /** Writes this master's record (one put, a few kilobytes at most). */
  async write(record: CapacityRecord): Promise<void> {
    const { kv, keys, masterId } = this.#ctx;
    await kv.put(keys.capacity(masterId), JSON.stringify(record));
  }

  /**
   * Every master's record, unreadable ones left out (they would only hide the others); and a
   * record more than two hours old, which no answer uses, is deleted on the way, guarded on its
   * revision so that a master writing it again keeps it.
   */
  async read(): Promise<CapacityRecord[]> {
    const { kv, keys, clock } = this.#ctx;
    const out: CapacityRecord[] = [];
    const stale: { key: string; modRevision: number }[] = [];
    for await (const found of scan(kv, keys.capacityPrefix)) {
      const record = decodeOrNone(CapacityRecordSchema, found);
      if (!record) continue;
      if (record.written_at < clock.now() - 2 * CAPACITY_HOUR_MS) stale.push(found);
      else out.push(record);
    }
    for (const s of stale) {
      await kv.txn(
        [{ key: s.key, target: 'modRevision', op: '==', value: s.modRevision }],
        [{ type: 'delete', key: s.key }],
      );
    }
    return out;
  }
}
